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
