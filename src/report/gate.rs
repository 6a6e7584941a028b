//! The terminal rendering of the regression gate: each metric against the baseline with its
//! limit, the decision and its evidence, the cases that moved either way (with file and
//! line), what the run could not tell, then the verdict.
//!
//! ```text
//! Regression gate (baseline: baseline.json; false-alarm rate 1%)
//! ==============================================================
//! pass rate           100.0% -> 87.5%     dropped 12.5 pp (limit 0 pp)  REGRESSED
//!                     p = 0.00040 (adjusted 0.0020); interval 4.1 pp to 20.9 pp; 40 vs 40 judged runs
//! deflection rate     100.0% -> 100.0%    unchanged (limit 5 pp)        ok
//! p95 latency         3 ms -> 5 ms        rose 66.7% (limit 20%)        ok: within the 50 ms noise floor
//! p95 TTFT            not measured in the baseline or now: not compared
//! hallucination rate  not measured in the baseline or now: not compared
//! Newly failing (1):
//!   goldens/orders.yaml:12 order_not_found: passed -> failed
//!     decided by verdict: one run a side and no history
//! Gate: REGRESSED: passRateDropPp (pass rate dropped 12.5 pp, limit 0 pp); 1 case newly failing
//! ```
//!
//! Names and files come from report files, so they go through [`escape`] like agent text.

use std::io::{self, Write};

use super::console::escape;
use super::{MetricStanding, Summary};
use crate::gate::LATENCY_FLOOR;
use crate::results::Status;
use crate::results::{CaseFlip, CasesCombined, Comparison, Decision, MetricDelta, Threshold, Unit};

/// The rendering of a run's gate after a blank line, as it follows the table, ending with the
/// gate's line as the summary words it; says so when a regression does not decide the exit
/// status (`run` without `--fail-on-regress`).
pub fn write_after_table(summary: &Summary, out: &mut impl Write) -> io::Result<()> {
    let Some(comparison) = &summary.report.gate else {
        return Ok(());
    };
    writeln!(out)?;
    write_body(comparison, out)?;
    if let Some(line) = summary.gate_line() {
        writeln!(out, "Gate: {line}")?;
    }
    if !summary.report.policy.fail_on_regress && comparison.regressed() {
        writeln!(
            out,
            "(without --fail-on-regress the gate does not decide the exit status; failed cases do)"
        )?;
    }
    Ok(())
}

/// Writes the whole rendering of `comparison`, with the gate's own verdict (`compare`: two
/// reports and no run).
pub fn write(comparison: &Comparison, out: &mut impl Write) -> io::Result<()> {
    write_body(comparison, out)?;
    writeln!(out, "Gate: {}", verdict(comparison))
}

/// Everything but the gate's line.
fn write_body(comparison: &Comparison, out: &mut impl Write) -> io::Result<()> {
    let title = format!(
        "Regression gate (baseline: {}; false-alarm rate {})",
        escape(&comparison.baseline),
        Unit::Percent.amount(comparison.false_alarm_rate * 100.0)
    );
    writeln!(out, "{title}\n{}", "=".repeat(title.chars().count()))?;
    // The thresholds on by default set the column, so that it does not move between runs;
    // one turned on (cost, tokens) widens it.
    let always = Threshold::ALL
        .into_iter()
        .filter(|t| t.default_limit().is_some());
    let width = always
        .chain(comparison.metrics.iter().map(|m| m.threshold))
        .map(|t| t.metric().len())
        .chain(
            comparison
                .combined
                .as_ref()
                .map(|_| CasesCombined::NAME.len()),
        )
        .max()
        .unwrap_or(0);
    for delta in &comparison.metrics {
        writeln!(
            out,
            "{:<width$}  {}",
            delta.threshold.metric(),
            metric_line(delta)
        )?;
        if let Some(evidence) = delta
            .evidence_words()
            .filter(|_| delta.decision != Decision::Clear)
        {
            writeln!(out, "{:<width$}  {evidence}", "")?;
        }
    }
    if let Some(combined) = &comparison.combined {
        writeln!(
            out,
            "{:<width$}  {}",
            CasesCombined::NAME,
            combined_line(combined)
        )?;
        if combined.decision != Decision::Clear {
            let evidence = combined.evidence.describe(Unit::PercentagePoints);
            writeln!(out, "{:<width$}  {evidence}", "")?;
        }
    }
    if let Some(sight) = &comparison.sight {
        writeln!(out, "Would catch: {}", escape(&sight.describe()))?;
    }
    write_flips("Newly failing", &comparison.newly_failing, out)?;
    write_flips("Looks worse, undecided", &comparison.undecided, out)?;
    write_flips(
        "Known failures, failing on main too (not blocking)",
        &comparison.known_failures,
        out,
    )?;
    write_flips("Quarantined (not blocking)", &comparison.quarantined, out)?;
    write_flips("Newly passing", &comparison.newly_passing, out)?;
    if comparison.extra_runs > 0 {
        writeln!(
            out,
            "Adaptive repeats: {} extra run(s) to settle open decisions",
            comparison.extra_runs
        )?;
    }
    for note in &comparison.notes {
        writeln!(out, "Note: {note}")?;
    }
    if !comparison.missing.is_empty() {
        writeln!(
            out,
            "In the baseline, not run now ({}): {}",
            comparison.missing.len(),
            escape(&comparison.missing.join(", "))
        )?;
    }
    Ok(())
}

