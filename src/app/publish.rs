//! Publishing a report to GitHub: the Markdown (`--markdown`, `$GITHUB_STEP_SUMMARY`), the
//! step outputs (`$GITHUB_OUTPUT`), the annotations on failing checks (under
//! `GITHUB_ACTIONS=true`) and, with `--comment`, the sticky PR comment. Not commenting is
//! never an error: a note says why, and the exit status stays the verdict of the tests.

use std::io::Write;
use std::path::Path;

use anyhow::Context as _;

use crate::diagnostic::Diagnostic;
use crate::github::annotate::{self, SHOWN_PER_STEP};
use crate::github::comment::{self, NotPosted, Posted, Target};
use crate::github::context::Context;
use crate::github::outputs::{self, Outputs};
use crate::project;
use crate::report::{lint, markdown};
use crate::results::Report;
use crate::shard::Shard;

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
    pub channels: Channels<'a>,
}

/// Where a run's outcome goes besides the annotations: the Markdown file, the sticky comment.
pub struct Channels<'a> {
    /// Names the sticky comment: the config file's path, or [`DEFAULT_SUITE`].
    pub suite: String,
    /// `--markdown FILE`.
    pub markdown: Option<&'a Path>,
    /// `--comment`.
    pub comment: bool,
}

/// The suite's name for the comment's marker and title: each shard keeps its own comment.
fn comment_suite(suite: &str, shard: Option<Shard>) -> String {
    match shard {
        Some(shard) => format!("{suite} (shard {shard})"),
        None => suite.to_owned(),
    }
}

/// A run that stopped before it played anything, and why.
pub struct NotRun<'a> {
    /// One line.
    pub reason: &'a str,
    /// Text shown as is below it (the config's error), or empty.
    pub details: &'a str,
    /// The goldens' problems: listed when there are no `details`, and annotated on their lines.
    pub problems: &'a [Diagnostic],
    /// `--shard K/N`, as the run was asked for.
    pub shard: Option<Shard>,
}

/// Writes every GitHub output that the flags and the environment ask for; annotations go to
/// `annotations` (the runner reads workflow commands from stdout and stderr alike). Returns
/// the notes for people: whether the comment was posted, annotations left out.
pub fn publish(publish: &Publish, annotations: &mut dyn Write) -> anyhow::Result<Vec<String>> {
    let context = Context::from_env();
    let report = publish.report;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    // A report names files from their project root; the goldens of a run are in this one.
    let root = project::root(&cwd, &cwd);
    let workspace_path = |file: &str| context.workspace_path(file, &root);
    let suite = comment_suite(&publish.channels.suite, report.suite.shard);
    let body = markdown::render(
        report,
        &markdown::Options {
            suite: &suite,
            run_url: context.run_url.as_deref(),
            path: &workspace_path,
        },
    );
    let mut commands = Vec::new();
    if context.actions {
        commands = annotate::failing_checks(report, &workspace_path);
        commands.extend(annotate::open_decisions(report, &workspace_path));
    }
    let outputs = Outputs::of(report, publish.report_path);
    let delivery = Delivery {
        context: &context,
        suite: &suite,
        body: &body,
        outputs,
    };
    delivery.deliver(&publish.channels, commands, annotations)
}

/// [`publish`] for a run that played nothing: the comment and the summary say why, each
/// problem of the goldens is annotated on its line, and the `verdict` output is `error`.
pub fn publish_not_run(
    not_run: &NotRun,
    channels: &Channels,
    annotations: &mut dyn Write,
) -> anyhow::Result<Vec<String>> {
    let context = Context::from_env();
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    // Problems name their files as typed, from here.
    let workspace_path = |file: &str| context.workspace_path(file, &cwd);
    let suite = comment_suite(&channels.suite, not_run.shard);
    let body = markdown::render_not_run(
        not_run.reason,
        not_run.details,
        not_run.problems,
        &markdown::Options {
            suite: &suite,
            run_url: context.run_url.as_deref(),
            path: &workspace_path,
        },
    );
    let mut commands = Vec::new();
    if context.actions {
        commands = (not_run.problems.iter())
            .map(|d| {
                let file = workspace_path(&d.location.file.to_string_lossy());
                lint::annotation(d, Path::new(&file))
            })
            .collect();
    }
    let outputs = Outputs::not_run();
    let delivery = Delivery {
        context: &context,
        suite: &suite,
        body: &body,
        outputs,
    };
    delivery.deliver(channels, commands, annotations)
}

/// One outcome, rendered, on its way to every channel.
struct Delivery<'a> {
    context: &'a Context,
    /// The suite's name for the comment's marker ([`comment_suite`]).
    suite: &'a str,
    body: &'a str,
    outputs: Outputs,
}

impl Delivery<'_> {
    fn deliver(
        &self,
        channels: &Channels,
        commands: Vec<String>,
        annotations: &mut dyn Write,
    ) -> anyhow::Result<Vec<String>> {
        let context = self.context;
        let mut notes = Vec::new();
        if let Some(path) = channels.markdown {
            crate::atomic::write(path, |out| out.write_all(self.body.as_bytes())).with_context(
                || format!("cannot write the Markdown summary to {}", path.display()),
            )?;
        }
        if let Some(path) = &context.step_summary {
            outputs::append_summary(path, self.body)
                .with_context(|| format!("cannot write the step summary to {}", path.display()))?;
        }
        if let Some(path) = &context.output {
            (self.outputs.append_to(path))
                .with_context(|| format!("cannot write the step outputs to {}", path.display()))?;
        }
        // GitHub shows up to SHOWN_PER_STEP errors and as many warnings: the errors first.
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
        if channels.comment {
            notes.push(
                match post(context, &markdown::marker(self.suite), self.body) {
                    Ok(Posted::Created { url }) => format!("commented on the pull request: {url}"),
                    Ok(Posted::Updated { url }) => {
                        format!("updated the pull request comment: {url}")
                    }
                    Err(why) => format!("did not comment on the pull request: {why}"),
                },
            );
        }
        Ok(notes)
    }
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
