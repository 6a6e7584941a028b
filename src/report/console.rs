//! The terminal report of `goldgate run`: SCRAPI's results table, the aggregates, then what
//! failed and where.
//!
//! It is drawn from the JSON report, like every other sink, and the failure details
//! (`case_details`) are the same text as the body of a JUnit failure.
//!
//! The table keeps the shape users know from `cxas run --wait` (seed 000, "Interpreting
//! results") so that it reads the same after the switch. Everything the agent or a golden file
//! wrote goes through [`escape`] first: an agent can answer with ANSI escapes or bidi
//! overrides, and those must never reach the terminal. Colour is the caller's decision
//! (a terminal, and `NO_COLOR` unset): this module only obeys it.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::time::Duration;

use crate::report::summary::Excuse;
use crate::report::{Standing, Summary, agent_log_tail, duration, rate};
use crate::results::Percentiles;
use crate::results::{CaseResult, CheckResult, Report};
use crate::results::{Method, Status};

/// Writes the whole terminal report of a run that took `elapsed` (the report keeps the time
/// of each case, not the run's wall time).
pub fn write_table(
    summary: &Summary,
    elapsed: Duration,
    out: &mut impl Write,
    color: bool,
) -> io::Result<()> {
    let report = summary.report;
    let paint = Paint { color };
    write_results(summary, out, paint)?;
    writeln!(out)?;
    write_aggregates(summary, elapsed, out)?;

    let failing: Vec<&CaseResult> = report.cases.iter().filter(|c| c.status.is_bad()).collect();
    if !failing.is_empty() {
        writeln!(out, "\nFailures\n--------")?;
    }
    for case in failing {
        let mut header = format!(
            "{} {} ({})",
            status_word(case.status),
            escape(&case.name),
            escape(&location(&case.file, case.line))
        );
        if let Some(repeats) = &case.repeats {
            let shown = shown_run(case).unwrap_or_default() + 1;
            let _ = write!(header, ": {repeats}; run {shown} shown");
        }
        if let Some(error) = &case.error {
            let _ = write!(header, ": {}", escape_lines(error, "  "));
        }
        if let Standing::Excused(excuse) = summary.standing(case) {
            let _ = write!(header, " [not blocking: {}]", excuse.describe());
        }
        writeln!(out, "{}", paint.status(case.status, &header))?;
        if let Some(quarantine) = case.expired_quarantine() {
            writeln!(out, "  {}", escape(&quarantine.describe()))?;
        }
        write_case_details(case, out, paint)?;
    }
    write_agent_log(report, out)
}

/// The last line: the verdict every other output opens with, and the exit code it stands for.
pub fn write_verdict(summary: &Summary, out: &mut impl Write) -> io::Result<()> {
    let report = summary.report;
    if !report.floors.is_empty() {
        writeln!(out)?;
    }
    for floor in &report.floors {
        let met = if floor.met { "met" } else { "NOT MET" };
        writeln!(out, "Floor: {} {met}", escape(&floor.describe()))?;
    }
    writeln!(
        out,
        "\nResult: {} (exit {})",
        escape(&summary.headline),
        summary.exit.code()
    )
}

/// The end of a command agent's stderr, once, when a case errored: often the reason why.
fn write_agent_log(report: &Report, out: &mut impl Write) -> io::Result<()> {
    let Some((lines, total)) = agent_log_tail(report) else {
        return Ok(());
    };
    if lines.len() < total {
        writeln!(out, "Agent stderr (last {} lines):", lines.len())?;
    } else {
        writeln!(out, "Agent stderr:")?;
    }
    for line in lines {
        writeln!(out, "  {}", escape(line))?;
    }
    Ok(())
}

