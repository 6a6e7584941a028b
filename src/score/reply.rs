//! [`ReplyCheck`]s: checks over everything the agent did in one turn, as SCRAPI's turn evals
//! judge them (`TurnEvals.validate_turn_test`).
//!
//! - Text: all agent messages joined by a space; `contains` ignores case, `equals` compares
//!   trimmed text.
//! - Tool names and transfer targets match by [`name_matches`] (a platform resource name ends
//!   with the tool's or agent's id); transfers by [`transfer_to`], as golden turns do.
//! - Tool inputs and outputs: the expected mapping must be a subset either of the map from
//!   tool name to arguments (or response), or of one call's arguments (or response). An empty
//!   mapping only requires its key; a JSON string holding an object is parsed before
//!   comparing; leaves compare with [`json_equal`] or by their text.

use serde_json::{Map, Value};

use super::matchers::{json_equal, name_matches, render_calls, text_of, transfer_to};
use super::{Graded, Grader, Verdict};
use crate::model::{MatchType, ReplyCheck};
use crate::results::{CheckCategory, Method};
use crate::transcript::{Reply, ToolCall};

const NO_TEXT: &str = "(no agent text)";

/// The category reports and aggregates count a reply check under.
pub(super) fn category(check: &ReplyCheck) -> CheckCategory {
    match check {
        ReplyCheck::TextContains(_) | ReplyCheck::TextEquals(_) | ReplyCheck::TextSimilar(_) => {
            CheckCategory::AgentText
        }
        ReplyCheck::ToolCalled(_) | ReplyCheck::ToolInput(_) => CheckCategory::ToolCall,
        ReplyCheck::NoToolCalls => CheckCategory::UnexpectedToolCall,
        ReplyCheck::ToolOutput(_) => CheckCategory::ToolResponse,
        ReplyCheck::TransferTo(_) => CheckCategory::Transfer,
    }
}

pub(super) async fn grade(grader: &Grader, check: &ReplyCheck, reply: &Reply) -> Graded {
    let calls: Vec<&ToolCall> = reply.tool_calls.iter().collect();
    match check {
        ReplyCheck::TextSimilar(expected) => similar(grader, expected, reply).await,
        ReplyCheck::TextContains(expected) => {
            let text = joined_text(reply);
            let passed = text.to_lowercase().contains(&expected.to_lowercase());
            text_verdict("agent text contains", passed, expected, text, "contains")
        }
        ReplyCheck::TextEquals(expected) => {
            let text = joined_text(reply);
            let passed = text.trim() == expected.trim();
            text_verdict("agent text equals", passed, expected, text, "exact")
        }
        ReplyCheck::ToolCalled(name) => {
            let passed = calls.iter().any(|c| name_matches(&c.name, name));
            Verdict::decided(
                passed,
                Method::deterministic("tool-call"),
                Some(format!("{name} was not called")),
            )
            .labelled(
                format!("tool called {name}"),
                format!("a call of {name}"),
                render_calls(&calls),
            )
        }
        ReplyCheck::NoToolCalls => Verdict::decided(
            calls.is_empty(),
            Method::deterministic("tool-call"),
            Some("tools were called".to_owned()),
        )
        .labelled(
            "no tools called",
            "(no tool calls)".to_owned(),
            render_calls(&calls),
        ),
        ReplyCheck::ToolInput(expected) => tool_input(expected, &calls),
        ReplyCheck::ToolOutput(expected) => tool_output(expected, &calls),
        ReplyCheck::TransferTo(agent) => transfer_to(agent, reply),
    }
}

/// The agent's text compared by meaning; no text fails.
async fn similar(grader: &Grader, expected: &str, reply: &Reply) -> Graded {
    let text = joined_text(reply);
    let verdict = if text.is_empty() {
        let method = grader.method_for(MatchType::Semantic);
        Verdict::decided(false, method, Some("the agent said nothing".to_owned()))
    } else {
        grader.semantic(expected, &text).await
    };
    let actual = if text.is_empty() {
        NO_TEXT.to_owned()
    } else {
        text
    };
    verdict.labelled("agent text similar to", expected.to_owned(), actual)
}

/// Some call's arguments (or the map of tool to arguments) hold `expected`.
fn tool_input(expected: &Map<String, Value>, calls: &[&ToolCall]) -> Graded {
    let by_tool: Vec<(&str, &Value)> = calls.iter().map(|c| (c.name.as_str(), &c.args)).collect();
    let why = "no tool call has these arguments";
    subset_verdict("tool input", expected, &by_tool, why, render_calls(calls))
}

/// Some call's response (or the map of tool to response) holds `expected`.
fn tool_output(expected: &Map<String, Value>, calls: &[&ToolCall]) -> Graded {
    let by_tool: Vec<(&str, &Value)> = calls
        .iter()
        .filter_map(|c| Some((c.name.as_str(), c.response.as_ref()?)))
        .collect();
    let actual = if by_tool.is_empty() {
        "(no tool responses)".to_owned()
    } else {
        by_tool
            .iter()
            .map(|(name, response)| format!("{name} -> {response}"))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let why = "no tool response holds this";
    subset_verdict("tool output", expected, &by_tool, why, actual)
}

/// Passes when one of `by_tool`'s values (or their map by tool) holds `expected`.
fn subset_verdict(
    label: &str,
    expected: &Map<String, Value>,
    by_tool: &[(&str, &Value)],
    why: &str,
    actual: String,
) -> Graded {
    let passed = subset_of_any(expected, by_tool);
    Verdict::decided(
        passed,
        Method::deterministic("subset"),
        Some(why.to_owned()),
    )
    .labelled(label, Value::Object(expected.clone()).to_string(), actual)
}

fn text_verdict(
    label: &str,
    passed: bool,
    expected: &str,
    text: String,
    method: &'static str,
) -> Graded {
    let actual = if text.trim().is_empty() {
        NO_TEXT.to_owned()
    } else {
        text
    };
    let reason = format!("{label} `{expected}` failed");
    Verdict::decided(passed, Method::deterministic(method), Some(reason)).labelled(
        label,
        expected.to_owned(),
        actual,
    )
}

/// Every message of the turn, trimmed and joined by a space, as SCRAPI's `full_text`.
fn joined_text(reply: &Reply) -> String {
    reply
        .messages
        .iter()
        .map(|m| m.text.trim())
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The expected mapping is a subset of the tool-name map, or of one tool's value.
fn subset_of_any(expected: &Map<String, Value>, by_tool: &[(&str, &Value)]) -> bool {
    let as_map: Map<String, Value> = by_tool
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).clone()))
        .collect();
    subset(expected, &as_map)
        || by_tool
            .iter()
            .any(|(_, value)| value.as_object().is_some_and(|map| subset(expected, map)))
}

/// SCRAPI's `_check_dict_subset`.
pub(super) fn subset(expected: &Map<String, Value>, actual: &Map<String, Value>) -> bool {
    expected.iter().all(|(key, want)| {
        let Some(got) = actual.get(key) else {
            return false;
        };
        match want {
            Value::Object(inner) if inner.is_empty() => true,
            Value::Object(inner) => {
                let parsed;
                let got = match got {
                    Value::String(s) => match serde_json::from_str::<Value>(s) {
                        Ok(value) => {
                            parsed = value;
                            &parsed
                        }
                        Err(_) => got,
                    },
                    other => other,
                };
                match got.as_object() {
                    Some(map) => subset(inner, map),
                    None => false,
                }
            }
            _ => json_equal(want, got) || text_of(want) == text_of(got),
        }
    })
}
