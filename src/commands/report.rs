//! `goldgate report REPORT`: the JUnit XML and the GitHub outputs of a saved JSON report, and
//! the publishing step that `goldgate run` shares.
//!
//! Publishing writes the Markdown (`--markdown`, `$GITHUB_STEP_SUMMARY`), the step outputs
//! (`$GITHUB_OUTPUT`), the annotations on failing checks (under `GITHUB_ACTIONS=true`) and,
//! with `--comment`, the sticky PR comment. Not commenting is never an error: one line says
//! why, and the exit status stays the verdict of the tests.

use std::io::{self, Write};
use std::path::Path;

use anyhow::Context as _;

use goldgate::agent::connect;
use goldgate::exit::Exit;
use goldgate::github::annotate::{self, SHOWN_PER_STEP};
use goldgate::github::comment::{self, NotPosted, Posted, Target};
use goldgate::github::context::Context;
use goldgate::github::outputs::{self, Outputs};
use goldgate::outcome::Status;
use goldgate::report::json::{self, Report};
use goldgate::report::{junit, markdown};

use crate::cli::{GateArgs, GithubArgs, ReportArgs};

/// The suite's name when no config file names it: the comment's marker uses it.
pub const DEFAULT_SUITE: &str = "default";

pub fn run(args: &ReportArgs) -> anyhow::Result<Exit> {
    let mut report = match json::read_file(&args.report) {
        Ok(report) => report,
        Err(err) => {
            eprintln!("goldgate: {err}");
            return Ok(Exit::Error);
        }
    };
    if args.baseline.is_some() {
        // The thresholds of ./goldgate.yaml apply, as they do to `run` and `compare`.
        let config = match super::run::load_config(None) {
            Ok(config) => config,
            Err(message) => {
                eprintln!("{message}");
                return Ok(Exit::Error);
            }
        };
        let gate_args = GateArgs {
            baseline: args.baseline.clone(),
            fail_on_regress: false,
            regression_config: None,
        };
        match super::compare::gate_of(&gate_args, &config) {
            Ok(gate) => report.gate = gate.map(|gate| gate.compare(&report)),
            Err(exit) => return Ok(exit),
        }
    }
    if let Some(path) = &args.junit {
        junit::Options::from_env(!args.junit_strict)
            .and_then(|options| junit::write_file(path, &report, &options))
            .with_context(|| format!("cannot write JUnit XML to {}", path.display()))?;
    }
    publish(&Publish {
        report: &report,
        report_path: Some(&args.report),
        suite: DEFAULT_SUITE,
        github: &args.github,
        stdout_is_json: false,
    })?;
    Ok(verdict(&report))
}

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
    pub github: &'a GithubArgs,
    /// Stdout carries the JSON report: annotations go to stderr (the runner reads both).
    pub stdout_is_json: bool,
}

/// Writes every GitHub output that the flags and the environment ask for.
pub fn publish(publish: &Publish) -> anyhow::Result<()> {
    let context = Context::from_env();
    let report = publish.report;
    // Each shard keeps its own comment; the merged report takes the suite's.
    let suite = match &report.suite.shard {
        Some(shard) => format!("{} (shard {shard})", publish.suite),
        None => publish.suite.to_owned(),
    };
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let workspace_path = |file: &str| context.workspace_path(file, &cwd);
    let body = markdown::render(
        report,
        &markdown::Options {
            suite: &suite,
            run_url: context.run_url.as_deref(),
            path: &workspace_path,
        },
    );
    if let Some(path) = &publish.github.markdown {
        std::fs::write(path, &body)
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
        let commands = annotate::failing_checks(report, &workspace_path);
        if publish.stdout_is_json {
            print_annotations(&commands, &mut io::stderr().lock())?;
        } else {
            print_annotations(&commands, &mut io::stdout().lock())?;
        }
    }
    if publish.github.comment {
        let marker = markdown::marker(&suite);
        match post(&context, &marker, &body) {
            Ok(Posted::Created { url }) => {
                eprintln!("goldgate: commented on the pull request: {url}")
            }
            Ok(Posted::Updated { url }) => {
                eprintln!("goldgate: updated the pull request comment: {url}")
            }
            Err(why) => eprintln!("goldgate: did not comment on the pull request: {why}"),
        }
    }
    Ok(())
}

fn print_annotations(commands: &[String], out: &mut impl Write) -> io::Result<()> {
    for command in commands.iter().take(SHOWN_PER_STEP) {
        writeln!(out, "{command}")?;
    }
    out.flush()?;
    if commands.len() > SHOWN_PER_STEP {
        eprintln!(
            "goldgate: {} more failing checks not annotated (GitHub shows {SHOWN_PER_STEP} per step); the summary lists them",
            commands.len() - SHOWN_PER_STEP
        );
    }
    Ok(())
}

/// Creates or updates the comment, on a small runtime of its own.
fn post(context: &Context, marker: &str, body: &str) -> Result<Posted, NotPosted> {
    let target = Target::from_context(context)?;
    let client = connect::http_client().map_err(NotPosted::Failed)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| NotPosted::Failed(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(comment::upsert(client, &target, marker, body))
}

/// The exit status a saved report stands for: 2 when it could not be judged (interrupted,
/// errors of the run), 1 when a case failed, else 0. A metric regression alone is the
/// business of `goldgate compare`.
fn verdict(report: &Report) -> Exit {
    let status = |s| report.cases.iter().any(|c| c.status == s);
    if report.incomplete || status(Status::Error) {
        Exit::Error
    } else if status(Status::Failed) {
        Exit::Failure
    } else {
        Exit::Success
    }
}
