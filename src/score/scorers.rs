//! The gecx scorers over a whole conversation, and the LLM-judge questions (gecx
//! `llm-judge-*`, SCRAPI criteria). Each result is labelled with the scorer's gecx name, for
//! people, and carries its [`CheckCategory`] (see `category`), from which the aggregates
//! (hallucination rate, tool-call accuracy) are computed.
//!
//! Readings where the gecx docs leave room:
//! - `message-contains` is a case-insensitive substring of any agent message;
//!   `message-matches-regex` searches each message and all of them joined by newlines;
//!   `final-message-equals` compares the last agent message, trimmed.
//! - `tool-call-accuracy` scores matched / expected (each actual call serving one expected
//!   call) and passes at 1.0 only.
//! - `handoff-triggered` wants a handoff whose status is neither empty nor `none`.
//! - `latency-p50-under` / `latency-p95-under` use the nearest-rank percentile of the played
//!   turns' latencies (the smallest latency with at least p% of turns at or below it) and pass
//!   when it is strictly below the limit.
//! - An LLM-judge scorer that names a provider other than the configured judge's asks that
//!   provider's judge ([`Judge::other_provider`]), and is skipped when there is none.

use std::time::Duration;

use regex::Regex;

use super::judge::{Judge, JudgeQuestion, JudgeVerdict, NO_JUDGE};
use super::matchers::{has_semantic, render_calls, render_expected_call};
use super::{Graded, Grader, Verdict};
use crate::model::{ArgsMatcher, ExpectedToolCall, Provider, Scorer};
use crate::results::{CheckCategory, Method, Status, TurnResult};
use crate::stats::quantile;
use crate::transcript::{Reply, ToolCall};

/// What the agent did over the played turns of a case.
pub(super) struct Played<'a> {
    replies: Vec<&'a Reply>,
    latencies: Vec<Duration>,
}

impl<'a> Played<'a> {
    pub(super) fn new(turns: &'a [TurnResult]) -> Self {
        Self {
            replies: turns.iter().filter_map(|t| t.reply.as_ref()).collect(),
            latencies: turns.iter().filter_map(|t| t.latency).collect(),
        }
    }

    fn messages(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.replies
            .iter()
            .flat_map(|e| &e.messages)
            .map(|m| m.text.as_str())
            .filter(|text| !text.trim().is_empty())
    }

    fn calls(&self) -> Vec<&'a ToolCall> {
        self.replies.iter().flat_map(|e| &e.tool_calls).collect()
    }

    /// Every agent message, joined by newlines, or a placeholder when there is none.
    fn text(&self) -> String {
        let text = self.messages().collect::<Vec<_>>().join("\n");
        if text.is_empty() {
            "(no agent text)".to_owned()
        } else {
            text
        }
    }

    /// The final answer: the text of the last turn in which the agent said something.
    pub(super) fn last_answer(&self) -> String {
        self.replies
            .iter()
            .rev()
            .map(|e| e.text())
            .find(|text| !text.trim().is_empty())
            .unwrap_or_default()
    }

    fn handoffs(&self) -> Vec<&'a str> {
        self.replies
            .iter()
            .filter_map(|reply| reply.handoff())
            .map(|h| h.status.trim())
            .collect()
    }

    fn error_codes(&self) -> Vec<&'a str> {
        self.replies
            .iter()
            .filter_map(|e| e.error.as_ref())
            .map(|error| error.code.as_str())
            .collect()
    }
}

