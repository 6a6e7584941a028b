//! The parsing rules of SCRAPI's `ToolTestCase`, on small documents.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use super::{is_tool_test, load};
use crate::diagnostic::Diagnostics;
use crate::model::{
    Case, CaseKind, ExpectationKind, Input, ResultOperator, ResultPart, ToolExecution, ToolState,
};
use crate::yaml::{Schema, parse_as};

/// The cases and every problem as `line: CODE message`.
fn load_text(text: &str) -> (Vec<Case>, Vec<String>) {
    let file: Arc<Path> = Arc::from(Path::new("evals/tool_tests/orders.yaml"));
    let mut diags = Diagnostics::new(&file);
    let root = parse_as(text, Schema::PyYaml).expect("the test YAML parses");
    let cases = load(&root, &mut diags);
    let problems = diags
        .items
        .iter()
        .map(|d| format!("{}: {} {}", d.location.line, d.code, d.message))
        .collect();
    (cases, problems)
}

fn execution(case: &Case) -> &ToolExecution {
    match case.turns[0].inputs.as_slice() {
        [Input::ExecuteTool(execution)] => execution,
        other => panic!("not one tool execution: {other:?}"),
    }
}

/// The case's tool result checks: line, part, path as written, operator and value.
fn result_checks(case: &Case) -> Vec<(u32, ResultPart, String, ResultOperator, Value)> {
    case.turns[0]
        .expectations
        .iter()
        .map(|e| match &e.kind {
            ExpectationKind::ToolResult(c) => (
                e.location.line,
                c.part,
                c.path.source.clone(),
                c.operator,
                c.value.clone(),
            ),
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn a_test_is_one_tool_execution_with_its_checks() {
    let (cases, problems) = load_text(
        "tests:
  - name: lookup_found
    tool: lookup_order
    tags: [P0]
    args: { order_id: ORD-1, verbose: true }
    variables: { auth_status: authenticated }
    expectations:
      response:
        - path: $.result.status
          operator: equals
          value: shipped
        - path: result.eta
          operator: is_not_null
      variables:
        - path: $.last_order
          operator: length_greater_than
          value: 2
",
    );
    assert!(problems.is_empty(), "{problems:?}");
    let case = &cases[0];
    assert_eq!(
        (case.id.as_str(), case.name.as_str()),
        ("lookup_found", "lookup_found")
    );
    assert_eq!(case.kind(), CaseKind::ToolTest);
    assert_eq!(case.tags, ["P0", "orders"]);
    assert_eq!((case.location.line, case.turns.len()), (2, 1));
    let run = execution(case);
    assert_eq!(run.tool, "lookup_order");
    assert_eq!(
        json!(run.args),
        json!({"order_id": "ORD-1", "verbose": true})
    );
    let ToolState::Variables(vars) = &run.state else {
        panic!("{:?}", run.state)
    };
    assert_eq!(json!(vars), json!({"auth_status": "authenticated"}));
    assert_eq!(
        result_checks(case),
        [
            (
                9,
                ResultPart::Response,
                "$.result.status".into(),
                ResultOperator::Equals,
                json!("shipped")
            ),
            (
                12,
                ResultPart::Response,
                "result.eta".into(),
                ResultOperator::IsNotNull,
                json!(null)
            ),
            (
                15,
                ResultPart::Variables,
                "$.last_order".into(),
                ResultOperator::LengthGreaterThan,
                json!(2)
            ),
        ]
    );
}

#[test]
fn variables_and_context_take_every_shape_scrapi_reads() {
    let (cases, problems) = load_text(
        r#"tests:
  - { name: names, tool: t, variables: [auth_status, tier], expectations: {response: [{path: $.a, operator: is_null}]} }
  - { name: text, tool: t, variables: '{"a": 1}', args: null, expectations: {response: [{path: $.a, operator: is_null}]} }
  - { name: ctx, tool: t, context: { state: {x: 1} }, expectations: {response: [{path: $.a, operator: is_null}]} }
  - { name: junk, tool: t, variables: "not json", agrs: {id: 7}, expectations: {response: [{path: $.a, operator: is_null}]} }
"#,
    );
    assert_eq!(
        problems,
        [
            "5: G110 `agrs` is read as `args`, as SCRAPI reads it",
            "5: G110 `variables` is text that is not JSON; SCRAPI reads it as empty, and so does goldgate",
        ]
    );
    let state = |i: usize| execution(&cases[i]).state.clone();
    assert_eq!(
        state(0),
        ToolState::Variables(
            json!({"auth_status": null, "tier": null})
                .as_object()
                .unwrap()
                .clone()
        )
    );
    assert_eq!(
        state(1),
        ToolState::Variables(json!({"a": 1}).as_object().unwrap().clone())
    );
    assert!(execution(&cases[1]).args.is_empty());
    assert_eq!(
        state(2),
        ToolState::Context(json!({"state": {"x": 1}}).as_object().unwrap().clone())
    );
    assert_eq!(json!(execution(&cases[3]).args), json!({"id": 7}));
}

#[test]
fn what_scrapi_ignores_loads_with_a_warning() {
    let (cases, problems) = load_text(
        "tests:
  - name: doc_style
    tool: lookup_order
    input: { order_id: ORD-1 }
    assertions:
      - path: $.status
        operator: equals
  - name: no_value
    tool: lookup_order
    expectations:
      response:
        - path: $.status
          operator: equals
          note: why
      extra: []
",
    );
    assert_eq!(
        problems,
        [
            "4: G110 unknown key `input`: SCRAPI ignores it, and so does goldgate",
            "5: G110 unknown key `assertions`: SCRAPI ignores it, and so does goldgate",
            "2: G102 the test has no expectations: it passes whenever the tool runs",
            "14: G110 unknown key `note`: SCRAPI ignores it, and so does goldgate",
            "12: G102 `equals` has no `value`: SCRAPI compares with null",
            "15: G110 unknown key `extra`: SCRAPI ignores it, and so does goldgate",
        ]
    );
    assert_eq!(cases.len(), 2);
    assert!(execution(&cases[0]).args.is_empty());
}

#[test]
fn broken_tests_are_errors_and_not_loaded() {
    let (cases, problems) = load_text(
        "tests:
  - name: ok
    tool: t
    expectations: { response: [{path: $.a, operator: is_null}] }
  - tool: 5
    args: [1]
  - name: both
    tool: t
    variables: {a: 1}
    context: {b: 2}
    expectations: { response: {path: $.a} }
  - name: checks
    tool: t
    expectations:
      response:
        - { path: $.a, operator: equal, value: 1 }
        - { path: '$[', operator: equals, value: 1 }
        - { operator: is_null }
  - name: ok
    tool: t
    expectations: [x]
",
    );
    let codes: Vec<&str> = problems
        .iter()
        .map(|p| &p[..p.find(' ').unwrap() + 5])
        .collect();
    assert_eq!(
        codes,
        [
            "5: G102", // name
            "5: G101", // tool: 5
            "6: G101", // args: [1]
            "10: G111", "11: G101", "16: G107", "17: G104", "18: G102", "21: G101",
        ],
        "{problems:#?}"
    );
    assert!(
        problems[5].ends_with("unknown operator `equal`"),
        "{}",
        problems[5]
    );
    assert_eq!(cases.len(), 1);
}

#[test]
fn duplicate_names_and_empty_files_are_errors() {
    let (cases, problems) = load_text(
        "tests:
  - { name: a, tool: t, expectations: {response: [{path: $.a, operator: is_null}]} }
  - { name: a, tool: u, expectations: {response: [{path: $.a, operator: is_null}]} }
",
    );
    assert_eq!(
        problems,
        ["3: G103 test `a` is defined twice, at lines 2 and 3"]
    );
    assert_eq!(cases.len(), 1);
    for text in [
        "tests: []\n",
        "tests:\n",
        "- tool_name: lookup\n  inputs: {}\n",
    ] {
        let (cases, problems) = load_text(text);
        assert!(cases.is_empty());
        assert!(
            problems.len() == 1 && problems[0].starts_with("1: E002"),
            "{text}: {problems:?}"
        );
    }
}

#[test]
fn tool_tests_are_told_from_turn_evals_and_guardrail_tests() {
    let sniff = |text: &str| is_tool_test(&parse_as(text, Schema::PyYaml).unwrap());
    assert!(sniff("tests:\n  - name: a\n    tool: t\n"));
    assert!(sniff("tests: []\n"));
    assert!(sniff("- tool_name: t\n"));
    assert!(!sniff("tests:\n  - name: a\n    user_input: hi\n"));
    assert!(!sniff(
        "tests:\n  - name: a\n    user: hi\n    expectations: [x]\n"
    ));
    assert!(!sniff("conversations: []\ntests: []\n"));
    assert!(!sniff("- steps: []\n"));
}
