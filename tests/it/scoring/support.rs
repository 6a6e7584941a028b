//! Builders for turns, cases and exchanges, and a judge whose answers are fixed.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use goldgate::model::{
    ArgsMatcher, Case, CaseCheck, CheckKind, Expectation, ExpectationKind, ExpectedToolCall,
    Format, Location, MatchType, Matcher, Provider, Turn, ValueMatcher,
};
use goldgate::results::{CheckResult, Method, Status, TurnResult};
use goldgate::score::{
    Grader, Judge, JudgeError, JudgeQuestion, JudgeScore, JudgeVerdict, ScoreOptions,
};
use goldgate::transcript::Exchange;
use goldgate::transcript::{Handoff, Message, Reply, ReplyError, ToolCall};
use serde_json::{Value, json};

pub(crate) fn loc(line: u32) -> Location {
    Location::new(&Arc::from(Path::new("goldens/orders.yaml")), line, 1)
}

pub(crate) fn turn(kinds: Vec<ExpectationKind>) -> Turn {
    Turn {
        index: 1,
        location: loc(1),
        inputs: Vec::new(),
        expectations: kinds
            .into_iter()
            .enumerate()
            .map(|(i, kind)| Expectation {
                location: loc(i as u32 + 2),
                kind,
                note: None,
            })
            .collect(),
        tool_mocks: Vec::new(),
        recorded_reply: None,
        comments: Vec::new(),
    }
}

pub(crate) fn says(match_type: MatchType, text: &str) -> ExpectationKind {
    let matcher = if match_type == MatchType::Regexp {
        Matcher::regexp(text).expect("test pattern")
    } else {
        Matcher::new(match_type, json!(text))
    };
    ExpectationKind::AgentText {
        matcher,
        agent: None,
    }
}

pub(crate) fn leaf(match_type: MatchType, value: Value) -> ValueMatcher {
    ValueMatcher::Leaf(match match_type {
        MatchType::Regexp => Matcher::regexp(value.as_str().expect("pattern")).expect("pattern"),
        other => Matcher::new(other, value),
    })
}

pub(crate) fn expected_call(name: &str, fields: Vec<(&str, ValueMatcher)>) -> ExpectedToolCall {
    ExpectedToolCall {
        name: name.to_owned(),
        args: ArgsMatcher {
            fields: fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
        },
        agent: None,
    }
}

pub(crate) fn exact_args(name: &str, args: &[(&str, Value)]) -> ExpectedToolCall {
    let fields = args
        .iter()
        .map(|(k, v)| (*k, leaf(MatchType::Exact, v.clone())))
        .collect();
    expected_call(name, fields)
}

pub(crate) fn message(text: &str) -> Message {
    Message {
        text: text.to_owned(),
        agent: None,
    }
}

pub(crate) fn call(name: &str, args: Value) -> ToolCall {
    ToolCall {
        name: name.to_owned(),
        args,
        response: None,
        resource: None,
    }
}

pub(crate) fn reply(texts: &[&str], calls: Vec<ToolCall>) -> Reply {
    Reply {
        messages: texts.iter().map(|t| message(t)).collect(),
        tool_calls: calls,
        ..Reply::default()
    }
}

pub(crate) fn exchange(reply: Reply, latency_ms: u64) -> Exchange {
    Exchange {
        reply,
        latency: Duration::from_millis(latency_ms),
        ttft: None,
    }
}

pub(crate) fn played(index: usize, input: &str, reply: Reply, latency_ms: u64) -> TurnResult {
    TurnResult {
        index,
        line: index as u32,
        status: Status::Passed,
        input: input.to_owned(),
        attempts: 1,
        error: None,
        reply: Some(reply),
        cut: None,
        latency: Some(Duration::from_millis(latency_ms)),
        ttft: None,
        checks: Vec::new(),
    }
}

pub(crate) fn case(checks: Vec<CheckKind>) -> Case {
    Case {
        id: "case".to_owned(),
        name: "case".to_owned(),
        description: None,
        format: Format::GecxScenario,
        location: loc(1),
        tags: Vec::new(),
        session_parameters: Default::default(),
        system_prompt: None,
        context: Vec::new(),
        turns: Vec::new(),
        checks: checks
            .into_iter()
            .map(|kind| CaseCheck {
                location: loc(10),
                label: label_of(&kind),
                kind,
            })
            .collect(),
        weight: 1.0,
        simulated_user: None,
        comments: Vec::new(),
    }
}

