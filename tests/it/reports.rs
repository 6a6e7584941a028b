//! The sinks of `goldgate run` over one hand-built run: a passed case, a failed one (a wrong
//! answer and a wrong tool argument, the agent writing ANSI escapes), one that timed out and
//! one whose only check was skipped for lack of a judge. Each output is read back by an
//! independent parser: serde_json for the report, roxmltree for the JUnit XML.

use crate::common;
mod reports_support;

use goldgate::model::Provider;
use goldgate::report::{Summary, console, junit, markdown};
use goldgate::results::json;
use goldgate::results::{Aggregates, CaseResult, CheckCategory, Counts, Method, Report, Status};
use goldgate::transcript::Handoff;
use reports_support::*;
use serde_json::{Value, json};

#[test]
fn aggregates_of_the_run() {
    let a = aggregates(&run());
    let counts = |total, passed, failed, errors, skipped| Counts {
        total,
        passed,
        failed,
        errors,
        skipped,
    };
    assert_eq!(a.cases, counts(4, 1, 1, 1, 1));
    assert_eq!(a.turns, counts(6, 3, 1, 1, 1));
    assert_eq!(a.checks, counts(6, 3, 2, 0, 1));
    assert_eq!(a.pass_rate, Some(0.5));
    assert_eq!(a.turn_pass_rate, Some(0.75));
    // Three cases reached the agent; one of them handed off.
    assert_eq!(a.deflection_rate, Some(2.0 / 3.0));
    // Latencies 100, 300, 200, 900, 150: nearest rank 3 and 5 of 5.
    let latency = a.latency.unwrap();
    assert_eq!((latency.p50, latency.p95), (ms(200), ms(900)));
    let ttft = a.ttft.unwrap();
    assert_eq!((ttft.p50, ttft.p95), (ms(40), ms(40)));
    assert_eq!(a.tool_call_accuracy, Some(0.5));
    // The only hallucination judgement was skipped.
    assert_eq!(a.hallucination_rate, None);
    // (1.0 * 1 + 0.5 * 3) / 4: the errored and skipped cases are left out.
    assert_eq!(a.suite_score, Some(0.625));
    assert_eq!(a.tokens, tokens(305, 31));
}

#[test]
fn hallucination_rate_counts_judged_checks_only() {
    let mut result = run();
    let judged = &mut result.cases[3].checks[0];
    judged.status = Status::Failed;
    judged.method = Method::Judge {
        provider: Provider::Anthropic,
        model: "claude-sonnet-4-6".into(),
    };
    assert_eq!(aggregates(&result).hallucination_rate, Some(1.0));

    let empty = report_of(Vec::new());
    let a = aggregates(&empty);
    assert_eq!(
        (a.pass_rate, a.deflection_rate, a.latency, a.suite_score),
        (None, None, None, None)
    );
}

/// The console table of `report`, run in [`RUN_TIME`].
fn console_of(report: &Report, color: bool) -> String {
    let mut out = Vec::new();
    console::write_table(&Summary::new(report, "default"), RUN_TIME, &mut out, color).unwrap();
    String::from_utf8(out).unwrap()
}

fn console_text(color: bool) -> String {
    console_of(&run(), color)
}

/// The whole table, summary lines and failures of the hand-built run (its duration is the
/// fixed [`RUN_TIME`]), byte for byte: GOLDGATE_BLESS=1 rewrites the snapshot.
#[test]
fn console_table_has_the_seed_shape() {
    common::assert_snapshot("fixtures/snapshots/console-table.txt", &console_text(false));
}

