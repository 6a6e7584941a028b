//! One played turn judged against its expectations, one [`CheckResult`] per expectation in
//! order, then one per unexpected tool call.
//!
//! - Agent text: each expected chunk must be matched by one of the agent's messages, or by all
//!   of them joined by newlines (an agent may split one expected chunk into several messages).
//!   When the chunk names an agent, only messages from that agent (or from no named agent)
//!   count.
//! - Silence (`NoAgentText`) and SCRAPI's UNEXPECTED RESPONSE fail on any non-blank text.
//! - Tool calls: see [`Grader::assign_calls`]. After the assignment, every actual call no
//!   expectation claimed (a call with other arguments is its expectation's failure, claimed)
//!   fails the turn, unless `allow_extra_tool_calls` is set, the call is a
//!   `transfer_to_agent` and the turn expects a transfer, or the turn has no expectations at
//!   all (gecx and Regtrace turns, which are scored over the whole case), or only
//!   [`ReplyCheck`]s (SCRAPI turn evals), which look at nothing they do not name.
//!   The protocol's tool calls do not say which agent made them, so an expected call's `agent`
//!   is not checked.
//! - Tool responses compare with [`json_equal`]; transfers by [`transfer_to`], the rule turn
//!   evals use too.
//! - [`ReplyCheck`]s are judged by [`super::reply`].
//!
//! [`ReplyCheck`]: crate::model::ReplyCheck

use serde_json::Value;

use super::matchers::{
    json_equal, render_call, render_calls, render_expected_call, text_of, transfer_to,
};
use super::{Graded, Grader, Verdict};
use super::{reply, tool_result};
use crate::model::{ExpectationKind, ExpectedToolCall, MatchType, Matcher, Turn};
use crate::results::{CheckCategory, CheckResult, ITEMS_KEPT, Method, Status};
use crate::transcript::Exchange;
use crate::transcript::{Reply, ToolCall};

/// What reports show for a reply with no text.
pub const NO_TEXT: &str = "(no agent text)";

impl Grader {
    /// Judges what the agent did in `exchange` against the turn's expectations.
    pub async fn grade_turn(&self, turn: &Turn, exchange: &Exchange) -> Vec<CheckResult> {
        let reply = &exchange.reply;
        let expected_calls: Vec<&ExpectedToolCall> = turn
            .expectations
            .iter()
            .filter_map(|e| match &e.kind {
                ExpectationKind::ToolCall(call) => Some(call),
                _ => None,
            })
            .collect();
        let calls: Vec<&ToolCall> = reply.tool_calls.iter().collect();
        let assignment = self.assign_calls(&expected_calls, &calls).await;
        let mut call_verdicts = assignment.verdicts.into_iter();

        let mut results = Vec::with_capacity(turn.expectations.len());
        for expectation in &turn.expectations {
            let category = category_of(&expectation.kind);
            let graded = match &expectation.kind {
                ExpectationKind::AgentText { matcher, agent } => {
                    self.agent_text(matcher, agent.as_deref(), reply).await
                }
                ExpectationKind::NoAgentText => silence("no agent text", reply),
                ExpectationKind::UnexpectedResponse => silence("UNEXPECTED RESPONSE", reply),
                ExpectationKind::ToolCall(call) => {
                    let Some(verdict) = call_verdicts.next() else {
                        continue;
                    };
                    tool_call(call, verdict, &calls)
                }
                ExpectationKind::ToolResponse { tool, output } => {
                    tool_response(tool, output.as_ref(), reply)
                }
                ExpectationKind::Transfer { agent } => transfer_to(agent, reply),
                ExpectationKind::Reply(check) => reply::grade(self, check, reply).await,
                ExpectationKind::ToolResult(check) => tool_result::grade(check, reply),
            };
            results.push(graded.at(&expectation.location, category));
        }
        if let Some(execution) = turn.executed_tool() {
            if results.is_empty() {
                // SCRAPI's rule: a tool test without expectations passes when its tool ran.
                let ran = tool_result::ran(&execution.tool, reply);
                results.push(ran.at(&turn.location, CheckCategory::ToolResult));
            }
            return results;
        }

        let only_reply_checks = turn
            .expectations
            .iter()
            .all(|e| matches!(e.kind, ExpectationKind::Reply(_)));
        if !self.options.allow_extra_tool_calls && !only_reply_checks {
            results.extend(unexpected_calls(turn, &calls, &assignment.claimed));
        }
        results
    }

    async fn agent_text(&self, matcher: &Matcher, agent: Option<&str>, reply: &Reply) -> Graded {
        let texts: Vec<&str> = reply
            .messages
            .iter()
            .filter(|m| agent.is_none_or(|want| m.agent.as_deref().is_none_or(|a| a == want)))
            .map(|m| m.text.as_str())
            .filter(|text| !text.trim().is_empty())
            .collect();
        let label = match agent {
            Some(agent) => format!("agent text from {agent}"),
            None => "agent text".to_owned(),
        };
        let expected = text_of(&matcher.expected).into_owned();
        let actual = if reply.text().trim().is_empty() {
            NO_TEXT.to_owned()
        } else {
            reply.text()
        };
        let joined = texts.join("\n");
        let mut candidates = texts.clone();
        if texts.len() > 1 {
            candidates.push(&joined);
        }
        let Some((first, rest)) = candidates.split_first() else {
            let method = self.method_for(matcher.match_type);
            let passed = matcher.match_type == MatchType::Ignore;
            let reason = match agent {
                Some(agent) => format!("no text from agent {agent}"),
                None => "the agent said nothing".to_owned(),
            };
            return Verdict::decided(passed, method, Some(reason))
                .labelled(label, expected, actual);
        };
        let mut best = self.match_text(matcher, first).await;
        for candidate in rest {
            if best.status == Status::Passed {
                break;
            }
            let verdict = self.match_text(matcher, candidate).await;
            if verdict.status == Status::Passed || !better_failure(&best, &verdict) {
                best = verdict;
            }
        }
        best.labelled(label, expected, actual)
    }
}

