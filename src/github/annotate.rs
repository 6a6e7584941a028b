//! An `::error` annotation on the line of each failing check, so the pull request's "Files
//! changed" tab shows each failure on the expectation that found it (the tool-call argument,
//! the scorer), not on the first line of its conversation.
//!
//! GitHub places an annotation only when its path is relative to the workspace, so the caller
//! passes the mapping from report paths to workspace paths. The workflow-command escaping is
//! [`crate::report::annotations`]'s.

use std::path::{Path, PathBuf};

use crate::diagnostic::Severity;
use crate::report::annotations::Annotation;
use crate::report::console;
use crate::results::{CaseResult, CheckResult, Report};

/// GitHub shows at most this many error annotations per step; more only fill the log.
pub const SHOWN_PER_STEP: usize = 10;

/// An annotation's message is cut after this many characters: the summary has the rest.
const MESSAGE_LIMIT: usize = 600;

/// The workflow commands, in report order: one per failed or errored check, on its line; one
/// per turn that could not be played (no check to point at), on the turn's line; one per case
/// when nothing narrower failed. `path` turns a report's file into the workspace-relative path
/// GitHub expects ([`super::context::Context::workspace_path`]).
pub fn failing_checks(report: &Report, path: &dyn Fn(&str) -> String) -> Vec<String> {
    let mut commands = Vec::new();
    for case in report.cases.iter().filter(|c| c.status.is_bad()) {
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
            commands.push(case_command(case, &file));
        }
    }
    commands
}

/// A line that points somewhere: checks with no place of their own have line 0.
fn located(line: u32) -> Option<u32> {
    (line > 0).then_some(line)
}

fn case_command(case: &CaseResult, file: &Path) -> String {
    let title = format!("goldgate: {} {}", case.id, case.status.name());
    let message = case
        .error
        .clone()
        .unwrap_or_else(|| format!("the case {}", case.status.name()));
    command(file, case.line, &title, &message)
}

fn command(file: &Path, line: u32, title: &str, message: &str) -> String {
    // Line by line: the breaks stay breaks (the annotation shows them), other controls show
    // as escapes.
    let lines: Vec<_> = message.lines().map(console::escape).collect();
    let message = lines.join("\n");
    let mut cut: String = message.chars().take(MESSAGE_LIMIT).collect();
    if cut.len() < message.len() {
        cut.push('…');
    }
    Annotation {
        severity: Severity::Error,
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