/// A gecx scenario whose turns all passed, failed by its `message-contains` check alone.
fn failed_by_a_conversation_check() -> CaseResult {
    let case = model_case(
        "approve",
        SCENARIO,
        20,
        (1..=3)
            .map(|i| model_turn(SCENARIO, i, 21 + i as u32, Vec::new()))
            .collect(),
    );
    let turns = (1..=3)
        .map(|i| turn(&case, i, Status::Passed, "approve it", Vec::new(), None))
        .collect();
    let mut result = case_result(case, Status::Failed, turns, 0.0);
    let mut contains = check(
        CheckCategory::AgentText,
        "message-contains",
        26,
        Status::Failed,
        "approved",
        "declined",
    );
    contains.line = 26;
    result.checks.push(contains);
    result
}

#[test]
fn console_marks_a_case_failed_only_by_a_conversation_check() {
    let mut cases = run().cases;
    cases.push(failed_by_a_conversation_check());
    let text = console_of(&report_of(cases), false);

    let row = text.lines().find(|l| l.starts_with("approve ")).unwrap();
    assert!(
        row.ends_with("|     3 |    3 |    0 |    0%  FAILED"),
        "{row}"
    );
    // The seed's totals count turns and stay as they were; the cases line shows the failure.
    let totals = "Total: 5 conversations, 9 turns, 6 pass, 1 fail\n\
                  Cases: 1 passed, 2 failed, 1 errors, 1 skipped\n";
    assert!(text.contains(totals), "{text}");
    assert!(
        text.contains(
            "FAILED approve (evals/slow.scenario.yaml:20)\n  conversation checks:\n    \
             message-contains [exact] (evals/slow.scenario.yaml:26): failed\n"
        ),
        "{text}"
    );
}

/// The run with a command agent's stderr of 25 lines, one of them writing an escape.
fn run_with_agent_log() -> Report {
    let log: Vec<String> = (1..=25)
        .map(|i| format!("line {i}{}", if i == 24 { "\x1b[31m red" } else { "" }))
        .collect();
    Report {
        agent_log: Some(log.join("\n") + "\n"),
        ..run()
    }
}

#[test]
fn console_shows_the_end_of_the_agents_stderr_when_a_case_errored() {
    let text = console_of(&run_with_agent_log(), false);

    let failures = text.find("Failures\n").expect("a failures section");
    let log = text
        .find("Agent stderr (last 20 lines):\n")
        .expect("the log");
    assert!(log > failures, "{text}");
    assert_eq!(text.matches("Agent stderr").count(), 1, "{text}");
    let shown: Vec<&str> = text[log..].lines().skip(1).collect();
    assert_eq!(shown.len(), 20, "{text}");
    assert_eq!(shown[0], "  line 6");
    assert_eq!(shown[18], "  line 24\\u{1b}[31m red");
    assert_eq!(shown[19], "  line 25");
    assert!(!text.contains('\x1b'), "a raw escape reached the terminal");

    // Without an errored case the log is noise, and is left out.
    let mut result = run_with_agent_log();
    result.cases.retain(|c| c.status != Status::Error);
    let text = console_of(&result, false);
    common::assert_lacks(&text, &["Agent stderr"]);
}

#[test]
fn markdown_folds_the_end_of_the_agents_stderr() {
    let report = run_with_agent_log();
    let path = |file: &str| file.to_owned();
    let options = markdown::Options {
        suite: "default",
        run_url: None,
        path: &path,
    };
    let body = markdown::render(&Summary::new(&report, "default"), &options);
    let expected = "<details><summary>Agent stderr (last 20 lines)</summary>\n\n```text\nline 6\n";
    let start = body.find(expected).expect("a folded log");
    let block = &body[start..];
    let end = block.find("</details>").expect("a closed block");
    assert!(
        block[..end].ends_with("line 24\\u{1b}[31m red\nline 25\n```\n\n"),
        "{body}"
    );
    assert!(!block.contains("line 5\n"), "{body}");
    assert!(!body.contains('\x1b'), "{body}");
    assert!(body.find("#### Failures").unwrap() < start, "{body}");
}