/// One line: the two values, the change against the limit, and whether it tripped.
fn metric_line(delta: &MetricDelta) -> String {
    let unit = delta.threshold.unit();
    let (Some(before), Some(now), Some(change)) = (delta.baseline, delta.current, delta.change)
    else {
        return delta.not_compared().unwrap_or_default();
    };
    let measure = delta.threshold.measure();
    let values = format!(
        "{} -> {}",
        super::metric_value(measure, before),
        super::metric_value(measure, now)
    );
    let change = format!(
        "{} (limit {})",
        describe(delta.threshold, change),
        Unit::amount(unit, delta.limit)
    );
    let verdict = match MetricStanding::of(delta) {
        MetricStanding::Regressed => "REGRESSED".to_owned(),
        MetricStanding::Open(decision) => decision.name().to_uppercase(),
        MetricStanding::WithinLatencyFloor => format!(
            "ok: within the {} ms noise floor",
            LATENCY_FLOOR.as_millis()
        ),
        MetricStanding::WithinCaseByCase => "ok: within the limit, case by case".to_owned(),
        MetricStanding::WorseWithin | MetricStanding::Within | MetricStanding::NotCompared => {
            "ok".to_owned()
        }
    };
    format!("{values:<18}  {change:<28}  {verdict}")
}

/// The combined test's line: how many cases it tested, and the decision.
fn combined_line(combined: &CasesCombined) -> String {
    let what = format!(
        "{} tested together",
        super::plural(combined.cases as usize, "case")
    );
    let verdict = match combined.decision {
        Decision::Clear => "ok".to_owned(),
        decision => decision.name().to_uppercase(),
    };
    format!("{what:<48}  {verdict}")
}

/// The change in words: `dropped 12.5 pp`, `rose 66.7%`, `unchanged`.
pub(super) fn describe(threshold: Threshold, worsening: f64) -> String {
    if worsening.abs() < 1e-9 {
        return "unchanged".to_owned();
    }
    // Pass and deflection rates get worse by dropping; the others by rising.
    let worse_is_drop = matches!(
        threshold,
        Threshold::PassRateDropPp | Threshold::DeflectionDropPp
    );
    let verb = if (worsening > 0.0) == worse_is_drop {
        "dropped"
    } else {
        "rose"
    };
    format!("{verb} {}", Unit::amount(threshold.unit(), worsening.abs()))
}

