//! `goldgate list`: the cases a run would play, by file, with no agent called; and the promise
//! that matters most, that a run with the same selection plays exactly those cases.

use crate::common;
use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use common::{Outcome, goldgate};

/// `goldgate list --json`, decoded by strict types of its own (the documented shape).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Listing {
    suite: Suite,
    cases: Vec<Listed>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Suite {
    fingerprint: String,
    cases: usize,
    shard: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Every field is decoded to hold the shape; not every test reads each.
struct Listed {
    id: String,
    name: String,
    file: String,
    line: u32,
    format: String,
    tags: Vec<String>,
    turns: usize,
    checks: usize,
    shard: Option<String>,
    steps: Option<usize>,
    kind: String,
    tool: Option<String>,
}

fn list_json(dir: &Path, args: &[&str]) -> Listing {
    let mut all = vec!["list", "--json"];
    all.extend_from_slice(args);
    let outcome = goldgate(dir, &all).exits(0);
    serde_json::from_str(&outcome.stdout)
        .unwrap_or_else(|e| panic!("{e}: not the documented shape:\n{}", outcome.stdout))
}

fn crate_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Two files in two formats, with tags to filter on.
fn two_files(dir: &Path) {
    common::order_golden(
        dir,
        &format!(
            "{}{}",
            common::order_conversation("shipped"),
            "  - conversation: greeting\n    tags: [smoke]\n    turns:\n      - event: welcome\n        agent: Hello!\n      - user: Hi\n        agent: How can I help?\n"
        ),
    );
    common::write(
        dir,
        "handoff.scenario.yaml",
        "id: handoff\nname: Asking for a person hands off\ntags: [smoke, support]\nwhen:\n  - user: I want a human\nthen:\n  - scorer: handoff-triggered\n",
    );
}

#[test]
fn lists_cases_grouped_by_file_with_format_turns_and_tags() {
    let dir = tempfile::tempdir().unwrap();
    two_files(dir.path());
    let outcome = goldgate(dir.path(), &["list"]).exits(0);
    let expected = "\
goldens/orders.yaml (scrapi):
    shipped   1 turn   tags: orders
    greeting  2 turns  tags: smoke, orders
handoff.scenario.yaml (scenario):
    handoff  1 turn, 1 check  tags: smoke, support  (Asking for a person hands off)
";
    assert_eq!(
        outcome.stdout.replace("./", ""),
        expected,
        "{}",
        outcome.stderr
    );
    outcome.warns(&["3 cases in 2 files"]);
    // A folder named twice, or a file inside a folder named, is one suite, not two.
    let again = goldgate(
        dir.path(),
        &["list", ".", "./", "goldens", "goldens/orders.yaml"],
    );
    again.exits(0).warns(&["3 cases in 2 files"]);
}

#[test]
fn json_lists_the_selection_with_the_documented_keys() {
    let dir = tempfile::tempdir().unwrap();
    two_files(dir.path());
    let listing = list_json(dir.path(), &["--filter", "smoke"]);
    let ids: Vec<&str> = listing.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["greeting", "handoff"]);
    assert_eq!(listing.suite.cases, 2);
    assert_eq!(listing.suite.shard, None);
    let greeting = &listing.cases[0];
    assert_eq!(
        (greeting.format.as_str(), greeting.turns, greeting.line),
        ("scrapi", 2, 11)
    );
    assert!(
        greeting.file.ends_with("goldens/orders.yaml"),
        "{greeting:?}"
    );
    let handoff = &listing.cases[1];
    assert_eq!((handoff.format.as_str(), handoff.checks), ("scenario", 1));

    let named = list_json(dir.path(), &["--name", "ship*"]);
    let ids: Vec<&str> = named.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["shipped"]);

    // Keys come in the documented order, so that the output diffs well.
    let outcome = goldgate(dir.path(), &["list", "--json"]);
    let raw: Value = serde_json::from_str(&outcome.stdout).unwrap();
    let keys: Vec<&String> = raw["cases"][0].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "id", "name", "file", "line", "format", "tags", "turns", "checks", "shard", "steps",
            "kind", "tool"
        ]
    );
}

