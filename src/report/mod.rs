//! Sinks: each output is a small renderer over typed results, writing to any `io::Write`.

pub mod annotations;
pub mod console;
pub mod gate;
pub mod html;
pub mod junit;
pub mod lint;
pub mod markdown;

use std::time::Duration;

use crate::results::{Percentiles, Report, Status, ToolLatency};

/// A rate for people: `62.5%`, or `n/a` when nothing was counted.
pub(crate) fn rate(fraction: Option<f64>) -> String {
    fraction.map_or_else(|| "n/a".to_owned(), |f| format!("{:.1}%", f * 100.0))
}

/// A time for people: whole milliseconds under ten seconds, tenths of a second above.
pub(crate) fn duration(d: Duration) -> String {
    if d < Duration::from_secs(10) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// `p50 / p95` for a table cell, or `not measured`.
pub(crate) fn p50_p95(p: Option<Percentiles>) -> String {
    p.map_or_else(
        || "not measured".to_owned(),
        |p| format!("{} / {}", duration(p.p50), duration(p.p95)),
    )
}

/// The tool tests' `p50 / p90 / p99` for a table cell.
pub(crate) fn p50_p90_p99(t: ToolLatency) -> String {
    format!(
        "{} / {} / {}",
        duration(t.p50),
        duration(t.p90),
        duration(t.p99)
    )
}

/// How many of the agent's last stderr lines a report shows.
pub(crate) const AGENT_LOG_LINES: usize = 20;

/// The end of a command agent's stderr, worth showing only when a case errored (otherwise it
/// is noise): its last [`AGENT_LOG_LINES`] lines and how many lines it had. `None` when no
/// case errored or the log is blank.
pub(crate) fn agent_log_tail(report: &Report) -> Option<(Vec<&str>, usize)> {
    if !report.cases.iter().any(|c| c.status == Status::Error) {
        return None;
    }
    let log = report.agent_log.as_deref()?.trim_end();
    if log.trim_start().is_empty() {
        return None;
    }
    let lines: Vec<&str> = log.lines().collect();
    let total = lines.len();
    Some((
        lines[total.saturating_sub(AGENT_LOG_LINES)..].to_vec(),
        total,
    ))
}
