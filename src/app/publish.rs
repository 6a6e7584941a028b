//! Publishing a report to GitHub: the Markdown (`--markdown`, `$GITHUB_STEP_SUMMARY`), the
//! step outputs (`$GITHUB_OUTPUT`), the annotations on failing checks (under
//! `GITHUB_ACTIONS=true`) and, with `--comment`, the sticky PR comment. Not commenting is
//! never an error: a note says why, and the exit status stays the verdict of the tests.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::diagnostic::Diagnostic;
use crate::github::annotate::{self, SHOWN_PER_STEP};
use crate::github::comment::{self, NotPosted, Posted, Target};
use crate::github::context::Context;
use crate::github::outputs::{self, Outputs};
use crate::project;
use crate::report::{Summary, lint, markdown};
use crate::secrets::Secrets;
use crate::shard::Shard;

pub use crate::report::summary::DEFAULT_SUITE;

/// The name of the suite run with `config`: the path as given, with `/` separators, so that
/// the comment's marker is the same on every runner; `None` for the default config
/// ([`DEFAULT_SUITE`]).
pub fn suite_name(config: Option<&Path>) -> Option<String> {
    config.map(|path| path.to_string_lossy().replace('\\', "/"))
}

/// What to publish, and how.
pub struct Publish<'a> {
    pub summary: &'a Summary<'a>,
    /// The JSON report on disk, for the `report` output.
    pub report_path: Option<&'a Path>,
    pub channels: Channels<'a>,
}

/// Where a run's outcome goes besides the annotations: the Markdown file, the sticky comment.
pub struct Channels<'a> {
    /// Names the sticky comment of a run that played nothing (a report names its own suite:
    /// [`Summary::suite`]): the config file's path, or [`DEFAULT_SUITE`].
    pub suite: String,
    /// `--markdown FILE`.
    pub markdown: Option<&'a Path>,
    /// `--comment`.
    pub comment: bool,
    /// The run's secrets, masked out of the note that says why the comment was not posted
    /// (GitHub's token and every credential variable join them).
    pub secrets: Secrets,
}

/// The suite's name for the comment's marker and title: each shard keeps its own comment.
fn comment_suite(suite: &str, shard: Option<Shard>) -> String {
    match shard {
        Some(shard) => format!("{suite} (shard {shard})"),
        None => suite.to_owned(),
    }
}

/// Why a command stopped before it did its work (said on stderr already): for `run`, what
/// GitHub is told instead of a verdict.
pub struct Refusal {
    /// One line.
    pub reason: String,
    /// More lines (the config's problems), or empty.
    pub details: String,
    /// The goldens' problems, errors and warnings.
    pub problems: Vec<Diagnostic>,
}

impl Refusal {
    /// A message: its first line the reason, the rest the details.
    pub fn new(message: &str) -> Self {
        let (reason, details) = message.split_once('\n').unwrap_or((message, ""));
        Self {
            reason: reason.to_owned(),
            details: details.to_owned(),
            problems: Vec::new(),
        }
    }
}

/// Writes every GitHub output that the flags and the environment ask for; annotations go to
/// `annotations` (the runner reads workflow commands from stdout and stderr alike). Returns
/// the notes for people: whether the comment was posted, annotations left out.
pub fn publish(publish: &Publish, annotations: &mut dyn Write) -> anyhow::Result<Vec<String>> {
    let summary = publish.summary;
    let report = summary.report;
    // A report names files from their project root; the goldens of a run are in this one.
    let place = Place::new(
        &publish.channels,
        &summary.suite,
        report.suite.shard,
        |cwd| project::root(cwd, cwd),
    )?;
    let path = |file: &str| place.path(file);
    let body = markdown::render(summary, &place.options(&path));
    let mut commands = Vec::new();
    if place.context.actions {
        // What failed the run as a whole first: GitHub shows ten annotations of a kind, and
        // ten failed checks must not hide a floor or a tripped threshold.
        commands = annotate::run_findings(summary, &path);
        commands.extend(annotate::failing_checks(summary, &path));
    }
    let outputs = Outputs::of(summary, publish.report_path);
    place.deliver(&body, outputs, commands, annotations)
}

