//! Publishing a report to GitHub: the Markdown (`--markdown`, `$GITHUB_STEP_SUMMARY`), the
//! step outputs (`$GITHUB_OUTPUT`), the annotations on failing checks (under
//! `GITHUB_ACTIONS=true`) and, with `--comment`, the sticky PR comment. Not commenting is
//! never an error: a note says why, and the exit status stays the verdict of the tests.

use std::io::Write;
use std::path::Path;

use anyhow::Context as _;

use crate::github::annotate::{self, SHOWN_PER_STEP};
use crate::github::comment::{self, NotPosted, Posted, Target};
use crate::github::context::Context;
use crate::github::outputs::{self, Outputs};
use crate::project;
use crate::report::markdown;
use crate::results::Report;

/// The suite's name when no config file names it: the comment's marker uses it.
pub const DEFAULT_SUITE: &str = "default";

/// The name of the suite run with `config`: the path as given, with `/` separators, so that
/// the comment's marker is the same on every runner.
pub fn suite_name(config: Option<&Path>) -> String {
    config.map_or_else(
        || DEFAULT_SUITE.to_owned(),
        |path| path.to_string_lossy().replace('\\', "/"),
    )
}

/// What to publish, and how.
pub struct Publish<'a> {
    pub report: &'a Report,
    /// The JSON report on disk, for the `report` output.
    pub report_path: Option<&'a Path>,
    /// Names the sticky comment: the config file's path, or [`DEFAULT_SUITE`].
    pub suite: &'a str,
    /// `--markdown FILE`.
    pub markdown: Option<&'a Path>,
    /// `--comment`.
    pub comment: bool,
}

/// Writes every GitHub output that the flags and the environment ask for; annotations go to
/// `annotations` (the runner reads workflow commands from stdout and stderr alike). Returns
/// the notes for people: whether the comment was posted, annotations left out.
pub fn publish(publish: &Publish, annotations: &mut dyn Write) -> anyhow::Result<Vec<String>> {
    let context = Context::from_env();
    let report = publish.report;
    let mut notes = Vec::new();
    // Each shard keeps its own comment; the merged report takes the suite's.
    let suite = match &report.suite.shard {
        Some(shard) => format!("{} (shard {shard})", publish.suite),
        None => publish.suite.to_owned(),
    };
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    // A report names files from their project root; the goldens of a run are in this one.
    let root = project::root(&cwd, &cwd);
    let workspace_path = |file: &str| context.workspace_path(file, &root);
    let body = markdown::render(
        report,
        &markdown::Options {
            suite: &suite,
            run_url: context.run_url.as_deref(),
            path: &workspace_path,
        },
    );
    if let Some(path) = publish.markdown {
        crate::atomic::write(path, |out| out.write_all(body.as_bytes()))
            .with_context(|| format!("cannot write the Markdown summary to {}", path.display()))?;
    }
    if let Some(path) = &context.step_summary {
        outputs::append_summary(path, &body)
            .with_context(|| format!("cannot write the step summary to {}", path.display()))?;
    }
    if let Some(path) = &context.output {
        Outputs::of(report, publish.report_path)
            .append_to(path)
            .with_context(|| format!("cannot write the step outputs to {}", path.display()))?;
    }
    if context.actions {
        // GitHub shows up to SHOWN_PER_STEP errors and as many warnings: the errors first.
        let mut commands = annotate::failing_checks(report, &workspace_path);
        commands.extend(annotate::open_decisions(report, &workspace_path));
        let (errors, warnings): (Vec<String>, Vec<String>) =
            commands.into_iter().partition(|c| c.starts_with("::error"));
        let mut left_out = 0;
        for shown in [errors, warnings] {
            for command in shown.iter().take(SHOWN_PER_STEP) {
                writeln!(annotations, "{command}")?;
            }
            left_out += shown.len().saturating_sub(SHOWN_PER_STEP);
        }
        annotations.flush()?;
        if left_out > 0 {
            notes.push(format!(
                "{left_out} more annotations not shown (GitHub shows {SHOWN_PER_STEP} errors and {SHOWN_PER_STEP} warnings per step); the summary lists them"
            ));
        }
    }
    if publish.comment {
        notes.push(match post(&context, &markdown::marker(&suite), &body) {
            Ok(Posted::Created { url }) => format!("commented on the pull request: {url}"),
            Ok(Posted::Updated { url }) => format!("updated the pull request comment: {url}"),
            Err(why) => format!("did not comment on the pull request: {why}"),
        });
    }
    Ok(notes)
}

/// Creates or updates the comment, on a small runtime of its own.
fn post(context: &Context, marker: &str, body: &str) -> Result<Posted, NotPosted> {
    let target = Target::from_context(context)?;
    let client = crate::net::http_client().map_err(NotPosted::Failed)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| NotPosted::Failed(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(comment::upsert(client, &target, marker, body))
}