#[test]
fn console_details_failures_with_locations_and_escapes() {
    let text = console_text(false);
    let failures = &text[text.find("Failures\n").expect("a failures section")..];
    let expected = "\
FAILED bad_order_id_handling (evals/goldens/orders.yaml:12)
  turn 2 (evals/goldens/orders.yaml:16): failed
    input: It's ORD-99999
    agent text [semantic (local-similarity)] (evals/goldens/orders.yaml:17): failed
      expected: I couldn't find that order.
      actual:   Your order has shipped.\\u{1b}[2J
      reason:   similarity 0.21 below 0.75
    tool call lookup_order [exact] (evals/goldens/orders.yaml:18): failed
      expected: {\"order_id\":\"ORD-99999\"}
      actual:   {\"order_id\":\"ORD-12345\"}
ERROR slow_case (evals/slow.scenario.yaml:1): timed out: no reply within 60s
  turn 1 (evals/slow.scenario.yaml:4): error
    input: hello
";
    assert_eq!(
        failures.strip_prefix("Failures\n--------\n"),
        Some(expected)
    );
    assert!(!text.contains('\x1b'), "a raw escape reached the terminal");
    assert!(!text.contains("happy_path_order_lookup ("));
}

#[test]
fn console_colours_only_when_asked_and_never_the_agents() {
    let text = console_text(true);
    assert!(text.contains("\x1b[32mhappy_path_order_lookup |"));
    assert!(text.contains("\x1b[31mbad_order_id_handling   |"));
    assert!(text.contains("\x1b[33mslow_case"));
    // Every escape in the output is one of ours: a colour or a reset.
    for (i, _) in text.match_indices('\x1b') {
        let code = &text[i..];
        assert!(
            ["\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[0m"]
                .iter()
                .any(|c| code.starts_with(c)),
            "foreign escape at {i}: {:?}",
            &code[..code.len().min(12)]
        );
    }
}

fn report_json() -> (Report, String) {
    let report = run();
    let mut out = Vec::new();
    json::write(&report, &mut out).unwrap();
    (report, String::from_utf8(out).unwrap())
}

#[test]
fn json_report_reads_back() {
    let (report, text) = report_json();
    assert!(text.ends_with("}\n"));
    let back: Report = serde_json::from_str(&text).unwrap();
    assert_eq!(back, report);
    assert_eq!(back.cases[1].status, Status::Failed);
    assert_eq!(back.cases[2].status, Status::Error);
}

#[test]
fn json_report_fields() {
    let (_, text) = report_json();
    let v: Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "schema_version",
            "goldgate_version",
            "agent",
            "suite",
            "scope",
            "judges",
            "judge_usage",
            "incomplete",
            "max_errors",
            "policy",
            "agent_log",
            "agent_startup_ms",
            "rate_limits",
            "aggregates",
            "samples",
            "alpha_share",
            "gate",
            "floors",
            "cases",
            "verdict",
            "exit"
        ]
    );
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["judges"], json!([]));
    let aggregates = &v["aggregates"];
    assert_eq!(aggregates["pass_rate"], 0.5);
    assert_eq!(aggregates["latency"], json!({"p50_ms": 200, "p95_ms": 900}));
    assert_eq!(aggregates["hallucination_rate"], Value::Null);
    assert_eq!(aggregates["cases"]["errors"], 1);
    assert_eq!(aggregates["tokens"]["input_tokens"], 305);

    let failed = &v["cases"][1];
    assert_eq!(failed["id"], "bad_order_id_handling");
    assert_eq!(failed["file"], ORDERS);
    assert_eq!(failed["line"], 12);
    assert_eq!(failed["format"], "scrapi");
    assert_eq!(failed["tags"], json!(["P0"]));
    assert_eq!(failed["weight"], 3.0);
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["duration_ms"], 1200);
    let turn = &failed["turns"][1];
    assert_eq!(turn["index"], 2);
    assert_eq!(turn["line"], 16);
    assert_eq!(turn["latency_ms"], 900);
    assert_eq!(turn["ttft_ms"], Value::Null);
    assert_eq!(turn["reply"]["text"], ANSWER);
    assert_eq!(turn["reply"]["handoff"], json!({"status": "requested"}));
    assert_eq!(turn["reply"]["transfer"], Value::Null);
    assert_eq!(
        turn["checks"][0],
        json!({
            "label": "agent text",
            "category": "agent-text",
            "line": 17,
            "status": "failed",
            "expected": "I couldn't find that order.",
            "actual": ANSWER,
            "method": "local-similarity",
            "score": 0.21,
            "reason": "similarity 0.21 below 0.75"
        })
    );

    let errored = &v["cases"][2];
    assert_eq!(errored["status"], "error");
    assert_eq!(errored["error"], TIMEOUT);
    assert_eq!(errored["turns"][0]["reply"], Value::Null);
    assert_eq!(errored["turns"][0]["attempts"], 3);
    let skipped = &v["cases"][3];
    assert_eq!(skipped["checks"][0]["status"], "skipped");
    assert_eq!(skipped["checks"][0]["method"], "none");
}

