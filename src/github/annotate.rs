//! Annotations for the pull request: one on the line of each failing check, so the "Files
//! changed" tab shows each failure on the expectation that found it (the tool-call argument,
//! the scorer), not on the first line of its conversation; one for each floor not met and
//! each threshold the gate tripped; and one for each decision the gate left open.
//!
//! A failure that fails the run is an `::error`; one that does not (a known failure, a
//! quarantined case, a case the gate did not decide against) is a `::warning`, so the
//! annotations never look redder than the verdict.
//!
//! GitHub places an annotation only when its path is relative to the workspace, so the caller
//! passes the mapping from report paths to workspace paths. The workflow-command escaping is
//! [`crate::report::annotations`]'s.

use std::path::{Path, PathBuf};

use crate::diagnostic::Severity;
use crate::report::annotations::Annotation;
use crate::report::{Standing, Summary, console};
use crate::results::{CaseResult, CheckResult};

/// GitHub shows at most this many annotations of each severity per step; more only fill the
/// log.
pub const SHOWN_PER_STEP: usize = 10;

/// An annotation's message is cut after this many characters: the summary has the rest.
const MESSAGE_LIMIT: usize = 600;

/// The workflow commands, in report order: one per failed or errored check, on its line; one
/// per turn that could not be played (no check to point at), on the turn's line; one per case
/// when nothing narrower failed. Each is an error when its case fails the run or errored
/// ([`Summary::standing`]), else a warning. `path` turns a report's file into the
/// workspace-relative path GitHub expects ([`super::context::Context::workspace_path`]).
pub fn failing_checks(summary: &Summary, path: &dyn Fn(&str) -> String) -> Vec<String> {
    let mut commands = Vec::new();
    for case in summary.report.cases.iter().filter(|c| c.status.is_bad()) {
        let severity = match summary.standing(case) {
            Standing::Excused(_) => Severity::Warning,
            _ => Severity::Error,
        };
        let command = |file: &Path, line: u32, title: &str, message: &str| {
            command(severity, file, line, title, message)
        };
        let file = PathBuf::from(path(&case.file));
        let before = commands.len();
        for turn in &case.turns {
            let checks_before = commands.len();
            for check in turn.checks.iter().filter(|c| c.status.is_bad()) {
                let title = format!(
                    "goldgate: {} turn {}: {} {}",
                    case.id,
                    turn.index,
                    check.label,
                    check.status.name()
                );
                let line = located(check.line).unwrap_or(turn.line);
                commands.push(command(&file, line, &title, &describe(check)));
            }
            if commands.len() == checks_before && turn.status.is_bad() {
                let title = format!(
                    "goldgate: {} turn {} {}",
                    case.id,
                    turn.index,
                    turn.status.name()
                );
                let message = turn
                    .error
                    .clone()
                    .or_else(|| case.error.clone())
                    .unwrap_or_else(|| turn.status.name().to_owned());
                commands.push(command(&file, turn.line, &title, &message));
            }
        }
        for check in case.checks.iter().filter(|c| c.status.is_bad()) {
            let title = format!("goldgate: {} {}", case.id, check.label);
            let line = located(check.line).unwrap_or(case.line);
            commands.push(command(&file, line, &title, &describe(check)));
        }
        if commands.len() == before {
            commands.push(case_command(case, &file, severity));
        }
    }
    commands
}

/// A line that points somewhere: checks with no place of their own have line 0.
fn located(line: u32) -> Option<u32> {
    (line > 0).then_some(line)
}

fn case_command(case: &CaseResult, file: &Path, severity: Severity) -> String {
    let title = format!("goldgate: {} {}", case.id, case.status.name());
    let message = case
        .error
        .clone()
        .unwrap_or_else(|| format!("the case {}", case.status.name()));
    command(severity, file, case.line, &title, &message)
}

fn command(severity: Severity, file: &Path, line: u32, title: &str, message: &str) -> String {
    annotation(severity, Some(file), line, title, message)
}

/// The run's findings with no case to point at ([`Summary::run_findings`]): a floor on the
/// line that writes it, the rest on the run as a whole; an error when it fails the run, else a
/// warning. Then one per case the gate left undecided, on the case's line, a warning unless
/// `--fail-on-inconclusive`. A floor or a metric has no golden line to fail on, so without
/// these the annotations would say nothing of what failed the run.
pub fn run_findings(summary: &Summary, path: &dyn Fn(&str) -> String) -> Vec<String> {
    let severity = |blocks: bool| {
        if blocks {
            Severity::Error
        } else {
            Severity::Warning
        }
    };
    let findings = summary.run_findings().into_iter().map(|finding| {
        let file = (finding.place.as_ref()).map(|(file, _)| PathBuf::from(path(file)));
        let line = finding.place.as_ref().map_or(0, |(_, line)| *line);
        let title = format!("goldgate: {}", finding.title);
        let level = severity(finding.blocks);
        annotation(level, file.as_deref(), line, &title, &finding.message)
    });
    let report = summary.report;
    let Some(comparison) = &report.gate else {
        return findings.collect();
    };
    let open = severity(report.policy.fail_on_regress && report.policy.fail_on_inconclusive);
    let cases = comparison.undecided.iter().map(|flip| {
        let title = format!("goldgate: {} {}", flip.id, flip.decision.name());
        let message = format!(
            "{}: {}",
            flip.movement(),
            flip.evidence_words().unwrap_or_default()
        );
        let file = PathBuf::from(path(&flip.file));
        annotation(open, Some(&file), flip.line, &title, &message)
    });
    findings.chain(cases).collect()
}

fn annotation(
    severity: Severity,
    file: Option<&Path>,
    line: u32,
    title: &str,
    message: &str,
) -> String {
    // Line by line: the breaks stay breaks (the annotation shows them), other controls show
    // as escapes.
    let lines: Vec<_> = message.lines().map(console::escape).collect();
    let message = lines.join("\n");
    let mut cut: String = message.chars().take(MESSAGE_LIMIT).collect();
    if cut.len() < message.len() {
        cut.push('…');
    }
    Annotation {
        severity,
        file,
        line: line.max(1),
        column: None,
        title: &console::escape(title),
        message: &cut,
    }
    .to_command()
}

fn describe(check: &CheckResult) -> String {
    let mut text = format!("{} ({})", check.label, check.method);
    if let Some(reason) = &check.reason {
        text.push_str(": ");
        text.push_str(reason);
    }
    text.push_str(&format!(
        "\nexpected: {}\nactual: {}",
        check.expected, check.actual
    ));
    text
}
