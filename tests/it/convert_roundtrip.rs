//! `goldgate convert` keeps verdicts: the example suite (and, when present, the shared corpus's
//! SCRAPI goldens and Regtrace sets) converted to every other format and back, each result
//! played by the binary against the shipped example agent, gets its source's verdict case by
//! case, or the difference is a loss the conversion reported at the case's lines.
//!
//! For the example suite a difference is allowed only as `skipped`, saying what convert could
//! not carry: never a pass where the source failed, nor a failure where it passed.

use crate::common;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The example suite's sources, with the format each is written in.
const EXAMPLES: [(&str, &str); 5] = [
    ("examples/suite/goldens/orders.yaml", "scrapi"),
    ("examples/suite/goldens/invoices.golden.csv", "ces-csv"),
    (
        "examples/suite/scenarios/human-handoff.scenario.yaml",
        "scenario",
    ),
    (
        "examples/suite/scenarios/invoice-lookup.scenario.yaml",
        "scenario",
    ),
    ("examples/suite/regtrace/regtrace.config.yaml", "regtrace"),
];

const TARGETS: [&str; 3] = ["scrapi", "ces-csv", "scenario"];

/// What one conversion of a source played: its stages (`to`, then `to -> from` when `from` is
/// a target too), each with every case's verdict, and the source's cases convert warned about.
#[derive(Debug, Default)]
struct Chain {
    stages: Vec<(String, BTreeMap<String, String>)>,
    warned: Vec<String>,
    /// Whether the conversion warned at all.
    reported: bool,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Where `convert --to to` writes in `dir`: a file, or a directory for scenarios.
fn output_in(dir: &Path, to: &str) -> PathBuf {
    match to {
        "scrapi" => dir.join("converted.yaml"),
        "ces-csv" => dir.join("converted.golden.csv"),
        _ => {
            let out = dir.join("scenarios");
            std::fs::create_dir_all(&out).unwrap();
            out
        }
    }
}

/// `goldgate convert from --to to` into `dir`: the output, and the lines of `from` it warned at
/// (`None` when it wrote nothing).
fn convert(from: &Path, to: &str, dir: &Path) -> Option<(PathBuf, Vec<(PathBuf, u32)>)> {
    std::fs::create_dir_all(dir).unwrap();
    let out = output_in(dir, to);
    let done = common::convert(&root(), from, to, &out);
    if done.code != Some(0) {
        assert!(
            done.stderr.contains("warning") || done.stderr.contains("goldgate:"),
            "{} --to {to} wrote nothing and said nothing: {}",
            from.display(),
            done.stderr
        );
        return None;
    }
    let warned = done
        .stderr
        .lines()
        .filter(|line| line.contains(": warning: "))
        .filter_map(|line| {
            let (place, _) = line.split_once(": warning: ")?;
            let (file, line) = place.rsplit_once(':')?;
            Some((PathBuf::from(file), line.parse().ok()?))
        })
        .collect();
    Some((out, warned))
}

/// Each case's verdict when the binary plays `path` against the example agent.
fn verdicts(path: &Path, agent: &Path, report: &Path) -> BTreeMap<String, String> {
    common::played_cases(path, agent, report)
        .iter()
        .map(|case| {
            let id = case["id"].as_str().unwrap().to_owned();
            let status = case["status"].as_str().unwrap().to_owned();
            assert!(
                status != "skipped" || skipped_why(case).is_some(),
                "{}: `{id}` is skipped without saying why: {case:#}",
                path.display()
            );
            (id, status)
        })
        .collect()
}

/// Why a skipped case was skipped: its error, or the reason of a check not judged.
fn skipped_why(case: &serde_json::Value) -> Option<&str> {
    let checks = case["turns"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|turn| turn["checks"].as_array().into_iter().flatten())
        .chain(case["checks"].as_array().into_iter().flatten());
    let reasons = checks.filter_map(|check| check["reason"].as_str());
    case["error"].as_str().into_iter().chain(reasons).next()
}

/// Each case of the run report at `report`: id, file and first line.
fn case_lines(report: &Path) -> Vec<(String, PathBuf, u32)> {
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report).unwrap()).unwrap();
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            (
                case["id"].as_str().unwrap().to_owned(),
                PathBuf::from(case["file"].as_str().unwrap()),
                u32::try_from(case["line"].as_u64().unwrap()).unwrap(),
            )
        })
        .collect()
}

/// The cases a warning of `warned` falls in: a warning at line L of a file belongs to the last
/// case of that file starting at or before L.
fn cases_warned(cases: &[(String, PathBuf, u32)], warned: &[(PathBuf, u32)]) -> Vec<String> {
    let mut out = Vec::new();
    for (file, line) in warned {
        let owner = cases
            .iter()
            .filter(|(_, case_file, start)| file.ends_with(case_file) && start <= line)
            .max_by_key(|(_, _, start)| *start);
        if let Some((id, _, _)) = owner {
            out.push(id.clone());
        }
    }
    out
}

