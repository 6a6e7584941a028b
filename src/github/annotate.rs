//! An `::error` annotation on the line of each failing turn, so the pull request's "Files
//! changed" tab shows the failure on the golden that found it.
//!
//! GitHub places an annotation only when its path is relative to the workspace, so the caller
//! passes the mapping from report paths to workspace paths. The workflow-command escaping is
//! [`crate::report::annotations`]'s.

use std::path::{Path, PathBuf};

use crate::diagnostic::Severity;
use crate::report::annotations::Annotation;
use crate::report::console;
use crate::results::Status;
use crate::results::{CaseResult, CheckResult, Report};

/// GitHub shows at most this many error annotations per step; more only fill the log.
pub const SHOWN_PER_STEP: usize = 10;

/// An annotation's message is cut after this many characters: the summary has the rest.
const MESSAGE_LIMIT: usize = 600;

/// The workflow commands, one per failing or errored turn (or per case-level check, or per
/// case when nothing narrower failed), in report order. `path` turns a report's file into the
/// workspace-relative path GitHub expects ([`super::context::Context::workspace_path`]).
pub fn failing_turns(report: &Report, path: &dyn Fn(&str) -> String) -> Vec<String> {
    let mut commands = Vec::new();
    for case in report.cases.iter().filter(|c| is_bad(c.status)) {
        let file = PathBuf::from(path(&case.file));
        let before = commands.len();
        for turn in case.turns.iter().filter(|t| is_bad(t.status)) {
            let title = format!(
                "goldgate: {} turn {} {}",
                case.id,
                turn.index,
                turn.status.name()
            );
            let message = first_problem(&turn.checks)
                .or_else(|| turn.error.clone())
                .or_else(|| case.error.clone())
                .unwrap_or_else(|| turn.status.name().to_owned());
            commands.push(command(&file, turn.line, &title, &message));
        }
        for check in case.checks.iter().filter(|c| is_bad(c.status)) {
            let title = format!("goldgate: {} {}", case.id, check.label);
            let line = if check.line > 0 {
                check.line
            } else {
                case.line
            };
            commands.push(command(&file, line, &title, &describe(check)));
        }
        if commands.len() == before {
            commands.push(case_command(case, &file));
        }
    }
    commands
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

/// The first failing check of a turn, in words.
fn first_problem(checks: &[CheckResult]) -> Option<String> {
    checks.iter().find(|c| is_bad(c.status)).map(describe)
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

fn is_bad(status: Status) -> bool {
    matches!(status, Status::Failed | Status::Error)
}