/// The seed's table: one row per case, then the totals line. Pass and Fail count turns, so a
/// case that did not pass is marked after its score: a conversation-level check (gecx,
/// Regtrace) can fail a case whose turns all passed. A case judged only as a whole shows `-`
/// there.
fn write_results(summary: &Summary, out: &mut impl Write, paint: Paint) -> io::Result<()> {
    let report = summary.report;
    let names: Vec<Cow<str>> = report.cases.iter().map(|c| escape(&c.name)).collect();
    let width = names
        .iter()
        .map(|n| n.chars().count())
        .chain([HEADER.len()])
        .max()
        .unwrap_or(HEADER.len());

    writeln!(out, "Evaluation Results\n==================")?;
    writeln!(out, "{HEADER:<width$} | Turns | Pass | Fail | Score")?;
    writeln!(
        out,
        "{}|-------|------|------|------",
        "-".repeat(width + 1)
    )?;
    let (mut turns, mut passed, mut failed, mut whole) = (0, 0, 0, 0);
    for (case, name) in report.cases.iter().zip(&names) {
        let count = |status| case.turns.iter().filter(|t| t.status == status).count();
        let (pass, fail) = (count(Status::Passed), count(Status::Failed));
        let score = format!("{}%", percent(case.score));
        // Judged with no turn judged: its checks are over the whole conversation (gecx
        // scorers, Regtrace metrics), and "0 pass, 0 fail" would read as nothing checked.
        let (pass_cell, fail_cell) = if pass + fail == 0 && case.status.is_judged() {
            whole += 1;
            ("-".to_owned(), "-".to_owned())
        } else {
            (pass.to_string(), fail.to_string())
        };
        let mut row = format!(
            "{name:<width$} | {:>5} | {pass_cell:>4} | {fail_cell:>4} | {score:>5}",
            case.turns.len()
        );
        if case.status != Status::Passed {
            let _ = write!(row, "  {}", status_word(case.status));
        }
        // A quarantine excuses a failure, never an error of the run.
        match (&case.quarantine, summary.standing(case)) {
            (Some(q), _) if q.expired => row.push_str(" (quarantine expired)"),
            (Some(_), Standing::Excused(Excuse::Quarantined)) => row.push_str(" (quarantined)"),
            _ => {}
        }
        if let Some(repeats) = case.repeats.as_ref().filter(|r| r.flaky) {
            let _ = write!(row, "  flaky ({}/{})", repeats.passed, repeats.runs.len());
        }
        writeln!(out, "{}", paint.status(case.status, &row))?;
        turns += case.turns.len();
        passed += pass;
        failed += fail;
    }
    let whole = match whole {
        0 => String::new(),
        1 => " (-: 1 conversation checked as a whole, not turn by turn)".to_owned(),
        n => format!(" (-: {n} conversations checked as a whole, not turn by turn)"),
    };
    writeln!(
        out,
        "Total: {} conversations, {turns} turns, {passed} pass, {failed} fail{whole}",
        report.cases.len()
    )?;
    writeln!(out, "Cases: {}", summary.counts)
}

const HEADER: &str = "Conversation";

/// The aggregates, one per line, with what was left out of the rates.
fn write_aggregates(summary: &Summary, elapsed: Duration, out: &mut impl Write) -> io::Result<()> {
    let report = summary.report;
    if let Some(scope) = &report.scope {
        writeln!(out, "Selected: {}", escape(&scope.describe()))?;
    }
    writeln!(out, "Agent: {}", escape(&report.agent))?;
    write_rates(summary, out)?;
    write_judges(report, out)?;
    write_run_notes(report, out)?;
    writeln!(out, "Duration: {}", duration(elapsed))
}

/// The measured rates and percentiles, one line each.
fn write_rates(summary: &Summary, out: &mut impl Write) -> io::Result<()> {
    let report = summary.report;
    let aggregates = &report.aggregates;
    let cases = &aggregates.cases;
    writeln!(
        out,
        "Pass rate: {} ({} passed, {} failed; not counted: {} errored, {} skipped)",
        rate(aggregates.pass_rate),
        cases.passed,
        cases.failed,
        cases.errors,
        cases.skipped
    )?;
    writeln!(out, "Turn pass rate: {}", rate(aggregates.turn_pass_rate))?;
    writeln!(out, "Deflection rate: {}", rate(aggregates.deflection_rate))?;
    writeln!(out, "Latency: {}", percentiles(aggregates.latency))?;
    writeln!(out, "TTFT: {}", percentiles(aggregates.ttft))?;
    if let Some(tools) = aggregates.tool_latency {
        writeln!(
            out,
            "Tool tests: {} executed, p50 {}, p90 {}, p99 {} (not counted in turn latency)",
            tools.count,
            duration(tools.p50),
            duration(tools.p90),
            duration(tools.p99)
        )?;
    }
    let tool_calls = rate(aggregates.tool_call_accuracy);
    writeln!(out, "Tool-call accuracy: {tool_calls}")?;
    let hallucination = rate(aggregates.hallucination_rate);
    writeln!(out, "Hallucination rate: {hallucination}")?;
    writeln!(out, "Suite score: {}", rate(aggregates.suite_score))?;
    if let (Some(flake_rate), Some((flaky, repeated))) =
        (aggregates.flake_rate, summary.counts.flaky)
    {
        writeln!(
            out,
            "Flake rate: {} ({flaky} of {repeated} repeated cases flaky)",
            rate(Some(flake_rate)),
        )?;
    }
    let tokens = &aggregates.tokens;
    writeln!(
        out,
        "Tokens: {} in, {} out",
        tokens.input_tokens, tokens.output_tokens
    )?;
    match super::cost_line(report) {
        Some(cost) => writeln!(out, "Cost: {cost}"),
        None => Ok(()),
    }
}

