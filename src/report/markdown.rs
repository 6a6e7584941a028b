//! The Markdown summary of a run: the text of the sticky PR comment and of the job's step
//! summary, rendered from a JSON report so that `goldgate report` can rebuild it later.
//!
//! It reads top-down the way a reviewer asks: the verdict; the aggregates, with their change
//! against the baseline and the gate's limits when the report carries a comparison; the cases
//! that flipped either way; then each failing case folded in a `<details>` block with every
//! failing turn's input, expected and actual; and a link to the run.
//!
//! Two promises, because the comment is posted with write access on someone's PR:
//! - Nothing an agent or a golden wrote can act: see [`escape`].
//! - The body stays under GitHub's limit ([`COMMENT_LIMIT`]). Long texts are cut at a
//!   character boundary with a note; then the body is assembled from whole blocks (a list item,
//!   a whole `<details>` block), and the blocks that no longer fit are counted in a note
//!   instead, so a cut never lands inside a code fence or an open `<details>`.

mod body;
pub(crate) mod escape;
mod gate;
mod not_run;

use std::fmt::Write as _;

use self::body::Body;
use self::gate::{baseline_value, change, flips, gate};
pub use self::not_run::render_not_run;
use crate::report::{Standing, Summary};
use crate::report::{agent_log_tail, metric_rows, p50_p90_p99};
use crate::results::{CaseResult, CheckResult, Report, TurnResult};
use crate::results::{CasesCombined, Comparison, Decision, MetricDelta, Threshold, Unit};

/// GitHub refuses an issue comment longer than this many characters.
pub const COMMENT_LIMIT: usize = 65_536;

/// The body's budget in bytes. A character is at least one byte and at least one UTF-16 unit,
/// so a body within this many bytes is within the limit however GitHub counts; the margin
/// leaves room for the note that says what was left out.
const BUDGET: usize = COMMENT_LIMIT - 1_024;

/// One input, expected or actual text is cut after this many bytes.
const TEXT_LIMIT: usize = 1_500;
/// Per failing case: at most this many failing turns; per turn, this many failing checks.
const TURNS_SHOWN: usize = 3;
const CHECKS_SHOWN: usize = 3;
/// Newly failing and newly passing cases listed by name.
const FLIPS_SHOWN: usize = 50;
/// The agent's stderr tail is cut to its last this many bytes.
const LOG_LIMIT: usize = 4_000;

/// What the report itself does not know: which suite it is, where the run is, and how its
/// files are best named.
#[derive(Clone, Copy)]
pub struct Options<'a> {
    /// The suite's name: the config file's path, or `default`. It names the sticky comment,
    /// so that each suite of a repository keeps its own.
    pub suite: &'a str,
    /// The workflow run, linked at the end.
    pub run_url: Option<&'a str>,
    /// A report's file as shown (relative to the workspace under Actions).
    pub path: &'a dyn Fn(&str) -> String,
}

/// The hidden line that finds this suite's comment again. Anything but `[A-Za-z0-9._/-]` in
/// the name is percent-encoded, so no name can end the HTML comment early.
pub fn marker(suite: &str) -> String {
    let mut name = String::with_capacity(suite.len());
    for byte in suite.bytes() {
        if byte.is_ascii_alphanumeric() || b"._/-".contains(&byte) {
            name.push(char::from(byte));
        } else {
            let _ = write!(name, "%{byte:02X}");
        }
    }
    format!("<!-- goldgate:suite={name} -->")
}

/// The whole body, at most [`COMMENT_LIMIT`] characters, starting with the suite's
/// [`marker`].
pub fn render(summary: &Summary, options: &Options) -> String {
    let report = summary.report;
    let comparison = report.gate.as_ref();
    let mut body = Body::new(BUDGET);
    body.head.push_str(&marker(options.suite));
    body.head.push('\n');
    verdict(&mut body.head, summary, options.suite);
    scope(&mut body.head, report, comparison);
    metrics(&mut body.head, report, comparison);
    // The foot first: the sections are budgeted around it.
    footer(&mut body.foot, report, options);
    if let Some(comparison) = comparison {
        flips(&mut body, comparison, options.path);
    }
    failures(&mut body, summary, options.path);
    agent_log(&mut body, report);
    body.finish()
}

/// `goldgate`, or `goldgate · `suite`` for a suite named by its config.
fn title(suite: &str) -> String {
    if suite == "default" {
        "goldgate".to_owned()
    } else {
        format!(
            "goldgate · {}",
            escape::code_span(escape::cut(suite, 200).0)
        )
    }
}