/// What a scorer's check is about.
pub(super) fn category(scorer: &Scorer) -> CheckCategory {
    match scorer {
        Scorer::MessageContains { .. }
        | Scorer::MessageMatchesRegex { .. }
        | Scorer::FinalMessageEquals { .. } => CheckCategory::AgentText,
        Scorer::ToolCalled { .. } | Scorer::ToolCalledWithInput { .. } => CheckCategory::ToolCall,
        Scorer::NoToolCalled { .. } => CheckCategory::UnexpectedToolCall,
        Scorer::ToolCallAccuracy { .. } => CheckCategory::ToolCallAccuracy,
        Scorer::HandoffTriggered | Scorer::NoHandoff => CheckCategory::Handoff,
        Scorer::ErrorCode { .. } | Scorer::NoError => CheckCategory::AgentError,
        Scorer::LatencyP50Under { .. } | Scorer::LatencyP95Under { .. } => CheckCategory::Latency,
        Scorer::JudgeNotHallucinating { .. } => CheckCategory::Hallucination,
        Scorer::JudgeHelpfulness { .. } => CheckCategory::Helpfulness,
        Scorer::JudgeToneMatches { .. } => CheckCategory::Tone,
    }
}

fn listed(items: &[&str], none: &str) -> String {
    if items.is_empty() {
        none.to_owned()
    } else {
        items.join(", ")
    }
}

impl Grader {
    pub(super) async fn scorer(
        &self,
        label: &str,
        scorer: &Scorer,
        played: &Played<'_>,
        transcript: &str,
    ) -> Graded {
        let method = Method::Deterministic(label.to_owned().into());
        let calls = played.calls();
        match scorer {
            Scorer::MessageContains { pattern } => message_contains(label, method, played, pattern),
            Scorer::MessageMatchesRegex { regex } => message_matches(label, method, played, regex),
            Scorer::FinalMessageEquals { pattern } => {
                final_message_equals(label, method, played, pattern)
            }
            Scorer::ToolCalled { name } => tool_called(label, method, &calls, name),
            Scorer::ToolCalledWithInput { name, input } => {
                self.tool_called_with_input(label, method, &calls, name, input)
                    .await
            }
            Scorer::NoToolCalled { name } => no_tool_called(label, method, &calls, name.as_deref()),
            Scorer::ToolCallAccuracy { expected } => {
                self.tool_call_accuracy(expected, &calls).await
            }
            Scorer::HandoffTriggered => handoff(label, method, played, true),
            Scorer::NoHandoff => handoff(label, method, played, false),
            Scorer::ErrorCode { code } => error_code(label, method, played, code),
            Scorer::NoError => no_error(label, method, played),
            Scorer::LatencyP50Under { limit } => latency(label, method, played, 50, *limit),
            Scorer::LatencyP95Under { limit } => latency(label, method, played, 95, *limit),
            Scorer::JudgeNotHallucinating {
                grounding_context,
                provider,
            } => {
                let question = JudgeQuestion::NotHallucinating {
                    grounding: grounding_context,
                };
                self.ask(label, question, *provider, played, transcript)
                    .await
            }
            Scorer::JudgeHelpfulness { criteria, provider } => {
                let question = JudgeQuestion::Helpfulness {
                    criteria: criteria.as_deref(),
                };
                self.ask(label, question, *provider, played, transcript)
                    .await
            }
            Scorer::JudgeToneMatches { tone, provider } => {
                let question = JudgeQuestion::ToneMatches { tone };
                self.ask(label, question, *provider, played, transcript)
                    .await
            }
        }
    }

    /// `tool-called-with-input`: one expected call, matched like the goldens' calls (its input
    /// may need the judge for semantic fields).
    async fn tool_called_with_input(
        &self,
        label: &str,
        method: Method,
        calls: &[&ToolCall],
        name: &str,
        input: &ArgsMatcher,
    ) -> Graded {
        let want = ExpectedToolCall {
            name: name.to_owned(),
            args: input.clone(),
            agent: None,
        };
        let assignment = self.assign_calls(&[&want], calls).await;
        let verdict = assignment
            .verdicts
            .into_iter()
            .next()
            .unwrap_or_else(|| Verdict::fail(method, format!("{name} was not called")));
        verdict.labelled(label, render_expected_call(&want), render_calls(calls))
    }

