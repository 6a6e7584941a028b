//! Sinks: each output is a small renderer over typed results, writing to any `io::Write`.

pub mod annotations;
pub mod console;
pub mod gate;
pub mod html;
pub mod junit;
pub mod lint;
pub mod markdown;

use std::fmt::Write;
use std::time::Duration;

use crate::results::{
    Aggregates, CaseResult, Comparison, FloorResult, Measure, Percentiles, Report, Status,
    Threshold, ToolLatency, Verdict,
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

/// The run's verdict in a few words, the same in every output (terminal, Markdown, comment,
/// page): what the exit code stands for, and what does not block but is worth a look.
pub fn headline(report: &Report) -> String {
    let cases = &report.aggregates.cases;
    let gate = report.gate.as_ref();
    let verdict = report.verdict();
    let mut text = match verdict {
        Verdict::Interrupted => "stopped early: some cases did not run".to_owned(),
        Verdict::OverBudget => format!(
            "stopped at the budget: spent {} of {}; {} cases skipped",
            report.spending().total,
            crate::transcript::dollars(report.budget.map_or(0.0, |b| b.limit_usd)),
            cases.skipped
        ),
        Verdict::TooManyErrors => format!(
            "could not be judged: {} of {} cases errored (--max-errors {})",
            cases.errors, cases.total, report.max_errors
        ),
        Verdict::NothingJudged => format!(
            "nothing was judged: of {} cases, {} skipped and {} errored",
            cases.total, cases.skipped, cases.errors
        ),
        Verdict::Ungated => "not gated: the run was gated on a baseline, and this report holds \
                              no comparison with it (give --baseline FILE --fail-on-regress)"
            .to_owned(),
        Verdict::Regressed => format!("regressed: {}", gate.map(regressions).unwrap_or_default()),
        Verdict::BelowFloor => {
            let unmet: Vec<String> = report
                .floors
                .iter()
                .filter(|f| !f.met)
                .map(FloorResult::describe)
                .collect();
            format!("below the floor: {}", unmet.join("; "))
        }
        Verdict::Failed => format!("{} of {} cases failed", cases.failed, cases.total),
        Verdict::Inconclusive => "no regression shown".to_owned(),
        Verdict::Pass if cases.total == 0 => match &report.scope {
            Some(scope) => format!("nothing to run: {}", scope.describe()),
            None => "no case ran".to_owned(),
        },
        Verdict::Pass if gate.is_some() && report.policy.fail_on_regress => {
            "no regression".to_owned()
        }
        Verdict::Pass if cases.failed > 0 => {
            format!("passed, {} of {} cases failed", cases.failed, cases.total)
        }
        Verdict::Pass if cases.passed == 1 => "the 1 case passed".to_owned(),
        Verdict::Pass => format!("all {} cases passed", cases.passed),
    };
    let aside = asides(report);
    if !aside.is_empty() && !verdict.is_error() {
        text = format!("{text} ({})", aside.join(", "));
    }
    // An error of the run outranks the gate, but a regression it found is no flake of the
    // infrastructure: rerunning the job will not clear it.
    if verdict.is_error() && gate.is_some_and(Comparison::regressed) {
        text.push_str("; the gate found a regression too");
    }
    text
}

/// What does not block but is worth a look, beside the verdict: undecided comparisons, known
/// failures, quarantined cases, errors within `--max-errors`, checks nobody judged.
fn asides(report: &Report) -> Vec<String> {
    let cases = &report.aggregates.cases;
    let gate = report.gate.as_ref();
    let mut aside = Vec::new();
    if let Some(comparison) = gate {
        let undecided = comparison.undecided_count();
        if undecided > 0 {
            aside.push(format!("{undecided} undecided"));
        }
        if !comparison.known_failures.is_empty() {
            aside.push(plural(comparison.known_failures.len(), "known failure"));
        }
        if !report.policy.fail_on_regress && comparison.regressed() {
            aside.push("the gate (advisory) found a regression".to_owned());
        }
    }
    let quarantined = report
        .cases
        .iter()
        .filter(|c| c.is_quarantined() && c.status.is_bad())
        .count();
    if quarantined > 0 {
        aside.push(format!("{quarantined} quarantined"));
    }
    // Errors within --max-errors do not fail the run, but the cases were not judged.
    if cases.errors > 0 {
        aside.push(format!("{} errored", cases.errors));
    }
    // A green verdict with checks nobody judged (a judge's key missing, as on a fork's pull
    // request) is weaker than it reads: say so where the verdict is read.
    let skipped = report.aggregates.checks.skipped;
    if skipped > 0 {
        aside.push(format!("{} not judged", plural(skipped, "check")));
    }
    aside
}

/// What tripped the gate: `2 cases newly failing, p95 latency`.
fn regressions(comparison: &Comparison) -> String {
    let mut parts = Vec::new();
    if !comparison.newly_failing.is_empty() {
        parts.push(format!(
            "{} newly failing",
            plural(comparison.newly_failing.len(), "case")
        ));
    }
    parts.extend(
        comparison
            .tripped()
            .map(|m| m.threshold.metric().to_owned()),
    );
    if comparison.combined_decision() == Some(crate::results::Decision::Regressed) {
        parts.push(crate::results::CasesCombined::NAME.to_owned());
    }
    parts.join(", ")
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
