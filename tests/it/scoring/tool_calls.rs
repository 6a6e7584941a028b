//! Tool-call expectations: arguments, leniency, missing and extra calls, the assignment of
//! calls to expectations, tool responses and transfers.

use goldgate::model::{ExpectationKind, ExpectedToolCall, MatchType, ValueMatcher};
use goldgate::results::{CheckResult, Method, Status};
use goldgate::score::{Grader, ScoreOptions};
use goldgate::transcript::{ToolCall, Transfer};
use serde_json::{Value, json};

use crate::scoring::support::{
    FakeJudge, assert_reason, call, exact_args, expected_call, grade, grader, judged, leaf, loc,
    reply, says, statuses,
};

/// The checks of one expected call against a reply that made `made` and said nothing.
async fn grade_call(want: ExpectedToolCall, made: ToolCall) -> Vec<CheckResult> {
    let kinds = vec![ExpectationKind::ToolCall(want)];
    grade(&grader(), kinds, reply(&[], vec![made])).await
}

#[tokio::test]
async fn tool_call_with_matching_arguments_passes() {
    let want = exact_args("lookup_order", &[("order_id", json!("ORD-12345"))]);
    let checks = grade_call(
        want,
        call(
            "lookup_order",
            json!({"order_id": "ORD-12345", "verbose": true}),
        ),
    )
    .await;
    assert_eq!(statuses(&checks), [Status::Passed]);
    assert_eq!(checks[0].label, "tool call lookup_order");
    assert_eq!(checks[0].method, Method::deterministic("tool-call"));
    assert_eq!(checks[0].expected, r#"lookup_order(order_id: "ORD-12345")"#);
}

#[tokio::test]
async fn wrong_argument_fails_with_the_field_named() {
    let want = exact_args("lookup_order", &[("order_id", json!("ORD-12345"))]);
    let checks = grade_call(want, call("lookup_order", json!({"order_id": "ORD-1"}))).await;
    // The wrong call is the expected call's failure, not an extra call as well.
    assert_eq!(statuses(&checks), [Status::Failed]);
    assert_eq!(
        checks[0].reason.as_deref(),
        Some(
            r#"lookup_order called with other arguments: order_id: expected "ORD-12345", got "ORD-1""#
        )
    );
    assert_eq!(checks[0].actual, r#"lookup_order({"order_id":"ORD-1"})"#);
}

#[tokio::test]
async fn every_differing_argument_is_named_up_to_five() {
    let names = ["a", "b", "c", "d", "e", "f", "g"];
    let args: Vec<(&str, Value)> = names.iter().map(|n| (*n, json!(1))).collect();
    let want = exact_args("configure", &args);
    let checks = grade_call(want, call("configure", json!({"a": 2, "g": 1}))).await;
    assert_eq!(statuses(&checks), [Status::Failed]);
    assert_eq!(
        checks[0].reason.as_deref(),
        Some(
            "configure called with other arguments: a: expected 1, got 2; b: missing; \
             c: missing; d: missing; e: missing; and 1 more"
        )
    );
}

#[tokio::test]
async fn a_wrong_call_goes_to_the_expectation_it_is_closest_to() {
    // Two expected calls, both made with one argument wrong, listed in the other order: each
    // fails against its own call, and neither call is also an extra one.
    let want =
        |id: &str, qty: i64| exact_args("add_item", &[("sku", json!(id)), ("qty", json!(qty))]);
    let checks = grade(
        &grader(),
        vec![
            ExpectationKind::ToolCall(want("A", 1)),
            ExpectationKind::ToolCall(want("B", 2)),
        ],
        reply(
            &[],
            vec![
                call("add_item", json!({"sku": "B", "qty": 3})),
                call("add_item", json!({"sku": "A", "qty": 4})),
            ],
        ),
    )
    .await;
    assert_eq!(statuses(&checks), [Status::Failed, Status::Failed]);
    assert_reason(&checks[0], "qty: expected 1, got 4");
    assert_reason(&checks[1], "qty: expected 2, got 3");
}

#[tokio::test]
async fn missing_tool_call_fails() {
    let want = exact_args("lookup_order", &[]);
    let checks = grade(
        &grader(),
        vec![ExpectationKind::ToolCall(want)],
        reply(&["Hi"], vec![]),
    )
    .await;
    assert_eq!(statuses(&checks), [Status::Failed]);
    assert_eq!(checks[0].reason.as_deref(), Some("no call to lookup_order"));
    assert_eq!(checks[0].actual, "(no tool calls)");
}

#[tokio::test]
async fn extra_tool_call_fails_unless_allowed() {
    let kinds = || {
        vec![
            says(MatchType::Contains, "shipped"),
            ExpectationKind::ToolCall(exact_args("lookup_order", &[])),
        ]
    };
    let calls = || {
        reply(
            &["It shipped"],
            vec![
                call("lookup_order", json!({})),
                call("delete_account", json!({"id": 7})),
            ],
        )
    };
    let strict = grade(&grader(), kinds(), calls()).await;
    assert_eq!(
        statuses(&strict),
        [Status::Passed, Status::Passed, Status::Failed]
    );
    assert_eq!(strict[2].label, "unexpected tool call");
    assert_eq!(
        strict[2].reason.as_deref(),
        Some(r#"unexpected tool call delete_account({"id":7})"#)
    );
    assert_eq!(strict[2].line, loc(1).line, "extra calls sit on the turn");

    let lenient = Grader::new(
        None,
        ScoreOptions {
            allow_extra_tool_calls: true,
            ..ScoreOptions::default()
        },
    );
    let checks = grade(&lenient, kinds(), calls()).await;
    assert_eq!(statuses(&checks), [Status::Passed, Status::Passed]);
}

#[tokio::test]
async fn each_call_serves_one_expectation() {
    let g = grader();
    let a = || exact_args("add_item", &[("sku", json!("A"))]);
    let any = || {
        expected_call(
            "add_item",
            vec![("sku", leaf(MatchType::Ignore, Value::Null))],
        )
    };
    // Two expected calls to one tool need two calls.
    let one = grade(
        &g,
        vec![
            ExpectationKind::ToolCall(a()),
            ExpectationKind::ToolCall(any()),
        ],
        reply(&[], vec![call("add_item", json!({"sku": "A"}))]),
    )
    .await;
    assert_eq!(statuses(&one), [Status::Passed, Status::Failed]);
    assert_reason(&one[1], "already matched");

    // The loose expectation listed first does not take the only call the strict one fits.
    let two = grade(
        &g,
        vec![
            ExpectationKind::ToolCall(any()),
            ExpectationKind::ToolCall(a()),
        ],
        reply(
            &[],
            vec![
                call("add_item", json!({"sku": "A"})),
                call("add_item", json!({"sku": "B"})),
            ],
        ),
    )
    .await;
    assert_eq!(statuses(&two), [Status::Passed, Status::Passed]);
}

#[tokio::test]
async fn argument_matchers_and_leniency() {
    let want = expected_call(
        "refund",
        vec![
            ("amount", leaf(MatchType::Exact, json!(5))),
            ("price", leaf(MatchType::Exact, json!("19.99"))),
            ("note", leaf(MatchType::Contains, json!("twice"))),
            ("invoice", leaf(MatchType::Regexp, json!(r"^INV-\d+$"))),
            ("trace", leaf(MatchType::Ignore, Value::Null)),
            (
                "reason",
                ValueMatcher::Object(vec![(
                    "code".to_owned(),
                    leaf(MatchType::Exact, json!("duplicate")),
                )]),
            ),
            ("items", leaf(MatchType::Exact, json!(["a", "b"]))),
        ],
    );
    let actual = json!({
        "amount": "5", "price": 19.99, "note": "charged twice", "invoice": "INV-42",
        "reason": {"code": "duplicate", "notify": true}, "items": ["a", "b"]
    });
    let ok = grade_call(want.clone(), call("refund", actual.clone())).await;
    assert_eq!(statuses(&ok), [Status::Passed]);

    // Arguments sent as a JSON string are read as the object they hold.
    let as_string = grade_call(want.clone(), call("refund", json!(actual.to_string()))).await;
    assert_eq!(statuses(&as_string), [Status::Passed]);

    let mut wrong = actual;
    wrong["reason"]["code"] = json!("other");
    let bad = grade_call(want, call("refund", wrong)).await;
    assert_eq!(bad[0].status, Status::Failed);
    assert_reason(&bad[0], "reason.code");
}

#[tokio::test]
async fn semantic_argument_uses_the_similarity_method() {
    let want = expected_call(
        "note",
        vec![(
            "text",
            leaf(MatchType::Semantic, json!("refund of $20 approved")),
        )],
    );
    let checks = grade_call(
        want.clone(),
        call("note", json!({"text": "approved a $20 refund"})),
    )
    .await;
    assert_eq!(statuses(&checks), [Status::Passed]);
    assert_eq!(checks[0].method, Method::LocalSimilarity);

    let bad = grade_call(want, call("note", json!({"text": "denied a $20 refund"}))).await;
    assert_eq!(bad[0].status, Status::Failed);
}

/// A definite difference fails the call whatever the judge did with another argument: an
/// error would take the case out of the gate (errors are never regressions).
#[tokio::test]
async fn a_wrong_exact_argument_fails_though_the_judge_cannot_rate_another() {
    let (grader, _) = judged(FakeJudge {
        broken: true,
        ..FakeJudge::default()
    });
    let want = expected_call(
        "refund",
        vec![
            ("order_id", leaf(MatchType::Exact, json!("A1"))),
            (
                "reason",
                leaf(MatchType::Semantic, json!("damaged in transit")),
            ),
        ],
    );
    let wrong = call("refund", json!({"order_id": "B7", "reason": "it broke"}));
    let kinds = vec![ExpectationKind::ToolCall(want.clone())];
    let checks = grade(&grader, kinds.clone(), reply(&[], vec![wrong])).await;
    assert_eq!(statuses(&checks), [Status::Failed], "{checks:?}");
    assert_reason(&checks[0], r#"order_id: expected "A1", got "B7""#);
    // With nothing else differing, the judge's failure is what the check says: an error.
    let right = call("refund", json!({"order_id": "A1", "reason": "it broke"}));
    let checks = grade(&grader, kinds, reply(&[], vec![right])).await;
    assert_eq!(statuses(&checks), [Status::Error], "{checks:?}");
}

#[tokio::test]
async fn tool_response_and_transfer() {
    let g = grader();
    let mut looked_up = call("lookup_order", json!({"order_id": "ORD-1"}));
    looked_up.response = Some(json!({"status": "shipped"}));
    let kinds = vec![
        ExpectationKind::ToolCall(exact_args("lookup_order", &[])),
        ExpectationKind::ToolResponse {
            tool: "lookup_order".into(),
            output: Some(json!({"status": "shipped"})),
        },
        ExpectationKind::ToolResponse {
            tool: "lookup_order".into(),
            output: Some(json!({"status": "lost"})),
        },
        ExpectationKind::ToolResponse {
            tool: "lookup_order".into(),
            output: None,
        },
        ExpectationKind::ToolResponse {
            tool: "other".into(),
            output: None,
        },
    ];
    let checks = grade(&g, kinds, reply(&[], vec![looked_up])).await;
    use Status::{Failed, Passed};
    assert_eq!(statuses(&checks), [Passed, Passed, Failed, Passed, Failed]);
    assert_eq!(checks[4].reason.as_deref(), Some("no call to other"));

    let to = |agent: &str| ExpectationKind::Transfer {
        agent: agent.to_owned(),
    };
    let mut by_field = reply(&[], vec![]);
    by_field.transfer = Some(Transfer {
        agent: "billing".into(),
        resource: None,
    });
    let checks = grade(&g, vec![to("billing")], by_field.clone()).await;
    assert_eq!(statuses(&checks), [Passed]);
    let checks = grade(&g, vec![to("sales")], by_field).await;
    assert_eq!(statuses(&checks), [Failed]);
    assert_eq!(checks[0].actual, "transfer to billing");

    // A transfer_to_agent call is a transfer, and not an extra call when a transfer is expected.
    let by_call = reply(
        &[],
        vec![call("transfer_to_agent", json!({"agent": "billing"}))],
    );
    let checks = grade(&g, vec![to("billing")], by_call.clone()).await;
    assert_eq!(statuses(&checks), [Passed]);
    let checks = grade(&g, vec![to("sales")], by_call).await;
    assert_eq!(statuses(&checks), [Failed]);
    let checks = grade(&g, vec![to("billing")], reply(&["Bye"], vec![])).await;
    assert_eq!(checks[0].actual, "no transfer");
}

#[tokio::test]
async fn turns_without_expectations_are_not_checked() {
    let checks = grade(
        &grader(),
        vec![],
        reply(&["Hi"], vec![call("anything", json!({}))]),
    )
    .await;
    assert!(checks.is_empty());
}