fn write_flips(title: &str, flips: &[CaseFlip], out: &mut impl Write) -> io::Result<()> {
    if flips.is_empty() {
        return Ok(());
    }
    writeln!(out, "{title} ({}):", flips.len())?;
    for flip in flips {
        let mut line = format!(
            "  {}:{} {}",
            escape(&flip.file),
            flip.line,
            escape(&flip.id)
        );
        if flip.name != flip.id {
            line.push_str(&format!(" ({})", escape(&flip.name)));
        }
        let before = flip.baseline.map_or("new", Status::name);
        line.push_str(&format!(": {before} -> {}", flip.current.name()));
        if let Some((before, now)) = flip.pass_fraction {
            line.push_str(&format!(
                " (runs passed: {:.0}% -> {:.0}%)",
                before * 100.0,
                now * 100.0
            ));
        }
        if flip.decision.is_undecided() {
            line.push_str(&format!(": {}", flip.decision.name()));
        }
        writeln!(out, "{line}")?;
        if let Some(evidence) = &flip.evidence {
            writeln!(out, "    {}", evidence.describe(Unit::PercentagePoints))?;
        }
        if let Some(quarantine) = &flip.quarantine {
            writeln!(out, "    {}", escape(&quarantine.describe()))?;
        }
    }
    Ok(())
}

/// `REGRESSED: what tripped` or `no regression`.
pub(super) fn verdict(comparison: &Comparison) -> String {
    if !comparison.regressed() {
        return match comparison.undecided_count() {
            0 => "no regression (no threshold tripped, no case newly failing)".to_owned(),
            n => format!(
                "no regression shown: {n} comparison(s) inconclusive or short of runs (see above)"
            ),
        };
    }
    let mut reasons: Vec<String> = comparison.tripped().map(tripped_words).collect();
    if comparison.combined_decision() == Some(Decision::Regressed) {
        reasons.push(combined_regressed_words());
    }
    let failing = comparison.newly_failing.len();
    if failing > 0 {
        reasons.push(format!("{} newly failing", super::plural(failing, "case")));
    }
    format!("REGRESSED: {}", reasons.join("; "))
}

/// A tripped threshold in words, as the gate's line names it: `p95LatencyIncreasePct (p95
/// latency rose 193.1%, limit 20%)`.
pub fn tripped_words(delta: &MetricDelta) -> String {
    format!(
        "{} ({} {}, limit {})",
        delta.threshold.name(),
        delta.threshold.metric(),
        delta
            .change
            .map_or_else(String::new, |c| describe(delta.threshold, c)),
        Unit::amount(delta.threshold.unit(), delta.limit)
    )
}

/// The combined test's regression in words, as the gate's line names it.
pub fn combined_regressed_words() -> String {
    format!(
        "{} (several cases each worse, together beyond noise)",
        CasesCombined::NAME
    )
}

#[cfg(test)]
mod tests {
    use super::{describe, write};
    use crate::results::Status;
    use crate::results::{
        CaseFlip, Comparison, Decision, Evidence, MetricDelta, Test, Threshold, Unit,
    };

