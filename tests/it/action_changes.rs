//! action/changes.sh, the Action's `changed-since` input turned into a ref: on a pull request
//! it is the base branch, fetched into a shallow clone (actions/checkout's default depth of
//! one commit) and the clone deepened until git finds where the branch left it; elsewhere, or
//! with `none`, the whole suite runs. Run against real repositories cloned over `file://`.
#![cfg(unix)]

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Command;

fn commit(dir: &Path, file: &str) {
    std::fs::write(dir.join(file), file).unwrap();
    common::git(dir, &["add", "-A"]);
    common::git(dir, &["commit", "-q", "-m", file]);
}

/// An upstream with 60 commits on `main`, a branch `pr` of two more cut from the 60th, and
/// `main` moved on by one; then a clone of `pr` one commit deep, as actions/checkout makes.
fn shallow_clone() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let upstream = dir.path().join("upstream");
    std::fs::create_dir(&upstream).unwrap();
    common::git_init(&upstream);
    for n in 0..60 {
        commit(&upstream, &format!("main-{n}"));
    }
    common::git(&upstream, &["checkout", "-q", "-b", "pr"]);
    commit(&upstream, "pr-1");
    commit(&upstream, "pr-2");
    common::git(&upstream, &["checkout", "-q", "main"]);
    commit(&upstream, "main-later");
    let url = format!("file://{}", upstream.display());
    common::git(
        dir.path(),
        &[
            "clone", "-q", "--depth", "1", "--branch", "pr", &url, "clone",
        ],
    );
    let clone = dir.path().join("clone");
    (dir, clone)
}

/// Runs action/changes.sh in `clone`; its exit code, the `ref` it wrote, and its stdout.
fn changes(clone: &Path, input: &str, event: &str) -> (Option<i32>, String, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("action/changes.sh");
    let outputs = clone.join("../github-output");
    std::fs::write(&outputs, "").unwrap();
    let output = Command::new("bash")
        .arg(script)
        .current_dir(clone)
        .env("GITHUB_OUTPUT", &outputs)
        .env("INPUT_CHANGED_SINCE", input)
        .env("EVENT_NAME", event)
        .env("BASE_REF", "main")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", clone)
        .output()
        .unwrap();
    let written = std::fs::read_to_string(&outputs).unwrap();
    let reference = written
        .lines()
        .find_map(|l| l.strip_prefix("ref="))
        .unwrap_or_default()
        .to_owned();
    (
        output.status.code(),
        reference,
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn a_pull_request_in_a_shallow_clone_compares_with_its_fetched_base() {
    let (_dir, clone) = shallow_clone();
    assert_eq!(
        common::git(&clone, &["rev-parse", "--is-shallow-repository"]),
        "true"
    );
    let (code, reference, _) = changes(&clone, "auto", "pull_request");
    assert_eq!((code, reference.as_str()), (Some(0), "origin/main"));
    // goldgate can now find the branch's own change: its two commits, not main's later one.
    let changed = common::git(&clone, &["diff", "--name-only", "origin/main...HEAD"]);
    assert_eq!(changed, "pr-1\npr-2");
}

#[test]
fn other_events_and_none_run_the_whole_suite_and_an_unknown_ref_stops() {
    let (_dir, clone) = shallow_clone();
    assert_eq!(changes(&clone, "auto", "push").1, "");
    assert_eq!(changes(&clone, "none", "pull_request").1, "");
    assert_eq!(changes(&clone, "", "pull_request").1, "");
    let (code, _, stdout) = changes(&clone, "origin/nope", "pull_request");
    assert_eq!(code, Some(2));
    assert!(
        stdout.contains("::error title=goldgate::changed-since: `origin/nope` names no commit"),
        "{stdout}"
    );
}