/// The category a check of `kind` is counted under.
fn category_of(kind: &ExpectationKind) -> CheckCategory {
    match kind {
        ExpectationKind::AgentText { .. } => CheckCategory::AgentText,
        ExpectationKind::NoAgentText | ExpectationKind::UnexpectedResponse => {
            CheckCategory::Silence
        }
        ExpectationKind::ToolCall(_) => CheckCategory::ToolCall,
        ExpectationKind::ToolResponse { .. } => CheckCategory::ToolResponse,
        ExpectationKind::Transfer { .. } => CheckCategory::Transfer,
        ExpectationKind::Reply(check) => reply::category(check),
        ExpectationKind::ToolResult(_) => CheckCategory::ToolResult,
    }
}

/// An expected call's verdict, shown against the calls of the same name (all calls if none).
fn tool_call(call: &ExpectedToolCall, verdict: Verdict, calls: &[&ToolCall]) -> Graded {
    let same_name: Vec<&ToolCall> = calls
        .iter()
        .copied()
        .filter(|c| c.name == call.name)
        .collect();
    let actual = if same_name.is_empty() {
        render_calls(calls)
    } else {
        render_calls(&same_name)
    };
    let label = format!("tool call {}", call.name);
    verdict.labelled(label, render_expected_call(call), actual)
}

/// A failed check for each call no expectation claimed (a transfer call is the transfer's
/// when the turn expects one).
fn unexpected_calls(turn: &Turn, calls: &[&ToolCall], claimed: &[bool]) -> Vec<CheckResult> {
    let transfer_expected = turn
        .expectations
        .iter()
        .any(|e| matches!(e.kind, ExpectationKind::Transfer { .. }));
    let mut results = Vec::new();
    let mut unclaimed = (calls.iter().zip(claimed))
        .filter(|(call, claimed)| !(**claimed || transfer_expected && call.is_transfer()))
        .map(|(call, _)| call);
    // A reply of a million calls would be a million checks: past the calls a report keeps of
    // a reply, one check counts the rest.
    for call in unclaimed.by_ref().take(ITEMS_KEPT) {
        let rendered = render_call(call);
        let reason = format!("unexpected tool call {rendered}");
        let graded = Verdict::fail(Method::deterministic("tool-call"), reason).labelled(
            "unexpected tool call",
            "no other tool calls".to_owned(),
            rendered,
        );
        results.push(graded.at(&turn.location, CheckCategory::UnexpectedToolCall));
    }
    let more = unclaimed.count();
    if more > 0 {
        let reason = format!("{more} more unexpected tool calls");
        let graded = Verdict::fail(Method::deterministic("tool-call"), reason.clone()).labelled(
            "unexpected tool call",
            "no other tool calls".to_owned(),
            reason,
        );
        results.push(graded.at(&turn.location, CheckCategory::UnexpectedToolCall));
    }
    results
}

/// Whether `kept` stays the failure to report over `new`: an error (the run could not judge)
/// wins over a failure, then the higher score, then the first.
fn better_failure(kept: &Verdict, new: &Verdict) -> bool {
    if kept.status != new.status {
        return kept.status == Status::Error;
    }
    kept.score.unwrap_or(0.0) >= new.score.unwrap_or(0.0)
}

fn silence(label: &str, reply: &Reply) -> Graded {
    let text = reply.text();
    let silent = text.trim().is_empty();
    let reason = format!("the agent replied: {}", text.trim());
    let actual = if silent { NO_TEXT.to_owned() } else { text };
    Verdict::decided(silent, Method::deterministic("no-text"), Some(reason)).labelled(
        label,
        NO_TEXT.to_owned(),
        actual,
    )
}

fn tool_response(tool: &str, output: Option<&Value>, reply: &Reply) -> Graded {
    let responses: Vec<&Value> = reply
        .tool_calls
        .iter()
        .filter(|call| call.name == tool)
        .filter_map(|call| call.response.as_ref())
        .collect();
    let called = reply.tool_calls.iter().any(|call| call.name == tool);
    let (passed, method) = match output {
        Some(output) => (
            responses.iter().any(|r| json_equal(output, r)),
            Method::deterministic("exact"),
        ),
        None => (
            !responses.is_empty(),
            Method::deterministic("tool-response"),
        ),
    };
    let reason = if !called {
        format!("no call to {tool}")
    } else if responses.is_empty() {
        format!("the {tool} call shows no response")
    } else {
        format!("{tool} responded differently")
    };
    let expected = match output {
        Some(output) => format!("{tool} -> {output}"),
        None => format!("a response from {tool}"),
    };
    let actual = if responses.is_empty() {
        "(no response)".to_owned()
    } else {
        let shown: Vec<String> = responses.iter().map(|r| format!("{tool} -> {r}")).collect();
        shown.join("; ")
    };
    Verdict::decided(passed, method, Some(reason)).labelled(
        format!("tool response {tool}"),
        expected,
        actual,
    )
}