    fn render(comparison: &Comparison) -> String {
        let mut out = Vec::new();
        write(comparison, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The pass rate dropped 12.5 pp against a limit of 0, decided by the stratified test.
    fn pass_rate_regressed() -> MetricDelta {
        MetricDelta {
            threshold: Threshold::PassRateDropPp,
            baseline: Some(1.0),
            current: Some(0.875),
            change: Some(12.5),
            limit: 0.0,
            tripped: true,
            decision: Decision::Regressed,
            evidence: Some(Evidence {
                test: Test::Stratified,
                p_value: Some(0.0004),
                adjusted_p: Some(0.002),
                effect: Some(12.5),
                interval: Some((4.1, 20.9)),
                samples: (40, 40),
                detectable: None,
            }),
            unmeasured: None,
        }
    }

    /// p95 latency rose 66.7%, but within the noise floor: not tripped.
    fn latency_within_noise() -> MetricDelta {
        MetricDelta {
            threshold: Threshold::P95LatencyIncreasePct,
            baseline: Some(3.0),
            current: Some(5.0),
            change: Some(66.66),
            limit: 20.0,
            tripped: false,
            decision: Decision::Clear,
            evidence: None,
            unmeasured: None,
        }
    }

    /// TTFT measured now but not in the baseline.
    fn ttft_unmeasured_before() -> MetricDelta {
        MetricDelta {
            threshold: Threshold::TtftP95IncreasePct,
            baseline: None,
            current: Some(40.0),
            change: None,
            limit: 20.0,
            tripped: false,
            decision: Decision::Clear,
            evidence: None,
            unmeasured: None,
        }
    }

    /// A case the baseline does not have, failing now.
    fn new_case_failing() -> CaseFlip {
        CaseFlip {
            id: "order_not_found".to_owned(),
            name: "order_not_found".to_owned(),
            file: "goldens/orders.yaml".to_owned(),
            line: 12,
            baseline: None,
            current: Status::Failed,
            pass_fraction: None,
            decision: Decision::Regressed,
            evidence: Some(Evidence {
                test: Test::Verdicts,
                p_value: None,
                adjusted_p: None,
                effect: None,
                interval: None,
                samples: (0, 1),
                detectable: None,
            }),
            quarantine: None,
        }
    }

    #[test]
    fn says_what_tripped_by_how_much_and_which_cases_flipped() {
        let comparison = Comparison {
            baseline: "base\u{1b}line.json".to_owned(),
            metrics: vec![
                pass_rate_regressed(),
                latency_within_noise(),
                ttft_unmeasured_before(),
            ],
            newly_failing: vec![new_case_failing()],
            missing: vec!["goldens/orders.yaml#old".to_owned()],
            notes: vec!["1 case(s) ran once".to_owned()],
            ..Comparison::default()
        };
        let text = render(&comparison);
        for words in [
            "baseline: base\\u{1b}line.json; false-alarm rate 1%",
            "100.0% -> 87.5%     dropped 12.5 pp (limit 0 pp)  REGRESSED\n                    \
             p = 0.00040 (adjusted 0.0020); interval 4.1 pp to 20.9 pp; 40 vs 40 judged runs",
            "rose 66.7% (limit 20%)        ok: within the 50 ms noise floor",
            "p95 TTFT            not measured in the baseline: not compared",
            "Newly failing (1):\n  goldens/orders.yaml:12 order_not_found: new -> failed\n    \
             decided by verdict: a new case must pass",
            "not run now (1): goldens/orders.yaml#old",
            "Gate: REGRESSED: passRateDropPp (pass rate dropped 12.5 pp, limit 0 pp); 1 case newly failing",
            "Note: 1 case(s) ran once",
        ] {
            assert!(text.contains(words), "{words:?} in {text}");
        }
        let quiet = render(&Comparison::default());
        assert!(
            quiet.ends_with("Gate: no regression (no threshold tripped, no case newly failing)\n")
        );
    }

    #[test]
    fn the_cases_combined_are_a_line_of_their_own_and_named_when_they_trip() {
        let combined = crate::results::CasesCombined {
            cases: 24,
            decision: Decision::Regressed,
            evidence: crate::results::Evidence {
                test: crate::results::Test::Combined,
                p_value: Some(0.0004),
                adjusted_p: Some(0.0008),
                effect: Some(3.0),
                interval: None,
                samples: (600, 300),
                detectable: None,
            },
        };
        let comparison = Comparison {
            combined: Some(combined),
            ..Comparison::default()
        };
        let text = render(&comparison);
        for words in [
            "cases combined      24 cases tested together",
            "REGRESSED\n                    p = 0.00040 (adjusted 0.00080); 600 vs 300 judged runs",
            "Gate: REGRESSED: cases combined (several cases each worse, together beyond noise)",
        ] {
            assert!(text.contains(words), "{words:?} in {text}");
        }
    }

    #[test]
    fn changes_read_in_the_direction_of_the_metric() {
        assert_eq!(describe(Threshold::PassRateDropPp, 5.0), "dropped 5 pp");
        assert_eq!(describe(Threshold::PassRateDropPp, -2.5), "rose 2.5 pp");
        assert_eq!(
            describe(Threshold::HallucinationRateIncreasePp, 3.0),
            "rose 3 pp"
        );
        assert_eq!(
            describe(Threshold::TtftP95IncreasePct, -50.0),
            "dropped 50%"
        );
        assert_eq!(describe(Threshold::DeflectionDropPp, 0.0), "unchanged");
        assert_eq!(Unit::amount(Unit::Percent, 20.0), "20%");
        // Rates from counts carry float noise: 1.0 - 0.95 is not exactly 0.05.
        assert_eq!(
            Unit::amount(Unit::PercentagePoints, 5.000000000000004),
            "5 pp"
        );
        assert_eq!(Unit::amount(Unit::Percent, 66.666), "66.7%");
    }
}
