//! The outputs of `goldgate lint`: one line per problem for people, JSON for machines, and
//! workflow commands for GitHub Actions.

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;

use crate::diagnostic::{Code, Diagnostic};
use crate::load::Suite;
use crate::report::annotations::Annotation;

/// `file:line: error [CODE] field: message (hint)`, one per line, in file order.
pub fn write_human(suite: &Suite, out: &mut impl Write) -> io::Result<()> {
    for diagnostic in suite.reported().flat_map(|f| &f.diagnostics) {
        writeln!(out, "{diagnostic}")?;
    }
    Ok(())
}

/// The closing line: what was checked and what was found.
pub fn summary(suite: &Suite) -> String {
    use super::plural;
    format!(
        "checked {}, {}: {}, {}",
        plural(suite.files.len(), "file"),
        plural(suite.case_count(), "case"),
        plural(suite.error_count(), "error"),
        plural(suite.warning_count(), "warning"),
    )
}

/// One `::error`/`::warning` command per problem, its file as `path` names it (relative to
/// the workspace, as the runner wants it).
pub fn write_github(
    suite: &Suite,
    path: &dyn Fn(&Path) -> String,
    out: &mut impl Write,
) -> io::Result<()> {
    let problems = suite.reported().flat_map(|f| &f.diagnostics);
    for command in annotations(problems, path) {
        writeln!(out, "{command}")?;
    }
    Ok(())
}

/// The workflow command of each problem, its file as `path` names it.
pub fn annotations<'a>(
    problems: impl IntoIterator<Item = &'a Diagnostic>,
    path: &dyn Fn(&Path) -> String,
) -> Vec<String> {
    let command = |d: &Diagnostic| {
        let file = path(&d.location.file);
        let title = format!("goldgate {}", d.code);
        let message = plain_message(d);
        Annotation {
            severity: d.severity,
            file: Some(Path::new(&file)),
            line: d.location.line,
            column: Some(d.location.column),
            title: &title,
            message: &message,
        }
        .to_command()
    };
    problems.into_iter().map(command).collect()
}

fn plain_message(d: &Diagnostic) -> String {
    let mut message = match &d.field {
        Some(field) => format!("{field}: {}", d.message),
        None => d.message.clone(),
    };
    if let Some(hint) = &d.hint {
        message.push_str(" (");
        message.push_str(hint);
        message.push(')');
    }
    message
}

#[derive(Serialize)]
struct JsonLint<'a> {
    files: Vec<JsonFile<'a>>,
    errors: usize,
    warnings: usize,
}

#[derive(Serialize)]
struct JsonFile<'a> {
    path: String,
    format: Option<&'static str>,
    cases: usize,
    diagnostics: Vec<JsonDiagnostic<'a>>,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    severity: &'static str,
    code: Code,
    line: u32,
    column: u32,
    field: Option<&'a str>,
    message: &'a str,
    hint: Option<&'a str>,
}

/// The whole result as one JSON document.
pub fn write_json(suite: &Suite, out: &mut impl Write) -> io::Result<()> {
    let files = suite
        .reported()
        .map(|f| JsonFile {
            path: f.path.display().to_string(),
            format: f.format.map(|fmt| fmt.name()),
            cases: f.cases.len(),
            diagnostics: f
                .diagnostics
                .iter()
                .map(|d| JsonDiagnostic {
                    severity: d.severity.name(),
                    code: d.code,
                    line: d.location.line,
                    column: d.location.column,
                    field: d.field.as_deref(),
                    message: &d.message,
                    hint: d.hint.as_deref(),
                })
                .collect(),
        })
        .collect();
    let doc = JsonLint {
        files,
        errors: suite.error_count(),
        warnings: suite.warning_count(),
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}
