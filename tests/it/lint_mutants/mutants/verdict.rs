//! What one `goldgate lint` of a batch of mutants showed: the rules of every run (an exit
//! status of 0, 1 or 2, no panic, in time), and that the report for machines and the lines for
//! people agree and name only the files given.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::common::{self, Outcome};

/// `goldgate lint`, killed if it is still running after `limit`: a guard against a hang, not a
/// measure of speed (benches/load.rs times lint). A killed run has no exit code.
fn lint(args: &[OsString], format: &[&str], limit: Duration) -> Outcome {
    Outcome::of(
        common::command()
            .arg("lint")
            .args(format)
            .args(args)
            .timeout(limit),
    )
}

pub fn clip(text: &str) -> String {
    const MAX: usize = 1500;
    if text.len() <= MAX {
        return text.to_owned();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &text[..end], text.len())
}

/// The rules every run must keep, whatever the input.
fn process_problems(run: &Outcome, limit: Duration) -> Vec<String> {
    let mut problems = Vec::new();
    if run.code.is_none() {
        problems.push(format!(
            "no exit status: killed by a signal, or hung and killed after {limit:?}"
        ));
    } else if !matches!(run.code, Some(0..=2)) {
        problems.push(format!("exit status {:?}, not 0, 1 or 2", run.code));
    }
    if run.stderr.contains("panicked") || run.stderr.contains("overflow") {
        problems.push(format!("panicked: {}", clip(&run.stderr)));
    }
    problems
}

/// What one batch (or one mutant) showed: the rules it broke, and how many of its mutants got
/// past the YAML or CSV parser into a format's loader (the mutants must not all be noise).
pub struct Verdict {
    pub problems: Vec<String>,
    pub parsed: usize,
}

/// Lints the batch for machines and for people and checks both: they agree, every file given
/// is reported, every file reported is one of ours, and every problem printed names its file.
pub fn check(args: &[OsString], expected: &[PathBuf], root: &Path, limit: Duration) -> Verdict {
    // The same run for people, at the same time: the two checks below compare them.
    let (json, human) = std::thread::scope(|scope| {
        let human = scope.spawn(|| lint(args, &[], limit));
        (lint(args, &["--json"], limit), human.join().unwrap())
    });
    let mut problems = process_problems(&json, limit);
    problems.extend(process_problems(&human, limit));
    if !problems.is_empty() {
        return Verdict {
            problems,
            parsed: 0,
        };
    }
    let doc: Value = match serde_json::from_str(&json.stdout) {
        Ok(doc) => doc,
        Err(err) => {
            let problem = format!("--json output is not JSON ({err}): {}", clip(&json.stdout));
            return Verdict {
                problems: vec![problem],
                parsed: 0,
            };
        }
    };
    let errors = doc["errors"].as_u64().unwrap_or(u64::MAX);
    let want = if errors > 0 { 1 } else { 0 };
    if json.code != Some(want) {
        problems.push(format!(
            "exit {:?} with {errors} errors; stderr: {}",
            json.code,
            clip(&json.stderr)
        ));
    }
    let report = read_report(&doc, root, &mut problems);
    let mut parsed = 0;
    for file in expected {
        match fs::canonicalize(file) {
            Ok(real) if report.reported.contains(&real) => {
                parsed += usize::from(!report.unparsed.contains(&real))
            }
            _ => problems.push(format!("{} is not in the report", file.display())),
        }
    }
    if human.code != json.code {
        problems.push(format!(
            "exit {:?} for people, {:?} with --json",
            human.code, json.code
        ));
    }
    check_lines_for_people(&human.stdout, &report, &mut problems);
    Verdict { problems, parsed }
}

/// What the `--json` report of a batch holds.
struct JsonReport {
    /// The files it reports, canonical.
    reported: BTreeSet<PathBuf>,
    /// Those of them with an E001 (not parsed).
    unparsed: BTreeSet<PathBuf>,
    /// Every path as printed.
    printed_paths: Vec<String>,
    /// How many diagnostics it holds in all.
    diagnostics: usize,
}

/// Reads the `--json` report `doc`, adding to `problems` every file that is not under `root`
/// and every malformed diagnostic.
fn read_report(doc: &Value, root: &Path, problems: &mut Vec<String>) -> JsonReport {
    let root = fs::canonicalize(root).unwrap();
    let mut report = JsonReport {
        reported: BTreeSet::new(),
        unparsed: BTreeSet::new(),
        printed_paths: Vec::new(),
        diagnostics: 0,
    };
    for file in doc["files"].as_array().into_iter().flatten() {
        let path = file["path"].as_str().unwrap_or("");
        report.printed_paths.push(path.to_owned());
        match fs::canonicalize(path) {
            Ok(real) if real.starts_with(&root) => {
                let diagnostics = file["diagnostics"].as_array().into_iter().flatten();
                if diagnostics.into_iter().any(|d| d["code"] == "E001") {
                    report.unparsed.insert(real.clone());
                }
                report.reported.insert(real);
            }
            _ => problems.push(format!("reports a file that is not one of ours: {path:?}")),
        }
        for d in file["diagnostics"].as_array().into_iter().flatten() {
            report.diagnostics += 1;
            let sound = matches!(d["severity"].as_str(), Some("error" | "warning"))
                && d["line"].as_u64().is_some_and(|l| l >= 1)
                && d["code"].as_str().is_some_and(|c| !c.is_empty())
                && d["message"].as_str().is_some_and(|m| !m.is_empty());
            if !sound {
                problems.push(format!(
                    "{path}: malformed diagnostic {}",
                    clip(&d.to_string())
                ));
            }
        }
    }
    report
}

/// For people: one line per problem of the `--json` report, each starting
/// `path:line: severity [`.
fn check_lines_for_people(stdout: &str, report: &JsonReport, problems: &mut Vec<String>) {
    let lines: Vec<&str> = stdout.lines().collect();
    if lines.len() != report.diagnostics {
        problems.push(format!(
            "{} lines printed for {} problems: {}",
            lines.len(),
            report.diagnostics,
            clip(stdout)
        ));
    }
    for line in lines {
        let names_its_file = report.printed_paths.iter().any(|path| {
            line.strip_prefix(path.as_str())
                .and_then(|rest| rest.strip_prefix(':'))
                .and_then(|rest| rest.split_once(": "))
                .is_some_and(|(number, rest)| {
                    number.parse::<u32>().is_ok()
                        && (rest.starts_with("error [") || rest.starts_with("warning ["))
                })
        });
        if !names_its_file {
            problems.push(format!(
                "a line does not start with its file: {}",
                clip(line)
            ));
        }
    }
}
