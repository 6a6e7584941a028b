//! `run --shard K/N` and `goldgate merge`, through the binary as CI runs them: the shards of a
//! suite cover every case exactly once whatever order its files are given in, their merged
//! report has the aggregates of one run of the whole suite, and merge refuses what is not the
//! shards of one suite, and that no part of the suite replaces the whole baseline.

use crate::common;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use serde_json::Value;

/// Runs goldgate and returns its exit code and stderr.
fn exec(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let outcome = common::goldgate(dir, args);
    (outcome.code, outcome.stderr)
}

fn read(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

use common::case_keys as keys;

/// The exit code a run or merge owes its report: 1 when a case failed, else 0.
fn expected_exit(report: &Value) -> Option<i32> {
    let failed = report["aggregates"]["cases"]["failed"].as_u64().unwrap();
    Some(i32::from(failed > 0))
}

/// A temporary folder of Regtrace golden sets whose replies are recorded in the files: no
/// agent is needed. Every fourth case answers wrong, and weights vary, so that the aggregates
/// have something to add.
fn sets(names: &[&str], per_set: usize) -> tempfile::TempDir {
    let temporary = tempfile::tempdir().unwrap();
    let dir = temporary.path();
    fs::create_dir_all(dir.join("sets")).unwrap();
    for name in names {
        let mut text = format!(
            "name: set-{name}\nversion: \"1\"\ndescription: generated\ninteraction_type: single_turn\ntags: []\nauthor: tests\ncreated_at: \"2026-01-01\"\nupdated_at: \"2026-01-01\"\ntest_cases:\n"
        );
        for i in 1..=per_set {
            let expected = format!("The answer is {i} apples.");
            let actual = if i % 4 == 0 { "No idea." } else { &expected };
            let _ = write!(
                text,
                "  - id: {name}-{i}\n    description: case {i}\n    system_prompt: null\n    tags: []\n    input: \"question {i}\"\n    expected_output: \"{expected}\"\n    actual_output: \"{actual}\"\n    metrics: [factuality, format]\n    weight: {}\n",
                i % 3 + 1
            );
        }
        fs::write(dir.join(format!("sets/{name}.yaml")), text).unwrap();
    }
    temporary
}

/// Runs one shard (or the whole suite) of the sets in `order`, writing `output`.
fn run_sets(dir: &Path, order: &[&str], shard: Option<&str>, output: &str) -> Value {
    let mut args: Vec<String> = vec!["run".into()];
    args.extend(order.iter().map(|name| format!("sets/{name}.yaml")));
    if let Some(shard) = shard {
        args.extend(["--shard".into(), shard.into()]);
    }
    args.extend(["--output".into(), output.into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, stderr) = exec(dir, &args);
    let report = read(&dir.join(output));
    assert_eq!(code, expected_exit(&report), "{args:?}: {stderr}");
    report
}

/// Asserts that the shard reports split `whole`'s cases: each exactly once.
fn assert_partition(whole: &Value, shards: &[Value]) {
    let mut seen = BTreeSet::new();
    for shard in shards {
        for key in keys(shard) {
            assert!(seen.insert(key.clone()), "{key} is in two shards");
        }
        assert_eq!(shard["suite"]["fingerprint"], whole["suite"]["fingerprint"]);
        assert_eq!(shard["suite"]["cases"], whole["suite"]["cases"]);
    }
    let all: BTreeSet<String> = keys(whole).into_iter().collect();
    assert_eq!(seen, all, "the shards together are not the suite");
}

#[test]
fn shards_cover_every_case_once_whatever_the_file_order_and_merge_to_one_run() {
    let dir = sets(&["a", "b", "c"], 20);
    let dir = dir.path();
    let whole = run_sets(dir, &["a", "b", "c"], None, "whole.json");
    assert_eq!(whole["suite"]["cases"], 60);
    assert_eq!(whole["suite"]["shard"], Value::Null);

    // The shards are run with the files given in other orders: membership must not change.
    let orders: [&[&str]; 4] = [
        &["c", "a", "b"],
        &["b", "c", "a"],
        &["a", "b", "c"],
        &["c", "b", "a"],
    ];
    let mut shards = Vec::new();
    for (k, order) in (1..=4).zip(orders) {
        let shard = run_sets(
            dir,
            order,
            Some(&format!("{k}/4")),
            &format!("shard-{k}.json"),
        );
        assert_eq!(shard["suite"]["shard"], format!("{k}/4"));
        shards.push(shard);
    }
    assert_partition(&whole, &shards);
    // The same shard from another file order holds the same cases.
    let again = run_sets(dir, &["b", "a", "c"], Some("2/4"), "again.json");
    let sorted = |report: &Value| keys(report).into_iter().collect::<BTreeSet<_>>();
    assert_eq!(sorted(&again), sorted(&shards[1]));

    let (code, stderr) = exec(
        dir,
        &[
            "merge",
            "shard-3.json",
            "shard-1.json",
            "shard-4.json",
            "shard-2.json",
            "-o",
            "merged.json",
        ],
    );
    let merged = read(&dir.join("merged.json"));
    assert_eq!(code, expected_exit(&whole), "{stderr}");
    assert_eq!(merged["aggregates"], whole["aggregates"]);
    assert_eq!(merged["suite"], whole["suite"]);
    assert_eq!(merged["incomplete"], false);
    assert_eq!(sorted(&merged), sorted(&whole));
}

#[test]
fn shards_of_the_example_suite_replayed_merge_to_the_aggregates_of_one_run() {
    let agent = common::support_agent();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    // The example suite without invoice-lookup.scenario.yaml: its id is also a case of the
    // CSV golden, and recordings are kept per case id, so the two would share one transcript.
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/suite");
    let parts: Vec<String> = [
        "goldens",
        "regtrace",
        "scenarios/human-handoff.scenario.yaml",
    ]
    .iter()
    .map(|part| example.join(part).to_str().unwrap().to_owned())
    .collect();
    let suite: Vec<&str> = parts.iter().map(String::as_str).collect();
    // Record the demo agent once; replaying the recording makes every run identical,
    // latencies included.
    let (code, stderr) = exec(
        dir,
        &[
            &["run", "--agent-cmd", agent.to_str().unwrap()],
            &suite[..],
            &["--record", "transcripts"],
        ]
        .concat(),
    );
    assert_eq!(code, Some(0), "{stderr}");
    common::write(dir, "goldgate.yaml", "agent:\n  replay: transcripts\n");

    let run = |extra: &[&str], output: &str| {
        let args = [&["run", "--output", output], &suite[..], extra].concat();
        let (code, stderr) = exec(dir, &args);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        read(&dir.join(output))
    };
    let whole = run(&[], "whole.json");
    assert_eq!(whole["suite"]["cases"], 7);
    let shards: Vec<Value> = (1..=3)
        .map(|k| run(&["--shard", &format!("{k}/3")], &format!("shard-{k}.json")))
        .collect();
    assert_partition(&whole, &shards);

    let (code, stderr) = exec(
        dir,
        &[
            "merge",
            "shard-2.json",
            "shard-3.json",
            "shard-1.json",
            "--output",
            "merged.json",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let merged = read(&dir.join("merged.json"));
    assert_eq!(merged["aggregates"], whole["aggregates"]);
    assert!(whole["aggregates"]["latency"].is_object());
    assert!(whole["aggregates"]["tool_call_accuracy"].is_number());
    assert_eq!(merged["agent"], whole["agent"]);
}

/// `goldgate merge PARTS -o merged.json` in `dir`, with no merged.json left from before.
fn merge(dir: &Path, parts: &[&str]) -> (Option<i32>, String) {
    let mut args = vec!["merge"];
    args.extend(parts);
    args.extend(["-o", "merged.json"]);
    let _ = fs::remove_file(dir.join("merged.json"));
    exec(dir, &args)
}

/// Merging `parts` exits 2 with each of `says` on stderr, and writes no report.
#[track_caller]
fn refused(dir: &Path, parts: &[&str], says: &[&str]) {
    let (code, stderr) = merge(dir, parts);
    assert_eq!(code, Some(2), "{parts:?} merged: {stderr}");
    for text in says {
        assert!(stderr.contains(text), "{parts:?}: no {text:?} in {stderr}");
    }
    assert!(
        !dir.join("merged.json").exists(),
        "{parts:?} wrote a report"
    );
}

#[test]
fn merge_refuses_what_is_not_the_shards_of_one_suite() {
    let dir = sets(&["a", "b"], 15);
    let dir = dir.path();
    let all = ["a", "b"];
    for k in 1..=3 {
        run_sets(
            dir,
            &all,
            Some(&format!("{k}/3")),
            &format!("shard-{k}.json"),
        );
    }
    run_sets(dir, &all, Some("1/2"), "half-1.json");
    // Another selection of cases is another suite.
    run_sets(dir, &["a"], Some("2/3"), "only-a-2.json");

    refused(
        dir,
        &["shard-1.json", "only-a-2.json", "shard-3.json"],
        &["shard-1.json and only-a-2.json", "different suites"],
    );
    refused(
        dir,
        &["shard-1.json", "shard-2.json", "shard-1.json"],
        &["both cover shard 1/3"],
    );
    refused(
        dir,
        &["shard-1.json", "half-1.json"],
        &["split two ways (1/3 and 1/2)"],
    );

    // A case copied from one shard into another is there twice.
    let mut edited = read(&dir.join("shard-2.json"));
    let stolen = read(&dir.join("shard-1.json"))["cases"][0].clone();
    let key = format!(
        "{}#{}",
        stolen["file"].as_str().unwrap(),
        stolen["id"].as_str().unwrap()
    );
    edited["cases"].as_array_mut().unwrap().push(stolen);
    common::write(dir, "edited-2.json", edited.to_string());
    refused(
        dir,
        &["shard-1.json", "edited-2.json", "shard-3.json"],
        &[&format!(
            "case {key} is in both shard-1.json and edited-2.json"
        )],
    );

    refused(dir, &["shard-1.json", "missing.json"], &["missing.json"]);
    common::write(dir, "garbage.json", "{\"cases\": 3}");
    refused(
        dir,
        &["garbage.json"],
        &["garbage.json", "not a goldgate JSON report"],
    );

    // Missing shards are not refused: the merged report says it is incomplete, and exits 2.
    let (code, stderr) = merge(dir, &["shard-1.json", "shard-3.json"]);
    assert_eq!(code, Some(2), "{stderr}");
    common::assert_contains(&stderr, &["no report for shard 2/3"]);
    let merged = read(&dir.join("merged.json"));
    assert_eq!(merged["incomplete"], true);
    assert_eq!(merged["suite"]["cases"], 30);
    assert!(merged["cases"].as_array().unwrap().len() < 30);
}

#[test]
fn bad_shard_arguments_exit_2_before_anything_runs() {
    let dir = sets(&["a"], 3);
    let dir = dir.path();
    for (shard, says) in [
        ("0/3", "K must be between 1 and N"),
        ("4/3", "K must be between 1 and N"),
        ("x", "is not K/N"),
        ("1/0", "K must be between 1 and N"),
    ] {
        let (code, stderr) = exec(
            dir,
            &["run", "sets/a.yaml", "--shard", shard, "--output", "r.json"],
        );
        assert_eq!(code, Some(2), "--shard {shard}: {stderr}");
        assert!(stderr.contains(says), "--shard {shard}: {stderr}");
        common::assert_contains(&stderr, &[&format!("--shard: `{shard}`")]);
        assert!(!dir.join("r.json").exists());
    }
}

#[test]
fn a_shard_with_no_cases_is_an_empty_passing_report() {
    let dir = sets(&["a"], 1);
    let dir = dir.path();
    // One case, five shards: four of them are empty, and that is not an error.
    let reports: Vec<Value> = (1..=5)
        .map(|k| run_sets(dir, &["a"], Some(&format!("{k}/5")), &format!("s{k}.json")))
        .collect();
    let sizes: Vec<usize> = reports
        .iter()
        .map(|r| r["cases"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes.iter().sum::<usize>(), 1, "{sizes:?}");
    let empty = reports
        .iter()
        .find(|r| r["cases"] == Value::Array(Vec::new()))
        .unwrap();
    assert_eq!(empty["aggregates"]["pass_rate"], Value::Null);
    assert_eq!(empty["incomplete"], false);
}

/// Shards gated with `--fail-on-regress` (known failures excused, a regression tripped) merge
/// to a gated run only when merge is given the baseline: without it, failing cases would
/// decide (a known failure red, a metric's regression green), so the merged report says it is
/// not gated and exits 2, and so does `report` reading it.
#[test]
fn gated_shards_merge_to_a_gated_run_only_given_the_baseline() {
    let dir = sets(&["a", "b"], 8);
    let dir = dir.path();
    let sets = ["sets/a.yaml", "sets/b.yaml"];
    exec(
        dir,
        &[&["run"], &sets[..], &["--update-baseline", "base.json"]].concat(),
    );
    assert!(dir.join("base.json").exists());
    // a-1 now answers wrong: a regression; every fourth case fails as it did on main.
    let path = dir.join("sets/a.yaml");
    let set = fs::read_to_string(&path).unwrap().replacen(
        "actual_output: \"The answer is 1 apples.\"",
        "actual_output: \"No idea.\"",
        1,
    );
    fs::write(&path, set).unwrap();
    let gated = ["--baseline", "base.json", "--fail-on-regress"];
    for k in 1..=2 {
        let (shard, output) = (format!("{k}/2"), format!("part-{k}.json"));
        let args = [
            &["run"],
            &sets[..],
            &gated,
            &["--shard", &shard, "--output", &output],
        ];
        exec(dir, &args.concat());
    }

    let (code, stderr) = merge(dir, &["part-1.json", "part-2.json"]);
    assert_eq!(code, Some(2), "{stderr}");
    common::assert_contains(&stderr, &["give merge the baseline (--baseline FILE"]);
    assert_eq!(read(&dir.join("merged.json"))["verdict"], "error");
    let reported = common::goldgate(dir, &["report", "merged.json", "--markdown", "m.md"]);
    reported.exits(2);
    let summary = fs::read_to_string(dir.join("m.md")).unwrap();
    common::assert_contains(&summary, &["### goldgate: ⚠️ not gated"]);

    let parts = ["merge", "part-1.json", "part-2.json", "-o", "merged.json"];
    common::goldgate(dir, &[&parts[..], &gated].concat())
        .exits(1)
        .says(&["Result: regressed: 1 case newly failing (", "(exit 1)"]);
    let merged = read(&dir.join("merged.json"));
    assert_eq!(merged["verdict"], "regressed");
    let newly: Vec<&str> = merged["gate"]["newly_failing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(newly, ["a-1"]);
    assert_eq!(
        merged["gate"]["known_failures"].as_array().unwrap().len(),
        4
    );
    // The shards' gates played a-1 again before deciding: the whole's gate keeps those runs.
    let played: Vec<u64> = ["part-1.json", "part-2.json"]
        .iter()
        .map(|part| {
            read(&dir.join(part))["gate"]["extra_runs"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert!(played.iter().sum::<u64>() > 0, "{played:?}");
    assert_eq!(merged["gate"]["extra_runs"], played.iter().sum::<u64>());
}

/// Part of the suite never replaces the baseline of the whole unless forced: a shard, or a
/// selection that leaves out cases the baseline holds (their history would go). A selection
/// of its own, such as a smoke suite with its own baseline file, is written.
#[test]
fn part_of_the_suite_cannot_replace_the_whole_baseline() {
    let dir = sets(&["a", "b"], 4);
    let dir = dir.path();
    let update = |extra: &[&str], file: &str| {
        let run = [
            "run",
            "sets/a.yaml",
            "sets/b.yaml",
            "--update-baseline",
            file,
        ];
        let args = [&run[..], extra].concat();
        common::goldgate(dir, &args)
    };
    update(&[], "base.json");
    let whole = fs::read(dir.join("base.json")).unwrap();

    update(&["--shard", "1/2"], "base.json")
        .exits(2)
        .warns(&["not updating the baseline base.json: the run is shard 1/2 of the suite"]);
    update(&["--name", "a-*"], "base.json").exits(2).warns(&[
        "not updating the baseline base.json: the run played the cases --filter, --exclude or \
         --name chose, and 4 of the baseline's 8 cases are not among them",
        "(--force writes it anyway)",
    ]);
    assert_eq!(fs::read(dir.join("base.json")).unwrap(), whole);

    // One shard of one is the whole suite.
    update(&["--shard", "1/1"], "whole.json").warns(&["baseline written to whole.json"]);
    // A smoke suite's own baseline, first written and then updated.
    update(&["--name", "a-*"], "smoke.json").warns(&["baseline written to smoke.json"]);
    update(&["--name", "a-*"], "smoke.json").warns(&["history now spans 2 builds"]);
    // Forced, it is written.
    update(&["--name", "a-*", "--force"], "base.json")
        .warns(&["updating the baseline despite this (--force)"]);
    assert_eq!(keys(&read(&dir.join("base.json"))).len(), 4);
}
