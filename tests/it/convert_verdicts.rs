//! `goldgate convert` never turns a failure into a pass: a SCRAPI golden using every matcher
//! and expectation kind (`fixtures/convert/every_matcher.yaml`: agent text by meaning,
//! arguments exact, contains, regexp and ignored, silence, an UNEXPECTED RESPONSE, transfers,
//! mocked outputs, the welcome event), converted to CES CSV and back, and to gecx scenarios
//! and back, each played by the binary against the shipped example agent, gets its source's
//! verdict case by case, or `skipped` saying why. Never `passed` where the source failed.
//! (The example suite is converted every way in `tests/convert_roundtrip.rs`.)

use crate::common;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A case's verdict, and why when it is skipped.
#[derive(Debug)]
struct Verdict {
    status: String,
    why: Option<String>,
}

/// Each case's verdict when the binary plays `path` against the example agent.
fn play(path: &Path, agent: &Path, report: &Path) -> BTreeMap<String, Verdict> {
    common::played_cases(path, agent, report)
        .iter()
        .map(|case| {
            let verdict = Verdict {
                status: case["status"].as_str().unwrap().to_owned(),
                why: case["error"].as_str().map(str::to_owned),
            };
            (case["id"].as_str().unwrap().to_owned(), verdict)
        })
        .collect()
}

/// `goldgate convert from --to to -o out` in the checkout, which must succeed: its warnings.
fn convert(from: &Path, to: &str, out: &Path) -> String {
    let done = common::convert(&root(), from, to, out);
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    done.stderr
}

#[test]
fn every_matcher_converted_every_way_keeps_its_verdicts_or_says_why_not() {
    let agent = common::support_agent();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let source = root().join("fixtures/convert/every_matcher.yaml");
    let original = play(&source, &agent, &dir.join("source.json"));
    for (id, verdict) in &original {
        let want = if id.starts_with("p_") {
            "passed"
        } else {
            "failed"
        };
        assert_eq!(
            verdict.status, want,
            "the source's {id} against the example agent"
        );
    }

    let csv = dir.join("converted.golden.csv");
    convert(&source, "ces-csv", &csv);
    let csv_back = dir.join("from-csv.yaml");
    convert(&csv, "scrapi", &csv_back);
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    convert(&source, "scenario", &scenarios);
    let scenarios_back = dir.join("from-scenarios.yaml");
    convert(&scenarios, "scrapi", &scenarios_back);

    let mut wrong = Vec::new();
    let mut skipped = 0;
    for (stage, path) in [
        ("ces-csv", &csv),
        ("ces-csv -> scrapi", &csv_back),
        ("scenario", &scenarios),
        ("scenario -> scrapi", &scenarios_back),
    ] {
        let played = play(path, &agent, &dir.join(format!("{stage}.json")));
        for (id, source) in &original {
            let Some(got) = played.get(id) else {
                wrong.push(format!("{stage} {id}: missing"));
                continue;
            };
            let same = got.status == source.status;
            if got.status == "skipped" {
                skipped += 1;
                let why = got.why.as_deref().unwrap_or_default();
                if !why.contains("could not carry") {
                    wrong.push(format!(
                        "{stage} {id}: skipped without saying why ({why:?})"
                    ));
                }
            } else if !same {
                wrong.push(format!(
                    "{stage} {id}: {} where the source {}",
                    got.status, source.status
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "verdicts changed by conversion: {wrong:#?}"
    );
    assert!(
        skipped > 0,
        "no conversion lost anything: the fixture no longer tests a loss"
    );
}

#[test]
fn a_contradiction_gecx_cannot_compare_is_skipped_as_a_scenario_not_passed() {
    let agent = common::support_agent();
    let dir = tempfile::tempdir().unwrap();
    let source = root().join("fixtures/convert/every_matcher.yaml");
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    convert(&source, "scenario", &scenarios);
    let scenario = scenarios.join("f_contradiction.scenario.yaml");
    let written = std::fs::read_to_string(&scenario).unwrap();
    assert!(written.contains("not-carried: "), "{written}");
    let played = play(&scenario, &agent, &dir.path().join("report.json"));
    let verdict = &played["f_contradiction"];
    assert_eq!(verdict.status, "skipped", "{verdict:?}");
    common::assert_contains(
        verdict.why.as_deref().unwrap(),
        &[
            "could not carry",
            "never by meaning: the expected `semantic` agent text is left out",
        ],
    );
}

#[test]
fn a_case_of_events_only_is_a_scenario_skipped_with_why_not_left_out() {
    let agent = common::support_agent();
    let dir = tempfile::tempdir().unwrap();
    let source = root().join("fixtures/convert/every_matcher.yaml");
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    let warned = convert(&source, "scenario", &scenarios);
    common::assert_contains(&warned, &["no turn of `p_welcome_semantic` does"]);
    let scenario = scenarios.join("p_welcome_semantic.scenario.yaml");
    let written = std::fs::read_to_string(&scenario).unwrap();
    common::assert_contains(&written, &["when: []", "not-carried: "]);
    let played = play(&scenario, &agent, &dir.path().join("report.json"));
    let verdict = &played["p_welcome_semantic"];
    assert_eq!(verdict.status, "skipped", "{verdict:?}");
    common::assert_contains(
        verdict.why.as_deref().unwrap(),
        &["could not carry", "the event `welcome` is left out"],
    );
}

/// A scenario's turn names no reply; SCRAPI flags any reply to a turn without `agent`. The
/// converted turn says it checks no text, so goldgate judges it as the scenario did.
#[test]
fn a_scenario_turn_that_checks_no_text_is_no_unexpected_response_in_scrapi() {
    let agent = common::support_agent();
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("lookup.scenario.yaml");
    std::fs::write(
        &scenario,
        "id: lookup\nwhen:\n  - user: Where is order ORD-12345?\nthen:\n  - { scorer: tool-called, args: { name: lookup_order } }\n",
    )
    .unwrap();
    let golden = dir.path().join("lookup.yaml");
    let warned = convert(&scenario, "scrapi", &golden);
    common::assert_contains(&warned, &["UNEXPECTED RESPONSE"]);
    let written = std::fs::read_to_string(&golden).unwrap();
    common::assert_contains(&written, &["# goldgate agent: not checked"]);
    assert!(!written.contains("not-carried"), "{written}");
    for path in [&scenario, &golden] {
        let played = play(path, &agent, &dir.path().join("report.json"));
        assert_eq!(
            played["lookup"].status,
            "passed",
            "{}: {played:?}",
            path.display()
        );
    }
}
