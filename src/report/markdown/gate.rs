//! The gate's part of the Markdown summary: each gated metric's baseline, change and
//! decision with its evidence, and the cases that moved.

use super::body::Body;
use super::{FLIPS_SHOWN, escape};
use crate::report::{MetricStanding, metric_value};
use crate::results::{CaseFlip, CasesCombined, Comparison, Decision, Measure, MetricDelta, Unit};

/// A gated metric's value as the comparison holds it: a rate, or the p95 in milliseconds.
/// The latency thresholds compare p95s, so only the p95 is shown for the baseline.
pub(super) fn baseline_value(delta: &MetricDelta) -> String {
    let measure = delta.threshold.measure();
    match delta.baseline {
        None => "n/a".to_owned(),
        Some(v) if measure == Measure::Milliseconds => format!("p95 {}", metric_value(measure, v)),
        Some(v) => metric_value(measure, v),
    }
}

/// Which way the metric moved, and by how much in the threshold's unit.
pub(super) fn change(delta: &MetricDelta) -> String {
    let (Some(before), Some(now), Some(worse)) = (delta.baseline, delta.current, delta.change)
    else {
        return "n/a".to_owned();
    };
    let arrow = if now > before {
        "↑"
    } else if now < before {
        "↓"
    } else {
        "→"
    };
    format!(
        "{arrow} {}",
        Unit::amount(delta.threshold.unit(), worse.abs())
    )
}

pub(super) fn gate(delta: &MetricDelta) -> String {
    let standing = MetricStanding::of(delta);
    let evidence = delta
        .evidence_words()
        .filter(|_| delta.decision != Decision::Clear)
        .map_or_else(String::new, |e| format!(" ({})", escape::prose(&e)));
    let limit = Unit::amount(delta.threshold.unit(), delta.limit);
    let words = match standing {
        MetricStanding::Regressed => format!("regressed, beyond {limit}"),
        MetricStanding::Open(decision) => {
            format!("{}: worse than {limit}, could be noise", decision.name())
        }
        MetricStanding::WithinLatencyFloor => format!("within the noise floor, limit {limit}"),
        MetricStanding::WithinCaseByCase => format!("within {limit}, case by case"),
        MetricStanding::WorseWithin => format!("worse, within {limit}"),
        MetricStanding::Within => format!("within {limit}"),
        MetricStanding::NotCompared => {
            return escape::prose(&delta.not_compared().unwrap_or_default());
        }
    };
    format!("{} {words}{evidence}", standing.tone().sign())
}

/// The combined test of every case: its decision and, unless clear, its evidence.
pub(super) fn combined(combined: &CasesCombined) -> String {
    let evidence = escape::prose(&combined.evidence.describe(Unit::PercentagePoints));
    match combined.decision {
        Decision::Regressed => format!("❌ regressed, cases each worse add up ({evidence})"),
        Decision::Clear => "✅ no lean towards worse beyond noise".to_owned(),
        open => format!(
            "⚠️ {}: cases lean worse, could be noise ({evidence})",
            open.name()
        ),
    }
}

/// `12.5 pp`, `20%`: a change or a limit in its threshold's unit.
/// Newly failing, newly passing and missing cases, by name and place.
pub(super) fn flips(body: &mut Body, comparison: &Comparison, path: &dyn Fn(&str) -> String) {
    let item = |flip: &CaseFlip| {
        let evidence = flip
            .evidence_words()
            .map_or_else(String::new, |words| format!(" — {}", escape::prose(&words)));
        format!(
            "- {} {} ({}){evidence}\n",
            escape::code_span(&flip.id),
            escape::code_span(&format!("{}:{}", path(&flip.file), flip.line)),
            flip.movement(),
        )
    };
    for (flips, title, what) in [
        (
            &comparison.newly_failing,
            "Newly failing",
            "newly failing cases",
        ),
        (
            &comparison.undecided,
            "Looks worse, undecided",
            "undecided cases",
        ),
        (
            &comparison.known_failures,
            "Known failures (failing on main too; not blocking)",
            "known failures",
        ),
        (
            &comparison.quarantined,
            "Quarantined (not blocking)",
            "quarantined cases",
        ),
        (
            &comparison.newly_passing,
            "Newly passing",
            "newly passing cases",
        ),
    ] {
        let mut items: Vec<String> = flips.iter().take(FLIPS_SHOWN).map(item).collect();
        if flips.len() > FLIPS_SHOWN {
            items.push(format!("- …and {} more\n", flips.len() - FLIPS_SHOWN));
        }
        body.section(format!("#### {title} ({})\n\n", flips.len()), items, what);
    }
    if !comparison.missing.is_empty() {
        let mut items: Vec<String> = comparison
            .missing
            .iter()
            .take(FLIPS_SHOWN)
            .map(|key| format!("- {}\n", escape::code_span(key)))
            .collect();
        if comparison.missing.len() > FLIPS_SHOWN {
            items.push(format!(
                "- …and {} more\n",
                comparison.missing.len() - FLIPS_SHOWN
            ));
        }
        body.section(
            format!(
                "#### In the baseline, not run now ({})\n\n",
                comparison.missing.len()
            ),
            items,
            "cases not run",
        );
    }
}
