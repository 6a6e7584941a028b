//! Defect #8 of the fault trial (numbered as in its write-up) and what it brought up, driven
//! through the binary as a CI job would meet them: goldens with no bound as a whole (ten files
//! within every per-file limit took `list` to 3.2 GB), a small file whose aliases replay a
//! large text, and `list` printing every one of a case's tags.

use crate::common;
use crate::faults_support::assert_stayed_small;

/// A SCRAPI golden of one conversation `id` whose tags are `tags` (YAML flow items).
fn tagged_golden(id: &str, tags: &str) -> String {
    format!(
        "conversations:\n  - conversation: {id}\n    tags: [{tags}]\n    turns:\n      - user: hi\n        agent: hello\n"
    )
}

/// Tags (YAML flow items) of about 1 MiB on disk that replay one text of 1 MiB through 62
/// aliases: in memory they hold 63 copies, within the 64 MiB a file may expand to.
fn replayed_tags() -> String {
    let text = "x".repeat(1 << 20);
    let replays = vec!["*t"; 62].join(", ");
    format!("&t \"{text}\", {replays}")
}

/// #8: twenty files of 1 MiB, each within every limit of a file (63 MiB of text with its
/// aliases expanded, under the 64 MiB a file may expand to), expand to 1.2 GiB in all. A bound
/// on the files' bytes would let them through (20 MiB); the bound on what they expand to
/// (512 MiB) stops loading at the ninth, naming it, before any agent is asked, with the
/// memory held well under what the twenty expand to.
#[cfg(unix)]
#[test]
fn goldens_expanding_past_the_bound_on_the_whole_stop_at_the_file_past_it() {
    let (addr, script) = common::script::start_agent();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for i in 0..20 {
        common::write(
            root,
            &format!("goldens/g{i:02}.yaml"),
            tagged_golden(&format!("c{i}"), &replayed_tags()),
        );
    }
    let url = format!("http://{addr}/turn");
    let said = [
        "MiB in memory up to goldens/g08.yaml, past the 512 MiB goldgate loads in all",
        "run the suite in parts",
    ];
    for command in [
        &["list", "goldens"][..],
        &["lint", "goldens"],
        &[
            "run",
            "--agent-url",
            &url,
            "--junit",
            "junit.xml",
            "goldens",
        ],
    ] {
        let (ran, peak_kib) =
            common::process::measured(common::process::command_in(root).args(command));
        ran.exits(2).warns(&said);
        // Eight files loaded hold 504 MiB of tags (about 600 MB at the peak, measured); all
        // twenty would hold 1.2 GiB.
        assert!(
            peak_kib < 1024 * 1024,
            "{command:?} peaked at {peak_kib} KiB"
        );
    }
    assert_eq!(script.lock().unwrap().asked, Default::default());
    // CI readers of the JUnit file see the error, not a missing file.
    let junit = std::fs::read_to_string(root.join("junit.xml")).unwrap();
    common::assert_contains(&junit, &["past the 512 MiB goldgate loads in all"]);
}

/// #8 through a Regtrace config: its sets are counted as they are read, and loading stops at
/// the set past the bound, not after every set the config names.
#[cfg(unix)]
#[test]
fn regtrace_sets_past_the_bound_on_the_whole_stop_at_the_set_past_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut config = String::from("golden_sets:\n");
    for i in 0..20 {
        let set = format!(
            "name: s{i}\ntags: [{}]\ntest_cases:\n  - id: c{i}\n    input: hi\n    expected_output: hello\n",
            replayed_tags()
        );
        common::write(root, &format!("sets/s{i:02}.yaml"), set);
        config.push_str(&format!("  - path: sets/s{i:02}.yaml\n"));
    }
    common::write(root, "regtrace.config.yaml", config);
    let (ran, peak_kib) = common::process::measured(
        common::process::command_in(root).args(["list", "regtrace.config.yaml"]),
    );
    ran.exits(2)
        .warns(&["MiB in memory up to sets/s08.yaml, past the 512 MiB goldgate loads in all"]);
    assert!(peak_kib < 1024 * 1024, "peaked at {peak_kib} KiB");
}

/// #8's second half: one small file whose aliases replay a large text far past the bound on
/// the whole (a quarter of a MiB replayed 4,000 times is 1,000 MiB) is stopped by a limit of
/// its own file first: its text, aliases expanded, may be 64 MiB. Stopped there, quickly and
/// small, with the file and the limit named; the bound on the whole never sees it.
#[cfg(unix)]
#[test]
fn a_small_file_whose_aliases_expand_past_the_bound_is_stopped_by_its_own_limit() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let text = "x".repeat(256 << 10);
    let replays = vec!["*t"; 4000].join(", ");
    let golden = tagged_golden("bomb", &format!("&t \"{text}\", {replays}"));
    assert!(golden.len() < 300 << 10);
    common::write(root, "goldens/bomb.yaml", golden);
    let (ran, peak_kib) =
        common::process::measured(common::process::command_in(root).args(["list", "goldens"]));
    ran.exits(2).warns(&[
        "goldens/bomb.yaml:3: error [E001] its text, aliases expanded, is more than 64 MiB",
        "64 MiB of text with aliases expanded",
    ]);
    assert_stayed_small(peak_kib);
}

/// `list` printed every tag of a case: a case with a million tags printed megabytes on one
/// line, and a long tag whole. Now a line shows ten tags, each cut at 64 bytes, and how many
/// more there are; `--json` keeps them all, for machines.
#[test]
fn list_shows_the_first_tags_of_a_case_and_counts_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let long = "l".repeat(100);
    let tags: Vec<String> = (0..1000)
        .map(|n| format!("t{n}"))
        .chain([long.clone()])
        .collect();
    let mut shown = tags.clone();
    shown.swap(3, 1000);
    common::write(
        root,
        "goldens/many.yaml",
        tagged_golden("many", &shown.join(", ")),
    );
    let listed = common::goldgate(root, &["list", "goldens"]).exits(0);
    let cut = format!("{}… (36 more characters)", "l".repeat(64));
    let line = format!("tags: t0, t1, t2, {cut}, t4, t5, t6, t7, t8, t9, … and 992 more");
    listed.says(&[&line]);
    listed.never_prints(&["t10,", &long]);
    assert!(listed.stdout.len() < 400, "{}", listed.stdout);

    let json = common::goldgate(root, &["list", "--json", "goldens"]).exits(0);
    let json: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let tags = json["cases"][0]["tags"].as_array().unwrap();
    // SCRAPI adds the file's stem as a tag.
    assert_eq!(tags.len(), 1002);
    assert!(tags.contains(&long.into()));
}
