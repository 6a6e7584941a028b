//! gecx scorers over whole conversations, each passing and failing, and LLM-judge checks with
//! and without a judge.

use std::time::Duration;

use goldgate::model::{ArgsMatcher, CheckKind, MatchType, Provider, Scorer};
use goldgate::results::{CheckResult, Method, Status, TurnResult};
use goldgate::score::{Grader, NO_JUDGE};
use regex::Regex;
use serde_json::json;

use crate::scoring::support::{
    self, FakeJudge, assert_reason, case, conversation, exact_args, grader, judge_method, judged,
    leaf, played, quiet_conversation, reply, statuses,
};

async fn score_one(grader: &Grader, scorer: Scorer, turns: &[TurnResult]) -> CheckResult {
    let case = case(vec![CheckKind::Scorer(scorer)]);
    let mut checks = grader.grade_case(&case, turns).await;
    assert_eq!(checks.len(), 1);
    checks.remove(0)
}

/// Each deterministic gecx scorer with the status it must give on the busy conversation and
/// on the quiet one.
fn gecx_scorers_and_verdicts() -> Vec<(Scorer, Status, Status)> {
    let mut all = text_and_tool_scorers_and_verdicts();
    all.extend(outcome_scorers_and_verdicts());
    all
}

/// [`gecx_scorers_and_verdicts`] on messages and tool calls.
fn text_and_tool_scorers_and_verdicts() -> Vec<(Scorer, Status, Status)> {
    let regex = |p: &str| Regex::new(p).expect("pattern");
    let input = ArgsMatcher {
        fields: vec![("amount".into(), leaf(MatchType::Exact, json!("19.99")))],
    };
    vec![
        (
            Scorer::MessageContains {
                pattern: "REFUNDED".into(),
            },
            Status::Passed,
            Status::Failed,
        ),
        (
            Scorer::MessageMatchesRegex {
                regex: regex(r"(?m)^Refunded \d+\.\d+"),
            },
            Status::Passed,
            Status::Failed,
        ),
        (
            Scorer::FinalMessageEquals {
                pattern: "Connecting you to an agent now.".into(),
            },
            Status::Passed,
            Status::Failed,
        ),
        (
            Scorer::ToolCalled {
                name: "issue_refund".into(),
            },
            Status::Passed,
            Status::Failed,
        ),
        (
            Scorer::ToolCalledWithInput {
                name: "issue_refund".into(),
                input,
            },
            Status::Passed,
            Status::Failed,
        ),
        (
            Scorer::NoToolCalled { name: None },
            Status::Failed,
            Status::Passed,
        ),
        (
            Scorer::NoToolCalled {
                name: Some("delete_account".into()),
            },
            Status::Passed,
            Status::Passed,
        ),
        (
            Scorer::NoToolCalled {
                name: Some("issue_refund".into()),
            },
            Status::Failed,
            Status::Passed,
        ),
    ]
}

/// [`gecx_scorers_and_verdicts`] on hand-offs, errors and latency.
fn outcome_scorers_and_verdicts() -> Vec<(Scorer, Status, Status)> {
    vec![
        (Scorer::HandoffTriggered, Status::Passed, Status::Failed),
        (Scorer::NoHandoff, Status::Failed, Status::Passed),
        (
            Scorer::ErrorCode {
                code: "RATE_LIMITED".into(),
            },
            Status::Passed,
            Status::Failed,
        ),
        (Scorer::NoError, Status::Failed, Status::Passed),
        (
            Scorer::LatencyP50Under {
                limit: Duration::from_millis(500),
            },
            Status::Passed,
            Status::Passed,
        ),
        (
            Scorer::LatencyP95Under {
                limit: Duration::from_millis(500),
            },
            Status::Failed,
            Status::Passed,
        ),
    ]
}

#[tokio::test]
async fn every_deterministic_gecx_scorer_passes_and_fails() {
    let g = grader();
    let cases = gecx_scorers_and_verdicts();
    for (scorer, busy, quiet) in cases {
        let name = goldgate::formats::gecx::scorers::name(&scorer);
        let on_busy = score_one(&g, scorer.clone(), &conversation()).await;
        assert_eq!(
            on_busy.status, busy,
            "{name} on the busy conversation: {on_busy:?}"
        );
        assert_eq!(on_busy.label, name);
        assert!(matches!(on_busy.method, Method::Deterministic(_)), "{name}");
        let on_quiet = score_one(&g, scorer, &quiet_conversation()).await;
        assert_eq!(
            on_quiet.status, quiet,
            "{name} on the quiet conversation: {on_quiet:?}"
        );
        if on_quiet.status == Status::Failed {
            assert!(on_quiet.reason.is_some(), "{name} says why");
        }
    }
    let wrong_input = ArgsMatcher {
        fields: vec![("amount".into(), leaf(MatchType::Exact, json!(5)))],
    };
    let wrong = score_one(
        &g,
        Scorer::ToolCalledWithInput {
            name: "issue_refund".into(),
            input: wrong_input,
        },
        &conversation(),
    )
    .await;
    assert_eq!(wrong.status, Status::Failed);
}