#[test]
fn shards_partition_the_selection_and_share_its_fingerprint() {
    let all = list_json(crate_root(), &["examples/suite"]);
    let mut union = BTreeSet::new();
    for k in 1..=3 {
        let shard = format!("{k}/3");
        let part = list_json(crate_root(), &["examples/suite", "--shard", &shard]);
        assert_eq!(part.suite.fingerprint, all.suite.fingerprint);
        assert_eq!(part.suite.cases, all.cases.len());
        assert_eq!(part.suite.shard.as_deref(), Some(shard.as_str()));
        for case in part.cases {
            assert_eq!(case.shard.as_deref(), Some(shard.as_str()));
            assert!(union.insert((case.file, case.id)), "a case in two shards");
        }
    }
    let every: BTreeSet<(String, String)> = all.cases.into_iter().map(|c| (c.file, c.id)).collect();
    assert_eq!(union, every);
}

#[test]
fn lists_what_run_then_plays() {
    let agent = common::support_agent();
    let dir = tempfile::tempdir().unwrap();
    for selection in [
        vec![],
        vec!["--filter", "P0", "--filter", "faq"],
        vec!["--name", "*lookup*"],
        vec!["--shard", "1/2"],
        vec!["--shard", "2/2", "--filter", "orders"],
    ] {
        let mut list = vec!["list", "--json", "examples/suite"];
        list.extend_from_slice(&selection);
        let outcome = goldgate(crate_root(), &list);
        assert_eq!(outcome.code, Some(0), "{selection:?}: {}", outcome.stderr);
        let listing: Listing = serde_json::from_str(&outcome.stdout).unwrap();

        let report = dir.path().join("report.json");
        let outcome = Outcome::of(
            common::command()
                .current_dir(crate_root())
                .args(["run", "examples/suite", "--agent-cmd"])
                .arg(&agent)
                .args(&selection)
                .arg("--output")
                .arg(&report),
        );
        assert!(
            matches!(outcome.code, Some(0 | 1)),
            "{selection:?}: {}",
            outcome.stderr
        );
        let report: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
        let played: Vec<(&str, &str)> = report["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["file"].as_str().unwrap(), c["id"].as_str().unwrap()))
            .collect();
        let listed: Vec<(&str, &str)> = listing
            .cases
            .iter()
            .map(|c| (c.file.as_str(), c.id.as_str()))
            .collect();
        assert_eq!(listed, played, "{selection:?}");
        assert_eq!(
            listing.suite.fingerprint,
            report["suite"]["fingerprint"].as_str().unwrap(),
            "{selection:?}"
        );
    }
}

#[test]
fn refuses_what_run_refuses() {
    let dir = tempfile::tempdir().unwrap();
    two_files(dir.path());

    goldgate(dir.path(), &["list", "--filter", "nope"])
        .exits(2)
        .warns(&["no case matches"]);
    goldgate(dir.path(), &["list", "--shard", "4/3"])
        .exits(2)
        .warns(&["--shard"]);

    // Files found, none of them runnable: no filter to blame.
    let legacy = tempfile::tempdir().unwrap();
    common::write(legacy.path(), "a.scenario.ts", "export default {};\n");
    for command in ["list", "run"] {
        goldgate(legacy.path(), &[command, "."])
            .exits(2)
            .warns(&["the 1 golden file(s) found hold no case goldgate can run"])
            .never_prints(&["--filter"]);
    }

    common::write(dir.path(), "broken.scenario.yaml", "id: [unclosed\n");
    let broken = goldgate(dir.path(), &["list"]).exits(2);
    broken.warns(&["broken.scenario.yaml:", "nothing was listed"]);
    assert!(broken.stdout.is_empty(), "{}", broken.stdout);
}

/// A config that plays the app's own evaluations needs no local golden: `run` plays them (the
/// platform names them when it starts), and `list` says so where it refused ("no golden files").
#[test]
fn an_app_evaluations_config_lists_what_run_plays_and_says_the_platform_names_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    common::write(
        dir.path(),
        "goldgate.yaml",
        "agent:\n  ces:\n    app: projects/p/locations/us/apps/support\n    base_url: http://127.0.0.1:9\n    platform: { evaluations: { prefix: smoke_ } }\n",
    );
    let out = goldgate(dir.path(), &["list", "."]).exits(0);
    out.warns(&["a run also plays the app's evaluations chosen in goldgate.yaml"]);
    // With a local golden, it is listed beside them.
    common::order_golden(dir.path(), &common::order_conversation("local"));
    let out = goldgate(dir.path(), &["list", "."]).exits(0);
    common::assert_contains(&out.stdout, &["local"]);
}

