//! Agent-text expectations: each matcher, chunks over several messages, named agents,
//! silence and UNEXPECTED RESPONSE, semantic matches with and without a judge.

use goldgate::model::{ExpectationKind, MatchType, Matcher};
use goldgate::results::{CheckResult, Method, Status};
use goldgate::transcript::Message;
use serde_json::json;

use crate::scoring::support::{
    FakeJudge, ORDER, assert_reason, grade, grader, judge_method, judged, loc, reply, says,
    statuses,
};

#[tokio::test]
async fn semantic_agent_text_uses_local_similarity_without_judge() {
    let g = grader();
    let ok = grade(
        &g,
        vec![says(MatchType::Semantic, ORDER)],
        reply(
            &["Good news: ORD-12345 was shipped and will arrive April 18."],
            vec![],
        ),
    )
    .await;
    assert_eq!(statuses(&ok), [Status::Passed]);
    assert_eq!(ok[0].method, Method::LocalSimilarity);
    assert_eq!(ok[0].label, "agent text");
    assert_eq!(ok[0].expected, ORDER);
    assert!(ok[0].score.is_some_and(|s| s > 0.6));

    let bad = grade(
        &g,
        vec![says(MatchType::Semantic, ORDER)],
        reply(&["Your order ORD-12345 has not shipped yet."], vec![]),
    )
    .await;
    assert_eq!(statuses(&bad), [Status::Failed]);
    assert_eq!(bad[0].method, Method::LocalSimilarity);
    assert_eq!(bad[0].actual, "Your order ORD-12345 has not shipped yet.");
    assert_reason(&bad[0], "negative");
}

/// "whatever" graded against [`ORDER`] as semantic agent text by `judge`.
async fn judged_semantic_text(judge: FakeJudge) -> Vec<CheckResult> {
    let (g, _) = judged(judge);
    grade(
        &g,
        vec![says(MatchType::Semantic, ORDER)],
        reply(&["whatever"], vec![]),
    )
    .await
}

#[tokio::test]
async fn semantic_agent_text_asks_the_judge_when_configured() {
    let ok = judged_semantic_text(FakeJudge {
        similarity: 3.0,
        ..FakeJudge::default()
    })
    .await;
    assert_eq!(statuses(&ok), [Status::Passed]);
    assert_eq!(ok[0].method, judge_method());
    assert_eq!(ok[0].score, Some(0.75));

    let bad = judged_semantic_text(FakeJudge {
        similarity: 2.0,
        ..FakeJudge::default()
    })
    .await;
    assert_eq!(statuses(&bad), [Status::Failed]);
    assert!(bad[0].reason.as_deref().is_some_and(|r| r.contains("2/4")));

    let broken = judged_semantic_text(FakeJudge {
        broken: true,
        ..FakeJudge::default()
    })
    .await;
    assert_eq!(statuses(&broken), [Status::Error]);
    assert_reason(&broken[0], "503");
}

#[tokio::test]
async fn deterministic_matchers_over_agent_text() {
    use MatchType::{Contains, Exact, Ignore, Regexp};
    use Status::{Failed, Passed};
    // Each expectation, with the status and method its check must have.
    let rows = [
        (Exact, "Your order ORD-12345 has shipped.", Passed, "exact"),
        (Exact, "Your order has shipped.", Failed, "exact"),
        (Contains, "ORD-12345", Passed, "contains"),
        (Contains, "ord-12345", Failed, "contains"),
        (Regexp, r"ORD-\d{5}", Passed, "regexp"),
        (Regexp, r"^INV-", Failed, "regexp"),
        (Ignore, "anything", Passed, "ignore"),
    ];
    let kinds = rows.iter().map(|(kind, text, ..)| says(*kind, text));
    let text = reply(&["  Your order ORD-12345 has shipped.  "], vec![]);
    let checks = grade(&grader(), kinds.collect(), text).await;
    assert_eq!(checks.len(), rows.len());
    for ((kind, text, status, method), check) in rows.iter().zip(&checks) {
        let got = (check.status, check.method.to_string());
        assert_eq!(got, (*status, (*method).to_owned()), "{kind:?} {text:?}");
    }
    assert_eq!(
        checks[1].line,
        loc(3).line,
        "each check sits on its expectation's line"
    );
}

#[tokio::test]
async fn chunks_match_single_messages_or_the_joined_text() {
    let g = grader();
    let two = reply(&["Your order has shipped.", "It arrives April 18."], vec![]);
    let checks = grade(
        &g,
        vec![
            says(MatchType::Exact, "It arrives April 18."),
            says(MatchType::Contains, "shipped.\nIt arrives"),
            says(MatchType::Exact, "Nothing like this"),
        ],
        two,
    )
    .await;
    assert_eq!(
        statuses(&checks),
        [Status::Passed, Status::Passed, Status::Failed]
    );
    assert_eq!(
        checks[2].actual,
        "Your order has shipped.\nIt arrives April 18."
    );
}

#[tokio::test]
async fn a_chunk_naming_an_agent_only_counts_that_agents_messages() {
    let g = grader();
    let mut r = reply(&[], vec![]);
    r.messages = vec![
        Message {
            text: "Billing here, your refund is approved.".into(),
            agent: Some("billing".into()),
        },
        Message {
            text: "Anything else?".into(),
            agent: Some("root".into()),
        },
    ];
    let from = |agent: &str, text: &str| ExpectationKind::AgentText {
        matcher: Matcher::new(MatchType::Contains, json!(text)),
        agent: Some(agent.to_owned()),
    };
    let checks = grade(
        &g,
        vec![
            from("billing", "refund"),
            from("root", "refund"),
            from("sales", "refund"),
        ],
        r,
    )
    .await;
    assert_eq!(
        statuses(&checks),
        [Status::Passed, Status::Failed, Status::Failed]
    );
    assert_eq!(checks[0].label, "agent text from billing");
    assert_reason(&checks[2], "no text from agent sales");
}

#[tokio::test]
async fn silence_and_unexpected_response() {
    async fn silence(text: &str) -> Vec<CheckResult> {
        let kinds = vec![
            ExpectationKind::NoAgentText,
            ExpectationKind::UnexpectedResponse,
        ];
        grade(&grader(), kinds, reply(&[text], vec![])).await
    }
    let quiet = silence("  ").await;
    assert_eq!(statuses(&quiet), [Status::Passed, Status::Passed]);

    let talking = silence("Hello!").await;
    assert_eq!(statuses(&talking), [Status::Failed, Status::Failed]);
    assert_eq!(talking[1].label, "UNEXPECTED RESPONSE");
    assert_eq!(talking[1].actual, "Hello!");
    assert_eq!(talking[1].method, Method::deterministic("no-text"));
}

#[tokio::test]
async fn no_agent_text_fails_a_text_expectation() {
    let checks = grade(
        &grader(),
        vec![says(MatchType::Semantic, ORDER)],
        reply(&[], vec![]),
    )
    .await;
    assert_eq!(statuses(&checks), [Status::Failed]);
    assert_eq!(checks[0].actual, "(no agent text)");
}