/// Converts `source` (written in `from`, its cases in the run report `cases`) to `to`, plays
/// it, converts it back when `from` is a target too, and plays that.
fn chain(
    source: &Path,
    from: &str,
    to: &str,
    cases: &[(String, PathBuf, u32)],
    dir: &Path,
    agent: &Path,
) -> Chain {
    let mut chain = Chain::default();
    let Some((there, warned)) = convert(source, to, &dir.join("there")) else {
        return chain;
    };
    chain.warned = cases_warned(cases, &warned);
    chain.reported = !warned.is_empty();
    let played = verdicts(&there, agent, &dir.join("there.json"));
    chain.stages.push((to.to_owned(), played));
    if TARGETS.contains(&from)
        && let Some((back, _)) = convert(&there, from, &dir.join("back"))
    {
        let played = verdicts(&back, agent, &dir.join("back.json"));
        chain.stages.push((format!("{to} -> {from}"), played));
    }
    chain
}

/// A source played, then converted every way and back: the source's verdicts and each chain.
fn every_way(
    source: &Path,
    from: &str,
    dir: &Path,
    agent: &Path,
) -> (BTreeMap<String, String>, Vec<Chain>) {
    std::fs::create_dir_all(dir).unwrap();
    let report = dir.join("source.json");
    let original = verdicts(source, agent, &report);
    let cases = case_lines(&report);
    let chains = std::thread::scope(|scope| {
        let handles: Vec<_> = TARGETS
            .iter()
            .filter(|to| **to != from)
            .map(|to| {
                let dir = dir.join(to);
                let cases = &cases;
                scope.spawn(move || chain(source, from, to, cases, &dir, agent))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    (original, chains)
}

/// Every case whose verdict differs from its source's: (stage, case, verdict).
fn differences(
    original: &BTreeMap<String, String>,
    chain: &Chain,
) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (stage, played) in &chain.stages {
        for (id, verdict) in original {
            let got = played.get(id).map_or("missing", String::as_str);
            if got != verdict {
                out.push((stage.clone(), id.clone(), got.to_owned()));
            }
        }
    }
    out
}

#[test]
fn the_example_suite_converted_every_way_and_back_keeps_its_verdicts() {
    let agent = common::support_agent();
    let dir = tempfile::tempdir().unwrap();
    let results: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = EXAMPLES
            .iter()
            .enumerate()
            .map(|(n, (path, from))| {
                let dir = dir.path().join(n.to_string());
                let agent = &agent;
                scope.spawn(move || {
                    (
                        *path,
                        *from,
                        every_way(&root().join(path), from, &dir, agent),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut table = Vec::new();
    let mut unexplained = Vec::new();
    for (path, _, (original, chains)) in &results {
        let name = Path::new(path).file_name().unwrap().to_string_lossy();
        assert!(
            original.values().all(|v| v == "passed"),
            "{path} should pass against the example agent: {original:?}"
        );
        for chain in chains {
            for (stage, played) in &chain.stages {
                for (id, verdict) in played {
                    table.push(format!("{name:<30} {stage:<22} {id:<26} {verdict}"));
                }
            }
            for (stage, id, got) in differences(original, chain) {
                // Skipped with what convert could not carry: never a verdict the source did
                // not get.
                if got != "skipped" {
                    unexplained.push(format!("{name} {stage} {id}: {got}"));
                }
                assert!(
                    chain.warned.contains(&id),
                    "{name} -> {stage}: `{id}` is {got} and convert reported no loss in it"
                );
            }
        }
    }
    eprintln!(
        "source                         conversion             case                       verdict"
    );
    for line in &table {
        eprintln!("{line}");
    }
    assert!(
        unexplained.is_empty(),
        "verdicts changed by conversion: {unexplained:#?}"
    );
}

/// The shared corpus's SCRAPI goldens and Regtrace sets, when `../shared/corpus` is present
/// (it is not in a fresh clone): every verdict a conversion changes was warned about (in the
/// source file: case-level attribution is checked on the example suite only). Their agents are not the example agent, so most cases fail either way; what
/// matters is that a conversion changes no verdict silently.
#[test]
fn corpus_goldens_converted_every_way_and_back_change_no_verdict_silently() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let mut sources: Vec<(PathBuf, &str)> = Vec::new();
    for (format, from) in [("scrapi-golden", "scrapi"), ("regtrace-set", "regtrace")] {
        for (path, file) in corpus.valid(format) {
            if file["cases"].as_u64().unwrap_or(0) > 0 {
                sources.push((path, from));
            }
        }
    }
    let agent = common::support_agent();
    let dir = tempfile::tempdir().unwrap();
    let mut silent = Vec::new();
    for (n, batch) in sources.chunks(4).enumerate() {
        let results: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = batch
                .iter()
                .enumerate()
                .map(|(i, (path, from))| {
                    let dir = dir.path().join(format!("{n}-{i}"));
                    let agent = &agent;
                    scope.spawn(move || (path, every_way(path, from, &dir, agent)))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (path, (original, chains)) in results {
            for chain in &chains {
                for (stage, id, got) in differences(&original, chain) {
                    if !chain.reported {
                        silent.push(format!("{} -> {stage}: {id} {got}", path.display()));
                    }
                }
            }
        }
    }
    assert!(sources.len() > 20, "only {} corpus sources", sources.len());
    assert!(
        silent.is_empty(),
        "verdicts changed without a warning: {silent:#?}"
    );
}