fn verdict(out: &mut String, summary: &Summary, suite: &str) {
    let (report, counts) = (summary.report, &summary.counts);
    let comparison = report.gate.as_ref();
    let title = title(suite);
    let headline = format!(
        "{} {}",
        summary.severity.sign(),
        escape::prose(&summary.headline)
    );
    let _ = writeln!(out, "### {title}: {headline}\n");
    let mut line = format!(
        "**{}** passed · **{}** failed · **{}** errors · **{}** skipped · {} turns",
        counts.cases.passed,
        counts.cases.failed,
        counts.cases.errors,
        counts.cases.skipped,
        counts.turns
    );
    for aside in counts.asides() {
        let _ = write!(line, " · {aside}");
    }
    let _ = writeln!(out, "{line}\n");
    for floor in &report.floors {
        let sign = if floor.met { "✅" } else { "❌" };
        let _ = writeln!(out, "- {sign} floor: {}", escape::prose(&floor.describe()));
    }
    if !report.floors.is_empty() {
        out.push('\n');
    }
    if let Some(comparison) = comparison {
        let mut parts = vec![
            format!("{} newly failing", comparison.newly_failing.len()),
            format!("{} newly passing", comparison.newly_passing.len()),
        ];
        if !comparison.missing.is_empty() {
            parts.push(format!("{} not run", comparison.missing.len()));
        }
        let mut tripped: Vec<String> = comparison
            .tripped()
            .map(|m| format!("`{}`", m.threshold.name()))
            .collect();
        if comparison.combined_decision() == Some(Decision::Regressed) {
            tripped.push(CasesCombined::NAME.to_owned());
        }
        if !tripped.is_empty() {
            parts.push(format!("tripped: {}", tripped.join(", ")));
        }
        if !comparison.known_failures.is_empty() {
            parts.push(format!(
                "{} known failing (failing on main too)",
                comparison.known_failures.len()
            ));
        }
        if !comparison.quarantined.is_empty() {
            parts.push(format!("{} quarantined", comparison.quarantined.len()));
        }
        let undecided = comparison.undecided_count();
        if undecided > 0 {
            parts.push(format!("{undecided} inconclusive or short of runs"));
        }
        if comparison.extra_runs > 0 {
            parts.push(format!(
                "{} extra runs (adaptive repeats)",
                comparison.extra_runs
            ));
        }
        let _ = writeln!(
            out,
            "Against the baseline {} at a {} false-alarm rate: {}.\n",
            escape::code_span(escape::cut(&comparison.baseline, 200).0),
            Unit::Percent.amount(comparison.false_alarm_rate * 100.0),
            parts.join(", ")
        );
        if let Some(sight) = &comparison.sight {
            let _ = writeln!(
                out,
                "**This gate would catch:** {}.\n",
                escape::prose(&sight.describe())
            );
        }
        for note in &comparison.notes {
            let _ = writeln!(out, "> {}\n", escape::prose(note));
        }
    }
}

/// Which part of the suite ran, and why (`--changed-since`, `--rerun`).
fn scope(out: &mut String, report: &Report, comparison: Option<&Comparison>) {
    let Some(scope) = &report.scope else {
        return;
    };
    let only = if scope.is_partial() && comparison.is_some() {
        " (the gate compares these only)"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "**Selected:** {}{only}.\n",
        escape::prose(&scope.describe())
    );
}

/// The aggregates as a table; the gated ones with the baseline and the change.
fn metrics(out: &mut String, report: &Report, comparison: Option<&Comparison>) {
    let aggregates = &report.aggregates;
    let gated = |threshold: Threshold| {
        comparison.and_then(|c| c.metrics.iter().find(|m| m.threshold == threshold))
    };
    let rows = metric_rows(aggregates)
        .map(|(name, now, threshold)| (name, now, threshold.and_then(gated)));
    if comparison.is_some() {
        out.push_str("| Metric | Now | Baseline | Change | Gate |\n|---|--:|--:|---|---|\n");
    } else {
        out.push_str("| Metric | Now |\n|---|--:|\n");
    }
    let tool_tests = aggregates
        .tool_latency
        .map(|t| ("Tool tests p50 / p90 / p99", p50_p90_p99(t), None));
    let spent = spending_rows(report, &gated);
    for (name, now, delta) in rows.into_iter().chain(spent).chain(tool_tests) {
        match (comparison, delta) {
            (None, _) => {
                let _ = writeln!(out, "| {name} | {now} |");
            }
            (Some(_), None) => {
                let _ = writeln!(out, "| {name} | {now} | | | |");
            }
            (Some(_), Some(delta)) => {
                let _ = writeln!(
                    out,
                    "| {name} | {now} | {} | {} | {} |",
                    baseline_value(delta),
                    change(delta),
                    gate(delta)
                );
            }
        }
    }
    if let Some(combined) = comparison.and_then(|c| c.combined.as_ref()) {
        let _ = writeln!(
            out,
            "| Cases combined | {} | | | {} |",
            super::plural(combined.cases as usize, "case"),
            self::gate::combined(combined)
        );
    }
    out.push('\n');
}

