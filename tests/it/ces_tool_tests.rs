//! SCRAPI tool tests through the binary: with `agent: ces` each test runs its tool through
//! `executeTool` on a loopback app that checks every request as the real API would, and gets
//! the verdict its file describes; the tests' latency is reported apart (p50/p90/p99); with any
//! other agent they are skipped with the reason; an unknown tool is an error that names the
//! near miss.

use crate::{ces_support, common};
use common::case;
use std::fs;
use std::path::Path;

use serde_json::Value;

use ces_support::{APP, Ces};

const TOKEN: &str = "ya29.loopback-token-tools";

/// Toolset tools (an OpenAPI operation, a connector's tool), every operator, variables, a
/// context, and one test that must fail.
const MORE_TESTS: &str = r#"
tests:
  - name: order_from_the_openapi_toolset
    tool: orders_getOrder
    args: {order_id: ORD-1}
    expectations:
      response:
        - {path: "$.result.order_id", operator: equals, value: ORD-1}
        - {path: "$.result.items", operator: length_equals, value: 2}
        - {path: "$.result.items", operator: contains, value: mug}
        - {path: "$.result.items[*]", operator: length_greater_than, value: 1}
        - {path: "$.result.missing", operator: is_null}
  - name: connector_tool
    tool: crm_search
    expectations:
      response:
        - {path: "$.result.contacts", operator: length_less_than, value: 1}
  - name: balance_in_range
    tool: lookup_account
    args: {account_id: "77"}
    context: {state: {auth_status: authenticated}}
    expectations:
      response:
        - {path: "$.result.account.balance", operator: greater_than, value: 40}
        - {path: "$.result.account.balance", operator: less_than, value: 50}
  - name: escalation_sets_the_reason
    tool: set_session_state
    args: {_escalation_reason: "customer requested"}
    expectations:
      variables:
        - {path: "$.escalation_reason", operator: equals, value: "customer requested"}
  - name: no_variables_sends_the_apps_defaults
    tool: set_session_state
    expectations:
      variables:
        - {path: "$.customer_tier", operator: equals, value: gold}
        - {path: "$.auth_status", operator: equals, value: guest}
  - name: a_listed_variable_takes_the_apps_default
    tool: set_session_state
    variables: [customer_tier]
    expectations:
      variables:
        - {path: "$.customer_tier", operator: equals, value: gold}
        - {path: "$.auth_status", operator: is_null}
  - name: only_asks_the_tool_to_run
    tool: crm_search
  - name: wrong_status_fails
    tool: lookup_account
    args: {account_id: "77"}
    variables: {auth_status: authenticated}
    expectations:
      response:
        - {path: "$.result.status", operator: equals, value: closed}
"#;

/// A loopback app accepting [`TOKEN`], configured as `dir`'s agent.
fn with_app(dir: &Path) -> Ces {
    let ces = Ces::accepting(TOKEN);
    let addr = common::serve(
        axum::Router::new()
            .fallback(ces_support::tools::serve)
            .with_state(ces.clone()),
    );
    configure(
        dir,
        &format!("  ces:\n    app: {APP}\n    base_url: http://{addr}"),
    );
    ces
}

fn suite(dir: &Path, tests: &str) {
    common::write(dir, "evals/tool_tests/more_tool_tests.yaml", tests);
}

fn configure(dir: &Path, agent: &str) {
    let config = format!("agent:\n{agent}\nrun:\n  retries: 0\n");
    common::write(dir, "goldgate.yaml", config);
}

/// `goldgate run evals` in `dir` (SCRAPI's project layout, found by discovery): exit code, report, everything printed.
fn run(dir: &Path) -> (Option<i32>, Value, String) {
    run_with(dir, &[])
}

fn run_with(dir: &Path, extra: &[&str]) -> (Option<i32>, Value, String) {
    let (out, report) = common::run_with_report(
        common::command_without_google(dir)
            .env("CXAS_OAUTH_TOKEN", TOKEN)
            .arg("run")
            .args(extra)
            .arg("evals"),
        &dir.join("report.json"),
    );
    let printed = out.stdout + &out.stderr;
    assert!(!report.is_null(), "no report:\n{printed}");
    (out.code, report, printed)
}

