//! What a run shows while it plays: a bar on a terminal; in a CI log a line per case, and one
//! line when an endpoint first makes it wait.

use std::io::{self, Write};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use goldgate::limit;

/// Says when an endpoint makes the run wait: on the progress bar on a terminal; in a CI log,
/// one line the first time (the report sums every wait).
pub(super) fn rate_limit_notice(progress: ProgressBar, log: Arc<CaseLog>) -> limit::OnWait {
    let told = std::sync::atomic::AtomicBool::new(false);
    Arc::new(move |endpoint: &str, wait: Duration, why: &str| {
        let line = format!(
            "waiting {:.1}s on the {endpoint}'s rate limit ({why})",
            wait.as_secs_f64()
        );
        if progress.is_hidden() {
            if !told.swap(true, std::sync::atomic::Ordering::Relaxed) {
                log.now(&format!(
                    "goldgate: {line}; further waits are summed at the end\n"
                ));
            }
        } else {
            progress.set_message(line);
        }
    })
}

/// A bar on a terminal; hidden (by indicatif) when stderr is not one, as in CI logs.
pub(super) fn progress_bar(total: usize) -> ProgressBar {
    let bar = ProgressBar::new(total as u64);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} cases  {msg}",
    ) {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// How long a finished case's line may wait in a CI log before it is written.
const LOG_DELAY: Duration = Duration::from_millis(100);

/// The lines of a CI log, written in batches: a run that finishes hundreds of cases a second
/// would otherwise make a write, and wake whatever reads the log, for each one. A line waits at
/// most [`LOG_DELAY`] (see [`CaseLog::keep_flushing`]), and everything is written when the log
/// is flushed or dropped.
#[derive(Default)]
pub(super) struct CaseLog {
    pending: Mutex<String>,
}

impl CaseLog {
    /// Adds a line (ending in a line feed), written at the next tick of
    /// [`CaseLog::keep_flushing`].
    pub(super) fn line(&self, line: &str) {
        self.pending().push_str(line);
    }

    /// Writes `line` at once, after every line waiting.
    pub(super) fn now(&self, line: &str) {
        let mut pending = self.pending();
        pending.push_str(line);
        write_out(&mut pending);
    }

    /// Writes every line waiting.
    pub(super) fn flush(&self) {
        write_out(&mut self.pending());
    }

    /// Writes the lines waiting every [`LOG_DELAY`] while the run goes on.
    pub(super) fn keep_flushing(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let log = Arc::clone(self);
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(LOG_DELAY);
            loop {
                ticks.tick().await;
                log.flush();
            }
        })
    }

    fn pending(&self) -> MutexGuard<'_, String> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for CaseLog {
    fn drop(&mut self) {
        self.flush();
    }
}

/// One write, as stderr is unbuffered and each piece of a format would be a write of its own.
fn write_out(pending: &mut String) {
    if !pending.is_empty() {
        let _ = io::stderr().write_all(pending.as_bytes());
        pending.clear();
    }
}
