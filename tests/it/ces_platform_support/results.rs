//! What the fake platform's app does with a golden: each expected step met (or, for a
//! failing evaluation, its first agent response missed), as an `EvaluationResult`.

use serde_json::{Value, json};

use super::{APP, Platform};

/// Every result of run `at`: each evaluation's golden replayed as the app would, `runCount`
/// times.
pub(super) fn produce_results(state: &mut Platform, at: usize) {
    let run = state.runs[at].clone();
    let mut names = Vec::new();
    for evaluation_name in &run.evaluations {
        let evaluation = state
            .evaluations
            .iter()
            .find(|e| e["name"] == evaluation_name.as_str())
            .cloned()
            .unwrap_or_default();
        let named = |list: &[String]| {
            evaluation["displayName"]
                .as_str()
                .is_some_and(|d| list.iter().any(|f| f == d))
        };
        let conduct = Conduct {
            failing: named(&state.failing),
            speaking: named(&state.speaking),
            extra_call: named(&state.extra_call),
        };
        for k in 0..run.run_count {
            let name = format!(
                "{evaluation_name}/results/{}-{k}",
                run.name.rsplit('/').next().unwrap_or_default()
            );
            let result = if evaluation["scenario"].is_null() {
                let (result, conversations) = result_of(
                    &evaluation,
                    (&run.name, &name),
                    conduct,
                    &state.expectations,
                );
                state.conversations.extend(conversations);
                result
            } else {
                scenario_result_of(&evaluation, &run.name, &name, conduct.failing)
            };
            state.results.insert(name.clone(), result);
            names.push(name);
        }
    }
    state.runs[at].results = names;
}

/// How the app answers an evaluation.
#[derive(Clone, Copy)]
struct Conduct {
    /// It gets the first agent response wrong.
    failing: bool,
    /// It speaks in the turns that expect no agent response.
    speaking: bool,
    /// It calls `lookup_order` in its first turn that expects no tool call.
    extra_call: bool,
}

/// What the app says where the golden expects nothing.
pub const UNASKED: &str = "Let me look that up for you right away.";