/// Who judged (or that nobody did), and what each judge cost.
fn write_judges(report: &Report, out: &mut impl Write) -> io::Result<()> {
    let local = report
        .cases
        .iter()
        .flat_map(CaseResult::all_checks)
        .any(|c| c.method == Method::LocalSimilarity);
    let mut judges = match super::no_judge(report) {
        Some(none) => escape(&none).into_owned(),
        None => format!("Judges: {}", escape(&report.judges.join(", "))),
    };
    if local {
        judges.push_str("; semantic checks used local similarity");
    }
    writeln!(out, "{judges}")?;
    for usage in &report.judge_usage {
        writeln!(
            out,
            "Judge {}: {}, {} from the cache, {} tokens in, {} out, cost {}",
            escape(&usage.judge),
            super::plural(usage.calls as usize, "call"),
            super::plural(usage.cached as usize, "answer"),
            usage.input_tokens,
            usage.output_tokens,
            usage.cost()
        )?;
    }
    Ok(())
}

/// How the run went, beside its results: stopped early, the agent's start-up, rate limits.
fn write_run_notes(report: &Report, out: &mut impl Write) -> io::Result<()> {
    if report.incomplete {
        writeln!(out, "Stopped early: some conversations did not run")?;
    }
    if let Some(startup) = report.agent_startup {
        writeln!(
            out,
            "Agent start-up: {} (not counted in turn latency)",
            duration(startup)
        )?;
    }
    for waits in &report.rate_limits {
        writeln!(
            out,
            "Rate limit: {} asked to slow down {}; waited {}",
            escape(&waits.endpoint),
            super::plural(waits.waits as usize, "time"),
            duration(waits.waited)
        )?;
    }
    Ok(())
}

/// Which run of a repeated case that did not pass its turns and checks come from: the first
/// run that ended like the case, as [`crate::outcome::Repeats::shown`] picked it. `None` for
/// a case run once or one that passed.
pub(crate) fn shown_run(case: &CaseResult) -> Option<usize> {
    let repeats = case
        .repeats
        .as_ref()
        .filter(|_| case.status != Status::Passed)?;
    Some(
        repeats
            .runs
            .iter()
            .position(|&s| s == case.status)
            .unwrap_or_default(),
    )
}

/// [`write_case_details`] without colour, as text (the JUnit failure body).
pub(crate) fn case_details(case: &CaseResult) -> String {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write_case_details(case, &mut out, Paint { color: false });
    String::from_utf8_lossy(&out).into_owned()
}

/// What went wrong in one case: each turn that did not pass (location, input, each failed
/// check with expected vs actual and the method that judged it), then the case-level checks.
/// The case itself (name, location, status) is the caller's header.
fn write_case_details(case: &CaseResult, out: &mut impl Write, paint: Paint) -> io::Result<()> {
    for turn in &case.turns {
        if !turn.status.is_bad() {
            continue;
        }
        let mut line = format!(
            "  turn {} ({}): {}",
            turn.index,
            escape(&location(&case.file, turn.line)),
            turn.status.name()
        );
        // The error that stopped the case is already in its header.
        if let Some(error) = turn
            .error
            .as_ref()
            .filter(|&e| Some(e) != case.error.as_ref())
        {
            let _ = write!(line, ": {}", escape(error));
        }
        writeln!(out, "{}", paint.status(turn.status, &line))?;
        writeln!(out, "    input: {}", escape(&turn.input))?;
        for check in turn.checks.iter().filter(|c| c.status.is_bad()) {
            write_check(&case.file, check, out, paint)?;
        }
    }
    let case_checks: Vec<&CheckResult> = case.checks.iter().filter(|c| c.status.is_bad()).collect();
    if !case_checks.is_empty() {
        writeln!(out, "  conversation checks:")?;
        for check in case_checks {
            write_check(&case.file, check, out, paint)?;
        }
    }
    Ok(())
}

/// One check that did not pass, of a case in `file`.
fn write_check(
    file: &str,
    check: &CheckResult,
    out: &mut impl Write,
    paint: Paint,
) -> io::Result<()> {
    let indent = "    ";
    let line = format!(
        "{indent}{} [{}] ({}): {}",
        escape(&check.label),
        method(&check.method),
        escape(&location(file, check.line)),
        check.status.name()
    );
    writeln!(out, "{}", paint.status(check.status, &line))?;
    writeln!(out, "{indent}  expected: {}", escape(&check.expected))?;
    writeln!(out, "{indent}  actual:   {}", escape(&check.actual))?;
    if let Some(reason) = &check.reason {
        writeln!(out, "{indent}  reason:   {}", escape(reason))?;
    }
    Ok(())
}

