//! A replayed turn's turn-level results as checks: its semantic similarity (where no agent
//! response is expected, SCRAPI's UNEXPECTED RESPONSE), its overall tool invocation (an extra
//! call fails it) and its hallucination result. The platform states these as metrics only; the
//! checks carry what the agent said or called (its turn's reply) and the platform's score,
//! threshold, label and explanation.

use serde_json::Value;

use super::results::{judged, scored};
use crate::results::{CheckCategory, CheckResult, Status};
use crate::score::{NO_TEXT, render_calls};
use crate::transcript::Reply;

/// The turn's semantic similarity result: the score of its first agent-text check that has
/// none (the platform moved it there from the expectation outcome); with no agent text
/// expected, a FAIL is SCRAPI's UNEXPECTED RESPONSE, a check of its own with what the agent
/// said.
pub(super) fn turn_similarity(
    checks: &mut [CheckResult],
    replay: &Value,
    (line, turn_level): (u32, &Value),
    reply: &Reply,
) -> Option<CheckResult> {
    let similarity = &replay["semanticSimilarityResult"];
    let score = similarity["score"].as_f64();
    let threshold = turn_level["semanticSimilaritySuccessThreshold"].as_f64();
    let mut texts = checks
        .iter_mut()
        .filter(|c| c.category == CheckCategory::AgentText)
        .peekable();
    if texts.peek().is_some() {
        if let (Some(check), Some(score)) = (texts.find(|c| c.score.is_none()), score) {
            check.score = Some(score / 4.0);
            check.reason = Some(scored(score, "4", threshold, similarity));
        }
        return None;
    }
    if similarity["outcome"] != "FAIL" {
        return None;
    }
    let mut check = judged(
        "UNEXPECTED RESPONSE".to_owned(),
        CheckCategory::Silence,
        line,
        Some("FAIL"),
    );
    check.expected = NO_TEXT.to_owned();
    check.actual = match reply.text() {
        text if text.trim().is_empty() => NO_TEXT.to_owned(),
        text => text,
    };
    check.score = score.map(|s| s / 4.0);
    let metric = score.map_or_else(
        || "semantic similarity FAIL".to_owned(),
        |s| scored(s, "4", threshold, similarity),
    );
    check.reason = Some(format!(
        "the platform flagged a reply where the golden expects none ({metric})"
    ));
    Some(check)
}

/// The turn's overall tool invocation result: a check when calls were expected (how many
/// were made), and when it FAILed with none failed on its own (an extra call, or calls out of
/// order), with the calls the agent made.
pub(super) fn tool_invocation(
    checks: &[CheckResult],
    replay: &Value,
    (line, turn_level): (u32, &Value),
    reply: &Reply,
) -> Option<CheckResult> {
    let overall = &replay["overallToolInvocationResult"];
    let score = overall["toolInvocationScore"].as_f64();
    let expected: Vec<&str> = checks
        .iter()
        .filter(|c| c.category == CheckCategory::ToolCall)
        .map(|c| c.expected.as_str())
        .collect();
    let failed = overall["outcome"] == "FAIL";
    if !failed && (expected.is_empty() || score.is_none()) {
        return None;
    }
    let (label, category) = if expected.is_empty() {
        ("unexpected tool call", CheckCategory::UnexpectedToolCall)
    } else {
        ("tool invocation", CheckCategory::ToolCallAccuracy)
    };
    let mut check = judged(
        label.to_owned(),
        category,
        line,
        overall["outcome"].as_str(),
    );
    check.score = score;
    let threshold = turn_level["overallToolInvocationCorrectnessThreshold"].as_f64();
    let metric = score.map(|s| scored(s, "1", threshold, overall));
    if !failed {
        check.reason = metric;
        return Some(check);
    }
    let mut reason = "the platform failed the turn's tool invocation".to_owned();
    if expected.is_empty() {
        check.expected = "no tool call".to_owned();
        reason.push_str(": the agent made a call the golden does not expect");
    } else {
        check.expected = expected.join(", ");
    }
    if let Some(metric) = metric {
        reason.push_str(&format!(" ({metric})"));
    }
    check.actual = render_calls(&reply.tool_calls.iter().collect::<Vec<_>>());
    check.reason = Some(reason);
    Some(check)
}

/// The turn's hallucination result: 1 justified (passed), 0 not justified (failed), -1 no
/// claim to assess (skipped).
pub(super) fn hallucination(result: &Value, line: u32) -> Option<CheckResult> {
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
