//! Case keys do not depend on how the goldens were given: a baseline written from the
//! repository's root matches a run from `evals/` on `.` and a run on the absolute path, and
//! `list`, shards and JUnit name the files as the JSON report does.

use crate::common;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// A git repository with two Regtrace sets under `evals/goldens/`; their replies are recorded
/// in the files, so no agent is needed. Every fourth case answers wrong, so that the baseline
/// holds failures a mismatched key would read as new.
fn write_repo(root: &Path) {
    let git = Command::new("git")
        .args(["init", "--quiet"])
        .current_dir(root)
        .status();
    if !git.is_ok_and(|s| s.success()) {
        // A `.git` directory is all the project root needs.
        fs::create_dir_all(root.join(".git")).unwrap();
    }
    let goldens = root.join("evals/goldens");
    fs::create_dir_all(&goldens).unwrap();
    for name in ["billing", "orders"] {
        let mut text = format!(
            "name: set-{name}\nversion: \"1\"\ndescription: generated\ninteraction_type: single_turn\ntags: []\nauthor: tests\ncreated_at: \"2026-01-01\"\nupdated_at: \"2026-01-01\"\ntest_cases:\n"
        );
        for i in 1..=6 {
            let expected = format!("The answer is {i} apples.");
            let actual = if i % 4 == 0 { "No idea." } else { &expected };
            let _ = write!(
                text,
                "  - id: {name}-{i}\n    description: case {i}\n    system_prompt: null\n    tags: []\n    input: \"question {i}\"\n    expected_output: \"{expected}\"\n    actual_output: \"{actual}\"\n    metrics: [format]\n    weight: 1\n"
            );
        }
        fs::write(goldens.join(format!("{name}.yaml")), text).unwrap();
    }
}

fn read(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

/// `file#id` of every case of a report or listing, sorted.
fn keys(report: &Value) -> Vec<String> {
    let mut keys = common::case_keys(report);
    keys.sort();
    keys
}

/// The gate of `report`: nothing new, nothing missing, nothing flipped.
fn assert_matched(report: &Value, how: &str, stdout: &str) {
    let gate = &report["gate"];
    for list in ["newly_failing", "newly_passing", "undecided", "missing"] {
        assert_eq!(
            gate[list],
            Value::Array(Vec::new()),
            "{how}: {list}: {gate}"
        );
    }
    assert!(!stdout.contains("new ->"), "{how}: {stdout}");
    assert!(stdout.contains("Gate: no regression"), "{how}: {stdout}");
}

/// `goldgate run TARGET --baseline BASELINE --fail-on-regress` in `cwd` matches every case of
/// the baseline `base` by its key, and JUnit names the files as the JSON report does.
fn assert_run_matches_the_baseline(
    how: &str,
    cwd: &Path,
    target: &str,
    baseline: &str,
    base: &Value,
) {
    let want = keys(base);
    let out = cwd.join("run.json");
    let out = out.to_str().unwrap();
    let junit = cwd.join("run.xml");
    let junit = junit.to_str().unwrap();
    let ran = common::goldgate(
        cwd,
        &[
            "run",
            target,
            "--baseline",
            baseline,
            "--fail-on-regress",
            "--output",
            out,
            "--junit",
            junit,
        ],
    );
    // The recorded failures failed in the baseline too: matched, they are known failures
    // (exit 0); unmatched, they would read as new failing cases (exit 1).
    let report = read(Path::new(out));
    assert_eq!(keys(&report), want, "{how}");
    assert_eq!(report["suite"], base["suite"], "{how}");
    assert_matched(&report, how, &ran.stdout);
    assert_eq!(ran.code, Some(0), "{how}: {}", ran.stderr);

    // JUnit names each file as the JSON does.
    let xml = fs::read_to_string(junit).unwrap();
    assert!(
        xml.contains("file=\"evals/goldens/orders.yaml\""),
        "{how}: {xml}"
    );
}

/// `list` and `list --shard` in `cwd` announce the suite of `base` and its keys.
fn assert_listed_as_in_the_baseline(how: &str, cwd: &Path, target: &str, base: &Value) {
    let want = keys(base);
    let listed = common::goldgate(cwd, &["list", target, "--json"]);
    assert_eq!(listed.code, Some(0), "{how}: {}", listed.stderr);
    let listing: Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(listing["suite"], base["suite"], "{how}");
    assert_eq!(keys(&listing), want, "{how}");
    let mut sharded = Vec::new();
    for shard in ["1/2", "2/2"] {
        let listed = common::goldgate(cwd, &["list", target, "--json", "--shard", shard]);
        let listing: Value = serde_json::from_str(&listed.stdout).unwrap();
        assert_eq!(
            listing["suite"]["fingerprint"], base["suite"]["fingerprint"],
            "{how}"
        );
        sharded.extend(keys(&listing));
    }
    sharded.sort();
    assert_eq!(sharded, want, "{how}");
}

#[test]
fn a_baseline_from_the_root_matches_runs_from_evals_and_on_absolute_paths() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    fs::create_dir_all(&root).unwrap();
    write_repo(&root);
    let evals = root.join("evals");

    common::goldgate(&root, &["run", "evals", "--output", "base.json"]).exits(1);
    let base = read(&root.join("base.json"));
    let want = keys(&base);
    assert_eq!(want.len(), 12);
    assert!(
        want.iter().all(|k| k.starts_with("evals/goldens/")),
        "{want:?}"
    );

    let baseline = root.join("base.json");
    let baseline = baseline.to_str().unwrap();
    let absolute = evals.to_str().unwrap().to_owned();
    let elsewhere = dir.path().to_path_buf();
    let runs: [(&str, &Path, &str); 3] = [
        ("`.` from evals/", &evals, "."),
        ("the absolute path from evals/", &evals, &absolute),
        (
            "the absolute path from outside the repo",
            &elsewhere,
            &absolute,
        ),
    ];
    for (how, cwd, target) in runs {
        assert_run_matches_the_baseline(how, cwd, target, baseline, &base);
        assert_listed_as_in_the_baseline(how, cwd, target, &base);
    }

    // From inside `goldens/`, `.` is still the folder of goldens it is from the root.
    let listed = common::goldgate(&evals.join("goldens"), &["list", ".", "--json"]).exits(0);
    let listing: Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(listing["suite"], base["suite"]);
    assert_eq!(keys(&listing), want);
}

#[test]
fn compare_says_when_the_baseline_is_of_another_suite() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_repo(root);
    common::goldgate(root, &["run", "evals", "--output", "both.json"]).exits(1);
    common::goldgate(
        root,
        &["run", "evals/goldens/orders.yaml", "--output", "one.json"],
    )
    .exits(1);
    let fingerprint = |name: &str| {
        read(&root.join(name))["suite"]["fingerprint"]
            .as_str()
            .unwrap()
            .to_owned()
    };

    let compared = common::goldgate(root, &["compare", "one.json", "--baseline", "both.json"]);
    let warning = compared
        .stderr
        .lines()
        .find(|l| l.contains("different suites"))
        .unwrap_or_else(|| panic!("{}", compared.stderr));
    common::assert_contains(warning, &["both.json"]);
    common::assert_contains(warning, &["one.json"]);
    assert!(warning.contains(&fingerprint("both.json")), "{warning}");
    assert!(warning.contains(&fingerprint("one.json")), "{warning}");

    // The same suite: no warning.
    let same = common::goldgate(root, &["compare", "both.json", "--baseline", "both.json"]);
    same.never_prints(&["different suites"]);
}
