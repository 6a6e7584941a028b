//! `goldgate run`: config and flags into a plan, load, play against the agent, report.

use std::io::{self, Write};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use goldgate::app::baseline::{Asked, History};
use goldgate::app::grading::{self, GradingFlags};
use goldgate::app::publish::{self, Channels, DEFAULT_SUITE, Publish, Refusal};
use goldgate::app::select::Selection;
use goldgate::app::session::{self, Notice, OtherAgent, RunPlan};
use goldgate::app::subset::{self, Chosen, Subset};
use goldgate::config::{AgentConfig, Config};
use goldgate::exit::Exit;
use goldgate::gate::Gate;
use goldgate::limit::{self, Limits};
use goldgate::load::Suite;
use goldgate::model::Floor;
use goldgate::report::{Summary, console, gate};
use goldgate::results::json;
use goldgate::results::{CaseResult, Policy, Report, Scope, Status, Verdict};
use goldgate::run::{Event, OnEvent, Repeat, RunOptions, Stop};
use goldgate::secrets::Secrets;
use goldgate::shard::SuiteId;

use super::files::ReportFiles;
use crate::cli::RunArgs;
use crate::cli::subset::RerunOnly;

mod agent;
mod dry_run;
mod progress;
use agent::agent_config;
use progress::{progress_bar, rate_limit_notice};

pub fn run(args: &RunArgs) -> anyhow::Result<Exit> {
    // The run's wall time, agent start-up included: what the user waited for.
    let started = std::time::Instant::now();
    let (selection, repeat) = match plan_arguments(args) {
        Ok(plan) => plan,
        Err(message) => return fail(args, &message),
    };
    let config = match super::load_config(args.suite.config.path(), "run") {
        Ok(config) => config,
        Err(refusal) => return refuse(args, &refusal),
    };
    // An HTTP agent, a judge or a simulated user needs the root certificates: they are read
    // while the goldens load, not after (a run that needs none only spends a thread on them).
    goldgate::net::tls::prepare();
    let gate = match super::gate_of(&args.gate, &config) {
        Ok(gate) => gate,
        Err(refusal) => return refuse(args, &refusal),
    };
    let suite = match super::load_goldens(&args.suite.paths, &config, "run")? {
        Ok(suite) => suite,
        Err(refusal) => return refuse(args, &refusal),
    };
    let floors: Vec<Floor> = suite.floors().chain(&config.floors).cloned().collect();
    let narrowed = selection.narrows();
    let chosen = match choose(args, (&suite, &config), selection, gate) {
        Ok(chosen) => chosen,
        Err(message) => return fail(args, &message),
    };
    let agent = match session::agent_needed(agent_config(args, &config), &chosen.selected.cases) {
        Ok(agent) => agent,
        Err(message) => return fail(args, &message),
    };
    let options = run_options(args, &config, agent.as_ref());
    let grader = match grading::grader(&grading_flags(args, agent.as_ref()), &config, &options) {
        Ok((grader, notices)) => {
            notices.iter().for_each(|n| eprintln!("goldgate: {n}"));
            grader
        }
        Err(message) => return fail(args, &message),
    };
    if args.dry_run {
        return dry_run::print(&chosen, repeat, &config, grader.judge.is_some());
    }
    let plan = RunPlan {
        cases: chosen.selected.cases,
        // A rerun's report is the saved one, with its suite; the gate looks once at it.
        suite: SuiteId {
            name: publish::suite_name(args.suite.config.path()),
            ..(chosen.saved.as_ref()).map_or(chosen.selected.suite, |s| s.suite.clone())
        },
        repeat,
        max_repeat: (chosen.saved.as_ref()).map_or(args.max_repeat, |_| Some(repeat.runs())),
        agent,
        grader,
        options,
        gate: chosen.gate,
        quarantine: config.quarantine.clone(),
        floors,
        policy: Policy {
            fail_on_regress: args.gate.fail_on_regress,
            fail_on_inconclusive: args.gate.fail_on_inconclusive,
        },
        max_errors: args.max_errors,
        scope: chosen.scope,
        rerun_into: chosen.saved,
    };
    let secrets = plan.options.secrets.clone();
    let report = match play(plan)? {
        Ok(report) => report,
        Err(other) => {
            eprintln!("goldgate: {}", other_agent(&other));
            return Ok(Exit::Error);
        }
    };
    let exit = finish(args, &report, started.elapsed(), secrets, narrowed);
    // The process ends with this run: freeing every case, turn and transcript one by one takes
    // milliseconds the user waits for, and the system takes the memory back at once.
    std::mem::forget((report, suite));
    exit
}

