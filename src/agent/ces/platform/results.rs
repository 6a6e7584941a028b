//! An `EvaluationResult` into goldgate's one results model: the result a case, each replayed
//! turn a turn whose expectation outcomes are checks (with the platform's score, label,
//! explanation and the threshold it was held to), the turn's hallucination result a
//! hallucination check, each custom expectation (`llmCriteria`) a criterion check, and a
//! scenario's rubrics, expectations and user-goal result checks over the conversation.
//!
//! The verdict is the platform's (`evaluationStatus`); the checks say why, each failed one
//! with the turn, the metric and what the agent said or called ([`super::turn_metrics`] for
//! the failures the platform states as turn-level metrics only). A FAIL whose reason cannot be
//! read stays a failure, with a check saying so. A result that never completed says why the run
//! ended first (goldgate cancelled it, or the platform ended it in error). Scores are written
//! in `0..=1` as every score of a report: semantic similarity 0-4 is divided by 4.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use super::conversation::{self, Conversations};
use super::turn_metrics::{hallucination, tool_invocation, turn_similarity};
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

/// What reading a result needs besides the result itself.
pub(super) struct Context<'a> {
    pub labels: &'a Labels,
    /// The conversations of the turns of failed results ([`super::conversation`]).
    pub conversations: &'a Conversations,
    /// Why the evaluation run ended before every result completed (goldgate cancelled it, or
    /// the platform ended it in error); empty when it completed.
    pub unfinished: &'a str,
}

/// The case's result from the platform's `result`.
pub(super) fn of(case: &Case, result: &Value, context: &Context) -> CaseResult {
    let state = result["executionState"].as_str().unwrap_or_default();
    if state != "COMPLETED" {
        return error(case, &unfinished(result, state, context.unfinished));
    }
    let thresholds = &result["evaluationMetricsThresholds"]["goldenEvaluationMetricsThresholds"];
    let golden = &result["goldenResult"];
    let mut turns: Vec<TurnResult> = list(&golden["turnReplayResults"])
        .enumerate()
        .map(|(i, replay)| {
            let reply = conversation::reply_of(result, i, context.conversations, context.labels);
            turn(case, (i, replay, reply), (thresholds, context.labels))
        })
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
    let said_why =
        turns.iter().any(|t| t.status.is_bad()) || checks.iter().any(|c| c.status.is_bad());
    if status == Status::Failed && !said_why {
        checks.push(unexplained(case, result));
    }
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

/// Why a result in `state` (not COMPLETED) has no verdict: the platform's error for an ERROR,
/// else why the run ended first (`unfinished`), else that the platform left it unfinished.
fn unfinished(result: &Value, state: &str, unfinished: &str) -> String {
    let info = &result["errorInfo"];
    if state == "ERROR" || !info.is_null() {
        let what = format!(
            "the platform could not run the evaluation ({}): {}",
            info["errorType"].as_str().unwrap_or("ERROR"),
            info["errorMessage"].as_str().unwrap_or("no message")
        );
        return match unfinished {
            "" => what,
            why => format!("{why}; {what}"),
        };
    }
    match unfinished {
        "" => format!(
            "the platform ended the evaluation run with this result still {}",
            if state.is_empty() {
                "unfinished"
            } else {
                state
            }
        ),
        why => why.to_owned(),
    }
}

/// A failed case whose result names no failed expectation, metric or error: the platform's
/// verdict stands (fail closed), saying that its reason could not be read.
fn unexplained(case: &Case, result: &Value) -> CheckResult {
    let mut check = judged(
        "evaluation status".to_owned(),
        CheckCategory::Criterion,
        case.location.line,
        Some("FAIL"),
    );
    check.expected = "PASS".to_owned();
    check.actual = "FAIL".to_owned();
    check.reason = Some(format!(
        "the platform failed the evaluation without a failed expectation, metric or error in its result {}",
        result["name"].as_str().unwrap_or("(unnamed)")
    ));
    check
}

fn list(value: &Value) -> impl Iterator<Item = &Value> {
    value.as_array().into_iter().flatten()
}

/// One replayed turn: its expectation outcomes, its turn-level metrics and its
/// hallucination result as checks. `read` is what the app did, from the turn's conversation,
/// when it was read (else what the outcomes observed).
fn turn(
    case: &Case,
    (i, replay, read): (usize, &Value, Option<Reply>),
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
    let reply = read.unwrap_or(reply);
    let turn_level = &thresholds["turnLevelMetricsThresholds"];
    let unexpected = turn_similarity(&mut checks, replay, (line, turn_level), &reply);
    checks.extend(unexpected);
    let invocation = tool_invocation(&checks, replay, (line, turn_level), &reply);
    checks.extend(invocation);
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
        let observed = transfer_of(&outcome["observedAgentTransfer"], labels);
        let actual = observed.agent.clone();
        if !outcome["observedAgentTransfer"].is_null() {
            reply.transfer = Some(observed);
        }
        let wanted = transfer_of(&expected["agentTransfer"], labels).agent;
        let label = format!("transfer to {wanted}");
        (label, CheckCategory::Transfer, wanted, actual)
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
pub(super) fn scored(score: f64, of: &str, threshold: Option<f64>, result: &Value) -> String {
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
pub(super) fn judged(
    label: String,
    category: CheckCategory,
    line: u32,
    outcome: Option<&str>,
) -> CheckResult {
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

/// An `AgentTransfer`, its agent named by its display name, the app's for its resource, else
/// the resource.
pub(super) fn transfer_of(transfer: &Value, labels: &Labels) -> Transfer {
    let resource = transfer["targetAgent"].as_str();
    let known = resource.and_then(|r| labels.get(r)).map(String::as_str);
    let agent = transfer["displayName"].as_str().or(known).or(resource);
    Transfer {
        agent: agent.unwrap_or_default().to_owned(),
        resource: resource.map(str::to_owned),
    }
}

/// A tool's display name: the call's, the app's for its resource, else the resource's id.
pub(super) fn tool_name(call: &Value, labels: &Labels) -> String {
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