/// [`publish`] for a run that played nothing (of `shard`, when asked for one): the comment
/// and the summary say why, each problem of the goldens is annotated on its line, and the
/// `verdict` output is `error`.
pub fn publish_refusal(
    refusal: &Refusal,
    shard: Option<Shard>,
    channels: &Channels,
    annotations: &mut dyn Write,
) -> anyhow::Result<Vec<String>> {
    // Problems name their files as typed, from here.
    let place = Place::new(channels, &channels.suite, shard, Path::to_path_buf)?;
    let path = |file: &str| place.path(file);
    let Refusal {
        reason,
        details,
        problems,
    } = refusal;
    let body = markdown::render_not_run(reason, details, problems, &place.options(&path));
    let mut commands = Vec::new();
    if place.context.actions {
        commands = lint::annotations(problems, &|file: &Path| path(&file.to_string_lossy()));
    }
    place.deliver(&body, Outputs::not_run(), commands, annotations)
}

/// Where an outcome goes: GitHub's context, the directory its files are named from, the
/// channels the flags chose and the suite's name for the comment ([`comment_suite`]).
struct Place<'a> {
    context: Context,
    root: PathBuf,
    channels: &'a Channels<'a>,
    suite: String,
}

impl<'a> Place<'a> {
    /// `suite`: the suite's name; `files_from`: the directory the outcome's files are named
    /// from, given the current one.
    fn new(
        channels: &'a Channels<'a>,
        suite: &str,
        shard: Option<Shard>,
        files_from: fn(&Path) -> PathBuf,
    ) -> anyhow::Result<Self> {
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        Ok(Self {
            context: Context::from_env(),
            root: files_from(&cwd),
            channels,
            suite: comment_suite(suite, shard),
        })
    }

    /// A file as annotations and the comment show it ([`Context::workspace_path`]).
    fn path(&self, file: &str) -> String {
        self.context.workspace_path(file, &self.root)
    }

    fn options<'p>(&'p self, path: &'p dyn Fn(&str) -> String) -> markdown::Options<'p> {
        markdown::Options {
            suite: &self.suite,
            run_url: self.context.run_url.as_deref(),
            path,
        }
    }

    /// Writes `body` to every channel, the `outputs` and the annotation `commands`.
    fn deliver(
        &self,
        body: &str,
        outputs: Outputs,
        commands: Vec<String>,
        annotations: &mut dyn Write,
    ) -> anyhow::Result<Vec<String>> {
        let context = &self.context;
        let mut notes = Vec::new();
        if let Some(path) = self.channels.markdown {
            crate::atomic::write(path, |out| out.write_all(body.as_bytes())).with_context(
                || format!("cannot write the Markdown summary to {}", path.display()),
            )?;
        }
        if let Some(path) = &context.step_summary {
            outputs::append_summary(path, body)
                .with_context(|| format!("cannot write the step summary to {}", path.display()))?;
        }
        if let Some(path) = &context.output {
            (outputs.append_to(path))
                .with_context(|| format!("cannot write the step outputs to {}", path.display()))?;
        }
        notes.extend(annotate_capped(commands, annotations)?);
        if self.channels.comment {
            let marker = markdown::marker(&self.suite);
            notes.push(match post(context, &marker, body, &self.channels.secrets) {
                Ok(Posted::Created { url }) => format!("commented on the pull request: {url}"),
                Ok(Posted::Updated { url }) => format!("updated the pull request comment: {url}"),
                Err(why) => format!("did not comment on the pull request: {why}"),
            });
        }
        Ok(notes)
    }
}

/// Writes the annotation `commands`, as many as GitHub shows a step ([`SHOWN_PER_STEP`]
/// errors and as many warnings, the errors first); a note when some were left out.
fn annotate_capped(commands: Vec<String>, out: &mut dyn Write) -> anyhow::Result<Option<String>> {
    let (errors, warnings): (Vec<String>, Vec<String>) =
        commands.into_iter().partition(|c| c.starts_with("::error"));
    let mut left_out = 0;
    for shown in [errors, warnings] {
        for command in shown.iter().take(SHOWN_PER_STEP) {
            writeln!(out, "{command}")?;
        }
        left_out += shown.len().saturating_sub(SHOWN_PER_STEP);
    }
    out.flush()?;
    Ok((left_out > 0).then(|| {
        format!(
            "{left_out} more annotations not shown (GitHub shows {SHOWN_PER_STEP} errors and {SHOWN_PER_STEP} warnings per step); the summary lists them"
        )
    }))
}

/// Creates or updates the comment, on a small runtime of its own.
fn post(
    context: &Context,
    marker: &str,
    body: &str,
    secrets: &Secrets,
) -> Result<Posted, NotPosted> {
    // A command that runs no agent (`report`) or stopped early knows no secret of the config.
    secrets.add_vars(&|name| std::env::var(name).ok());
    let target = Target::from_context(context)?;
    let client = crate::net::http_client().map_err(NotPosted::Failed)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| NotPosted::Failed(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(comment::upsert(client, &target, marker, body, secrets))
}