/// How a check was judged, for people: `exact`, `semantic (local-similarity)`,
/// `judge (anthropic/claude-sonnet-4-6)`, `not judged`.
fn method(method: &Method) -> Cow<'_, str> {
    match method {
        Method::Judge { provider, model } => {
            Cow::Owned(format!("judge ({}/{})", provider.name(), escape(model)))
        }
        Method::LocalSimilarity => Cow::Borrowed("semantic (local-similarity)"),
        Method::None => Cow::Borrowed("not judged"),
        Method::Deterministic(name) => escape(name),
    }
}

/// `file:line`, as [`crate::model::Location`] shows it.
fn location(file: &str, line: u32) -> String {
    format!("{file}:{line}")
}

fn status_word(status: Status) -> &'static str {
    match status {
        Status::Passed => "PASSED",
        Status::Failed => "FAILED",
        Status::Error => "ERROR",
        Status::Skipped => "SKIPPED",
    }
}

/// Text from outside over several lines (an agent's last words on stderr, quoted in an error)
/// made safe as [`escape`] makes one line, each line after the first indented by `indent`:
/// it reads as lines, and none can pass for a line of goldgate's own.
pub fn escape_lines(text: &str, indent: &str) -> String {
    let lines: Vec<Cow<'_, str>> = text.lines().map(escape).collect();
    lines.join(&format!("\n{indent}"))
}

/// Text from outside (agent replies, golden files) made safe for one terminal line: control
/// characters (ESC, CR, LF, C1 codes) and invisible bidi and zero-width format characters are
/// shown as Rust escapes (`\u{1b}`, `\n`), everything else unchanged.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe(c) {
            escaped.extend(c.escape_default());
        } else {
            escaped.push(c);
        }
    }
    Cow::Owned(escaped)
}

fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn percent(fraction: f64) -> u32 {
    // `as` saturates and maps NaN to 0.
    (fraction.clamp(0.0, 1.0) * 100.0).round() as u32
}

fn percentiles(p: Option<Percentiles>) -> String {
    p.map_or_else(
        || "not measured".to_owned(),
        |p| format!("p50 {}, p95 {}", duration(p.p50), duration(p.p95)),
    )
}

/// Colours by status, or nothing.
#[derive(Clone, Copy)]
struct Paint {
    color: bool,
}

impl Paint {
    fn status<'a>(self, status: Status, text: &'a str) -> Cow<'a, str> {
        if !self.color {
            return Cow::Borrowed(text);
        }
        let code = match status {
            Status::Passed => "32",
            Status::Failed => "31",
            Status::Error | Status::Skipped => "33",
        };
        Cow::Owned(format!("\x1b[{code}m{text}\x1b[0m"))
    }
}

#[cfg(test)]
mod tests {
    use super::{escape, method, percent};
    use crate::model::Provider;
    use crate::results::Method;

    #[test]
    fn escapes_terminal_controls_and_bidi() {
        for (text, shown) in [
            ("plain text, é", "plain text, é"),
            ("\x1b[2Jgone", "\\u{1b}[2Jgone"),
            ("a\r\nb\tc", "a\\r\\nb\\tc"),
            ("\u{9b}31m", "\\u{9b}31m"),
            ("abc\u{202e}def", "abc\\u{202e}def"),
        ] {
            assert_eq!(escape(text), shown, "{text:?}");
        }
    }

    #[test]
    fn methods_are_shown_in_words() {
        let judge = Method::Judge {
            provider: Provider::Anthropic,
            model: "claude-sonnet-4-6".into(),
        };
        for (judged_by, shown) in [
            (Method::deterministic("exact"), "exact"),
            (Method::LocalSimilarity, "semantic (local-similarity)"),
            (judge, "judge (anthropic/claude-sonnet-4-6)"),
            (Method::None, "not judged"),
        ] {
            assert_eq!(method(&judged_by), shown);
        }
        // A saved report is outside input: its words are escaped like the rest.
        let hostile = Method::parse("exact\x1b[2J").unwrap();
        assert_eq!(method(&hostile), "exact\\u{1b}[2J");
    }

    #[test]
    fn percent_rounds_and_clamps() {
        assert_eq!(percent(0.5), 50);
        assert_eq!(percent(2.0 / 3.0), 67);
        assert_eq!(percent(1.0), 100);
        assert_eq!(percent(f64::NAN), 0);
    }
}