/// The cases to play, narrowed by `--changed-since` or `--rerun`, with the gate over them;
/// what the selection left out is said before anything runs.
fn choose(
    args: &RunArgs,
    (suite, config): (&Suite, &Config),
    selection: Selection,
    gate: Option<Gate>,
) -> Result<Chosen, String> {
    let agent = agent_config(args, config);
    let subset = subset_asked(args);
    let chosen = subset::choose_cases(
        (suite, config),
        agent.as_ref(),
        selection,
        subset.as_ref(),
        gate,
    )?;
    if let Some(note) = chosen.selected.empty_shard_note() {
        eprintln!("goldgate: {note}");
    }
    if let Some(scope) = &chosen.scope {
        eprintln!("goldgate: {}", console::escape(&scope.describe()));
    }
    Ok(chosen)
}

/// Why a rerun against another agent than its report's is not played.
fn other_agent(other: &OtherAgent) -> String {
    format!(
        "--rerun: the saved report is of the agent `{}`, this run's is `{}`: a report of both would mean neither; nothing was played and nothing was written",
        console::escape(&other.saved),
        console::escape(&other.now)
    )
}

/// How the run plays: flags over `run:` in the config, with the credentials to mask.
fn run_options(args: &RunArgs, config: &Config, agent: Option<&AgentConfig>) -> RunOptions {
    let concurrency = args.concurrency.unwrap_or(config.run.concurrency);
    let (pricing, notices) = grading::pricing(config, agent, args.budget);
    for notice in notices {
        eprintln!("goldgate: warning: {notice}");
    }
    RunOptions {
        concurrency,
        timeout: args.timeout.unwrap_or(config.run.timeout),
        retries: args.retries.unwrap_or(config.run.retries),
        backoff: Duration::from_millis(200),
        record: args.record.clone(),
        limits: Some(Limits::new(
            concurrency,
            args.rate_limit_wait.unwrap_or(limit::DEFAULT_WAIT_BUDGET),
        )),
        agent_pacing: config.agent_rate_limit,
        // Masked out of recordings, errors and every report (see goldgate::secrets).
        secrets: goldgate::app::secrets::known(config, agent),
        pricing,
        spend: Default::default(),
    }
}

fn grading_flags(args: &RunArgs, agent: Option<&AgentConfig>) -> GradingFlags {
    GradingFlags {
        allow_extra_tool_calls: args.allow_extra_tool_calls,
        no_cache: args.no_cache,
        cache_dir: args.cache_dir.clone(),
        record: args.record.clone(),
        replay: match agent {
            Some(AgentConfig::Replay { dir }) => Some(dir.clone()),
            _ => None,
        },
    }
}

