//! What `run` does once played: the reports written, the table and the verdict printed, the
//! GitHub outputs published, the errors listed, the baseline updated; then the exit code.

use std::io::{self, Write};
use std::time::Duration;

use goldgate::app::baseline::{Asked, History};
use goldgate::app::publish::{self, Channels, DEFAULT_SUITE, Publish};
use goldgate::exit::Exit;
use goldgate::report::{Summary, console, gate};
use goldgate::results::json;
use goldgate::results::{CaseResult, Report, Verdict};
use goldgate::secrets::Secrets;

use crate::cli::RunArgs;
use crate::commands::files::ReportFiles;

/// Prints and writes the reports, posts the PR comment, lists the errors; then the exit code:
/// the verdict, or worse when the baseline cannot be updated.
/// `narrowed`: the selection flags chose part of the suite (see [`Asked::narrowed`]).
pub(super) fn finish(
    args: &RunArgs,
    report: &Report,
    duration: Duration,
    secrets: Secrets,
    narrowed: bool,
) -> anyhow::Result<Exit> {
    let channels = channels(args, secrets);
    let summary = Summary::new(report, &channels.suite);
    let mut failed = write_outputs(args, &summary, duration);
    failed.extend(
        crate::commands::publish(args.json && args.output.is_none(), |annotations| {
            publish::publish(
                &Publish {
                    summary: &summary,
                    report_path: args.output.as_deref(),
                    channels,
                },
                annotations,
            )
        })
        .err(),
    );
    list_errors(report);
    let written: Vec<String> = args
        .reports()
        .into_iter()
        .filter_map(|(_, path)| path.as_ref())
        .map(|path| path.display().to_string())
        .collect();
    // Where to look next; a file that could not be written is named among the errors below.
    if !written.is_empty() && failed.is_empty() {
        eprintln!("goldgate: reports in {}", written.join(", "));
    }
    if report.verdict() == Verdict::NothingJudged {
        let counts = &report.aggregates.cases;
        let why = report.cases.iter().find_map(|c| c.skip_reason()).unwrap_or(
            match (counts.skipped, counts.errors) {
                (_, 0) => "every case was skipped",
                (0, _) => "every case errored",
                _ => "every case was skipped or errored",
            },
        );
        eprintln!(
            "goldgate: nothing was judged, so the run cannot pass: {}",
            console::escape(why)
        );
    }
    let mut exit = report.exit();
    // A report that could not be written is lost: the run cannot count as judged.
    for error in &failed {
        eprintln!("goldgate: error: {error:#}");
        exit = Exit::Error;
    }
    if let Some(path) = &args.update_baseline {
        let history = if args.no_history {
            History::Restart
        } else {
            History::Keep
        };
        let asked = Asked {
            force: args.force,
            history,
            narrowed,
        };
        exit = exit.max(crate::commands::update_baseline(path, report, asked)?);
    }
    Ok(exit)
}

/// Where `run` publishes, from its flags.
pub(super) fn channels(args: &RunArgs, secrets: Secrets) -> Channels<'_> {
    Channels {
        suite: publish::suite_name(args.suite.config.path())
            .unwrap_or_else(|| DEFAULT_SUITE.to_owned()),
        markdown: args.github.markdown.as_deref(),
        comment: args.github.comment,
        secrets,
    }
}

/// Writes every file asked for, each whatever became of the others, then prints the table
/// (and the gate's comparison and the verdict). Returns the files that could not be written.
fn write_outputs(args: &RunArgs, summary: &Summary, duration: Duration) -> Vec<anyhow::Error> {
    let report = summary.report;
    let mut failed = report_files(args).write(summary);
    failed.extend(print_outputs(args, summary, duration).err());
    if report.incomplete {
        let why = match report.verdict() {
            Verdict::OverBudget => "stopped at its budget",
            _ => "interrupted",
        };
        eprintln!("goldgate: the run was {why}: the reports cover only the cases that finished");
    }
    failed
}

/// The report files the flags ask for.
pub(super) fn report_files(args: &RunArgs) -> ReportFiles<'_> {
    ReportFiles {
        json: args.output.as_deref(),
        junit: args.junit.as_deref(),
        junit_strict: args.junit_strict,
        html: args.html.as_deref(),
    }
}

/// The table, the gate's comparison and the verdict on the terminal (stderr when the JSON
/// report goes to stdout). A closed or full stdout drops them and nothing else; only the JSON
/// report printed there is an output that can fail.
fn print_outputs(args: &RunArgs, summary: &Summary, duration: Duration) -> anyhow::Result<()> {
    let report = summary.report;
    let print = |out: &mut dyn Write, color: bool| -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        console::write_table(summary, duration, &mut out, color)?;
        gate::write_after_table(summary, &mut out)?;
        console::write_verdict(summary, &mut out)?;
        out.flush()
    };
    if args.json && args.output.is_none() {
        print(
            &mut io::stderr().lock(),
            crate::commands::use_color(&io::stderr()),
        )?;
        let mut out = crate::commands::stdout();
        json::write(report, &mut out)?;
        out.flush()?;
    } else if let Err(e) = print(
        &mut crate::commands::stdout(),
        crate::commands::use_color(&io::stdout()),
    ) {
        // The table is for people: whatever becomes of stdout (a full disk), the exit code
        // stays the verdict that the reports written say.
        eprintln!("goldgate: cannot print the results on standard output: {e}");
    }
    Ok(())
}

/// Lists the cases that errored: errors of the run, not test failures.
fn list_errors(report: &Report) {
    let errors: Vec<&CaseResult> = report.errored().collect();
    if errors.is_empty() {
        return;
    }
    // The agent is named once here: each case's error leaves the URL out (it may hold a
    // credential), and the agent's description is already cleaned of those.
    eprintln!(
        "goldgate: {} case(s) could not be judged, agent {} (errors of the run, not test failures; {} --max-errors {}):",
        errors.len(),
        console::escape(&report.agent),
        if report.too_many_errors() {
            "more than"
        } else {
            "within"
        },
        report.max_errors,
    );
    for case in &errors {
        eprintln!(
            "  {} {}: {}",
            console::escape(&case.location()),
            console::escape(&case.id),
            console::escape_lines(case.error.as_deref().unwrap_or("error"), "    ")
        );
    }
}