    async fn tool_call_accuracy(
        &self,
        expected: &[ExpectedToolCall],
        calls: &[&ToolCall],
    ) -> Graded {
        let label = "tool-call-accuracy";
        let wanted: Vec<&ExpectedToolCall> = expected.iter().collect();
        let assignment = self.assign_calls(&wanted, calls).await;
        let misses: Vec<String> = assignment
            .verdicts
            .iter()
            .filter(|v| v.status != Status::Passed)
            .filter_map(|v| v.reason.clone())
            .collect();
        let matched = expected.len() - misses.len();
        let score = if expected.is_empty() {
            1.0
        } else {
            matched as f64 / expected.len() as f64
        };
        let method = if wanted.iter().any(|w| has_semantic(&w.args.fields)) {
            self.semantic_method()
        } else {
            Method::Deterministic(label.into())
        };
        let status = if assignment
            .verdicts
            .iter()
            .any(|v| v.status == Status::Error)
        {
            Status::Error
        } else if misses.is_empty() {
            Status::Passed
        } else {
            Status::Failed
        };
        let reason = (!misses.is_empty()).then(|| {
            format!(
                "{matched} of {} expected calls matched: {}",
                expected.len(),
                misses.join("; ")
            )
        });
        let rendered: Vec<String> = expected.iter().map(render_expected_call).collect();
        Verdict {
            status,
            method,
            score: Some(score),
            reason,
        }
        .labelled(label, rendered.join("; "), render_calls(calls))
    }

    /// The configured judge, or why the check is skipped: none is configured, or the check asks
    /// for another provider.
    fn judge_for(&self, provider: Option<Provider>) -> Result<&dyn Judge, String> {
        let judge = self
            .judge
            .as_deref()
            .ok_or_else(|| self.no_judge.clone().unwrap_or_else(|| NO_JUDGE.to_owned()))?;
        match provider {
            Some(provider) if provider != judge.provider() => judge.other_provider(provider),
            _ => Ok(judge),
        }
    }

    /// Asks the judge `question` about the transcript. `Err` holds the verdict to report
    /// instead: skipped without a judge, an error when the judge failed.
    pub(super) async fn consult(
        &self,
        question: JudgeQuestion<'_>,
        provider: Option<Provider>,
        transcript: &str,
    ) -> Result<(JudgeVerdict, Method), Verdict> {
        let judge = self.judge_for(provider).map_err(Verdict::skipped)?;
        let method = judge.method();
        match judge.criterion(question, transcript).await {
            Ok(verdict) => Ok((verdict, method)),
            Err(err) => Err(Verdict::error(method, err.to_string())),
        }
    }

    /// A yes/no judge check.
    pub(super) async fn ask(
        &self,
        label: &str,
        question: JudgeQuestion<'_>,
        provider: Option<Provider>,
        played: &Played<'_>,
        transcript: &str,
    ) -> Graded {
        let verdict = match self.consult(question, provider, transcript).await {
            Ok((answer, method)) => {
                let reason = answer
                    .explanation
                    .or_else(|| Some("the judge said no".to_owned()));
                let mut verdict = Verdict::decided(answer.passed, method, reason);
                verdict.score = answer.score;
                verdict
            }
            Err(verdict) => verdict,
        };
        verdict.labelled(label, question.describe(), played.text())
    }
}

// The agent-text scorers.

fn message_contains(label: &str, method: Method, played: &Played<'_>, pattern: &str) -> Graded {
    let needle = pattern.to_lowercase();
    let passed = played
        .messages()
        .any(|m| m.to_lowercase().contains(&needle));
    let reason = format!("no agent message contains {pattern:?} (any case)");
    Verdict::decided(passed, method, Some(reason)).labelled(
        label,
        pattern.to_owned(),
        played.text(),
    )
}

fn message_matches(label: &str, method: Method, played: &Played<'_>, regex: &Regex) -> Graded {
    let joined = played.messages().collect::<Vec<_>>().join("\n");
    let passed = played.messages().any(|m| regex.is_match(m)) || regex.is_match(&joined);
    let reason = format!("no agent message matches /{}/", regex.as_str());
    Verdict::decided(passed, method, Some(reason)).labelled(
        label,
        format!("/{}/", regex.as_str()),
        played.text(),
    )
}

