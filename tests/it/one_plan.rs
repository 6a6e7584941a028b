//! `list` and `run` choose their cases through one function of the library
//! (`app::plan::choose`): for a config that plays a CX Agent Studio app's own evaluations
//! (against the loopback fake of its v1beta evaluation endpoints, written from
//! `google/cloud/ces/v1beta/evaluation*.proto`: see `ces_platform_support`), with name filters, shards and `--changed-since`, `list` lists exactly the local cases the
//! run then plays.

use crate::{ces_platform_support, common};
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use ces_platform_support::cli::{config, local_golden, start, with_token};
use ces_platform_support::{APP, Fake};

/// `goldens/more.yaml`: three SCRAPI conversations the fake's app answers as written.
fn more_goldens(dir: &Path, reply: &str) {
    let mut text = String::from("conversations:\n");
    for id in ["order_a", "order_b", "order_c"] {
        let _ = write!(
            text,
            "  - conversation: {id}\n    turns:\n      - user: Where is my order?\n        agent: {reply}\n"
        );
    }
    fs::write(dir.join("goldens/more.yaml"), text).unwrap();
}

/// (file, id) of each case `list --json` lists.
fn listed(dir: &Path, selection: &[&str]) -> Vec<(String, String)> {
    let mut args = vec!["list", "--json", "goldens"];
    args.extend_from_slice(selection);
    let outcome = common::goldgate(dir, &args);
    assert_eq!(outcome.code, Some(0), "{selection:?}: {}", outcome.stderr);
    let listing: Value = serde_json::from_str(&outcome.stdout).unwrap();
    pairs(&listing["cases"])
}

fn pairs(cases: &Value) -> Vec<(String, String)> {
    let text = |case: &Value, key: &str| case[key].as_str().unwrap_or_default().to_owned();
    (cases.as_array())
        .unwrap_or_else(|| panic!("no cases: {cases}"))
        .iter()
        .map(|case| (text(case, "file"), text(case, "id")))
        .collect()
}

#[test]
fn list_shows_the_local_cases_an_app_evaluations_run_plays_whatever_the_selection() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    local_golden(root);
    more_goldens(root, "Let me look that up.");
    let fake = Fake::accepting(ces_platform_support::cli::TOKEN);
    fake.state().evaluations.push(json!({
        "name": format!("{APP}/evaluations/made-in-console-1"),
        "displayName": "smoke_hello",
        "golden": {"turns": [{"steps": [{"userInput": {"text": "hi"}}]}]},
    }));
    config(root, start(&fake), "{ evaluations: { prefix: smoke_ } }");
    common::git_init(root);
    // The run's report is no change of the branch's.
    fs::write(root.join(".git/info/exclude"), "report.json\n").unwrap();
    common::git(root, &["add", "-A"]);
    common::git(root, &["commit", "-q", "-m", "main"]);
    common::git(root, &["checkout", "-q", "-b", "pr"]);
    more_goldens(root, "Let me look that order up.");

    let app_evaluations = format!("{APP}/evaluations");
    let mut choices = Vec::new();
    for selection in [
        &[][..],
        &["--name", "order_*"],
        &["--shard", "1/2"],
        &["--shard", "2/2"],
        &["--changed-since", "main"],
        &["--changed-since", "main", "--name", "*_b"],
        &["--changed-since", "main", "--shard", "2/2"],
    ] {
        let listed = listed(root, selection);
        let (code, report, printed) = with_token(root, selection);
        assert!(matches!(code, Some(0 | 1)), "{selection:?}: {printed}");
        let played: Vec<(String, String)> = (pairs(&report["cases"]).into_iter())
            .filter(|(file, _)| *file != app_evaluations)
            .collect();
        assert_eq!(listed, played, "{selection:?}: {printed}");
        if selection.is_empty() {
            let all = pairs(&report["cases"]);
            assert!(
                all.iter().any(|(_, id)| id == "smoke_hello"),
                "the app's evaluation is played beside the local goldens: {all:?}"
            );
        }
        choices.push(listed);
    }
    // The selections chose differently, so that agreeing says something.
    let whole = &choices[0];
    assert_eq!(whole.len(), 4, "{whole:?}");
    assert_eq!(choices[1].len(), 3);
    assert_eq!(choices[2].len() + choices[3].len(), 4);
    let changed: Vec<&str> = choices[4].iter().map(|(_, id)| id.as_str()).collect();
    assert_eq!(changed, ["order_a", "order_b", "order_c"]);
    assert_eq!(choices[5].len(), 1);
}

/// The agent a run tests comes from `--agent-url` / `--agent-cmd`, else `GOLDGATE_AGENT_URL`,
/// else goldgate.yaml. Every address is a closed loopback port: the report names the agent the
/// run tried, and every case errors (exit 2).
#[test]
fn a_flag_beats_its_environment_variable_which_beats_goldgate_yaml() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    common::order_golden(root, &common::order_conversation("shipped"));
    common::write(
        root,
        "goldgate.yaml",
        "agent:\n  http:\n    url: http://127.0.0.1:9/yaml\nrun: { retries: 0 }\n",
    );
    let tested = |env: Option<&str>, flags: &[&str]| {
        let mut command = common::command_in(root);
        if let Some(url) = env {
            command.env("GOLDGATE_AGENT_URL", url);
        }
        command.args(["run", "goldens"]).args(flags);
        let (outcome, report) = common::run_with_report(&mut command, &root.join("report.json"));
        assert_eq!(outcome.code, Some(2), "{flags:?}: {}", outcome.stderr);
        format!(
            "{}\n{}",
            report["agent"].as_str().unwrap_or_default(),
            outcome.stderr
        )
    };
    let env = Some("http://127.0.0.1:9/env");
    let only = |said: String, used: &str| {
        common::assert_contains(&said, &[&format!("127.0.0.1:9/{used}")]);
        for other in ["yaml", "env", "flag"].iter().filter(|o| **o != used) {
            assert!(!said.contains(&format!(":9/{other}")), "{said}");
        }
    };
    only(tested(None, &[]), "yaml");
    only(tested(env, &[]), "env");
    only(
        tested(env, &["--agent-url", "http://127.0.0.1:9/flag"]),
        "flag",
    );
    // A flag that names another kind of agent wins too.
    let command = tested(env, &["--agent-cmd", "exit 3"]);
    common::assert_contains(&command, &["agent process exited", "exit status: 3"]);
    assert!(!command.contains("127.0.0.1"), "{command}");
}
