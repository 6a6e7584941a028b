//! Masks the credentials goldgate knows out of a report, once, before any sink or the
//! baseline reads it: every sink renders the same masked report.

use crate::secrets::Secrets;
use crate::transcript::Reply;

use super::{CaseResult, CheckResult, Report, TurnResult};

impl Report {
    /// Masks every text an agent, a judge or a simulated user may have written, and what
    /// describes the agent and the judges. Case ids and files are left as they are: they come
    /// from the committed goldens and match a case across reports.
    pub fn mask(&mut self, secrets: &Secrets) {
        if secrets.is_empty() {
            return;
        }
        secrets.mask_string(&mut self.agent);
        self.judges.iter_mut().for_each(|j| secrets.mask_string(j));
        for usage in &mut self.judge_usage {
            secrets.mask_string(&mut usage.judge);
        }
        if let Some(log) = &mut self.agent_log {
            secrets.mask_string(log);
        }
        for waits in &mut self.rate_limits {
            secrets.mask_string(&mut waits.endpoint);
        }
        if let Some(gate) = &mut self.gate {
            secrets.mask_string(&mut gate.baseline);
            gate.notes.iter_mut().for_each(|n| secrets.mask_string(n));
        }
        for case in &mut self.cases {
            mask_case(case, secrets);
        }
    }
}

pub(super) fn mask_case(case: &mut CaseResult, secrets: &Secrets) {
    if let Some(error) = &mut case.error {
        secrets.mask_string(error);
    }
    for turn in &mut case.turns {
        mask_turn(turn, secrets);
    }
    for check in &mut case.checks {
        mask_check(check, secrets);
    }
}

fn mask_turn(turn: &mut TurnResult, secrets: &Secrets) {
    // A simulated user's line is written by a model that may have read the agent's echo.
    secrets.mask_string(&mut turn.input);
    if let Some(error) = &mut turn.error {
        secrets.mask_string(error);
    }
    if let Some(reply) = &mut turn.reply {
        mask_reply(reply, secrets);
    }
    for check in &mut turn.checks {
        mask_check(check, secrets);
    }
}

fn mask_check(check: &mut CheckResult, secrets: &Secrets) {
    secrets.mask_string(&mut check.label);
    secrets.mask_string(&mut check.expected);
    secrets.mask_string(&mut check.actual);
    if let Some(reason) = &mut check.reason {
        secrets.mask_string(reason);
    }
}

/// Masks every string of a reply (texts, tool arguments and responses, variables, errors)
/// through its JSON form, so that a field added to [`Reply`] is masked too.
pub fn mask_reply(reply: &mut Reply, secrets: &Secrets) {
    let Ok(mut value) = serde_json::to_value(&*reply) else {
        *reply = withheld();
        return;
    };
    let before = value.clone();
    secrets.mask_json(&mut value);
    if value != before {
        // A reply that no longer reads (it cannot happen: only strings changed) is withheld
        // rather than kept with the secret in it.
        *reply = serde_json::from_value(value).unwrap_or_else(|_| withheld());
    }
}

fn withheld() -> Reply {
    Reply {
        messages: vec![crate::transcript::Message {
            text: "[reply withheld: it could not be masked]".to_owned(),
            agent: None,
        }],
        ..Reply::default()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::transcript::{Message, ToolCall};

    #[test]
    fn replies_errors_and_checks_are_masked() {
        let secrets = Secrets::new();
        secrets.add("tok-SECRET-42");
        let mut report = crate::results::testing::report(vec![crate::results::testing::case(
            "goldens/a.json",
            "a",
            crate::results::Status::Failed,
        )]);
        report.agent = "http http://127.0.0.1:1/turn/tok-SECRET-42".to_owned();
        let case = &mut report.cases[0];
        case.error = Some("HTTP 500: Authorization: Bearer tok-SECRET-42".to_owned());
        case.turns.push(TurnResult {
            index: 0,
            line: 1,
            status: crate::results::Status::Failed,
            input: "hi".to_owned(),
            attempts: 1,
            error: None,
            reply: Some(Reply {
                messages: vec![Message {
                    text: "you sent tok-SECRET-42".to_owned(),
                    agent: None,
                }],
                tool_calls: vec![ToolCall::new("lookup", json!({"key": "tok-SECRET-42"}))],
                ..Reply::default()
            }),
            cut: None,
            latency: None,
            ttft: None,
            checks: Vec::new(),
        });
        report.mask(&secrets);
        let json = serde_json::to_string(&report).unwrap();
        assert!(!json.contains("SECRET"), "{json}");
        assert!(json.contains("you sent ***"), "{json}");
        assert_eq!(report.agent, "http http://127.0.0.1:1/turn/***");
    }
}
