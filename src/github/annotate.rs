//! An `::error` annotation on the line of each failing turn, so the pull request's "Files
//! changed" tab shows the failure on the golden that found it.
//!
//! GitHub places an annotation only when its path is relative to the workspace, so report
//! paths (relative to where goldgate ran, or absolute) are made absolute and then relative to
//! `GITHUB_WORKSPACE`. The workflow-command escaping is [`crate::report::annotations`]'s.

use std::path::{Component, Path, PathBuf};

use crate::diagnostic::Severity;
use crate::outcome::Status;
use crate::report::annotations::Annotation;
use crate::report::console;
use crate::report::json::{CaseReport, CheckReport, Report};

/// GitHub shows at most this many error annotations per step; more only fill the log.
pub const SHOWN_PER_STEP: usize = 10;

/// An annotation's message is cut after this many characters: the summary has the rest.
const MESSAGE_LIMIT: usize = 600;

/// The workflow commands, one per failing or errored turn (or per case-level check, or per
/// case when nothing narrower failed), in report order.
pub fn failing_turns(report: &Report, workspace: Option<&Path>, cwd: &Path) -> Vec<String> {
    let mut commands = Vec::new();
    for case in report.cases.iter().filter(|c| is_bad(c.status)) {
        let file = relative_to(&cwd.join(&case.file), workspace)
            .unwrap_or_else(|| PathBuf::from(&case.file));
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

fn case_command(case: &CaseReport, file: &Path) -> String {
    let title = format!("goldgate: {} {}", case.id, case.status.name());
    let message = case
        .error
        .clone()
        .unwrap_or_else(|| format!("the case {}", case.status.name()));
    command(file, case.line, &title, &message)
}

fn command(file: &Path, line: u32, title: &str, message: &str) -> String {
    let message = console::escape(message);
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
fn first_problem(checks: &[CheckReport]) -> Option<String> {
    checks.iter().find(|c| is_bad(c.status)).map(describe)
}

fn describe(check: &CheckReport) -> String {
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

/// `path` relative to `workspace`, with `/` separators; `None` when it lies outside (or
/// there is no workspace). Symbolic links are resolved on both sides when they exist (macOS
/// runners' `/var` is `/private/var`), and `.`/`..` lexically otherwise.
fn relative_to(path: &Path, workspace: Option<&Path>) -> Option<PathBuf> {
    let workspace = workspace?;
    let resolve = |p: &Path| p.canonicalize().unwrap_or_else(|_| normalize(p));
    let relative = resolve(path)
        .strip_prefix(resolve(workspace))
        .ok()?
        .to_path_buf();
    let parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(PathBuf::from(parts.join("/")))
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_relative_to_the_workspace() {
        let workspace = Path::new("/work/repo");
        assert_eq!(
            relative_to(
                Path::new("/work/repo/./evals/../evals/a.yaml"),
                Some(workspace)
            ),
            Some(PathBuf::from("evals/a.yaml"))
        );
        assert_eq!(
            relative_to(Path::new("/elsewhere/a.yaml"), Some(workspace)),
            None
        );
        assert_eq!(relative_to(Path::new("/work/repo/a.yaml"), None), None);
    }
}