#[test]
fn tool_tests_run_through_execute_tool_with_the_verdicts_their_files_describe() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), MORE_TESTS);
    let ces = with_app(dir.path());
    let (code, report, printed) = run(dir.path());
    assert_eq!(ces.violations(), Vec::<String>::new(), "{printed}");
    for (id, status) in [
        ("order_from_the_openapi_toolset", "passed"),
        ("connector_tool", "passed"),
        ("balance_in_range", "passed"),
        ("escalation_sets_the_reason", "passed"),
        ("no_variables_sends_the_apps_defaults", "passed"),
        ("a_listed_variable_takes_the_apps_default", "passed"),
        ("only_asks_the_tool_to_run", "passed"),
        ("wrong_status_fails", "failed"),
    ] {
        let case = case(&report, id);
        assert_eq!(case["status"], status, "{id}: {case:#}\n{printed}");
        assert_eq!(case["kind"], "tool-test", "{id}");
    }
    assert_eq!(code, Some(1), "{printed}");
    // The failure says what the path held.
    let failed = &case(&report, "wrong_status_fails")["turns"][0]["checks"][0];
    assert_eq!(failed["actual"], "\"success\"", "{failed:#}");
    // The display name the test wrote, and the resource it named in the app.
    let order = &case(&report, "order_from_the_openapi_toolset")["turns"][0]["reply"];
    let call = &order["tool_calls"][0];
    assert_eq!(call["name"], "orders_getOrder", "{order:#}");
    assert_eq!(
        call["resource"],
        format!("{APP}/toolsets/orders/tools/getOrder")
    );
    assert_eq!(
        case(&report, "escalation_sets_the_reason")["turns"][0]["reply"]["variables"]["escalation_reason"],
        "customer requested"
    );
    common::assert_contains(&printed, &["$.result.status"]);
    // Tool latency apart from conversation latency, at SCRAPI's percentiles.
    let aggregates = &report["aggregates"];
    assert_eq!(aggregates["tool_latency"]["count"], 8, "{aggregates:#}");
    // With no expectations, SCRAPI's rule: the test passes when the tool ran.
    let ran = &case(&report, "only_asks_the_tool_to_run")["turns"][0]["checks"];
    assert_eq!(ran[0]["label"], "tool crm_search ran", "{ran:#}");
    for key in ["p50_ms", "p90_ms", "p99_ms"] {
        assert!(aggregates["tool_latency"][key].is_u64(), "{aggregates:#}");
    }
    assert!(aggregates["latency"].is_null(), "{aggregates:#}");
    common::assert_contains(&printed, &["p90"]);
    assert!(!printed.contains(TOKEN) && !report.to_string().contains(TOKEN));
}

/// Every tool-test file of SCRAPI's own (its project template and the examples in its docs, in
/// the shared corpus) against an app whose tools do what the files describe: every test SCRAPI
/// loads from them passes, the template's four among them.
#[test]
fn scrapis_own_tool_tests_pass_against_the_app_they_describe() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("evals/tool_tests")).unwrap();
    let mut expected = 0;
    for (path, file) in corpus.valid("scrapi-tool-test") {
        let name = path.file_name().unwrap();
        fs::copy(&path, dir.path().join("evals/tool_tests").join(name)).unwrap();
        expected += file["cases"].as_u64().unwrap();
    }
    let ces = with_app(dir.path());
    let (code, report, printed) = run(dir.path());
    assert_eq!(ces.violations(), Vec::<String>::new(), "{printed}");
    let cases = report["cases"].as_array().unwrap();
    assert_eq!(cases.len() as u64, expected, "{printed}");
    for case in cases {
        assert_eq!(case["status"], "passed", "{case:#}\n{printed}");
    }
    for id in [
        "lookup_account_success",
        "lookup_account_missing_id",
        "lookup_account_unauthenticated",
        "set_session_state_trigger",
        "lookup_order_found",
        "lookup_order_not_found",
    ] {
        assert_eq!(case(&report, id)["kind"], "tool-test", "{id}");
    }
    assert_eq!(code, Some(0), "{printed}");
}

/// A tool that raises is an error of the run with the app's message, as SCRAPI reports an
/// ERROR; the other tests still get their verdicts.
#[test]
fn a_tool_that_raises_is_an_error_with_the_apps_message() {
    let dir = tempfile::tempdir().unwrap();
    suite(
        dir.path(),
        "tests:
  - name: raises
    tool: divide
    args: {a: 1, b: 0}
  - name: still_judged
    tool: crm_search
",
    );
    with_app(dir.path());
    let (code, report, printed) = run(dir.path());
    assert_eq!(code, Some(2), "{printed}");
    let raises = case(&report, "raises");
    assert_eq!(raises["status"], "error", "{raises:#}");
    let error = raises["error"].as_str().unwrap();
    common::assert_contains(error, &["ZeroDivisionError: division by zero"]);
    assert_eq!(case(&report, "still_judged")["status"], "passed");
    common::assert_contains(&printed, &["ZeroDivisionError"]);
}