/// The reports a run writes, by the flag that asks for each.
fn reports(args: &RunArgs) -> [(&'static str, &Option<std::path::PathBuf>); 4] {
    [
        ("--output", &args.output),
        ("--junit", &args.junit),
        ("--markdown", &args.github.markdown),
        ("--html", &args.html),
    ]
}

/// Every file the run will write can be written: found out before the agent is called, not
/// after the whole run (a read-only directory, a missing one).
fn check_outputs(args: &RunArgs) -> Result<(), String> {
    let baseline = [("--update-baseline", &args.update_baseline)];
    for (flag, path) in reports(args).into_iter().chain(baseline) {
        if let Some(path) = path {
            goldgate::atomic::check_writable(path)
                .map_err(|e| format!("{flag} {}: {e}", path.display()))?;
        }
    }
    // GitHub's files, appended to once the run is over: a pipe there would hang it.
    for variable in ["GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"] {
        if let Some(path) = std::env::var_os(variable).filter(|v| !v.is_empty()) {
            let path = std::path::Path::new(&path);
            goldgate::atomic::file_or_none(path)
                .map_err(|e| format!("{variable} {}: {e}", path.display()))?;
        }
    }
    if let Some(dir) = &args.record {
        // The transcripts go into it: it must exist (or be made) and take files.
        std::fs::create_dir_all(dir)
            .and_then(|()| goldgate::atomic::check_writable(&dir.join("probe")))
            .map_err(|e| format!("--record {}: {e}", dir.display()))?;
    }
    Ok(())
}

/// Stops the run before it plays anything, saying why: exit 2.
fn fail(args: &RunArgs, message: &str) -> anyhow::Result<Exit> {
    eprintln!("goldgate: {message}");
    refuse(args, &Refusal::new(message))
}

/// A run that stopped before it played anything (why is said already) tells GitHub too: the
/// sticky comment and the step summary say so instead of keeping the last run's verdict, and
/// the goldens' problems are annotated on their lines. Exit 2.
fn refuse(args: &RunArgs, refusal: &Refusal) -> anyhow::Result<Exit> {
    if let Some(error) = report_files(args).write_not_run(refusal) {
        eprintln!("goldgate: error: {error:#}");
    }
    let shard = (args.selection.common.shard.as_deref()).and_then(|text| text.parse().ok());
    super::publish(args.json && args.output.is_none(), |annotations| {
        let channels = channels(args, Secrets::new());
        publish::publish_refusal(refusal, shard, &channels, annotations)
    })?;
    Ok(Exit::Error)
}

/// Where `run` publishes, from its flags.
fn channels(args: &RunArgs, secrets: Secrets) -> Channels<'_> {
    Channels {
        suite: publish::suite_name(args.suite.config.path())
            .unwrap_or_else(|| DEFAULT_SUITE.to_owned()),
        markdown: args.github.markdown.as_deref(),
        comment: args.github.comment,
        secrets,
    }
}

/// Plays the plan on a fresh async runtime, with a progress bar (a line per case without a
/// terminal) and Ctrl-C handling.
fn play(plan: RunPlan) -> anyhow::Result<Result<Report, OtherAgent>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // The run is a task on the runtime's workers rather than on this thread: each case it
    // starts then lands on a worker's own queue, without waking another thread to take it.
    let run = runtime.spawn(async {
        let stop = Stop::default();
        watch_ctrl_c(stop.clone());
        let progress = progress_bar(plan.cases.len() * plan.repeat.runs() as usize);
        if let Some(limits) = &plan.options.limits {
            limits.observe(
                rate_limit_notice(progress.clone()),
                plan.options.secrets.clone(),
            );
        }
        let shown = progress.clone();
        let finished = std::sync::atomic::AtomicU64::new(0);
        let on_event: OnEvent = Arc::new(move |event: Event<'_>| match event {
            Event::CaseFinished { case, status } => {
                shown.inc(1);
                if status != Status::Passed {
                    shown.set_message(format!("{} {}", status.name(), case.id));
                }
                // No bar in a CI log: a line per case, so a long run shows it is alive. One
                // write per line: stderr is unbuffered, and each piece of a format is a write.
                if shown.is_hidden() {
                    let line = format!(
                        "goldgate: [{}/{}] {} {} ({}:{})\n",
                        finished.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
                        shown.length().unwrap_or_default(),
                        status.name(),
                        console::escape(&case.id),
                        console::escape(&case.location.file.to_string_lossy()),
                        case.location.line
                    );
                    let _ = io::stderr().write_all(line.as_bytes());
                }
            }
            Event::RunsAdded { runs } => shown.inc_length(runs as u64),
            Event::CaseStarted { .. } => {}
        });
        // A run of part of the suite cannot tell an entry for a case it left out from one for
        // no case at all.
        let partial = plan.scope.as_ref().is_some_and(Scope::is_partial);
        let notice = |notice: Notice| match notice {
            Notice::UnusedQuarantine { .. } if partial => {}
            // A notice may quote the agent (why it did not start: its last words on stderr).
            notice => eprintln!(
                "goldgate: {}",
                console::escape_lines(&notice.to_string(), "  ")
            ),
        };
        let played = session::play(plan, &stop, on_event, &notice).await;
        progress.finish_and_clear();
        played
    });
    let played = runtime.block_on(run).context("the run stopped on a bug")?;
    // All the run started has ended (the agent is shut down, every case joined): joining the
    // runtime's idle threads one by one is only time the user waits for.
    runtime.shutdown_background();
    Ok(played)
}

