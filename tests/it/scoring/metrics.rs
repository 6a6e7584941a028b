//! Regtrace metrics (format, shallow factuality, judged metrics, regression) and case scores.

use goldgate::model::{CheckKind, MatchType, Metric, Scorer};
use goldgate::results::{CheckResult, Method, Status, TurnResult};
use goldgate::score::{Grader, NEEDS_BASELINE, NO_JUDGE};

use crate::scoring::support::{
    FakeJudge, assert_reason, case, grade, grader, judge_method, judged, played,
    quiet_conversation, reply, says, statuses,
};

fn metric(metric: Metric, threshold: f64, expected: &str) -> CheckKind {
    CheckKind::Metric {
        metric,
        threshold,
        expected_output: expected.to_owned(),
    }
}

fn answered(text: &str) -> Vec<TurnResult> {
    vec![played(1, "question", reply(&[text], vec![]), 100)]
}

/// The checks of a case that holds one metric at 0.7, without a judge, answered `answer`.
async fn one_metric(kind: Metric, expected: &str, answer: &str) -> Vec<CheckResult> {
    let graded = case(vec![metric(kind, 0.7, expected)]);
    grader().grade_case(&graded, &answered(answer)).await
}

#[tokio::test]
async fn format_metric_is_deterministic() {
    let expected = r#"{"name": "Ada", "role": "admin", "active": true}"#;
    let cases = [
        (r#"{"name": "Bob", "role": "user", "active": false}"#, 1.0),
        // Same keys, much shorter: length fails, JSON and keys hold.
        (r#"{"name":"B","role":"u","active":1}"#, 2.0 / 3.0),
        (
            r#"{"name": "Ada", "rank": "admin", "active": true}"#,
            2.0 / 3.0,
        ),
        ("name: Ada, role: admin, active: true, ok?", 1.0 / 3.0),
    ];
    for (answer, score) in cases {
        let checks = one_metric(Metric::Format, expected, answer).await;
        assert_eq!(checks[0].method, Method::deterministic("format"));
        assert_eq!(checks[0].label, "format");
        let got = checks[0].score.unwrap_or(-1.0);
        assert!((got - score).abs() < 1e-9, "{answer}: {got} vs {score}");
        assert_eq!(checks[0].status == Status::Passed, score >= 0.7, "{answer}");
    }

    let markdown = "# Summary\n- one point\n- another point";
    let checks = one_metric(Metric::Format, markdown, "Summary: one point, another one.").await;
    assert_eq!(checks[0].status, Status::Failed);
    assert!((checks[0].score.unwrap_or_default() - 1.0 / 3.0).abs() < 1e-9);
    let reason = checks[0].reason.clone().unwrap_or_default();
    assert!(
        reason.contains("no markdown headings") && reason.contains("no markdown list"),
        "{reason}"
    );
}

#[tokio::test]
async fn factuality_without_judge_is_shallow() {
    let expected = "The API rate limit is 500 requests per minute.";
    let checks = one_metric(
        Metric::Factuality,
        expected,
        "Our API rate limit is 500 requests per minute per key.",
    )
    .await;
    assert_eq!(checks[0].status, Status::Passed);
    assert_eq!(checks[0].method, Method::LocalSimilarity);
    assert_eq!(checks[0].score, Some(1.0));

    let checks = one_metric(Metric::Factuality, expected, "It depends on your plan.").await;
    assert_eq!(checks[0].status, Status::Failed);
    assert_reason(&checks[0], "shallow mode");

    let json_expected = r#"{"city": "Paris", "temp": 21, "tags": ["sunny", "dry"]}"#;
    let checks = one_metric(
        Metric::Factuality,
        json_expected,
        r#"{"city": "Paris", "temp": "21", "tags": ["sunny", "wet"]}"#,
    )
    .await;
    assert_eq!(checks[0].score, Some(0.75));
    assert_eq!(checks[0].status, Status::Passed);
}

#[tokio::test]
async fn judge_metrics_and_regression() {
    let kinds = vec![
        metric(Metric::Factuality, 0.7, "Paris"),
        metric(Metric::Tone, 0.7, "Friendly."),
        metric(Metric::Regression, 0.7, "Paris"),
    ];
    let without = grader()
        .grade_case(&case(kinds.clone()), &answered("Paris"))
        .await;
    assert_eq!(
        statuses(&without),
        [Status::Passed, Status::Skipped, Status::Skipped]
    );
    assert_eq!(without[1].reason.as_deref(), Some(NO_JUDGE));
    assert_eq!(without[2].reason.as_deref(), Some(NEEDS_BASELINE));

    let (g, _) = judged(FakeJudge {
        passes: true,
        score: Some(0.6),
        ..FakeJudge::default()
    });
    let with = g.grade_case(&case(kinds), &answered("Paris")).await;
    assert_eq!(
        statuses(&with),
        [Status::Failed, Status::Failed, Status::Skipped],
        "0.6 is under 0.7"
    );
    assert_eq!(with[0].method, judge_method());
    assert_eq!(with[0].score, Some(0.6));
}

#[tokio::test]
async fn case_scores() {
    let g = grader();
    let graded = case(vec![
        metric(Metric::Format, 0.7, "Paris is the capital of France."),
        metric(Metric::Factuality, 0.7, "Paris is the capital of France."),
        metric(Metric::Tone, 0.7, "Paris is the capital of France."),
    ]);
    let turns = answered("The capital of France is Paris.");
    let checks = g.grade_case(&graded, &turns).await;
    assert_eq!(checks[2].status, Status::Skipped);
    let expected =
        (checks[0].score.unwrap_or_default() + checks[1].score.unwrap_or_default()) / 2.0;
    assert_eq!(Grader::case_score(&graded, &turns, &checks), Some(expected));

    let scored = case(vec![
        CheckKind::Scorer(Scorer::NoError),
        CheckKind::Scorer(Scorer::HandoffTriggered),
        CheckKind::Criterion("polite".into()),
    ]);
    let mut turns = quiet_conversation();
    turns[0].checks = grade(
        &g,
        vec![says(MatchType::Contains, "help")],
        reply(&["I can help"], vec![]),
    )
    .await;
    let checks = g.grade_case(&scored, &turns).await;
    assert_eq!(
        statuses(&checks),
        [Status::Passed, Status::Failed, Status::Skipped]
    );
    assert_eq!(
        Grader::case_score(&scored, &turns, &checks),
        Some(2.0 / 3.0)
    );
    assert_eq!(Grader::case_score(&case(vec![]), &[], &[]), None);
}
