//! An `EvaluationResult` into goldgate's one results model: the result a case, each replayed
//! turn a turn whose expectation outcomes are checks (with the platform's score, label,
//! explanation and the threshold it was held to), the turn's hallucination result a
//! hallucination check, each custom expectation (`llmCriteria`) a criterion check, and a
//! scenario's rubrics, expectations and user-goal result checks over the conversation.
//!
//! The verdict is the platform's (`evaluationStatus`); the checks say why. Scores are written
//! in `0..=1` as every score of a report: semantic similarity 0-4 is divided by 4.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::model::{Case, ExpectationKind, Input, Turn};
use crate::results::{CaseResult, CheckCategory, CheckResult, Method, Status, TurnResult};
use crate::score::Grader;
use crate::transcript::{Message, Reply, TRANSFER_TOOL, ToolCall, Transfer};

/// How every check of a platform run says it was judged.
const METHOD: Method = Method::deterministic("ces-platform");

/// A case that was not run, with why.
pub(super) fn skipped(case: &Case, why: &str) -> CaseResult {
    CaseResult {
        error: Some(why.to_owned()),
        ..CaseResult::of(case)
    }
}

/// A case that could not be run or judged, with why.
pub(super) fn error(case: &Case, why: &str) -> CaseResult {
    CaseResult {
        status: Status::Error,
        error: Some(why.to_owned()),
        ..CaseResult::of(case)
    }
}

/// Resource names to the display names goldens use (the app's tools and agents).
pub(super) type Labels = BTreeMap<String, String>;

/// The case's result from the platform's `result`.
pub(super) fn of(case: &Case, result: &Value, labels: &Labels) -> CaseResult {
    let state = result["executionState"].as_str().unwrap_or_default();
    if state == "ERROR" || (state != "COMPLETED" && !result["errorInfo"].is_null()) {
        let info = &result["errorInfo"];
        let why = format!(
            "the platform could not run the evaluation ({}): {}",
            info["errorType"].as_str().unwrap_or("ERROR"),
            info["errorMessage"].as_str().unwrap_or("no message")
        );
        return error(case, &why);
    }
    if state != "COMPLETED" {
        return error(
            case,
            &format!("the evaluation result is still {state} on the platform"),
        );
    }
    let thresholds = &result["evaluationMetricsThresholds"]["goldenEvaluationMetricsThresholds"];
    let golden = &result["goldenResult"];
    let mut turns: Vec<TurnResult> = golden["turnReplayResults"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, replay)| turn(case, i, replay, (thresholds, labels)))
        .collect();
    let mut checks: Vec<CheckResult> = list(&golden["evaluationExpectationResults"])
        .map(|r| expectation(case, r))
        .collect();
    if !result["scenarioResult"].is_null() {
        let (turn, more) = scenario(case, &result["scenarioResult"]);
        turns.extend(turn);
        checks.extend(more);
    }
    let status = match result["evaluationStatus"].as_str() {
        Some("PASS") => Status::Passed,
        Some("FAIL") => Status::Failed,
        Some("SKIPPED") => Status::Skipped,
        _ => Status::combine(
            turns
                .iter()
                .map(|t| t.status)
                .chain(checks.iter().map(|c| c.status)),
        ),
    };
    let score = Grader::case_score(case, &turns, &checks).unwrap_or_default();
    let duration = turns.iter().filter_map(|t| t.latency).sum();
    CaseResult {
        status,
        score,
        duration,
        turns,
        checks,
        ..CaseResult::of(case)
    }
}

fn list(value: &Value) -> impl Iterator<Item = &Value> {
    value.as_array().into_iter().flatten()
}

