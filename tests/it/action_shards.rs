//! The sharded workflow of docs/github.md, driven locally through the action's own run step
//! (action.yml's `run` script, as GitHub runs it with the inputs in `env:`): N shard jobs with
//! `shard: K/N`, then one job with `merge:` that joins their reports, gates the whole against
//! the baseline and publishes. Against a loopback GitHub: the shards post no comment, the
//! merge posts exactly one, and its verdict is the unsharded run's.

use crate::{common, github_support};
use std::path::Path;

use serde_json::Value;

use common::Outcome;
use github_support::{PASSING_REPLY, Server};

const SHARDS: usize = 3;

/// The script of the action's `run` step.
fn run_script() -> String {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml")).unwrap();
    let action: Value = serde_saphyr::from_str(&text).unwrap();
    let steps = action["runs"]["steps"].as_array().unwrap();
    let step = steps
        .iter()
        .find(|s| s["id"] == "run")
        .expect("the run step");
    step["run"].as_str().unwrap().to_owned()
}

/// The run step as a pull_request job runs it in `dir`, with `inputs` (`INPUT_*` and the
/// like) over the action's defaults.
fn action_step(dir: &Path, server: &Server, inputs: &[(&str, &str)]) -> Outcome {
    let mut command = assert_cmd::Command::new("bash");
    command.current_dir(dir).args(["-c", &run_script()]);
    github_support::as_pr_step(&mut command, dir, server, "summary.md");
    let agent = format!("--agent-url http://{}/turn", server.addr);
    let defaults = [
        ("GOLDGATE_BIN", env!("CARGO_BIN_EXE_goldgate")),
        ("INPUT_PATHS", "goldens"),
        ("INPUT_FAIL_ON_REGRESS", "true"),
        ("INPUT_FAIL_ON_INCONCLUSIVE", "false"),
        ("INPUT_JSON", "goldgate-report.json"),
        ("INPUT_COMMENT", "auto"),
        ("INPUT_ARGS", &agent),
        ("EVENT_NAME", "pull_request"),
    ];
    let empty = [
        "INPUT_CONFIG",
        "INPUT_BASELINE",
        "INPUT_JUNIT",
        "INPUT_BUDGET",
        "INPUT_SHARD",
        "INPUT_MERGE",
        "CHANGED_SINCE",
    ];
    for name in empty {
        command.env(name, "");
    }
    for (name, value) in defaults.iter().chain(inputs) {
        command.env(name, value);
    }
    Outcome::of(&mut command)
}

fn goldens(dir: &Path, broken: Option<&str>) {
    let mut text = String::from("conversations:\n");
    for i in 1..=6 {
        let name = format!("c{i}");
        let expected = if broken == Some(name.as_str()) {
            "Your order ORD-12345 has not shipped yet."
        } else {
            PASSING_REPLY
        };
        text.push_str(&format!(
            "  - conversation: {name}\n    turns:\n      - user: Where is ORD-12345?\n        agent: \"{expected}\"\n"
        ));
    }
    common::write(dir, "goldens/orders.yaml", text);
}

#[test]
fn shard_jobs_and_one_merge_job_gate_as_one_run_with_one_comment() {
    let server = Server::start();
    let workspace = tempfile::tempdir().unwrap();
    let dir = workspace.path();
    github_support::write_pr_event(dir);
    let url = format!("http://{}/turn", server.addr);
    goldens(dir, None);
    let baseline = ["run", "goldens", "--agent-url", &url];
    common::goldgate(
        dir,
        &[&baseline[..], &["--update-baseline", "baseline.json"]].concat(),
    )
    .exits(0);
    // The pull request breaks c4, which passed on main.
    goldens(dir, Some("c4"));
    let whole = common::goldgate(
        dir,
        &[
            &baseline[..],
            &[
                "--baseline",
                "baseline.json",
                "--fail-on-regress",
                "--output",
                "whole.json",
            ],
        ]
        .concat(),
    );
    let whole_report = common::read_json(&dir.join("whole.json"));
    assert_eq!(whole.code, Some(1), "{}", whole.stderr);

    for k in 1..=SHARDS {
        let shard = format!("{k}/{SHARDS}");
        let json = format!("shards/goldgate-shard-{k}.json");
        std::fs::create_dir_all(dir.join("shards")).unwrap();
        let ran = action_step(
            dir,
            &server,
            &[("INPUT_SHARD", &shard), ("INPUT_JSON", &json)],
        );
        assert!(ran.code == Some(0) || ran.code == Some(1), "{}", ran.stderr);
        assert!(dir.join(&json).is_file(), "{}", ran.stderr);
    }
    assert!(server.comments().is_empty(), "a shard commented");

    let merged = action_step(
        dir,
        &server,
        &[
            ("INPUT_MERGE", "shards/*.json"),
            ("INPUT_BASELINE", "baseline.json"),
            ("INPUT_JUNIT", "goldgate-junit.xml"),
        ],
    );
    assert_eq!(
        merged.code, whole.code,
        "{}{}",
        merged.stdout, merged.stderr
    );
    let merged_report = common::read_json(&dir.join("goldgate-report.json"));
    assert_eq!(merged_report["verdict"], whole_report["verdict"]);
    assert_eq!(merged_report["cases"].as_array().unwrap().len(), 6);
    assert!(dir.join("goldgate-junit.xml").is_file());
    let comments = server.comments();
    assert_eq!(comments.len(), 1, "{comments:#?}");
    let body = comments[0]["body"].as_str().unwrap();
    assert!(body.contains("c4"), "{body}");
}