#[test]
fn an_empty_shard_is_a_note_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    common::order_golden(dir.path(), &common::order_conversation("only"));
    let outcomes: Vec<Outcome> = (1..=2)
        .map(|k| goldgate(dir.path(), &["list", "--shard", &format!("{k}/2")]))
        .collect();
    assert!(outcomes.iter().all(|o| o.code == Some(0)));
    let empty = outcomes
        .iter()
        .find(|o| o.stdout.is_empty())
        .expect("one of two shards holds no case");
    empty.warns(&["holds none of the 1 selected cases"]);
}

#[test]
fn tag_expressions_and_exclusions_select_what_they_say() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("goldens")).unwrap();
    let case = |id: &str, tags: &str| {
        format!(
            "  - conversation: {id}\n    tags: [{tags}]\n    turns:\n      - user: hi\n        agent: hello\n"
        )
    };
    common::write(
        dir.path(),
        "goldens/tags.yaml",
        format!(
            "conversations:\n{}{}{}",
            case("fast_p0", "P0"),
            case("slow_p0", "P0, slow"),
            case("p1", "P1")
        ),
    );
    let ids = |args: &[&str]| {
        let out =
            common::goldgate(dir.path(), &[&["list", "--json"], args, &["."]].concat()).exits(0);
        let listed: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        let mut ids: Vec<String> = listed["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap().to_owned())
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(ids(&["--filter", "P0 and not slow"]), ["fast_p0"]);
    assert_eq!(ids(&["--filter", "P0", "--exclude", "slow"]), ["fast_p0"]);
    assert_eq!(
        ids(&["--filter", "(P0 or P1) and not slow"]),
        ["fast_p0", "p1"]
    );
    assert_eq!(ids(&["--exclude", "P0"]), ["p1"]);
    common::goldgate(dir.path(), &["list", "--filter", "P0 and", "."])
        .exits(2)
        .warns(&["a tag is missing at the end"]);
}

/// A golden of hundreds of conversations is read in parts at once; it reads as a short one
/// does: its cases in the file's order, each problem at its line and in line order, and of a
/// name defined twice the first definition.
#[test]
fn a_long_golden_reads_in_the_files_order() {
    let dir = tempfile::tempdir().unwrap();
    let conversation = |i: usize, name: &str| {
        format!(
            "  - conversation: {name}\n    turns:\n      - user: hi {i}\n        agent: hello\n"
        )
    };
    let names: Vec<String> = (0..400).map(|i| format!("c{i}")).collect();
    let golden: String = names
        .iter()
        .enumerate()
        .map(|(i, n)| conversation(i, n))
        .collect();
    common::write(
        dir.path(),
        "goldens/long.yaml",
        format!("conversations:\n{golden}"),
    );
    let listing = list_json(dir.path(), &[]);
    let ids: Vec<&str> = listing.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, names);

    // Each conversation is four lines: the one at index i starts at line 2 + 4i.
    let broken: String = (0..400)
        .map(|i| match i {
            10 | 390 => format!("  - conversation: c{i}\n    tags: [x]\n    x: 1\n    y: 2\n"),
            350 => conversation(i, "c3"),
            _ => conversation(i, &format!("c{i}")),
        })
        .collect();
    common::write(
        dir.path(),
        "goldens/long.yaml",
        format!("conversations:\n{broken}"),
    );
    let out = goldgate(dir.path(), &["lint", "goldens"]).exits(1);
    let problems: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(problems.len(), 7, "{}", out.stdout);
    for (line, code) in [(42, "G102"), (1402, "G103"), (1562, "G102")] {
        let at = format!("goldens/long.yaml:{line}: error [{code}]");
        assert!(
            problems.iter().any(|p| p.starts_with(&at)),
            "no {at}:\n{}",
            out.stdout
        );
    }
    let lines: Vec<u32> = problems
        .iter()
        .map(|p| p.split(':').nth(1).unwrap().parse().unwrap())
        .collect();
    assert!(lines.is_sorted(), "{}", out.stdout);
    assert!(
        out.stdout.contains("defined twice, at lines 14 and 1402"),
        "{}",
        out.stdout
    );
}