/// The label a format gives a check of `kind`.
pub(crate) fn label_of(kind: &CheckKind) -> String {
    match kind {
        CheckKind::Scorer(scorer) => goldgate::formats::gecx::scorers::name(scorer).to_owned(),
        CheckKind::Criterion(_) => "criterion".to_owned(),
        CheckKind::Metric { metric, .. } => {
            goldgate::formats::regtrace::metric_name(*metric).to_owned()
        }
    }
}

pub(crate) fn grader() -> Grader {
    Grader::default()
}

pub(crate) fn judged(judge: FakeJudge) -> (Grader, Arc<FakeJudge>) {
    let judge = Arc::new(judge);
    let grader = Grader::new(Some(judge.clone()), ScoreOptions::default());
    (grader, judge)
}

pub(crate) async fn grade(
    grader: &Grader,
    kinds: Vec<ExpectationKind>,
    reply: Reply,
) -> Vec<CheckResult> {
    grader.grade_turn(&turn(kinds), &exchange(reply, 100)).await
}

pub(crate) fn statuses(checks: &[CheckResult]) -> Vec<Status> {
    checks.iter().map(|c| c.status).collect()
}

/// That the check gives a reason, and the reason says `fragment`.
#[track_caller]
pub(crate) fn assert_reason(check: &CheckResult, fragment: &str) {
    assert!(
        check
            .reason
            .as_deref()
            .is_some_and(|reason| reason.contains(fragment)),
        "no {fragment:?} in the reason: {check:?}"
    );
}

pub(crate) fn judge_method() -> Method {
    Method::Judge {
        provider: Provider::Anthropic,
        model: "fake-1".to_owned(),
    }
}

/// A judge whose answers are fixed, recording what it was asked.
#[derive(Default)]
pub(crate) struct FakeJudge {
    pub(crate) similarity: f64,
    pub(crate) passes: bool,
    pub(crate) score: Option<f64>,
    pub(crate) broken: bool,
    pub(crate) asked: Mutex<Vec<(String, String)>>,
}

#[async_trait]
impl Judge for FakeJudge {
    fn provider(&self) -> Provider {
        Provider::Anthropic
    }

    fn model(&self) -> String {
        "fake-1".to_owned()
    }

    async fn similarity(&self, _expected: &str, _actual: &str) -> Result<JudgeScore, JudgeError> {
        if self.broken {
            return Err(JudgeError::Request("HTTP 503".to_owned()));
        }
        Ok(JudgeScore {
            score: self.similarity,
            explanation: Some("fake".to_owned()),
        })
    }

    async fn criterion(
        &self,
        question: JudgeQuestion<'_>,
        transcript: &str,
    ) -> Result<JudgeVerdict, JudgeError> {
        if self.broken {
            return Err(JudgeError::Answer("no verdict".to_owned()));
        }
        let mut asked = self.asked.lock().expect("lock");
        asked.push((question.describe(), transcript.to_owned()));
        Ok(JudgeVerdict {
            passed: self.passes,
            score: self.score,
            explanation: Some("fake reasoning".to_owned()),
        })
    }
}

/// The order answer most tests compare with.
pub(crate) const ORDER: &str = "Your order ORD-12345 has shipped and should arrive by April 18th.";

/// A two-turn conversation: a lookup, then a refund with an error and a handoff.
pub(crate) fn conversation() -> Vec<TurnResult> {
    let first = reply(
        &["Let me check invoice INV-42."],
        vec![call("lookup_invoice", json!({"invoice_id": "INV-42"}))],
    );
    let mut second = reply(
        &[
            "Refunded 19.99 for INV-42",
            "  Connecting you to an agent now. ",
        ],
        vec![call(
            "issue_refund",
            json!({"invoice_id": "INV-42", "amount": 19.99}),
        )],
    );
    second.handoff = Some(Handoff {
        status: "requested".into(),
    });
    second.error = Some(ReplyError {
        code: "RATE_LIMITED".into(),
        message: "slow down".into(),
    });
    vec![
        played(1, "I was charged twice", first, 100),
        played(2, "Refund it", second, 900),
    ]
}

/// A conversation with no tool calls, errors or handoffs.
pub(crate) fn quiet_conversation() -> Vec<TurnResult> {
    let mut none = reply(&["Hello, how can I help?"], vec![]);
    none.handoff = Some(Handoff {
        status: "none".into(),
    });
    vec![played(1, "hello", none, 50)]
}