/// One replayed turn: its expectation outcomes and hallucination result as checks.
fn turn(
    case: &Case,
    i: usize,
    replay: &Value,
    (thresholds, labels): (&Value, &Labels),
) -> TurnResult {
    let golden = case.turns.get(i);
    let line = golden.map_or(case.location.line, |t| t.location.line);
    let mut reply = Reply::default();
    let mut checks: Vec<CheckResult> = list(&replay["expectationOutcome"])
        .map(|outcome| expectation_outcome(outcome, line, (thresholds, labels), &mut reply))
        .collect();
    if let Some(golden) = golden {
        place(&mut checks, golden);
    }
    let calls_expected = checks.iter().any(|c| c.category == CheckCategory::ToolCall);
    let overall = &replay["overallToolInvocationResult"];
    if let (true, Some(score)) = (calls_expected, overall["toolInvocationScore"].as_f64()) {
        let mut check = judged(
            "tool invocation".to_owned(),
            CheckCategory::ToolCallAccuracy,
            line,
            overall["outcome"].as_str(),
        );
        check.score = Some(score);
        let turn_level = &thresholds["turnLevelMetricsThresholds"];
        let threshold = turn_level["overallToolInvocationCorrectnessThreshold"].as_f64();
        check.reason = Some(scored(score, "1", threshold, overall));
        checks.push(check);
    }
    if let Some(check) = hallucination(&replay["hallucinationResult"], line) {
        checks.push(check);
    }
    let error = replay["errorInfo"]["errorMessage"]
        .as_str()
        .map(str::to_owned);
    let status = if error.is_some() {
        Status::Error
    } else {
        Status::combine(checks.iter().map(|c| c.status))
    };
    TurnResult {
        index: i + 1,
        line,
        status,
        input: golden.map(|t| inputs(&t.inputs)).unwrap_or_default(),
        attempts: 1,
        error,
        reply: Some(reply),
        cut: None,
        latency: replay["turnLatency"].as_str().and_then(duration),
        ttft: None,
        checks,
    }
}

/// One expectation's outcome as a check; what was observed joins the turn's `reply`.
fn expectation_outcome(
    outcome: &Value,
    line: u32,
    (thresholds, labels): (&Value, &Labels),
    reply: &mut Reply,
) -> CheckResult {
    let (label, category, expected, actual) = observed(outcome, labels, reply);
    let mut check = judged(label, category, line, outcome["outcome"].as_str());
    check.expected = expected;
    check.actual = actual;
    let similarity = &outcome["semanticSimilarityResult"];
    let invocation = &outcome["toolInvocationResult"];
    if let Some(score) = similarity["score"].as_f64() {
        check.score = Some(score / 4.0);
        let turn_level = &thresholds["turnLevelMetricsThresholds"];
        let threshold = turn_level["semanticSimilaritySuccessThreshold"].as_f64();
        check.reason = Some(scored(score, "4", threshold, similarity));
    } else if let Some(score) = invocation["parameterCorrectnessScore"].as_f64() {
        check.score = Some(score);
        let level = &thresholds["expectationLevelMetricsThresholds"];
        let threshold = level["toolInvocationParameterCorrectnessThreshold"].as_f64();
        check.reason = Some(scored(score, "1", threshold, invocation));
    }
    check
}

/// What an outcome's expectation asked and what the app did: (label, category, expected,
/// actual). What was observed joins `reply`.
fn observed(
    outcome: &Value,
    labels: &Labels,
    reply: &mut Reply,
) -> (String, CheckCategory, String, String) {
    let expected = &outcome["expectation"];
    let seen = |key: &str| Some(&outcome[key]).filter(|v| !v.is_null());
    if let Some(response) = expected.get("agentResponse") {
        let actual = chunks_text(&outcome["observedAgentResponse"]);
        if !actual.is_empty() {
            let text = actual.clone();
            reply.messages.push(Message { text, agent: None });
        }
        let label = "agent text".to_owned();
        (
            label,
            CheckCategory::AgentText,
            chunks_text(response),
            actual,
        )
    } else if let Some(call) = expected.get("toolCall") {
        let observed = seen("observedToolCall");
        if let Some(observed) = observed {
            reply.tool_calls.push(ToolCall {
                name: tool_name(observed, labels),
                args: observed["args"].clone(),
                response: None,
                resource: observed["tool"].as_str().map(str::to_owned),
            });
        }
        let actual = observed.map(|o| call_text(o, labels)).unwrap_or_default();
        let label = format!("tool call {}", tool_name(call, labels));
        (
            label,
            CheckCategory::ToolCall,
            call_text(call, labels),
            actual,
        )
    } else if let Some(response) = expected.get("toolResponse") {
        let observed = seen("observedToolResponse");
        let actual = observed
            .map(|o| o["response"].to_string())
            .unwrap_or_default();
        let label = format!("tool response {}", tool_name(response, labels));
        let wanted = response["response"].to_string();
        (label, CheckCategory::ToolResponse, wanted, actual)
    } else {
        let target = |v: &Value| {
            let resource = v["targetAgent"].as_str();
            let known = resource.and_then(|r| labels.get(r)).map(String::as_str);
            let name = v["displayName"].as_str().or(known).or(resource);
            name.unwrap_or_default().to_owned()
        };
        let observed = &outcome["observedAgentTransfer"];
        if !observed.is_null() {
            reply.transfer = Some(Transfer {
                agent: target(observed),
                resource: observed["targetAgent"].as_str().map(str::to_owned),
            });
        }
        let wanted = target(&expected["agentTransfer"]);
        let label = format!("transfer to {wanted}");
        (label, CheckCategory::Transfer, wanted, target(observed))
    }
}

