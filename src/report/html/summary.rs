//! The top of the page, written from the typed results: the verdict, the aggregates, and the
//! regression gate (each threshold's metric before, now and its limit, and its decision with
//! the evidence; the cases newly failing, undecided or passing; the baseline's cases not run
//! now).

use std::fmt::Write as _;

use super::escape::text;
use crate::report::{
    MetricStanding, Summary, agent_log_tail, metric_rows, metric_value, p50_p90_p99, rate,
};
use crate::results::{CaseFlip, CasesCombined, Comparison, MetricDelta};
use crate::results::{Decision, Report, Unit};

/// The header, the aggregates and the gate panel.
pub fn write(page: &mut String, summary: &Summary) {
    let (report, counts) = (summary.report, &summary.counts);
    let _ = write!(
        page,
        "<header class=\"verdict {}\" id=\"verdict\">\n<h1>goldgate: {}</h1>\n",
        summary.severity.name(),
        text(&summary.headline)
    );
    let asides: String = (counts.asides().iter())
        .map(|aside| format!(" · {}", text(aside)))
        .collect();
    let _ = writeln!(
        page,
        "<p class=\"counts\"><b>{}</b> passed · <b>{}</b> failed · <b>{}</b> errors · <b>{}</b> skipped · {} turns{asides}</p>",
        counts.cases.passed,
        counts.cases.failed,
        counts.cases.errors,
        counts.cases.skipped,
        counts.turns
    );
    let mut about = vec![
        format!("agent {}", text(&report.agent)),
        format!("goldgate {}", text(&report.goldgate_version)),
    ];
    if let Some(shard) = &report.suite.shard {
        about.push(format!("shard {}", text(&shard.to_string())));
    }
    if let Some(scope) = &report.scope {
        about.push(text(&scope.describe()));
    }
    if report.judges.is_empty() {
        about.push("no LLM judge (judge checks skipped)".to_owned());
    } else {
        about.push(format!("judges {}", text(&report.judges.join(", "))));
    }
    let _ = writeln!(
        page,
        "<p class=\"about\">{}</p>\n</header>",
        about.join(" · ")
    );
    metrics(page, report);
    gate(page, report.gate.as_ref());
    if let Some((lines, total)) = agent_log_tail(report) {
        let _ = writeln!(
            page,
            "<section id=\"agent-log\"><h2>Agent stderr</h2><p>The last {} of {total} lines the agent wrote.</p><pre>{}</pre></section>",
            lines.len(),
            text(&lines.join("\n"))
        );
    }
}

fn metrics(page: &mut String, report: &Report) {
    let aggregates = &report.aggregates;
    let rows = metric_rows(aggregates).map(|(name, value, _)| (name, value));
    let more = [
        ("Flake rate", rate(aggregates.flake_rate)),
        (
            "Tokens in / out",
            format!(
                "{} / {}",
                aggregates.tokens.input_tokens, aggregates.tokens.output_tokens
            ),
        ),
        (
            "Cost",
            crate::report::cost_line(report).unwrap_or_else(|| "not reported".to_owned()),
        ),
    ];
    let tool_tests = aggregates
        .tool_latency
        .map(|t| ("Tool tests p50 / p90 / p99", p50_p90_p99(t)));
    page.push_str("<section id=\"metrics\"><h2>Aggregates</h2><dl class=\"metrics\">");
    for (name, value) in rows.into_iter().chain(more).chain(tool_tests) {
        let _ = write!(page, "<div><dt>{name}</dt><dd>{}</dd></div>", text(&value));
    }
    page.push_str("</dl></section>\n");
}

