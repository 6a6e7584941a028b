//! `run --changed-since REF` in a real git repository in a temp dir, through the binary: a
//! repository with three golden files, where a change to one plays only its cases, a change
//! to the config, the agent's command, an `affects:` path or any file goldgate cannot place
//! plays them all (only `affects_nothing:` files may change beside goldens), and the gate and
//! every report speak of the cases selected only.

use crate::common;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use serde_json::Value;

/// A Regtrace golden set `goldens/NAME.yaml` of two cases whose replies are recorded (no
/// agent needed); `wrong` makes its first reply wrong.
fn write_set(dir: &Path, name: &str, wrong: bool) {
    let mut text = format!(
        "name: set-{name}\nversion: \"1\"\ndescription: generated\ninteraction_type: single_turn\ntags: []\nauthor: tests\ncreated_at: \"2026-01-01\"\nupdated_at: \"2026-01-01\"\ntest_cases:\n"
    );
    for i in 1..=2 {
        let expected = format!("The answer is {i} apples.");
        let actual = if wrong && i == 1 {
            "No idea."
        } else {
            &expected
        };
        let _ = write!(
            text,
            "  - id: {name}-{i}\n    description: case {i}\n    system_prompt: null\n    tags: []\n    input: \"question {i}\"\n    expected_output: \"{expected}\"\n    actual_output: \"{actual}\"\n    metrics: [factuality, format]\n    weight: 1\n"
        );
    }
    fs::create_dir_all(dir.join("goldens")).unwrap();
    fs::write(dir.join(format!("goldens/{name}.yaml")), text).unwrap();
}

/// A repository on `main` with three golden sets (`a`, `b`, `c`), a goldgate.yaml listing
/// `affects: [server/**]`, a server file, and the baseline of all six cases committed; then a
/// branch `pr` checked out.
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    common::git_init(root);
    for name in ["a", "b", "c"] {
        write_set(root, name, false);
    }
    fs::write(
        root.join("goldgate.yaml"),
        "run: { concurrency: 2 }\naffects:\n  - server/**\nfloors: { min_pass_rate: 0.01 }\n",
    )
    .unwrap();
    fs::create_dir_all(root.join("server")).unwrap();
    fs::write(root.join("server/app.py"), "print('hi')\n").unwrap();
    common::goldgate(
        root,
        &["run", "goldens", "--update-baseline", "baseline.json"],
    )
    .exits(0);
    common::git(root, &["add", "-A"]);
    common::git(root, &["commit", "-q", "-m", "main"]);
    common::git(root, &["checkout", "-q", "-b", "pr"]);
    dir
}

/// `run goldens --changed-since main` against the baseline, with the JSON and Markdown
/// reports; `extra` flags after.
fn run(root: &Path, extra: &[&str]) -> (common::Outcome, Value, String) {
    let mut args = vec![
        "run",
        "goldens",
        "--changed-since",
        "main",
        "--baseline",
        "baseline.json",
        "--output",
        "out/report.json",
        "--markdown",
        "out/summary.md",
        "--html",
        "out/report.html",
        "--junit",
        "out/junit.xml",
    ];
    args.extend(extra);
    fs::create_dir_all(root.join("out")).unwrap();
    // The reports are written outside what git sees as a change: out/ is ignored.
    fs::write(root.join(".git/info/exclude"), "out/\n").unwrap();
    let outcome = common::goldgate(root, &args);
    let report = common::read_json(&root.join("out/report.json"));
    let markdown = fs::read_to_string(root.join("out/summary.md")).unwrap();
    (outcome, report, markdown)
}

/// Changes `file` without changing what it says: a comment at its end.
fn touch(file: &Path) {
    let text = fs::read_to_string(file).unwrap();
    fs::write(file, text + "# edited\n").unwrap();
}

fn ids(report: &Value) -> Vec<String> {
    common::case_statuses(report).into_keys().collect()
}

