//! Case-level checks that say what one turn must hold, moved onto that turn for the formats
//! that check replies turn by turn (SCRAPI, CES).
//!
//! A gecx scenario checks its tool calls and final message over the whole conversation, and a
//! Regtrace case compares its one answer with `expected_output`; SCRAPI and CES say the same
//! per turn. So before such a writer runs: a Regtrace `factuality` reference becomes the last
//! turn's expected text (compared by meaning, as factuality judges it), `tool-called` and
//! `tool-called-with-input` become an expected call of the last turn, `final-message-equals`
//! the last turn's exact text, and `no-tool-called` is dropped because these formats already
//! fail any call a turn does not expect. On a case of several turns the placement is a guess,
//! and reported. Every other check stays where it was, for the writer to carry or report.

use serde_json::Value;

use super::Losses;
use crate::model::{
    ArgsMatcher, Case, CaseCheck, CheckKind, Expectation, ExpectationKind, ExpectedToolCall,
    MatchType, Matcher, Metric, Scorer,
};

/// `case` with every check that belongs to one turn moved onto its last turn.
pub fn onto_turns(case: &Case, format: &str, losses: &mut Losses) -> Case {
    let mut case = case.clone();
    if case.turns.is_empty() {
        return case;
    }
    let checks = std::mem::take(&mut case.checks);
    let called_with_input: Vec<String> = checks
        .iter()
        .filter_map(|check| match &check.kind {
            CheckKind::Scorer(Scorer::ToolCalledWithInput { name, .. }) => Some(name.clone()),
            _ => None,
        })
        .collect();
    for check in checks {
        match turn_expectation(&check, &called_with_input, &case) {
            Moved::Onto(kind) => {
                if case.turns.len() > 1 {
                    losses.add(
                        &check.location,
                        format!(
                            "{format} checks replies turn by turn: `{}`, checked over the whole conversation, is written on the last turn",
                            check.label
                        ),
                    );
                }
                let last = case.turns.len() - 1;
                case.turns[last].expectations.push(Expectation {
                    location: check.location.clone(),
                    kind,
                    note: None,
                });
            }
            Moved::Implied => {}
            Moved::Stays => case.checks.push(check),
        }
    }
    case
}

/// What becomes of one case-level check.
enum Moved {
    /// An expectation of the last turn.
    Onto(ExpectationKind),
    /// Said already by the per-turn format's own rule (no unexpected tool calls).
    Implied,
    Stays,
}

fn turn_expectation(check: &CaseCheck, called_with_input: &[String], case: &Case) -> Moved {
    match &check.kind {
        CheckKind::Metric {
            metric: Metric::Factuality,
            expected_output,
            ..
        } => Moved::Onto(text(MatchType::Semantic, expected_output)),
        CheckKind::Scorer(scorer) => scorer_expectation(scorer, called_with_input, case),
        CheckKind::Metric { .. } | CheckKind::Criterion(_) => Moved::Stays,
    }
}

fn scorer_expectation(scorer: &Scorer, called_with_input: &[String], case: &Case) -> Moved {
    match scorer {
        // `tool-called-with-input` of the same tool says the same call, with its input.
        Scorer::ToolCalled { name } if called_with_input.contains(name) => Moved::Implied,
        Scorer::ToolCalled { name } => Moved::Onto(call(name, ArgsMatcher::default())),
        Scorer::ToolCalledWithInput { name, input } => Moved::Onto(call(name, input.clone())),
        Scorer::FinalMessageEquals { pattern } => Moved::Onto(text(MatchType::Exact, pattern)),
        Scorer::NoToolCalled { name } if !expects_call(case, name.as_deref()) => Moved::Implied,
        _ => Moved::Stays,
    }
}

/// Whether a turn of `case` expects a call of `name` (of any tool when `None`).
fn expects_call(case: &Case, name: Option<&str>) -> bool {
    case.turns
        .iter()
        .flat_map(|turn| &turn.expectations)
        .any(|e| matches!(&e.kind, ExpectationKind::ToolCall(call) if name.is_none_or(|n| n == call.name)))
}

fn text(match_type: MatchType, expected: &str) -> ExpectationKind {
    ExpectationKind::AgentText {
        matcher: Matcher::new(match_type, Value::String(expected.to_owned())),
        agent: None,
    }
}

fn call(name: &str, args: ArgsMatcher) -> ExpectationKind {
    ExpectationKind::ToolCall(ExpectedToolCall {
        name: name.to_owned(),
        args,
        agent: None,
    })
}
