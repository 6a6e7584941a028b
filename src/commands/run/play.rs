//! Plays a resolved plan, showing it live: a progress bar on a terminal (a line per case in a
//! CI log), the notices of the run, and Ctrl-C or a signal from CI ending it with its reports.

use std::sync::Arc;

use anyhow::Context as _;

use goldgate::app::session::{self, Notice, OtherAgent, RunPlan};
use goldgate::report::console;
use goldgate::results::{Report, Scope, Status};
use goldgate::run::{Event, OnEvent, Stop};

use super::progress::{CaseLog, progress_bar, rate_limit_notice};

/// Plays the plan on a fresh async runtime, with a progress bar (a line per case without a
/// terminal) and Ctrl-C handling.
pub(super) fn play(plan: RunPlan) -> anyhow::Result<Result<Report, OtherAgent>> {
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
        let log = Arc::new(CaseLog::default());
        if let Some(limits) = &plan.options.limits {
            limits.observe(
                rate_limit_notice(progress.clone(), Arc::clone(&log)),
                plan.options.secrets.clone(),
            );
        }
        let flushing = progress.is_hidden().then(|| log.keep_flushing());
        let shown = progress.clone();
        let finished = std::sync::atomic::AtomicU64::new(0);
        let case_log = Arc::clone(&log);
        let on_event: OnEvent = Arc::new(move |event: Event<'_>| match event {
            Event::CaseFinished { case, status } => {
                shown.inc(1);
                if status != Status::Passed {
                    shown.set_message(format!("{} {}", status.name(), case.id));
                }
                // No bar in a CI log: a line per case, so a long run shows it is alive.
                if shown.is_hidden() {
                    case_log.line(&format!(
                        "goldgate: [{}/{}] {} {} ({}:{})\n",
                        finished.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
                        shown.length().unwrap_or_default(),
                        status.name(),
                        console::escape(&case.id),
                        console::escape(&case.location.file.to_string_lossy()),
                        case.location.line
                    ));
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
            notice => log.now(&format!(
                "goldgate: {}\n",
                console::escape_lines(&notice.to_string(), "  ")
            )),
        };
        let played = session::play(plan, &stop, on_event, &notice).await;
        if let Some(flushing) = flushing {
            flushing.abort();
        }
        log.flush();
        progress.finish_and_clear();
        played
    });
    let played = runtime.block_on(run).context("the run stopped on a bug")?;
    // All the run started has ended (the agent is shut down, every case joined): joining the
    // runtime's idle threads one by one is only time the user waits for.
    runtime.shutdown_background();
    Ok(played)
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