/// Puts each check on the line of the golden's expectation it checks (the nth of its kind in
/// the turn, as the platform lists outcomes in the order of the steps), so that annotations
/// land where the expectation is written.
fn place(checks: &mut [CheckResult], golden: &Turn) {
    let mut seen: Vec<(CheckCategory, usize)> = Vec::new();
    for check in checks {
        let n = match seen.iter_mut().find(|(c, _)| *c == check.category) {
            Some((_, n)) => {
                *n += 1;
                *n - 1
            }
            None => {
                seen.push((check.category, 1));
                0
            }
        };
        let line = golden
            .expectations
            .iter()
            .filter(|e| checks_kind(check.category, &e.kind))
            .nth(n)
            .map(|e| e.location.line);
        if let Some(line) = line {
            check.line = line;
        }
    }
}

fn checks_kind(category: CheckCategory, kind: &ExpectationKind) -> bool {
    match (category, kind) {
        (CheckCategory::AgentText, ExpectationKind::AgentText { .. }) => true,
        (CheckCategory::ToolCall, ExpectationKind::ToolCall(call)) => call.name != TRANSFER_TOOL,
        (CheckCategory::Transfer, ExpectationKind::ToolCall(call)) => call.name == TRANSFER_TOOL,
        (CheckCategory::ToolResponse, ExpectationKind::ToolResponse { .. })
        | (CheckCategory::Transfer, ExpectationKind::Transfer { .. }) => true,
        _ => false,
    }
}

/// `platform score 2 of 4 (threshold 3), Partially Consistent: explanation`.
fn scored(score: f64, of: &str, threshold: Option<f64>, result: &Value) -> String {
    let mut text = format!("platform score {score} of {of}");
    if let Some(threshold) = threshold {
        text.push_str(&format!(" (threshold {threshold})"));
    }
    if let Some(label) = result["label"].as_str().filter(|l| !l.is_empty()) {
        text.push_str(&format!(", {label}"));
    }
    if let Some(explanation) = result["explanation"].as_str().filter(|e| !e.is_empty()) {
        text.push_str(&format!(": {explanation}"));
    }
    text
}

/// The turn's hallucination result: 1 justified (passed), 0 not justified (failed), -1 no
/// claim to assess (skipped).
fn hallucination(result: &Value, line: u32) -> Option<CheckResult> {
    let score = result["score"].as_i64()?;
    let status = match score {
        1 => Status::Passed,
        0 => Status::Failed,
        _ => Status::Skipped,
    };
    let mut check = judged(
        "no hallucination".to_owned(),
        CheckCategory::Hallucination,
        line,
        None,
    );
    check.status = status;
    check.score = (score >= 0).then_some(score as f64);
    check.reason = Some(scored(score as f64, "1", None, result));
    Some(check)
}

/// A custom expectation's result (`llmCriteria`) as a criterion check.
fn expectation(case: &Case, result: &Value) -> CheckResult {
    let mut check = judged(
        "expectation".to_owned(),
        CheckCategory::Criterion,
        case.location.line,
        result["outcome"].as_str(),
    );
    check.expected = result["prompt"].as_str().unwrap_or_default().to_owned();
    check.reason = result["explanation"].as_str().map(str::to_owned);
    check
}