/// The metrics table's rows of what the run spent: tokens and cost, and the cost and tokens
/// per conversation when the gate compares them.
fn spending_rows<'c>(
    report: &Report,
    gated: &dyn Fn(Threshold) -> Option<&'c MetricDelta>,
) -> Vec<(&'static str, String, Option<&'c MetricDelta>)> {
    let tokens = report.aggregates.tokens;
    let mut rows = vec![
        (
            "Tokens in / out",
            format!(
                "{} / {}",
                thousands(tokens.input_tokens),
                thousands(tokens.output_tokens)
            ),
            None,
        ),
        (
            "Cost",
            super::cost_line(report).unwrap_or_else(|| "not reported".to_owned()),
            None,
        ),
    ];
    let per_conversation = [
        ("Cost per conversation", Threshold::CostIncreasePct),
        ("Tokens per conversation", Threshold::TokensIncreasePct),
    ];
    for (name, threshold) in per_conversation {
        if let Some(delta) = gated(threshold) {
            let now = delta.current.map_or_else(
                || "n/a".to_owned(),
                |v| super::metric_value(threshold.measure(), v),
            );
            rows.push((name, now, Some(delta)));
        }
    }
    rows
}

/// One folded block per failing or errored case; those that fail the run first.
fn failures(body: &mut Body, summary: &Summary, path: &dyn Fn(&str) -> String) {
    let mut bad: Vec<(&CaseResult, Standing)> = (summary.report.cases.iter())
        .filter(|c| c.status.is_bad())
        .map(|c| (c, summary.standing(c)))
        .collect();
    // Stable: within each group the report's order is kept.
    bad.sort_by_key(|&(_, standing)| match standing {
        Standing::Blocks => 0,
        Standing::Errored => 1,
        _ => 2,
    });
    let newly = |case: &CaseResult| {
        (summary.report.gate.as_ref())
            .is_some_and(|g| g.newly_failing.iter().any(|f| f.key() == case.key()))
    };
    let items = bad
        .iter()
        .map(|&(c, standing)| failure(c, &path(&c.file), standing, newly(c)))
        .collect();
    body.section(
        format!("#### Failures ({})\n\n", bad.len()),
        items,
        "failing cases",
    );
}

fn failure(case: &CaseResult, file: &str, standing: Standing, newly: bool) -> String {
    let mut out = String::new();
    let icon = match standing {
        Standing::Errored => "⚠️",
        Standing::Excused(_) => "🟡",
        _ => "❌",
    };
    let _ = write!(
        out,
        "<details><summary>{icon} {} · {}",
        escape::html_code(&case.id),
        escape::html_code(&format!("{file}:{}", case.line))
    );
    if newly {
        out.push_str(" · newly failing");
    }
    if let Standing::Excused(excuse) = standing {
        let _ = write!(out, " · not blocking: {}", excuse.describe());
    }
    out.push_str("</summary>\n\n");
    if case.name != case.id {
        let _ = writeln!(out, "{}\n", short(&case.name));
    }
    if let Some(error) = &case.error {
        let _ = writeln!(out, "**Error of the run:** {}\n", short(error));
    }
    if let Some(quarantine) = case.expired_quarantine() {
        let _ = writeln!(out, "{}\n", short(&quarantine.describe()));
    }
    let bad_turns: Vec<&TurnResult> = case.turns.iter().filter(|t| t.status.is_bad()).collect();
    for turn in bad_turns.iter().take(TURNS_SHOWN) {
        let _ = writeln!(
            out,
            "**Turn {}** (line {}): {}\n",
            turn.index,
            turn.line,
            turn.status.name()
        );
        let _ = writeln!(out, "Input:\n\n{}", text_block(&turn.input));
        if let Some(error) = turn
            .error
            .as_ref()
            .filter(|&e| Some(e) != case.error.as_ref())
        {
            let _ = writeln!(out, "Error: {}\n", short(error));
        }
        checks(&mut out, &turn.checks);
    }
    if bad_turns.len() > TURNS_SHOWN {
        let _ = writeln!(
            out,
            "…and {} more failing turns.\n",
            bad_turns.len() - TURNS_SHOWN
        );
    }
    if case.checks.iter().any(|c| c.status.is_bad()) {
        out.push_str("**Conversation checks**\n\n");
        checks(&mut out, &case.checks);
    }
    out.push_str("</details>\n\n");
    out
}