fn gate(page: &mut String, comparison: Option<&Comparison>) {
    page.push_str("<section id=\"gate\"><h2>Regression gate</h2>\n");
    let Some(comparison) = comparison else {
        page.push_str("<p>No baseline: run with <code>--baseline FILE</code> (a committed JSON report) to compare each metric and case with it.</p></section>\n");
        return;
    };
    let verdict = if comparison.regressed() {
        "<span class=\"badge failed\">regressed</span>"
    } else if comparison.undecided_count() > 0 {
        "<span class=\"badge warn\">no regression shown, undecided</span>"
    } else {
        "<span class=\"badge passed\">no regression</span>"
    };
    let _ = writeln!(
        page,
        "<p>{verdict} against the baseline <code>{}</code> at a {} false-alarm rate: a metric worse than its limit beyond noise, or a case that regressed, trips the gate.</p>",
        text(&comparison.baseline),
        text(&Unit::Percent.amount(comparison.false_alarm_rate * 100.0))
    );
    page.push_str("<table class=\"gate\"><thead><tr><th>Threshold</th><th>Metric</th><th class=\"num\">Baseline</th><th class=\"num\">Now</th><th class=\"num\">Worse by</th><th class=\"num\">Limit</th><th>Decision</th><th>Evidence</th></tr></thead><tbody>\n");
    for delta in &comparison.metrics {
        metric_row(page, delta);
    }
    if let Some(combined) = &comparison.combined {
        combined_row(page, combined);
    }
    page.push_str("</tbody></table>\n");
    if let Some(sight) = &comparison.sight {
        let _ = writeln!(
            page,
            "<p class=\"sight\">This gate would catch: {}.</p>",
            text(&sight.describe())
        );
    }
    flips(page, "Newly failing", "failed", &comparison.newly_failing);
    flips(
        page,
        "Looks worse, undecided",
        "warn",
        &comparison.undecided,
    );
    flips(
        page,
        "Known failures, failing on main too (not blocking)",
        "warn",
        &comparison.known_failures,
    );
    flips(
        page,
        "Quarantined (not blocking)",
        "warn",
        &comparison.quarantined,
    );
    flips(page, "Newly passing", "passed", &comparison.newly_passing);
    if comparison.extra_runs > 0 {
        let _ = writeln!(
            page,
            "<p>Adaptive repeats: {} extra run(s) to settle open decisions.</p>",
            comparison.extra_runs
        );
    }
    for note in &comparison.notes {
        let _ = writeln!(page, "<p class=\"note\">{}</p>", text(note));
    }
    if !comparison.missing.is_empty() {
        let _ = write!(
            page,
            "<h3>In the baseline, not run now ({})</h3><ul class=\"flips\">",
            comparison.missing.len()
        );
        for key in &comparison.missing {
            let _ = write!(page, "<li><code>{}</code></li>", text(key));
        }
        page.push_str("</ul>\n");
    }
    page.push_str("</section>\n");
}

fn metric_row(page: &mut String, delta: &MetricDelta) {
    let unit = delta.threshold.unit();
    let value = |v: Option<f64>| {
        v.map_or_else(
            || "not measured".to_owned(),
            |v| metric_value(delta.threshold.measure(), v),
        )
    };
    let standing = MetricStanding::of(delta);
    let (decision, class) = (standing.words(), standing.tone().name());
    let evidence = delta
        .evidence
        .as_ref()
        .map(|e| e.describe(unit))
        .or_else(|| delta.not_compared())
        .unwrap_or_default();
    let _ = writeln!(
        page,
        "<tr class=\"{class}\"><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td><span class=\"badge {class}\">{decision}</span></td><td class=\"evidence\">{}</td></tr>",
        delta.threshold.name(),
        delta.threshold.metric(),
        text(&value(delta.baseline)),
        text(&value(delta.current)),
        delta
            .change
            .map_or_else(|| "n/a".to_owned(), |c| text(&Unit::amount(unit, c))),
        text(&Unit::amount(unit, delta.limit)),
        text(&evidence),
    );
}

/// The combined test of every case, in the metrics' table: no values, limit or change of its
/// own (it asks whether the cases lean worse together).
fn combined_row(page: &mut String, combined: &CasesCombined) {
    let (decision, class) = match combined.decision {
        Decision::Regressed => ("regressed", "failed"),
        Decision::Inconclusive => ("inconclusive: could be noise", "warn"),
        Decision::NotEnoughRuns => ("not enough runs to tell", "warn"),
        Decision::Clear => ("no lean beyond noise", "passed"),
    };
    let _ = writeln!(
        page,
        "<tr class=\"{class}\"><td>{}</td><td>{} cases</td><td class=\"num\"></td><td class=\"num\"></td><td class=\"num\"></td><td class=\"num\"></td><td><span class=\"badge {class}\">{decision}</span></td><td class=\"evidence\">{}</td></tr>",
        text(CasesCombined::NAME),
        combined.cases,
        text(&combined.evidence.describe(Unit::PercentagePoints)),
    );
}

