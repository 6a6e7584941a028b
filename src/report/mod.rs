//! Sinks: each output is a small renderer over typed results, writing to any `io::Write`.

pub mod annotations;
pub mod console;
pub mod gate;
pub mod html;
pub mod junit;
pub mod lint;
pub mod markdown;
pub mod summary;

pub use summary::{MetricStanding, RowTone, Severity, Standing, Summary};

use std::fmt::Write;
use std::time::Duration;

use crate::results::{
    Aggregates, CaseResult, Measure, Percentiles, Report, Status, Threshold, ToolLatency,
};
use crate::transcript::{Cost, dollars};

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

/// A gated metric's value for people: `62.5%`, `1200 ms`, `$0.0123`, `812 tokens`.
pub(crate) fn metric_value(measure: Measure, value: f64) -> String {
    match measure {
        Measure::Rate => rate(Some(value)),
        // Milliseconds, whole and non-negative: `as` saturates.
        Measure::Milliseconds => duration(Duration::from_millis(value.round().max(0.0) as u64)),
        Measure::Dollars => dollars(value),
        Measure::Tokens => format!("{value:.0} tokens"),
    }
}

/// The aggregates every table shows, in order: name, value, and the threshold that gates it.
#[rustfmt::skip] // A table: one row a line.
pub(crate) fn metric_rows(a: &Aggregates) -> [(&'static str, String, Option<Threshold>); 8] {
    use Threshold::*;
    [
        ("Pass rate", rate(a.pass_rate), Some(PassRateDropPp)),
        ("Turn pass rate", rate(a.turn_pass_rate), None),
        ("Deflection rate", rate(a.deflection_rate), Some(DeflectionDropPp)),
        ("Latency p50 / p95", p50_p95(a.latency), Some(P95LatencyIncreasePct)),
        ("TTFT p50 / p95", p50_p95(a.ttft), Some(TtftP95IncreasePct)),
        ("Hallucination rate", rate(a.hallucination_rate), Some(HallucinationRateIncreasePp)),
        ("Tool-call accuracy", rate(a.tool_call_accuracy), None),
        ("Suite score", rate(a.suite_score), None),
    ]
}

/// When no judge ran: that none did, how many checks went unjudged and why the first did
/// (no judge configured, or a configured judge whose key is not set): the same in every
/// output. `None` when a judge ran.
pub(crate) fn no_judge(report: &Report) -> Option<String> {
    if !report.judges.is_empty() {
        return None;
    }
    let skipped = report.aggregates.checks.skipped;
    let why = report
        .cases
        .iter()
        .flat_map(CaseResult::all_checks)
        .filter(|c| c.status == Status::Skipped)
        .find_map(|c| c.reason.as_deref());
    Some(match why {
        _ if skipped == 0 => "no judge ran".to_owned(),
        Some(why) => format!("no judge ran: {} skipped ({why})", plural(skipped, "check")),
        None => format!("no judge ran: {} skipped", plural(skipped, "check")),
    })
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

/// `1 case`, `2 cases`.
pub fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// What the run spent, in one line for every output: `$0.42 (agent $0.30, judges $0.12); the
/// judge cache saved $0.05; budget $5.00`. `None` when nothing reported tokens or cost.
pub fn cost_line(report: &Report) -> Option<String> {
    let spending = report.spending();
    if spending.total == Cost::NotReported && report.budget.is_none() {
        return None;
    }
    let mut line = spending.total.to_string();
    let parts: Vec<String> = [("agent", spending.agent), ("judges", spending.judges)]
        .into_iter()
        .filter(|(_, cost)| *cost != Cost::NotReported)
        .map(|(who, cost)| format!("{who} {cost}"))
        .collect();
    if parts.len() > 1 || spending.agent == Cost::NotReported {
        let _ = write!(line, " ({})", parts.join(", "));
    }
    if let Some(saved) = spending.saved_usd {
        let _ = write!(line, "; the judge cache saved {}", dollars(saved));
    }
    if let Some(budget) = report.budget {
        let reached = if budget.reached { ", reached" } else { "" };
        let _ = write!(line, "; budget {}{reached}", dollars(budget.limit_usd));
    }
    Some(line)
}