/// The end of a command agent's stderr, folded, when a case errored: often the reason why.
fn agent_log(body: &mut Body, report: &Report) {
    let Some((lines, total)) = agent_log_tail(report) else {
        return;
    };
    let tail = lines.join("\n");
    // The end of a log says the most: a long tail loses its start.
    let mut start = tail.len().saturating_sub(LOG_LIMIT);
    while !tail.is_char_boundary(start) {
        start += 1;
    }
    let mut block = if lines.len() < total {
        format!(
            "<details><summary>Agent stderr (last {} lines)</summary>\n\n",
            lines.len()
        )
    } else {
        "<details><summary>Agent stderr</summary>\n\n".to_owned()
    };
    if start > 0 {
        block.push_str("*…cut here: the start of these lines is in the JSON report.*\n\n");
    }
    block.push_str(&escape::fenced(&tail[start..]));
    block.push_str("\n</details>\n\n");
    body.section(String::new(), vec![block], "agent stderr");
}

fn checks(out: &mut String, checks: &[CheckResult]) {
    let bad: Vec<&CheckResult> = checks.iter().filter(|c| c.status.is_bad()).collect();
    for check in bad.iter().take(CHECKS_SHOWN) {
        let _ = write!(
            out,
            "{} ({}, line {}): **{}**",
            short(&check.label),
            escape::code_span(&check.method.to_string()),
            check.line,
            check.status.name()
        );
        match &check.reason {
            Some(reason) => {
                let _ = writeln!(out, ": {}\n", short(reason));
            }
            None => out.push_str("\n\n"),
        }
        let _ = writeln!(out, "Expected:\n\n{}", text_block(&check.expected));
        let _ = writeln!(out, "Actual:\n\n{}", text_block(&check.actual));
    }
    if bad.len() > CHECKS_SHOWN {
        let _ = writeln!(
            out,
            "…and {} more failing checks.\n",
            bad.len() - CHECKS_SHOWN
        );
    }
}

/// Outside text as one line of prose, cut at [`TEXT_LIMIT`].
fn short(text: &str) -> String {
    let (shown, left) = escape::cut(text, TEXT_LIMIT);
    let mut line = escape::prose(shown);
    if left > 0 {
        line.push('…');
    }
    line
}

/// Outside text in a fence, cut at [`TEXT_LIMIT`] with a note.
fn text_block(text: &str) -> String {
    if text.is_empty() {
        return "*(nothing)*\n".to_owned();
    }
    let (shown, left) = escape::cut(text, TEXT_LIMIT);
    let mut block = escape::fenced(shown);
    if left > 0 {
        let _ = writeln!(
            block,
            "*…cut here: {} more characters in the JSON report.*",
            thousands(left as u64)
        );
    }
    block
}

fn footer(out: &mut String, report: &Report, options: &Options) {
    let mut parts = Vec::new();
    if let Some(url) = options.run_url {
        parts.push(format!("[Workflow run](<{url}>)"));
    }
    // The foot is not budgeted: every outside text in it is cut short.
    parts.push(format!(
        "goldgate {}",
        escape::prose(escape::cut(&report.goldgate_version, 40).0)
    ));
    parts.push(format!(
        "agent {}",
        escape::code_span(escape::cut(&report.agent, 200).0)
    ));
    if let Some(none) = crate::report::no_judge(report) {
        if report.aggregates.checks.skipped > 0 {
            parts.push(escape::prose(escape::cut(&none, 300).0));
        }
    } else {
        let judges: Vec<String> = report
            .judges
            .iter()
            .take(5)
            .map(|j| escape::code_span(escape::cut(j, 100).0))
            .collect();
        parts.push(format!("judges {}", judges.join(", ")));
    }
    if let Some(shard) = &report.suite.shard {
        parts.push(format!("shard {shard}"));
    }
    let _ = writeln!(out, "<sub>{}</sub>", parts.join(" · "));
}

/// `12,345`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::report::duration;

    #[test]
    fn the_marker_cannot_be_closed_by_a_suite_name() {
        assert_eq!(
            marker("ci/goldgate-prod.yaml"),
            "<!-- goldgate:suite=ci/goldgate-prod.yaml -->"
        );
        assert_eq!(marker("a -->b"), "<!-- goldgate:suite=a%20--%3Eb -->");
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(65_536), "65,536");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(Unit::amount(Unit::PercentagePoints, 5.0), "5 pp");
        assert_eq!(Unit::amount(Unit::Percent, 158.04), "158%");
        assert_eq!(Unit::amount(Unit::PercentagePoints, 12.5), "12.5 pp");
        assert_eq!(duration(Duration::from_millis(480)), "480 ms");
        assert_eq!(duration(Duration::from_millis(12_345)), "12.3 s");
    }
}