#[test]
fn a_changed_golden_plays_only_its_cases_and_every_report_says_so() {
    let repo = repository();
    let root = repo.path();
    write_set(root, "b", true);
    let (outcome, report, markdown) = run(root, &["--fail-on-regress"]);
    // b-1 now fails where it passed on main: the gate sees it among the cases selected.
    let outcome = outcome.exits(1);
    assert_eq!(ids(&report), ["b-1", "b-2"]);
    let scope = &report["scope"];
    assert_eq!(scope["reason"]["by"], "changed-since");
    assert_eq!(scope["reason"]["since"], "main");
    assert_eq!(
        (scope["selected"].as_u64(), scope["total"].as_u64()),
        (Some(2), Some(6))
    );
    let gate = &report["gate"];
    // The four cases not selected are neither missing nor counted.
    assert_eq!(gate["missing"], serde_json::json!([]));
    assert_eq!(gate["newly_failing"][0]["id"], "b-1");
    let pass_rate = common::item(&gate["metrics"], "threshold", "passRateDropPp");
    assert_eq!(pass_rate["baseline"], 1.0);
    assert_eq!(pass_rate["current"], 0.5);
    outcome.says(&["Selected: 2 of 6 goldens selected: changed since main"]);
    outcome.warns(&["goldgate: 2 of 6 goldens selected: changed since main"]);
    outcome.never_prints(&["another suite"]);
    common::assert_contains(
        &markdown,
        &[
            "**Selected:** 2 of 6 goldens selected\\: changed since main (the gate compares these only)",
        ],
    );
    list_shows_what_the_run_plays(root);
    the_saved_report_is_compared_on_its_own_cases(root);
}