#[tokio::test]
async fn tool_call_accuracy_reports_the_fraction() {
    let g = grader();
    let expected = vec![
        exact_args("lookup_invoice", &[]),
        exact_args("issue_refund", &[("invoice_id", json!("INV-42"))]),
        exact_args("create_ticket", &[]),
    ];
    let partial = score_one(
        &g,
        Scorer::ToolCallAccuracy {
            expected: expected.clone(),
        },
        &conversation(),
    )
    .await;
    assert_eq!(partial.status, Status::Failed);
    assert!((partial.score.unwrap_or_default() - 2.0 / 3.0).abs() < 1e-9);
    assert_reason(&partial, "no call to create_ticket");

    let full = score_one(
        &g,
        Scorer::ToolCallAccuracy {
            expected: expected[..2].to_vec(),
        },
        &conversation(),
    )
    .await;
    assert_eq!(full.status, Status::Passed);
    assert_eq!(full.score, Some(1.0));
}

#[tokio::test]
async fn latency_uses_the_nearest_rank_percentile() {
    let turns: Vec<TurnResult> = [100, 200, 300, 400, 1000]
        .iter()
        .enumerate()
        .map(|(i, ms)| played(i + 1, "hi", reply(&["ok"], vec![]), *ms))
        .collect();
    let g = grader();
    let ms = Duration::from_millis;
    for (scorer, status, why, actual) in [
        (
            Scorer::LatencyP50Under { limit: ms(301) },
            Status::Passed,
            "p50 of 5 is the 3rd",
            None,
        ),
        (
            Scorer::LatencyP50Under { limit: ms(300) },
            Status::Failed,
            "the limit is strict",
            None,
        ),
        (
            Scorer::LatencyP95Under { limit: ms(999) },
            Status::Failed,
            "p95 of 5 is the 5th",
            Some("p95 = 1000 ms over 5 turns"),
        ),
    ] {
        let check = score_one(&g, scorer, &turns).await;
        assert_eq!(check.status, status, "{why}: {check:?}");
        if let Some(actual) = actual {
            assert_eq!(check.actual, actual);
        }
    }
}

fn judge_scorers() -> Vec<Scorer> {
    vec![
        Scorer::JudgeNotHallucinating {
            grounding_context: "INV-42 was charged twice.".into(),
            provider: None,
        },
        Scorer::JudgeHelpfulness {
            criteria: Some("Explains the refund.".into()),
            provider: None,
        },
        Scorer::JudgeToneMatches {
            tone: "empathetic".into(),
            provider: Some(Provider::Anthropic),
        },
    ]
}

#[tokio::test]
async fn llm_judge_scorers_are_skipped_without_a_judge() {
    let mut kinds: Vec<CheckKind> = judge_scorers().into_iter().map(CheckKind::Scorer).collect();
    kinds.push(CheckKind::Criterion("The agent apologises".into()));
    let checks = grader().grade_case(&case(kinds), &conversation()).await;
    assert_eq!(checks.len(), 4);
    for check in &checks {
        assert_eq!(check.status, Status::Skipped, "{check:?}");
        assert_eq!(check.method, Method::None);
        assert_eq!(check.reason.as_deref(), Some(NO_JUDGE));
    }
    assert_eq!(checks[0].label, "llm-judge-not-hallucinating");
    assert_eq!(checks[3].label, "criterion");
}

#[tokio::test]
async fn llm_judge_scorers_are_decided_by_the_judge() {
    let mut kinds: Vec<CheckKind> = judge_scorers().into_iter().map(CheckKind::Scorer).collect();
    kinds.push(CheckKind::Criterion("The agent apologises".into()));
    let conversation = conversation();

    let (yes, judge) = judged(FakeJudge {
        passes: true,
        ..FakeJudge::default()
    });
    let checks = yes.grade_case(&case(kinds.clone()), &conversation).await;
    assert_eq!(statuses(&checks), [Status::Passed; 4]);
    assert!(checks.iter().all(|c| c.method == judge_method()));
    let asked = judge.asked.lock().expect("lock").clone();
    assert_eq!(asked[0].0, "grounded in: INV-42 was charged twice.");
    assert_eq!(asked[3].0, "The agent apologises");
    let transcript = &asked[0].1;
    for part in [
        "user: I was charged twice",
        "tool call: lookup_invoice",
        "Refunded 19.99",
        "handoff: requested",
        "error RATE_LIMITED",
    ] {
        assert!(transcript.contains(part), "{part} in {transcript}");
    }

    let (no, _) = judged(FakeJudge::default());
    let checks = no.grade_case(&case(kinds.clone()), &conversation).await;
    assert_eq!(statuses(&checks), [Status::Failed; 4]);
    assert_eq!(checks[0].reason.as_deref(), Some("fake reasoning"));

    let (broken, _) = judged(FakeJudge {
        broken: true,
        ..FakeJudge::default()
    });
    let checks = broken.grade_case(&case(kinds), &conversation).await;
    assert_eq!(statuses(&checks), [Status::Error; 4]);
}

#[tokio::test]
async fn a_scorer_asking_for_another_provider_is_skipped() {
    let (g, _) = judged(FakeJudge {
        passes: true,
        ..FakeJudge::default()
    });
    let scorer = Scorer::JudgeToneMatches {
        tone: "calm".into(),
        provider: Some(Provider::OpenAi),
    };
    let check = score_one(&g, scorer, &conversation()).await;
    assert_eq!(check.status, Status::Skipped);
    assert_reason(&check, "openai");
}

/// The runner spawns grading on a multi-threaded runtime: the futures must be `Send`.
#[test]
fn grading_futures_are_send() {
    fn send<T: Send>(_: T) {}
    let grader = grader();
    let case = case(Vec::new());
    let turns = conversation();
    send(grader.grade_case(&case, &turns));
    let turn = support::turn(Vec::new());
    let exchange = support::exchange(reply(&[], Vec::new()), 1);
    send(grader.grade_turn(&turn, &exchange));
}