/// The result of a golden evaluation, and the conversation each turn recorded (run STABLE:
/// one per turn, the earlier turns injected as history).
fn result_of(
    evaluation: &Value,
    (run, name): (&str, &str),
    conduct: Conduct,
    expectations: &[Value],
) -> (Value, Vec<(String, Value)>) {
    let mut first_text = true;
    let mut extra_call = conduct.extra_call;
    let mut conversations = Vec::new();
    // `…/evaluations/e1/results/run1-0` → `e1-run1-0`.
    let parts: Vec<&str> = name.rsplit('/').collect();
    let id = format!("{}-{}", parts[2], parts[0]);
    let golden_turns = evaluation["golden"]["turns"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let turns: Vec<Value> = golden_turns.iter().enumerate().map(|(t, turn)| {
        let steps: Vec<&Value> = turn["steps"].as_array().into_iter().flatten().collect();
        let expected: Vec<&Value> = steps.iter().filter_map(|step| step.get("expectation")).collect();
        let outcomes: Vec<Value> = expected.iter().map(|expectation| {
            let wrong = conduct.failing && expectation.get("agentResponse").is_some() && std::mem::replace(&mut first_text, false);
            outcome(expectation, wrong)
        }).collect();
        let says_nothing = !expected.iter().any(|e| e.get("agentResponse").is_some());
        let calls_nothing = !expected.iter().any(|e| e.get("toolCall").is_some());
        let speaks = conduct.speaking && says_nothing;
        let calls = extra_call && calls_nothing;
        extra_call &= !calls;
        let conversation = format!("{APP}/conversations/{id}-t{t}");
        conversations.push((conversation.clone(), recorded(&conversation, &steps, &outcomes, (speaks, calls))));
        let mut replay = json!({
            "conversation": conversation,
            "hallucinationResult": {"score": 1, "label": "Justified", "explanation": "Grounded in the tool response."},
            "turnLatency": "1.250s",
            "overallToolInvocationResult": {"toolInvocationScore": 1.0, "outcome": "PASS"},
        });
        if speaks {
            replay["semanticSimilarityResult"] = json!({"score": 0, "label": "Completely Inconsistent / Contradictory", "explanation": "The golden expects no agent response here.", "outcome": "FAIL"});
        }
        if calls {
            replay["overallToolInvocationResult"] = json!({"outcome": "FAIL"});
        }
        if !outcomes.is_empty() {
            replay["expectationOutcome"] = json!(outcomes);
        }
        replay
    }).collect();
    let custom: Vec<Value> = evaluation["golden"]["evaluationExpectations"].as_array().into_iter().flatten().map(|x| {
        let prompt = expectations.iter().find(|e| e["name"] == *x).map(|e| e["llmCriteria"]["prompt"].clone()).unwrap_or_default();
        json!({"evaluationExpectation": x, "prompt": prompt, "outcome": "PASS", "explanation": "The transcript shows it."})
    }).collect();
    let mut golden = json!({"turnReplayResults": turns});
    if !custom.is_empty() {
        golden["evaluationExpectationResults"] = json!(custom);
    }
    let failed = conduct.failing || conduct.speaking || conduct.extra_call;
    let result = json!({
        "name": name,
        "displayName": format!("{} result - 2026-11-27 02:00", evaluation["displayName"].as_str().unwrap_or_default()),
        "evaluationStatus": if failed { "FAIL" } else { "PASS" },
        "evaluationRun": run,
        "executionState": "COMPLETED",
        "goldenRunMethod": "STABLE",
        "evaluationMetricsThresholds": {"goldenEvaluationMetricsThresholds": {
            "turnLevelMetricsThresholds": {"semanticSimilaritySuccessThreshold": 3, "overallToolInvocationCorrectnessThreshold": 1.0},
            "expectationLevelMetricsThresholds": {"toolInvocationParameterCorrectnessThreshold": 1.0},
        }},
        "goldenResult": golden,
    });
    (result, conversations)
}

/// The `Conversation` a replayed turn recorded: the user's input, then what the app said and
/// called (what the outcomes observed, and what it said or called unasked).
fn recorded(
    name: &str,
    steps: &[&Value],
    outcomes: &[Value],
    (speaks, calls): (bool, bool),
) -> Value {
    let user: Vec<Value> = steps
        .iter()
        .filter_map(|step| step["userInput"]["text"].as_str())
        .map(|text| json!({"text": text}))
        .collect();
    let mut agent: Vec<Value> = Vec::new();
    if calls {
        agent.push(json!({"toolCall": {"tool": format!("{APP}/tools/0c4f7a"), "id": "call-extra", "displayName": "lookup_order", "args": {"order_id": "ORD-00000"}}}));
        agent.push(json!({"toolResponse": {"tool": format!("{APP}/tools/0c4f7a"), "id": "call-extra", "displayName": "lookup_order", "response": {"status": "not_found"}}}));
    }
    for outcome in outcomes {
        if let Some(call) = outcome.get("observedToolCall") {
            agent.push(json!({"toolCall": call}));
        }
        if let Some(response) = outcome.get("observedAgentResponse") {
            agent.extend(response["chunks"].as_array().cloned().unwrap_or_default());
        }
    }
    if speaks {
        agent.push(json!({"text": UNASKED}));
    }
    let mut messages = Vec::new();
    if !user.is_empty() {
        messages.push(json!({"role": "user", "chunks": user}));
    }
    if !agent.is_empty() {
        messages.push(json!({"role": "agent", "chunks": agent}));
    }
    json!({
        "name": name,
        "turns": [{"messages": messages}],
        "turnCount": 1,
        "source": "EVAL",
    })
}

/// One expectation's outcome: what the app did (as expected, unless `wrong`).
fn outcome(expectation: &Value, wrong: bool) -> Value {
    let mut outcome =
        json!({"expectation": expectation, "outcome": if wrong { "FAIL" } else { "PASS" }});
    if let Some(response) = expectation.get("agentResponse") {
        let observed = if wrong {
            json!({"role": "agent", "chunks": [{"text": "Sorry, I did not understand."}]})
        } else {
            response.clone()
        };
        outcome["observedAgentResponse"] = observed;
        outcome["semanticSimilarityResult"] = if wrong {
            json!({"score": 1, "label": "Largely Inconsistent (Major Omissions)", "explanation": "The agent did not answer the question.", "outcome": "FAIL"})
        } else {
            json!({"score": 4, "label": "Fully Consistent", "explanation": "Same meaning.", "outcome": "PASS"})
        };
    } else if let Some(call) = expectation.get("toolCall") {
        let mut observed = call.clone();
        if call["tool"] == format!("{APP}/tools/0c4f7a") {
            observed["displayName"] = json!("lookup_order");
        }
        outcome["observedToolCall"] = observed;
        outcome["toolInvocationResult"] = json!({"parameterCorrectnessScore": 1.0, "outcome": "PASS", "explanation": "All parameters match."});
    } else if let Some(response) = expectation.get("toolResponse") {
        outcome["observedToolResponse"] = response.clone();
    } else if let Some(transfer) = expectation.get("agentTransfer") {
        let mut observed = transfer.clone();
        observed["displayName"] = json!("Billing Agent");
        outcome["observedAgentTransfer"] = observed;
    }
    outcome
}

/// A scenario evaluation's result: the simulated user reached the goal (unless `failing`),
/// every rubric scored.
fn scenario_result_of(evaluation: &Value, run: &str, name: &str, failing: bool) -> Value {
    let scenario = &evaluation["scenario"];
    let rubrics: Vec<Value> = scenario["rubrics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|rubric| json!({"rubric": rubric, "score": if failing { 0.0 } else { 1.0 }, "scoreExplanation": "Judged over the conversation."}))
        .collect();
    json!({
        "name": name,
        "evaluationStatus": if failing { "FAIL" } else { "PASS" },
        "evaluationRun": run,
        "executionState": "COMPLETED",
        "scenarioResult": {
            "conversation": format!("{APP}/conversations/s1"),
            "task": scenario["task"],
            "rubricOutcomes": rubrics,
            "userGoalSatisfactionResult": {"score": if failing { 0 } else { 1 }, "label": if failing { "User Task Not Satisfied" } else { "User Task Satisfied" }, "explanation": "The user got a refund."},
            "allExpectationsSatisfied": !failing,
            "taskCompleted": !failing,
        },
    })
}
