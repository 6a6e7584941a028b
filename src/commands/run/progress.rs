//! What a run shows while it plays: a bar on a terminal, and in a CI log one line when an
//! endpoint first makes it wait.

use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use goldgate::limit;

/// Says when an endpoint makes the run wait: on the progress bar on a terminal; in a CI log,
/// one line the first time (the report sums every wait).
pub(super) fn rate_limit_notice(progress: ProgressBar) -> limit::OnWait {
    let told = std::sync::atomic::AtomicBool::new(false);
    Arc::new(move |endpoint: &str, wait: Duration, why: &str| {
        let line = format!(
            "waiting {:.1}s on the {endpoint}'s rate limit ({why})",
            wait.as_secs_f64()
        );
        if progress.is_hidden() {
            if !told.swap(true, std::sync::atomic::Ordering::Relaxed) {
                eprintln!("goldgate: {line}; further waits are summed at the end");
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
