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
use crate::report::{Standing, Summary, console, gate};
use crate::results::{
    CaseResult, CasesCombined, CheckResult, Comparison, Decision, MetricDelta, Unit,
};

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

/// What fails or warns about the run as a whole, beside the cases' checks: each floor not met,
/// on the line that writes it (it always fails the run); then the gate's findings
/// ([`gate_findings`]). A floor or a metric has no golden line to fail on, so without these
/// the annotations would say nothing of what failed the run.
pub fn run_findings(summary: &Summary, path: &dyn Fn(&str) -> String) -> Vec<String> {
    let floors = summary
        .report
        .floors
        .iter()
        .filter(|f| !f.met)
        .map(|floor| {
            let file = PathBuf::from(path(&floor.file));
            let message = floor.describe();
            annotation(
                Severity::Error,
                Some(&file),
                floor.line,
                "goldgate: floor not met",
                &message,
            )
        });
    floors.chain(gate_findings(summary, path)).collect()
}

/// The gate's own findings against the baseline: its regressions, then the decisions it left
/// open.
fn gate_findings(summary: &Summary, path: &dyn Fn(&str) -> String) -> Vec<String> {
    let report = summary.report;
    let Some(comparison) = &report.gate else {
        return Vec::new();
    };
    let severity_if = |blocks: bool| {
        if blocks {
            Severity::Error
        } else {
            Severity::Warning
        }
    };
    let mut commands = regressions(comparison, severity_if(report.policy.fail_on_regress));
    let open = severity_if(report.policy.fail_on_inconclusive);
    commands.extend(open_decisions(comparison, open, path));
    commands
}

/// One annotation per tripped threshold, and one for the cases combined when they regressed:
/// on the run as a whole, `severity` an error when the gate decides the exit status
/// (`--fail-on-regress`), else a warning (an advisory gate's regression does not fail the run).
fn regressions(comparison: &Comparison, severity: Severity) -> Vec<String> {
    let tripped = comparison.tripped().map(|m| {
        let title = format!("goldgate: {} regressed", m.threshold.metric());
        let message = format!(
            "{}: worse than its limit beyond noise, against {}. {}",
            gate::tripped_words(m),
            comparison.baseline,
            evidence(m)
        );
        annotation(severity, None, 0, &title, message.trim_end())
    });
    let combined = comparison
        .combined
        .as_ref()
        .filter(|c| c.decision == Decision::Regressed)
        .map(|c| {
            let title = format!("goldgate: {} regressed", CasesCombined::NAME);
            let message = format!(
                "{}: {}",
                gate::combined_regressed_words(),
                c.evidence.describe(Unit::PercentagePoints)
            );
            annotation(severity, None, 0, &title, &message)
        });
    tripped.chain(combined).collect()
}

/// One annotation per decision the gate left open (`inconclusive`, `not enough runs`): on the
/// case's line, or for a metric on the run as a whole. Open decisions do not fail the run
/// (unless `--fail-on-inconclusive`, when `severity` is an error), so they must not go unseen.
fn open_decisions(
    comparison: &Comparison,
    severity: Severity,
    path: &dyn Fn(&str) -> String,
) -> Vec<String> {
    let metrics = comparison.undecided_metrics().map(|m| {
        let title = format!("goldgate: {} {}", m.threshold.metric(), m.decision.name());
        let message = format!(
            "{} looks worse than its limit ({}) against the baseline, but the runs could not \
             tell it from noise: {}",
            m.threshold.metric(),
            m.threshold.name(),
            evidence(m)
        );
        annotation(severity, None, 0, &title, &message)
    });
    let cases = comparison.undecided.iter().map(|flip| {
        let title = format!("goldgate: {} {}", flip.id, flip.decision.name());
        let message = format!(
            "{}: {}",
            flip.movement(),
            flip.evidence_words().unwrap_or_default()
        );
        let file = PathBuf::from(path(&flip.file));
        annotation(severity, Some(&file), flip.line, &title, &message)
    });
    let combined = comparison
        .combined
        .as_ref()
        .filter(|c| c.decision.is_undecided())
        .map(|c| {
            let title = format!("goldgate: {} {}", CasesCombined::NAME, c.decision.name());
            let message = format!(
                "the cases together lean worse than the baseline, but the runs could not tell \
                 it from noise: {}",
                c.evidence.describe(Unit::PercentagePoints)
            );
            annotation(severity, None, 0, &title, &message)
        });
    metrics.chain(combined).chain(cases).collect()
}

/// A metric's evidence in words, or nothing when the report has none.
fn evidence(delta: &MetricDelta) -> String {
    delta
        .evidence
        .as_ref()
        .map(|e| e.describe(delta.threshold.unit()))
        .unwrap_or_default()
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
