//! `run --repeat N --min-pass K` against a flaky agent on 127.0.0.1, through the binary.
//!
//! The agent answers one conversation wrong 1 time in 5, at a random one of every 5 requests
//! (a shuffled deck rather than independent draws). Independent draws at 20% would make the
//! verdict of 3-of-5 itself fail 5.8% of the time (two or fewer passes out of five), so a test
//! asserting a stable verdict over 20 runs would flake; the deck keeps the rate at exactly 1 in
//! 5 per 5 runs while leaving which run fails to chance.

use crate::common;
use common::case;
use std::collections::HashMap;
use std::fs;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

const RIGHT: &str = "Your order ORD-12345 has shipped.";
const WRONG: &str = "Sorry, I cannot help with that.";

/// Per conversation: how many requests it got, and where in the current 5 the bad one is.
type Decks = Arc<Mutex<HashMap<String, (u64, u64)>>>;

async fn agent(State(decks): State<Decks>, Json(request): Json<Value>) -> Response {
    let conversation = request["conversation"].as_str().unwrap_or_default();
    let unlucky = {
        let mut decks = decks.lock().unwrap();
        let (count, bad) = decks.entry(conversation.to_owned()).or_default();
        if *count % 5 == 0 {
            *bad = fastrand::u64(0..5);
        }
        let unlucky = *count % 5 == *bad;
        *count += 1;
        unlucky
    };
    let text = match conversation {
        "flaky" if unlucky => WRONG,
        "glitchy" if unlucky => {
            return (StatusCode::INTERNAL_SERVER_ERROR, "glitch").into_response();
        }
        "broken" => WRONG,
        _ => RIGHT,
    };
    Json(json!({"messages": [{"text": text}]})).into_response()
}

/// Starts the agent on a free loopback port.
fn start_agent() -> SocketAddr {
    common::serve_turn(agent, Decks::default())
}

/// One SCRAPI golden per conversation, tagged `stable` (flaky and steady, which pass 3 of 5)
/// or `unstable`.
fn write_suite(dir: &Path) {
    let mut golden = String::from("conversations:\n");
    for (name, tag) in [
        ("flaky", "stable"),
        ("steady", "stable"),
        ("broken", "unstable"),
        ("glitchy", "unstable"),
    ] {
        golden.push_str(&format!(
            "  - conversation: {name}\n    tags: [{tag}]\n    turns:\n      - user: Where is ORD-12345?\n        agent: \"{RIGHT}\"\n"
        ));
    }
    common::write(dir, "goldens/orders.yaml", golden);
}

struct Outcome {
    code: Option<i32>,
    report: Value,
    stdout: String,
    stderr: String,
}

fn run(dir: &Path, addr: SocketAddr, extra: &[&str]) -> Outcome {
    let output = common::command_in(dir)
        .args(["run", "--agent-url", &format!("http://{addr}/turn")])
        .args(["--retries", "0", "--output", "report.json"])
        .args(extra)
        .arg("goldens")
        .output()
        .unwrap();
    let report = fs::read(dir.join("report.json")).unwrap_or_default();
    Outcome {
        code: output.status.code(),
        report: serde_json::from_slice(&report).unwrap_or(Value::Null),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn close(value: &Value, expected: f64) -> bool {
    value.as_f64().is_some_and(|v| (v - expected).abs() < 1e-9)
}

#[test]
fn a_flaky_agent_gets_a_stable_verdict_over_20_runs() {
    let addr = start_agent();
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    let mut failed_runs = std::collections::BTreeSet::new();
    for attempt in 1..=20 {
        let out = run(
            dir.path(),
            addr,
            &["--filter", "stable", "--repeat", "5", "--min-pass", "3"],
        );
        let context = format!("run {attempt}: {}\n{}", out.stdout, out.stderr);
        assert_eq!(out.code, Some(0), "{context}");

        let flaky = case(&out.report, "flaky");
        assert_eq!(flaky["status"], "passed", "{context}");
        let repeats = &flaky["repeats"];
        assert_eq!(repeats["runs"].as_array().unwrap().len(), 5, "{context}");
        assert_eq!(repeats["passed"], 4, "{context}");
        assert_eq!(repeats["min_pass"], 3);
        assert_eq!(repeats["flaky"], true);
        assert!(close(&repeats["pass_fraction"], 0.8), "{repeats}");
        // C(4,3) / C(5,3) = 4 / 10.
        assert!(close(&repeats["pass_hat_k"], 0.4), "{repeats}");
        // The run shown is the one that failed.
        assert_eq!(flaky["turns"][0]["status"], "failed", "{context}");
        let failed = repeats["runs"]
            .as_array()
            .unwrap()
            .iter()
            .position(|s| s == "failed")
            .unwrap();
        failed_runs.insert(failed);

        let steady = &case(&out.report, "steady")["repeats"];
        assert_eq!(
            (&steady["passed"], &steady["flaky"]),
            (&json!(5), &json!(false))
        );
        assert!(close(&steady["pass_hat_k"], 1.0), "{steady}");

        assert!(
            close(&out.report["aggregates"]["flake_rate"], 0.5),
            "{context}"
        );
        let row = out
            .stdout
            .lines()
            .find(|l| l.starts_with("flaky "))
            .unwrap();
        assert!(row.ends_with("flaky (4/5)"), "{row}");
        assert!(
            out.stdout
                .contains("Flake rate: 50.0% (1 of 2 repeated cases flaky)"),
            "{context}"
        );
    }
    // Which run failed was left to chance; 20 runs of a fair deck that never moved would
    // happen with probability 5 * (1/5)^20.
    assert!(failed_runs.len() > 1, "always run {failed_runs:?} failed");
}

#[test]
fn failing_and_errored_runs_show_as_reruns_in_junit_never_as_extra_testcases() {
    let addr = start_agent();
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    let out = run(
        dir.path(),
        addr,
        &["--repeat", "5", "--min-pass", "3", "--junit", "junit.xml"],
    );
    assert_repeat_verdicts(&out);
    let xml = fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert_reruns_in_junit(&xml);

    // The saved report gives the same XML, reruns and all.
    let again = common::command_in(dir.path())
        .args(["report", "report.json", "--junit", "again.xml"])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1), "{again:?}");
    assert_eq!(
        fs::read_to_string(dir.path().join("again.xml")).unwrap(),
        xml
    );
}

