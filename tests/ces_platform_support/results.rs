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
        let failing = evaluation["displayName"]
            .as_str()
            .is_some_and(|d| state.failing.iter().any(|f| f == d));
        for k in 0..run.run_count {
            let name = format!(
                "{evaluation_name}/results/{}-{k}",
                run.name.rsplit('/').next().unwrap_or_default()
            );
            let result = if evaluation["scenario"].is_null() {
                result_of(&evaluation, &run.name, &name, failing, &state.expectations)
            } else {
                scenario_result_of(&evaluation, &run.name, &name, failing)
            };
            state.results.insert(name.clone(), result);
            names.push(name);
        }
    }
    state.runs[at].results = names;
}

fn result_of(
    evaluation: &Value,
    run: &str,
    name: &str,
    failing: bool,
    expectations: &[Value],
) -> Value {
    let mut first_text = true;
    let turns: Vec<Value> = evaluation["golden"]["turns"].as_array().into_iter().flatten().map(|turn| {
        let outcomes: Vec<Value> = turn["steps"].as_array().into_iter().flatten().filter_map(|step| step.get("expectation")).map(|expectation| {
            let wrong = failing && expectation.get("agentResponse").is_some() && std::mem::replace(&mut first_text, false);
            outcome(expectation, wrong)
        }).collect();
        let mut replay = json!({
            "conversation": format!("{APP}/conversations/c1"),
            "hallucinationResult": {"score": 1, "label": "Justified", "explanation": "Grounded in the tool response."},
            "turnLatency": "1.250s",
            "overallToolInvocationResult": {"toolInvocationScore": 1.0, "outcome": "PASS"},
        });
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
    json!({
        "name": name,
        "displayName": format!("{} result - 2026-11-27 02:00", evaluation["displayName"].as_str().unwrap_or_default()),
        "evaluationStatus": if failing { "FAIL" } else { "PASS" },
        "evaluationRun": run,
        "executionState": "COMPLETED",
        "goldenRunMethod": "STABLE",
        "evaluationMetricsThresholds": {"goldenEvaluationMetricsThresholds": {
            "turnLevelMetricsThresholds": {"semanticSimilaritySuccessThreshold": 3, "overallToolInvocationCorrectnessThreshold": 1.0},
            "expectationLevelMetricsThresholds": {"toolInvocationParameterCorrectnessThreshold": 1.0},
        }},
        "goldenResult": golden,
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