/// `list --changed-since` shows the cases such a run plays.
fn list_shows_what_the_run_plays(root: &Path) {
    let listed = common::goldgate(
        root,
        &["list", "goldens", "--changed-since", "main", "--json"],
    );
    let listed: Value = serde_json::from_str(&listed.exits(0).stdout).unwrap();
    let ids: Vec<&Value> = listed["cases"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .map(|c| &c["id"])
        .collect();
    assert_eq!(ids, ["b-1", "b-2"]);
}

/// The saved report of part of the suite is compared (and rendered, JUnit and HTML too) on its
/// own cases later, as the run compared it.
fn the_saved_report_is_compared_on_its_own_cases(root: &Path) {
    let compared = common::goldgate(
        root,
        &[
            "compare",
            "out/report.json",
            "--baseline",
            "baseline.json",
            "--json",
        ],
    );
    let comparison: Value = serde_json::from_str(&compared.exits(1).stdout).unwrap();
    assert_eq!(comparison["missing"], serde_json::json!([]));
    common::goldgate(
        root,
        &[
            "report",
            "out/report.json",
            "--baseline",
            "baseline.json",
            "--markdown",
            "out/again.md",
        ],
    )
    .exits(1);
    let again = fs::read_to_string(root.join("out/again.md")).unwrap();
    common::assert_contains(&again, &["2 of 6 goldens selected", "0 newly passing"]);
    common::assert_lacks(&again, &["not run"]);
    let junit = fs::read_to_string(root.join("out/junit.xml")).unwrap();
    common::assert_contains(
        &junit,
        &[
            r#"<property name="goldgate.scope" value="2 of 6 goldens selected: changed since main"/>"#,
        ],
    );
    let page = fs::read_to_string(root.join("out/report.html")).unwrap();
    common::assert_contains(&page, &["2 of 6 goldens selected: changed since main"]);
}

#[test]
fn the_config_the_agent_and_affects_paths_play_the_whole_suite() {
    let repo = repository();
    let root = repo.path();
    fs::write(
        root.join("goldgate.yaml"),
        "run: { concurrency: 1 }\naffects:\n  - server/**\n",
    )
    .unwrap();
    let (outcome, report, markdown) = run(root, &[]);
    outcome
        .exits(0)
        .says(&["Selected: all 6 goldens selected: goldgate.yaml changed since main"]);
    assert_eq!(ids(&report).len(), 6);
    assert_eq!(
        report["scope"]["reason"]["whole_suite_because"],
        serde_json::json!(["goldgate.yaml"])
    );
    common::assert_contains(&markdown, &["all 6 goldens selected"]);

    common::git(root, &["checkout", "-q", "goldgate.yaml"]);
    fs::write(root.join("server/app.py"), "print('bye')\n").unwrap();
    let (outcome, report, _) = run(root, &[]);
    outcome.exits(0);
    assert_eq!(ids(&report).len(), 6);
    assert_eq!(
        report["scope"]["reason"]["whole_suite_because"],
        serde_json::json!(["server/app.py"])
    );
    // --name narrows the whole suite the change selected: the gate compares those cases only.
    let (outcome, report, _) = run(root, &["--name", "a-*"]);
    outcome.exits(0).never_prints(&["not run now"]);
    assert_eq!(ids(&report), ["a-1", "a-2"]);
    assert_eq!(report["gate"]["missing"], serde_json::json!([]));

    // A command agent's files: those its command line names.
    common::git(root, &["checkout", "-q", "server/app.py"]);
    let agent = common::support_agent();
    fs::write(
        root.join("agent.sh"),
        format!("exec '{}'\n", agent.display()),
    )
    .unwrap();
    let (outcome, report, _) = run(root, &["--agent-cmd", "sh agent.sh"]);
    outcome.exits(0);
    assert_eq!(
        report["scope"]["reason"]["whole_suite_because"],
        serde_json::json!(["agent.sh"])
    );
}

#[test]
fn the_change_is_the_branchs_own_uncommitted_and_untracked_files_included() {
    let repo = repository();
    let root = repo.path();
    // A commit on main after the branch was cut is not the PR's change.
    common::git(root, &["checkout", "-q", "main"]);
    write_set(root, "c", true);
    common::git(root, &["commit", "-q", "-am", "main moves on"]);
    common::git(root, &["checkout", "-q", "pr"]);
    write_set(root, "a", true);
    common::git(root, &["commit", "-q", "-am", "pr changes a"]);
    let (outcome, report, _) = run(root, &[]);
    outcome.exits(1);
    assert_eq!(ids(&report), ["a-1", "a-2"]);

    // Uncommitted and untracked goldens count too.
    touch(&root.join("goldens/b.yaml"));
    write_set(root, "d", false);
    let (_, report, _) = run(root, &[]);
    assert_eq!(ids(&report), ["a-1", "a-2", "b-1", "b-2", "d-1", "d-2"]);
    assert_eq!(report["scope"]["total"], 8);
}

#[test]
fn a_deleted_golden_is_reported_missing_not_forgotten() {
    let repo = repository();
    let root = repo.path();
    common::git(root, &["rm", "-q", "goldens/c.yaml"]);
    let (outcome, report, markdown) = run(root, &[]);
    outcome.exits(0);
    assert_eq!(ids(&report).len(), 0);
    assert_eq!(
        report["gate"]["missing"],
        serde_json::json!(["goldens/c.yaml#c-1", "goldens/c.yaml#c-2"])
    );
    assert_eq!(report["scope"]["total"], 4);
    common::assert_contains(&markdown, &["2 not run"]);
}

#[test]
fn nothing_changed_runs_nothing_and_passes() {
    let repo = repository();
    let (outcome, report, markdown) = run(repo.path(), &["--fail-on-regress"]);
    outcome
        .exits(0)
        .says(&["nothing to run: 0 of 6 goldens selected: none changed since main"]);
    assert_eq!(ids(&report).len(), 0);
    // A floor of the whole run has nothing to hold a run of nothing to.
    assert_eq!(report["floors"][0]["met"], true, "{}", report["floors"]);
    assert_eq!(report["gate"]["missing"], serde_json::json!([]));
    common::assert_contains(&markdown, &["0 of 6 goldens selected"]);
}

#[test]
fn a_run_of_part_of_the_suite_never_becomes_the_baseline() {
    let repo = repository();
    let root = repo.path();
    touch(&root.join("goldens/b.yaml"));
    let (outcome, _, _) = run(root, &["--update-baseline", "baseline.json"]);
    outcome.exits(2).warns(&[
        "not updating the baseline baseline.json: the run played part of the suite (2 of 6 goldens selected: changed since main)",
    ]);
}

#[test]
fn an_unknown_ref_or_no_repository_exits_2_saying_why() {
    let repo = repository();
    let root = repo.path();
    common::goldgate(root, &["run", "goldens", "--changed-since", "origin/nope"])
        .exits(2)
        .warns(&[
            "--changed-since: `origin/nope` names no commit here",
            "fetch-depth: 0",
        ]);
    common::goldgate(root, &["run", "goldens", "--changed-since", "--help"]).exits(2);
    let outside = tempfile::tempdir().unwrap();
    write_set(outside.path(), "a", false);
    common::goldgate(
        outside.path(),
        &["run", "goldens", "--changed-since", "main"],
    )
    .exits(2)
    .warns(&["is not in a git repository"]);
}

/// A repository made by `goldgate init --agent http`, committed on `main`, with the agent's
/// source beside it; then a branch `pr` checked out.
fn initialised() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    common::git_init(root);
    common::goldgate(root, &["init", "--agent", "http"]).exits(0);
    fs::create_dir_all(root.join("agent")).unwrap();
    fs::write(root.join("agent/server.py"), "print('hi')\n").unwrap();
    fs::write(root.join("README.md"), "# Our agent\n").unwrap();
    common::git(root, &["add", "-A"]);
    common::git(root, &["commit", "-q", "-m", "main"]);
    common::git(root, &["checkout", "-q", "-b", "pr"]);
    dir
}