/// `broken` failed every run of five, `glitchy` errored once and passed, one case of four is
/// flaky, and the terminal names the failure with its runs.
fn assert_repeat_verdicts(out: &Outcome) {
    let context = format!("{}\n{}", out.stdout, out.stderr);
    // `broken` fails every run.
    assert_eq!(out.code, Some(1), "{context}");
    let broken = case(&out.report, "broken");
    assert_eq!(broken["status"], "failed");
    assert_eq!(broken["repeats"]["flaky"], false);
    assert_eq!(broken["repeats"]["pass_hat_k"], 0.0);
    // One run of `glitchy` errored: four passed, so the error could not change the verdict.
    let glitchy = case(&out.report, "glitchy");
    assert_eq!(glitchy["status"], "passed", "{context}");
    assert_eq!(glitchy["repeats"]["passed"], 4);
    assert_eq!(glitchy["repeats"]["flaky"], false);
    assert_eq!(
        glitchy["repeats"]["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| *s == "error")
            .count(),
        1
    );
    // One flaky case of four repeated ones.
    assert!(
        close(&out.report["aggregates"]["flake_rate"], 0.25),
        "{context}"
    );
    assert!(
        out.stdout.contains(
            "FAILED broken (goldens/orders.yaml:12): 0 of 5 runs passed, 3 needed; run 1 shown"
        ),
        "{context}"
    );
}

/// One JUnit testcase per case, its other runs as `flakyFailure`, `flakyError` or
/// `rerunFailure` children that say which run they were.
fn assert_reruns_in_junit(xml: &str) {
    let doc = roxmltree::Document::parse(xml).unwrap();
    let testcases: Vec<roxmltree::Node> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(testcases.len(), 4, "one testcase per case: {xml}");
    let children = |id: &str| -> Vec<String> {
        let testcase = testcases
            .iter()
            .find(|t| t.attribute("name") == Some(id))
            .unwrap();
        testcase
            .children()
            .filter(|n| n.is_element())
            .map(|n| n.tag_name().name().to_owned())
            .filter(|name| name != "properties" && name != "system-out")
            .collect()
    };
    assert_eq!(children("flaky"), ["flakyFailure"], "{xml}");
    assert_eq!(children("glitchy"), ["flakyError"], "{xml}");
    assert!(children("steady").is_empty(), "{xml}");
    assert_eq!(
        children("broken"),
        [
            "failure",
            "rerunFailure",
            "rerunFailure",
            "rerunFailure",
            "rerunFailure"
        ],
        "{xml}"
    );
    // The report keeps each run's status, not its details: a rerun says which run it was.
    // `broken` shows its first run; the other four are its reruns.
    let reruns: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("rerunFailure"))
        .filter_map(|n| n.attribute("message"))
        .collect();
    assert_eq!(
        reruns,
        [
            "run 2 of 5 failed",
            "run 3 of 5 failed",
            "run 4 of 5 failed",
            "run 5 of 5 failed"
        ],
        "{xml}"
    );
    let failure = doc.descendants().find(|n| n.has_tag_name("failure"));
    assert!(
        failure
            .and_then(|n| n.attribute("message"))
            .is_some_and(|m| m.starts_with("agent text: expected")),
        "{xml}"
    );
    common::assert_contains(xml, &["0 of 5 runs passed, 3 needed"]);
}

#[test]
fn min_pass_defaults_to_every_run() {
    let addr = start_agent();
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    let out = run(dir.path(), addr, &["--filter", "stable", "--repeat", "5"]);
    let context = format!("{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.code, Some(1), "{context}");
    let flaky = case(&out.report, "flaky");
    assert_eq!(flaky["status"], "failed");
    assert_eq!(flaky["repeats"]["min_pass"], 5);
    assert_eq!(flaky["repeats"]["pass_hat_k"], 0.0);
    assert_eq!(case(&out.report, "steady")["status"], "passed");
    // Without --repeat there are no repeats, and no flake rate.
    let once = run(dir.path(), addr, &["--name", "steady"]);
    assert_eq!(once.code, Some(0), "{}", once.stderr);
    assert_eq!(case(&once.report, "steady")["repeats"], Value::Null);
    assert_eq!(once.report["aggregates"]["flake_rate"], Value::Null);
    assert!(!once.stdout.contains("Flake rate"));
}

#[test]
fn bad_repeat_arguments_exit_2_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    // Nothing listens there: the arguments must be refused before any agent is called.
    let nowhere: SocketAddr = "127.0.0.1:9".parse().unwrap();
    for (args, says) in [
        (&["--repeat", "0"][..], "at least once"),
        (
            &["--repeat", "3", "--min-pass", "4"],
            "min-pass 4 must be between 1 and the number of runs (3)",
        ),
        (
            &["--repeat", "3", "--min-pass", "0"],
            "min-pass 0 must be between 1",
        ),
        (
            &["--min-pass", "2"],
            "min-pass 2 must be between 1 and the number of runs (1)",
        ),
    ] {
        let out = run(dir.path(), nowhere, args);
        assert_eq!(out.code, Some(2), "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
        assert!(!dir.path().join("report.json").exists());
    }
}
