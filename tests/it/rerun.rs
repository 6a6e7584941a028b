//! `run --rerun REPORT [--only failed|errored]` against an agent on 127.0.0.1, through the
//! binary: only the failed or errored cases of a saved report are played again, the results
//! are merged into it, an error is replaced while a failure keeps counting, and the gate
//! judges the merged report.

use crate::common;
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

/// The flags that replay only what errored in report.json.
const RERUN_ERRORED: [&str; 4] = ["--rerun", "report.json", "--only", "errored"];

/// Requests per conversation, and whether the agent misbehaves on first requests.
#[derive(Clone, Default)]
struct Agent {
    requests: Arc<Mutex<HashMap<String, u32>>>,
    /// `glitchy` answers 500 and `flaky` answers wrong, each on its first request only.
    first_tries_go_wrong: Arc<Mutex<bool>>,
}

impl Agent {
    fn requests(&self, conversation: &str) -> u32 {
        self.requests
            .lock()
            .unwrap()
            .get(conversation)
            .copied()
            .unwrap_or_default()
    }
}

async fn answer(State(agent): State<Agent>, Json(request): Json<Value>) -> Response {
    let conversation = request["conversation"].as_str().unwrap_or_default();
    let first = {
        let mut requests = agent.requests.lock().unwrap();
        let count = requests.entry(conversation.to_owned()).or_default();
        *count += 1;
        *count == 1 && *agent.first_tries_go_wrong.lock().unwrap()
    };
    let text = match conversation {
        "glitchy" if first => {
            return (StatusCode::INTERNAL_SERVER_ERROR, "glitch").into_response();
        }
        "flaky" if first => WRONG,
        "broken" => WRONG,
        _ => RIGHT,
    };
    Json(json!({"messages": [{"text": text}]})).into_response()
}

fn start(agent: &Agent) -> SocketAddr {
    common::serve_turn(answer, agent.clone())
}

/// A temp dir holding [`write_suite`], and a well-behaved agent serving it.
fn suite_and_agent() -> (tempfile::TempDir, Agent, SocketAddr) {
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    let agent = Agent::default();
    let addr = start(&agent);
    (dir, agent, addr)
}

/// One SCRAPI golden of four conversations, each expecting [`RIGHT`].
fn write_suite(dir: &Path) {
    let mut golden = String::from("conversations:\n");
    for name in ["steady", "glitchy", "flaky", "broken"] {
        golden.push_str(&format!(
            "  - conversation: {name}\n    turns:\n      - user: Where is ORD-12345?\n        agent: \"{RIGHT}\"\n"
        ));
    }
    fs::create_dir_all(dir.join("goldens")).unwrap();
    fs::write(dir.join("goldens/orders.yaml"), golden).unwrap();
}

/// `run goldens` against the agent at `addr`, with `extra` flags.
fn run(dir: &Path, addr: SocketAddr, extra: &[&str]) -> common::Outcome {
    common::Outcome::of(
        common::command_in(dir)
            .args([
                "run",
                "goldens",
                "--agent-url",
                &format!("http://{addr}/turn"),
            ])
            .args(["--retries", "0"])
            .args(extra),
    )
}

fn statuses(dir: &Path, report: &str) -> Vec<(String, String)> {
    common::case_statuses(&common::read_json(&dir.join(report)))
        .into_iter()
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = list
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
    pairs.sort();
    pairs
}

#[test]
fn only_what_failed_or_errored_is_replayed_and_merged_into_the_report() {
    let (dir, agent, addr) = suite_and_agent();
    let root = dir.path();
    *agent.first_tries_go_wrong.lock().unwrap() = true;
    run(root, addr, &["--output", "report.json"]).exits(2);
    assert_eq!(
        statuses(root, "report.json"),
        pairs(&[
            ("broken", "failed"),
            ("flaky", "failed"),
            ("glitchy", "error"),
            ("steady", "passed")
        ])
    );
    let steady_before =
        common::case(&common::read_json(&root.join("report.json")), "steady").clone();

    // The error only: it is replaced by its replay; nothing else is asked again.
    let outcome = run(
        root,
        addr,
        &[&RERUN_ERRORED[..], &["--output", "report.json"]].concat(),
    );
    outcome
        .exits(1)
        .warns(&["1 of 4 goldens replayed: errored in report.json, merged into it"])
        .says(&["Selected: 1 of 4 goldens replayed"]);
    assert_eq!(
        (agent.requests("glitchy"), agent.requests("steady")),
        (2, 1)
    );
    assert_eq!((agent.requests("flaky"), agent.requests("broken")), (1, 1));
    let report = common::read_json(&root.join("report.json"));
    assert_eq!(common::case(&report, "glitchy")["status"], "passed");
    assert_eq!(common::case(&report, "glitchy")["error"], Value::Null);
    assert_eq!(common::case(&report, "steady"), &steady_before);
    assert_eq!(report["aggregates"]["cases"]["errors"], 0);
    assert_eq!(report["scope"]["reason"]["by"], "rerun");

    // The failures (the default, with nothing errored left): each one's runs are added, so a
    // case that passes on its second try is flaky and still fails, never quietly passed.
    run(
        root,
        addr,
        &["--rerun", "report.json", "--output", "report.json"],
    )
    .exits(1);
    assert_eq!(agent.requests("flaky"), 2);
    let report = common::read_json(&root.join("report.json"));
    let flaky = common::case(&report, "flaky");
    assert_eq!(flaky["status"], "failed");
    assert_eq!(flaky["repeats"]["runs"], json!(["failed", "passed"]));
    assert_eq!(flaky["repeats"]["flaky"], true);
    assert_eq!(
        common::case(&report, "broken")["repeats"]["runs"],
        json!(["failed", "failed"])
    );
    assert_eq!(report["aggregates"]["cases"]["total"], 4);
    assert_eq!(report["scope"]["selected"], 2);
    assert_eq!(
        report["scope"]["reason"]["only"],
        json!(["failed", "error"])
    );
}