/// Recorded against the app, tool tests replay with no app at all and the same verdicts.
#[test]
fn recorded_tool_tests_replay_with_the_same_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), MORE_TESTS);
    with_app(dir.path());
    let (code, recorded, printed) = run_with(dir.path(), &["--record", "transcripts"]);
    assert_eq!(code, Some(1), "{printed}");
    configure(dir.path(), "  replay: transcripts");
    let (code, replayed, printed) = run(dir.path());
    assert_eq!(code, Some(1), "{printed}");
    assert_eq!(
        common::case_statuses(&replayed),
        common::case_statuses(&recorded),
        "{printed}"
    );
    assert_eq!(replayed["aggregates"]["cases"]["skipped"], 0, "{printed}");
}

#[test]
fn with_another_agent_tool_tests_are_skipped_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), MORE_TESTS);
    let http = common::serve(
        axum::Router::new().route("/turn", axum::routing::post(ces_support::http_turn)),
    );
    configure(dir.path(), &format!("  http:\n    url: http://{http}/turn"));
    let (code, report, printed) = run(dir.path());
    // Nothing was judged: a run that judged nothing is never a pass.
    assert_eq!(code, Some(2), "{printed}");
    common::assert_contains(
        &printed,
        &["goldgate: nothing was judged, so the run cannot pass: "],
    );
    let skipped = case(&report, "balance_in_range");
    assert_eq!(skipped["status"], "skipped", "{skipped:#}");
    let reason = skipped["turns"][0]["checks"][0]["reason"].as_str().unwrap();
    common::assert_contains(reason, &["agent: ces"]);
    assert_eq!(report["aggregates"]["cases"]["skipped"], 8);
    // A test that only asks the tool to run still says why it did not.
    let bare = case(&report, "only_asks_the_tool_to_run");
    assert_eq!(bare["turns"][0]["checks"].as_array().unwrap().len(), 1);
    assert!(report["aggregates"]["tool_latency"].is_null());
}

#[test]
fn an_unknown_tool_is_an_error_that_names_the_near_miss() {
    let dir = tempfile::tempdir().unwrap();
    suite(
        dir.path(),
        "tests:\n  - name: typo\n    tool: lookup_acount\n    args: {account_id: '1'}\n",
    );
    let ces = with_app(dir.path());
    let (code, report, printed) = run(dir.path());
    assert_eq!(code, Some(2), "{printed}");
    // Nothing was executed: the name was checked against the app's list first.
    assert_eq!(ces.violations(), Vec::<String>::new());
    let typo = case(&report, "typo");
    assert_eq!(typo["status"], "error");
    let error = typo["error"].as_str().unwrap();
    common::assert_contains(error, &["did you mean `lookup_account`"]);
    // Labelled as the golden's problem, not as a bad reply of the app.
    assert!(
        error.starts_with("not found: the app has no tool named"),
        "{error}"
    );
    common::assert_contains(&printed, &["lookup_acount"]);
}

/// Plain scalars mean what PyYAML `safe_load` makes of them, as in SCRAPI: `N` and `yEs` are
/// text (the tool echoes them back and they are equal), while `yes` is the boolean true
/// (which the echoed text "yes" is not equal to).
#[test]
fn plain_scalars_read_as_pyyaml_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let echo = |name: &str, sent: &str, expected: &str| {
        format!(
            "  - name: {name}\n    tool: orders_getOrder\n    args: {{order_id: {sent}}}\n    \
             expectations:\n      response:\n        \
             - {{path: \"$.result.order_id\", operator: equals, value: {expected}}}\n"
        )
    };
    let tests = [
        echo("n_is_text", "N", "N"),
        echo("mixed_case_is_text", "yEs", "yEs"),
        echo("yes_is_a_boolean", "'yes'", "yes"),
    ];
    suite(dir.path(), &format!("tests:\n{}", tests.concat()));
    with_app(dir.path());
    let (code, report, printed) = run(dir.path());
    assert_eq!(code, Some(1), "{printed}");
    assert_eq!(case(&report, "n_is_text")["status"], "passed", "{printed}");
    assert_eq!(case(&report, "mixed_case_is_text")["status"], "passed");
    assert_eq!(case(&report, "yes_is_a_boolean")["status"], "failed");
}