#[test]
fn json_file_is_replaced_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("baseline.json");
    std::fs::write(&path, "old").unwrap();
    let (report, text) = report_json();
    json::write_file_atomically(&path, &report).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    let entries: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(entries.len(), 1, "a temporary file was left behind");

    let missing = dir.path().join("no/such/dir/baseline.json");
    assert!(json::write_file_atomically(&missing, &report).is_err());
}

fn child<'a, 'input>(
    node: &roxmltree::Node<'a, 'input>,
    tag: &str,
) -> Option<roxmltree::Node<'a, 'input>> {
    node.children().find(|n| n.has_tag_name(tag))
}

type Node<'a> = roxmltree::Node<'a, 'a>;

#[test]
fn junit_reads_back_in_a_real_parser() {
    let mut out = Vec::new();
    let options = junit::Options { locations: true };
    let report = report_json().0;
    junit::write(&Summary::new(&report, "default"), &options, &mut out).unwrap();
    let xml = String::from_utf8(out).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let root = doc.root_element();
    junit_root_counts_and_names_the_suites(&root);
    let cases: Vec<_> = root
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    let ids: Vec<_> = cases.iter().map(|c| c.attribute("name").unwrap()).collect();
    assert_eq!(
        ids,
        [
            "happy_path_order_lookup",
            "bad_order_id_handling",
            "slow_case",
            "needs_judge"
        ]
    );
    junit_passed_case(&cases[0]);
    junit_failed_case(&cases[1]);
    junit_errored_and_skipped_cases(&cases[2], &cases[3]);
}

fn junit_root_counts_and_names_the_suites(root: &Node) {
    assert_eq!(root.tag_name().name(), "testsuites");
    assert_eq!(root.attribute("tests"), Some("4"));
    assert_eq!(root.attribute("failures"), Some("1"));
    assert_eq!(root.attribute("errors"), Some("1"));
    // junit-10.xsd has no `skipped` on the root: readers count the suites'.
    assert_eq!(root.attribute("skipped"), None);

    let suites: Vec<_> = root
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    let names: Vec<_> = suites
        .iter()
        .map(|s| s.attribute("name").unwrap())
        .collect();
    // Suites are named like their testcases' classname, so that no reader shows two levels.
    assert_eq!(
        names,
        ["evals/goldens/orders_yaml", "evals/slow_scenario_yaml"]
    );
    assert_eq!(suites[1].attribute("skipped"), Some("1"));
}

fn junit_passed_case(passed: &Node) {
    assert_eq!(
        passed.attribute("classname"),
        Some("evals/goldens/orders_yaml")
    );
    assert_eq!(passed.attribute("file"), Some(ORDERS));
    assert_eq!(passed.attribute("line"), Some("3"));
    assert_eq!(passed.attribute("time"), Some("0.450"));
    assert!(child(passed, "failure").is_none());
    let out = child(passed, "system-out").unwrap().text().unwrap();
    common::assert_contains(
        out,
        &[
            "user: hello\nagent: Hi, how can I help?\n",
            r#"tool call: lookup_order({"order_id":"ORD-12345"}) -> {"status":"shipped"}"#,
        ],
    );
}