/// Prints and writes the reports, posts the PR comment, lists the errors; then the exit code:
/// the verdict, or worse when the baseline cannot be updated.
/// `narrowed`: the selection flags chose part of the suite (see [`Asked::narrowed`]).
fn finish(
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
        super::publish(args.json && args.output.is_none(), |annotations| {
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
    let written: Vec<String> = reports(args)
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
        exit = exit.max(super::update_baseline(path, report, asked)?);
    }
    Ok(exit)
}

/// The selection and `--repeat` / `--min-pass`, and the output flags, checked before anything
/// is loaded.
fn plan_arguments(args: &RunArgs) -> Result<(Selection, Repeat), String> {
    check_outputs(args)?;
    let selection = super::selection_of(&args.selection.common)?;
    let repeat = Repeat::new(args.repeat, args.min_pass)
        .map_err(|e| format!("--repeat / --min-pass: {e}"))?;
    if args.gate.fail_on_inconclusive && !args.gate.fail_on_regress {
        return Err(
            "--fail-on-inconclusive needs --fail-on-regress: without it the gate does not decide \
             the exit code"
                .to_owned(),
        );
    }
    if let Some(max_repeat) = args.max_repeat.filter(|&max| max < args.repeat) {
        return Err(format!(
            "--max-repeat {max_repeat} is below --repeat {}: adaptive repeats add runs to those",
            args.repeat
        ));
    }
    Ok((selection, repeat))
}

/// `--changed-since` or `--rerun`; `None` when neither is given.
fn subset_asked(args: &RunArgs) -> Option<Subset> {
    let flags = &args.selection;
    match (&flags.changed_since, &flags.rerun) {
        (Some(since), _) => Some(Subset::ChangedSince(since.clone())),
        (None, Some(report)) => Some(Subset::Rerun {
            report: report.clone(),
            only: match flags.only {
                Some(RerunOnly::Failed) => vec![Status::Failed],
                Some(RerunOnly::Errored) => vec![Status::Error],
                None => vec![Status::Failed, Status::Error],
            },
        }),
        (None, None) => None,
    }
}

/// Ctrl-C once: stop scheduling; twice: cancel what is in flight. Reports are written either way.
fn watch_ctrl_c(stop: Stop) {
    // SIGTERM is how CI cancels a job (GitHub sends it after SIGINT), SIGHUP how a closed
    // terminal or SSH session ends one: the job is going away, so the cases in flight are
    // cancelled at once, the agent's processes stopped and the reports written, incomplete.
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let ends = [
            (SignalKind::terminate(), "terminated"),
            (SignalKind::hangup(), "hung up"),
            (SignalKind::quit(), "quit"),
        ];
        for (kind, name) in ends {
            let stop = stop.clone();
            tokio::spawn(async move {
                if let Ok(mut ended) = signal(kind)
                    && ended.recv().await.is_some()
                {
                    eprintln!("\ngoldgate: {name}: cancelling the cases in flight");
                    stop.scheduling.cancel();
                    stop.in_flight.cancel();
                }
            });
        }
    }
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!(
                "\ngoldgate: stopping: finishing the cases in flight (Ctrl-C again to cancel them)"
            );
            stop.scheduling.cancel();
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("goldgate: cancelling the cases in flight");
                stop.in_flight.cancel();
            }
        }
    });
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
fn report_files(args: &RunArgs) -> ReportFiles<'_> {
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
        print(&mut io::stderr().lock(), super::use_color(&io::stderr()))?;
        let mut out = super::stdout();
        json::write(report, &mut out)?;
        out.flush()?;
    } else if let Err(e) = print(&mut super::stdout(), super::use_color(&io::stdout())) {
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