fn final_message_equals(label: &str, method: Method, played: &Played<'_>, pattern: &str) -> Graded {
    let last = played.messages().last().map(str::trim);
    let passed = last == Some(pattern.trim());
    let actual = last.unwrap_or("(no agent text)").to_owned();
    let reason = "the last agent message differs".to_owned();
    Verdict::decided(passed, method, Some(reason)).labelled(label, pattern.to_owned(), actual)
}

// The tool-call scorers (`tool-called-with-input` and `tool-call-accuracy` are on [`Grader`]:
// they may ask the judge).

fn tool_called(label: &str, method: Method, calls: &[&ToolCall], name: &str) -> Graded {
    let passed = calls.iter().any(|c| c.name == name);
    let reason = format!("{name} was not called");
    Verdict::decided(passed, method, Some(reason)).labelled(
        label,
        name.to_owned(),
        render_calls(calls),
    )
}

/// `no-tool-called`: of the tool `name`, or of any tool without one.
fn no_tool_called(label: &str, method: Method, calls: &[&ToolCall], name: Option<&str>) -> Graded {
    let offending: Vec<&ToolCall> = calls
        .iter()
        .copied()
        .filter(|c| name.is_none_or(|n| c.name == n))
        .collect();
    let expected = match name {
        Some(name) => format!("no call to {name}"),
        None => "no tool calls".to_owned(),
    };
    let reason = format!("called {}", render_calls(&offending));
    Verdict::decided(offending.is_empty(), method, Some(reason)).labelled(
        label,
        expected,
        render_calls(calls),
    )
}

// The handoff and agent-error scorers.

/// `handoff-triggered` when `wanted`, `no-handoff` otherwise.
fn handoff(label: &str, method: Method, played: &Played<'_>, wanted: bool) -> Graded {
    let handoffs = played.handoffs();
    let passed = handoffs.is_empty() != wanted;
    let actual = if handoffs.is_empty() {
        "no handoff".to_owned()
    } else {
        format!("handoff {}", handoffs.join(", "))
    };
    let expected = if wanted { "a handoff" } else { "no handoff" };
    let reason = format!("expected {expected}, got {actual}");
    Verdict::decided(passed, method, Some(reason)).labelled(label, expected.to_owned(), actual)
}

fn error_code(label: &str, method: Method, played: &Played<'_>, code: &str) -> Graded {
    let codes = played.error_codes();
    let passed = codes.contains(&code);
    let reason = format!("no error with code {code}");
    Verdict::decided(passed, method, Some(reason)).labelled(
        label,
        code.to_owned(),
        listed(&codes, "no error"),
    )
}

fn no_error(label: &str, method: Method, played: &Played<'_>) -> Graded {
    let codes = played.error_codes();
    let actual = listed(&codes, "no error");
    let reason = format!("the agent reported {actual}");
    Verdict::decided(codes.is_empty(), method, Some(reason)).labelled(
        label,
        "no error".to_owned(),
        actual,
    )
}

fn latency(label: &str, method: Method, played: &Played<'_>, p: u32, limit: Duration) -> Graded {
    let latencies = &played.latencies;
    let expected = format!("p{p} < {} ms", limit.as_millis());
    let mut sorted = latencies.clone();
    sorted.sort_unstable();
    let Some(value) = quantile(&sorted, f64::from(p) / 100.0) else {
        return Verdict::skipped("no turn was played").labelled(label, expected, "-".to_owned());
    };
    let actual = format!(
        "p{p} = {} ms over {} turns",
        value.as_millis(),
        latencies.len()
    );
    let reason = format!(
        "p{p} latency {} ms is not under {} ms",
        value.as_millis(),
        limit.as_millis()
    );
    Verdict::decided(value < limit, method, Some(reason)).labelled(label, expected, actual)
}