fn junit_failed_case(failed: &Node) {
    // At its first failed check, not at the case's first line (12).
    assert_eq!(failed.attribute("line"), Some("17"));
    let failure = child(failed, "failure").unwrap();
    assert_eq!(failure.attribute("type"), Some("agent-text"));
    let message = failure.attribute("message").unwrap();
    assert!(
        message.starts_with(
            "agent text: expected I couldn't find that order., got Your order has shipped."
        ),
        "{message}"
    );
    assert!(!message.contains('\n') && !message.contains('\x1b'));
    let detail = failure.text().unwrap();
    assert_eq!(detail.lines().next(), Some(message));
    common::assert_contains(
        detail,
        &[
            "turn 2 (evals/goldens/orders.yaml:16): failed",
            "tool call lookup_order [exact]",
            r#"expected: {"order_id":"ORD-99999"}"#,
        ],
    );
    let out = child(failed, "system-out").unwrap().text().unwrap();
    common::assert_contains(out, &["handoff: requested"]);
    assert!(!out.contains('\x1b'));
}

fn junit_errored_and_skipped_cases(errored: &Node, skipped: &Node) {
    assert_eq!(
        errored.attribute("classname"),
        Some("evals/slow_scenario_yaml")
    );
    let error = child(errored, "error").unwrap();
    assert_eq!(error.attribute("message"), Some(TIMEOUT));
    let out = child(errored, "system-out").unwrap().text().unwrap();
    common::assert_contains(out, &[&format!("error: {TIMEOUT}")]);

    let skipped = child(skipped, "skipped").unwrap();
    assert_eq!(skipped.attribute("message"), Some("no judge configured"));
    assert_eq!(skipped.text(), Some("no judge configured"));
}

#[test]
fn annotations_point_at_each_failing_check() {
    let (report, _) = report_json();
    let summary = Summary::new(&report, "default");
    let commands = goldgate::github::annotate::failing_checks(&summary, &|file| file.to_owned());
    let places: Vec<&str> = commands
        .iter()
        .map(|c| c.split_once(",title=").unwrap().0)
        .collect();
    // The failed case: one per failed check of its second turn (its first line is 12, the
    // turn's 16). The errored case: its turn, which has no check to point at. Passed and
    // skipped cases: none.
    assert_eq!(
        places,
        [
            "::error file=evals/goldens/orders.yaml,line=17",
            "::error file=evals/goldens/orders.yaml,line=18",
            "::error file=evals/slow.scenario.yaml,line=4",
        ]
    );
    assert!(
        commands[1].contains("title=goldgate%3A bad_order_id_handling turn 2%3A tool call lookup_order failed::tool call lookup_order (exact)"),
        "{}",
        commands[1]
    );
    assert!(
        commands[2].ends_with(&format!("::{TIMEOUT}")),
        "{}",
        commands[2]
    );
}

#[test]
fn an_empty_handoff_status_is_no_handoff_for_the_deflection_rate() {
    let mut cases = run().cases;
    let reply = cases[1].turns[1].reply.as_mut().unwrap();
    reply.handoff = Some(Handoff { status: "".into() });
    // The three cases that reached the agent all kept the conversation, as `no-handoff`
    // judges a status of "" (tests/scoring).
    assert_eq!(Aggregates::of(&cases).deflection_rate, Some(1.0));
    cases[1].turns[1].reply.as_mut().unwrap().handoff = Some(Handoff {
        status: "None".into(),
    });
    assert_eq!(Aggregates::of(&cases).deflection_rate, Some(1.0));
}