/// What `list evals --changed-since main` says a run plays: the cases' ids and the scope line.
fn listed(root: &Path) -> (Vec<String>, String) {
    let out = common::goldgate(
        root,
        &["list", "evals", "--changed-since", "main", "--json"],
    )
    .exits(0);
    let listed: Value = serde_json::from_str(&out.stdout).unwrap();
    let ids = listed["cases"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect();
    (ids, out.stderr)
}

#[test]
fn in_a_repository_goldgate_init_made_an_agent_change_plays_every_golden() {
    let repo = initialised();
    let root = repo.path();
    let all = common::goldgate(root, &["list", "evals", "--json"]).exits(0);
    let all: Value = serde_json::from_str(&all.stdout).unwrap();
    let every = all["cases"].as_array().unwrap().len();
    assert!(every > 0);
    // The agent's source: goldgate cannot know what it changes, so every golden plays.
    fs::write(root.join("agent/server.py"), "print('bye')\n").unwrap();
    let (ids, said) = listed(root);
    assert_eq!(ids.len(), every, "{said}");
    common::assert_contains(
        &said,
        &["all 1 goldens selected: agent/server.py changed since main"],
    );
    // Docs only: the affects_nothing globs init wrote; nothing plays, and the rule is named.
    common::git(root, &["checkout", "-q", "agent/server.py"]);
    fs::write(root.join("README.md"), "# Our agent, documented\n").unwrap();
    let (ids, said) = listed(root);
    assert!(ids.is_empty(), "{ids:?}");
    common::assert_contains(
        &said,
        &["0 of 1 goldens selected: none changed since main; README.md matches affects_nothing"],
    );
    // One golden changed (and the docs): that golden plays.
    let golden = root.join("evals/goldens/example.yaml");
    let text = fs::read_to_string(&golden).unwrap();
    fs::write(&golden, text + "# edited\n").unwrap();
    let (ids, said) = listed(root);
    assert_eq!(ids.len(), 1, "{said}");
    common::assert_contains(&said, &["1 of 1 goldens selected: changed since main"]);
}

#[test]
fn a_file_goldgate_cannot_place_plays_the_whole_suite() {
    let repo = repository();
    let root = repo.path();
    // Neither a golden nor in `affects:`, and no `affects_nothing:` covers it: fail closed.
    fs::write(root.join("poetry.lock"), "changed\n").unwrap();
    touch(&root.join("goldens/b.yaml"));
    let (outcome, report, markdown) = run(root, &[]);
    outcome
        .exits(0)
        .says(&["Selected: all 6 goldens selected: poetry.lock changed since main"]);
    assert_eq!(ids(&report).len(), 6);
    assert_eq!(
        report["scope"]["reason"]["whole_suite_because"],
        serde_json::json!(["poetry.lock"])
    );
    common::assert_contains(
        &markdown,
        &["all 6 goldens selected\\: poetry\\.lock changed"],
    );
}