/// A scenario's conversation as one turn (its expectation outcomes), and its rubrics and
/// user-goal result as checks over the case.
fn scenario(case: &Case, result: &Value) -> (Option<TurnResult>, Vec<CheckResult>) {
    let line = case.location.line;
    let mut checks: Vec<CheckResult> = list(&result["rubricOutcomes"])
        .map(|rubric| {
            let score = rubric["score"].as_f64();
            let passed = score.map(|s| if s >= 0.5 { "PASS" } else { "FAIL" });
            let mut check = judged("rubric".to_owned(), CheckCategory::Criterion, line, passed);
            check.expected = rubric["rubric"].as_str().unwrap_or_default().to_owned();
            check.score = score;
            check.reason = rubric["scoreExplanation"].as_str().map(str::to_owned);
            check
        })
        .collect();
    checks.extend(list(&result["evaluationExpectationResults"]).map(|r| expectation(case, r)));
    let goal = &result["userGoalSatisfactionResult"];
    if let Some(score) = goal["score"].as_i64() {
        let outcome = match score {
            1 => Some("PASS"),
            0 => Some("FAIL"),
            _ => None,
        };
        let mut check = judged(
            "user goal satisfied".to_owned(),
            CheckCategory::Criterion,
            line,
            outcome,
        );
        check.expected = result["task"].as_str().unwrap_or_default().to_owned();
        check.reason = Some(scored(score as f64, "1", None, goal));
        checks.push(check);
    }
    let outcomes: Vec<CheckResult> = list(&result["expectationOutcomes"])
        .map(|o| {
            let mut check = judged(
                "scenario expectation".to_owned(),
                CheckCategory::Criterion,
                line,
                o["outcome"].as_str(),
            );
            check.expected = o["expectation"].to_string();
            check
        })
        .collect();
    let turn = (!outcomes.is_empty()).then(|| TurnResult {
        index: 1,
        line,
        status: Status::combine(outcomes.iter().map(|c| c.status)),
        input: "<simulated user>".to_owned(),
        attempts: 1,
        error: None,
        reply: None,
        cut: None,
        latency: None,
        ttft: None,
        checks: outcomes,
    });
    (turn, checks)
}

/// A check judged by the platform: PASS passed, FAIL failed, anything else skipped.
fn judged(label: String, category: CheckCategory, line: u32, outcome: Option<&str>) -> CheckResult {
    let status = match outcome {
        Some("PASS") => Status::Passed,
        Some("FAIL") => Status::Failed,
        _ => Status::Skipped,
    };
    CheckResult {
        label,
        category,
        line,
        status,
        expected: String::new(),
        actual: String::new(),
        method: METHOD,
        score: None,
        reason: None,
    }
}

fn chunks_text(message: &Value) -> String {
    let texts: Vec<&str> = list(&message["chunks"])
        .filter_map(|c| c["text"].as_str())
        .collect();
    texts.join("\n")
}

/// A tool's display name: the call's, the app's for its resource, else the resource's id.
fn tool_name(call: &Value, labels: &Labels) -> String {
    let resource = call["tool"]
        .as_str()
        .or(call["toolsetTool"]["toolId"].as_str());
    call["displayName"]
        .as_str()
        .or_else(|| resource.and_then(|r| labels.get(r)).map(String::as_str))
        .or_else(|| resource.map(|r| r.rsplit('/').next().unwrap_or(r)))
        .unwrap_or_default()
        .to_owned()
}

fn call_text(call: &Value, labels: &Labels) -> String {
    format!("{}({})", tool_name(call, labels), call["args"])
}

fn inputs(inputs: &[Input]) -> String {
    let parts: Vec<String> = inputs
        .iter()
        .map(|input| match input {
            Input::Text(text) => text.clone(),
            Input::Event(name) => format!("<event {name}>"),
            Input::Variables(_) => "<variables>".to_owned(),
            _ => "<input>".to_owned(),
        })
        .collect();
    parts.join(" ")
}

/// A protobuf `Duration` as JSON writes it: `"1.250s"`.
fn duration(text: &str) -> Option<Duration> {
    let seconds: f64 = text.strip_suffix('s')?.parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::duration;
    use std::time::Duration;

    #[test]
    fn durations_are_read_as_protobuf_writes_them() {
        for (text, want) in [
            ("1.250s", Some(Duration::from_millis(1250))),
            ("3s", Some(Duration::from_secs(3))),
            ("-1s", None),
            ("1m", None),
        ] {
            assert_eq!(duration(text), want, "{text:?}");
        }
    }
}