fn flips(page: &mut String, title: &str, class: &str, flips: &[CaseFlip]) {
    if flips.is_empty() {
        return;
    }
    let _ = write!(
        page,
        "<h3>{title} ({})</h3><ul class=\"flips {class}\">",
        flips.len()
    );
    for flip in flips {
        let evidence = flip
            .evidence_words()
            .map_or_else(String::new, |words| format!(" — {words}"));
        let _ = write!(
            page,
            "<li><code>{}</code> <span class=\"where\">{}:{}</span> ({}){}</li>",
            text(&flip.id),
            text(&flip.file),
            flip.line,
            text(&flip.movement()),
            text(&evidence)
        );
    }
    page.push_str("</ul>\n");
}

#[cfg(test)]
mod tests {
    use super::{gate, metric_row};
    use crate::results::{CaseFlip, Comparison, Decision, MetricDelta, Status, Threshold};

    fn delta(threshold: Threshold, change: Option<f64>, limit: f64, decision: Decision) -> String {
        let mut out = String::new();
        metric_row(
            &mut out,
            &MetricDelta {
                threshold,
                baseline: Some(1.0),
                current: Some(0.5),
                change,
                limit,
                tripped: decision == Decision::Regressed,
                decision,
                evidence: None,
                unmeasured: None,
            },
        );
        out
    }

    #[test]
    fn each_threshold_says_what_the_gate_decided() {
        use Decision::{Clear, Inconclusive, Regressed};
        use Threshold::{
            DeflectionDropPp, P95LatencyIncreasePct, PassRateDropPp, TtftP95IncreasePct,
        };
        let tripped = "<td class=\"num\">100.0%</td><td class=\"num\">50.0%</td><td class=\"num\">50 pp</td><td class=\"num\">0 pp</td><td><span class=\"badge failed\">regressed</span>";
        for (case, shown) in [
            ((PassRateDropPp, Some(50.0), 0.0, Regressed), tripped),
            (
                (PassRateDropPp, Some(50.0), 0.0, Inconclusive),
                "inconclusive: could be noise",
            ),
            (
                (P95LatencyIncreasePct, Some(275.0), 20.0, Clear),
                "within the latency noise floor",
            ),
            (
                (DeflectionDropPp, Some(2.0), 5.0, Clear),
                "worse, within the limit",
            ),
            // 0.1 + 0.2 points of drop against a 0.3 limit: at the limit, not over it.
            (
                (DeflectionDropPp, Some(0.1 + 0.2), 0.3, Clear),
                "worse, within the limit",
            ),
            (
                (DeflectionDropPp, Some(-2.0), 5.0, Clear),
                ">within the limit<",
            ),
            ((TtftP95IncreasePct, None, 20.0, Clear), "not compared"),
        ] {
            let (threshold, change, limit, decision) = case;
            let row = delta(threshold, change, limit, decision);
            assert!(row.contains(shown), "{case:?}: {row}");
        }
    }

    #[test]
    fn names_from_report_files_are_escaped() {
        let hostile = "<script>window.pwned=1</script>";
        let comparison = Comparison {
            baseline: hostile.to_owned(),
            metrics: Vec::new(),
            newly_failing: vec![CaseFlip {
                id: hostile.to_owned(),
                name: hostile.to_owned(),
                file: "<img src=x onerror=alert(1)>.yaml".to_owned(),
                line: 3,
                baseline: Some(Status::Passed),
                current: Status::Failed,
                pass_fraction: None,
                decision: Decision::Regressed,
                evidence: None,
                quarantine: None,
            }],
            missing: vec![format!("a.yaml#{hostile}")],
            ..Comparison::default()
        };
        let mut out = String::new();
        gate(&mut out, Some(&comparison));
        assert!(!out.contains("<script") && !out.contains("<img"), "{out}");
        for words in [
            "&lt;script&gt;window.pwned=1&lt;/script&gt;",
            "<span class=\"badge failed\">regressed</span>",
            "<h3>Newly failing (1)</h3>",
            "(passed → failed)",
            "<h3>In the baseline, not run now (1)</h3>",
        ] {
            assert!(out.contains(words), "{words:?} in {out}");
        }
    }
}