#[test]
fn the_gate_judges_the_merged_report_on_every_run() {
    let (dir, agent, addr) = suite_and_agent();
    let root = dir.path();
    // `broken` is a known failure: it fails on main too.
    run(root, addr, &["--update-baseline", "baseline.json"]).exits(1);
    agent.requests.lock().unwrap().clear();
    *agent.first_tries_go_wrong.lock().unwrap() = true;
    let gated = [
        "--baseline",
        "baseline.json",
        "--fail-on-regress",
        "--max-repeat",
        "1",
        "--output",
        "report.json",
    ];
    run(root, addr, &gated).exits(2);
    let report = common::read_json(&root.join("report.json"));
    assert_eq!(report["gate"]["newly_failing"][0]["id"], "flaky");

    // Replayed: the error is gone and `flaky` has one failing and one passing run against the
    // baseline's one pass, which is no evidence of a regression either way: it is undecided,
    // and reported so, not passed.
    let mut rerun = vec!["--rerun", "report.json"];
    rerun.extend(&gated[..3]);
    rerun.extend(["--output", "report.json"]);
    run(root, addr, &rerun).exits(0);
    let report = common::read_json(&root.join("report.json"));
    let gate = &report["gate"];
    assert_eq!(gate["newly_failing"], json!([]));
    assert_eq!(gate["undecided"][0]["id"], "flaky");
    assert_eq!(gate["known_failures"][0]["id"], "broken");
    assert_eq!(gate["missing"], json!([]));
    assert_eq!(common::case(&report, "flaky")["status"], "failed");

    // The merged report is a report like any other: it can become the baseline.
    run(
        root,
        addr,
        &[&RERUN_ERRORED[..], &["--update-baseline", "next.json"]].concat(),
    )
    .warns(&["baseline written to next.json"]);
    common::goldgate(root, &["compare", "report.json", "--baseline", "next.json"])
        .exits(0)
        .says(&["Known failures, failing on main too"]);
}

#[test]
fn a_rerun_refuses_another_agent_a_lost_case_and_a_bad_only() {
    let (dir, _agent, addr) = suite_and_agent();
    let root = dir.path();
    run(root, addr, &["--output", "report.json"]).exits(1);
    let before = fs::read(root.join("report.json")).unwrap();

    let other = start(&Agent::default());
    run(
        root,
        other,
        &["--rerun", "report.json", "--output", "report.json"],
    )
    .exits(2)
    .warns(&[
        "--rerun: the saved report is of the agent",
        "nothing was written",
    ]);
    assert_eq!(fs::read(root.join("report.json")).unwrap(), before);

    // `broken` failed; a golden without it cannot replay it.
    let golden = fs::read_to_string(root.join("goldens/orders.yaml")).unwrap();
    let cut = golden.find("  - conversation: broken").unwrap();
    fs::write(root.join("goldens/orders.yaml"), &golden[..cut]).unwrap();
    run(root, addr, &["--rerun", "report.json"])
        .exits(2)
        .warns(&["names cases that are not among the goldens loaded: goldens/orders.yaml#broken"]);

    run(root, addr, &["--rerun", "report.json", "--only", "flaky"]).exits(2);
    run(root, addr, &["--only", "failed"]).exits(2);
    run(root, addr, &["--rerun", "missing.json"])
        .exits(2)
        .warns(&["--rerun: ", "missing.json"]);
    run(
        root,
        addr,
        &["--rerun", "report.json", "--changed-since", "main"],
    )
    .exits(2);
    let adaptive = [
        "--rerun",
        "report.json",
        "--baseline",
        "report.json",
        "--max-repeat",
        "3",
    ];
    run(root, addr, &adaptive)
        .exits(2)
        .warns(&["cannot be used with"]);
}
