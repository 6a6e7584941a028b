//! Each threshold's metric against the baseline, with its test.
//!
//! - Rates (`passRateDropPp`, `deflectionDropPp`, `hallucinationRateIncreasePp`): the exact
//!   stratified test over the cases both runs judged ([`stratified_worse`]), each case a
//!   stratum, so that cases with their own rates and histories of different lengths cannot
//!   fake a change. The pass rate counts runs: the baseline's (its history included) and the
//!   complete rounds of this run (every case run as often; adaptive reruns of single cases
//!   would otherwise weigh the cases that failed).
//! - Latencies (`p95LatencyIncreasePct`, `ttftP95IncreasePct`): each case's latencies against
//!   its own in the baseline ([`super::latency`]).

use super::{Gate, LATENCY_FLOOR, Look, Tested, beyond};
use crate::results::{
    CaseResult, CheckCategory, Evidence, Measure, MetricDelta, Report, Test, Threshold,
};
use crate::stats::{Tally, stratified_worse, worsening_interval};

/// `threshold`'s metric in `current` against the gate's baseline, tested at `alpha` (used
/// for the interval and for whether the test can reach it at all).
pub(super) fn compare(
    gate: &Gate,
    (threshold, limit): (Threshold, f64),
    current: &Report,
    runs_left: u32,
    alpha: f64,
) -> (MetricDelta, Tested) {
    let mut delta = unjudged(threshold, &gate.baseline, current, limit);
    let look = Look {
        gate,
        current,
        runs_left,
        alpha,
    };
    let tested = match threshold.measure() {
        Measure::Rate => rate(look, &mut delta),
        Measure::Milliseconds => super::latency::compare(look, &mut delta),
        Measure::Dollars | Measure::Tokens => super::spending::per_conversation(look, &mut delta),
    };
    let tested = tested.unwrap_or_else(|| by_values(&mut delta));
    (delta, tested)
}

/// No test is possible (nothing measured on one side, or no samples in the baseline): the
/// values decide, as gecx's gate does.
fn by_values(delta: &mut MetricDelta) -> Tested {
    let worse = delta.measured_beyond_limit() && beyond_floor(delta);
    if worse {
        delta.evidence = Some(Evidence {
            test: Test::Values,
            p_value: None,
            adjusted_p: None,
            effect: delta.change,
            interval: None,
            samples: (1, 1),
            detectable: None,
        });
    }
    Tested {
        p_value: None,
        worse,
        open: false,
        reachable: true,
        min_p: 0.0,
    }
}

pub(super) fn beyond_floor(delta: &MetricDelta) -> bool {
    match (delta.threshold.measure(), delta.baseline, delta.current) {
        (Measure::Milliseconds, Some(before), Some(now)) => {
            now - before > LATENCY_FLOOR.as_millis() as f64
        }
        _ => true,
    }
}

/// The metric as the two reports' aggregates give it, not yet decided.
fn unjudged(threshold: Threshold, baseline: &Report, current: &Report, limit: f64) -> MetricDelta {
    let (before, now) = (
        threshold.value(&baseline.aggregates),
        threshold.value(&current.aggregates),
    );
    MetricDelta {
        threshold,
        baseline: before,
        current: now,
        change: before.zip(now).map(|(b, n)| threshold.worsening(b, n)),
        limit,
        tripped: false,
        decision: Default::default(),
        evidence: None,
        unmeasured: [(current, ""), (baseline, " (in the baseline)")]
            .iter()
            .find_map(|(report, side)| {
                report
                    .why_unmeasured(threshold)
                    .map(|why| format!("{why}{side}"))
            }),
    }
}

/// The cases both reports judged, as (baseline, now) tallies of the rate's good outcomes.
fn strata(
    gate: &Gate,
    current: &Report,
    good: impl Fn(&CaseResult, bool) -> Tally,
) -> Vec<(Tally, Tally)> {
    super::paired(gate, current, |case, baseline| Some(good(case, baseline)))
}

/// The runs every case of `report` had: its complete rounds.
pub(super) fn rounds(report: &Report) -> usize {
    report.cases.iter().map(CaseResult::runs).min().unwrap_or(0)
}

fn rate(look: Look<'_>, delta: &mut MetricDelta) -> Option<Tested> {
    let threshold = delta.threshold;
    let rounds = rounds(look.current);
    let strata = match threshold {
        Threshold::PassRateDropPp => strata(look.gate, look.current, |case, baseline| {
            if baseline {
                case.tally_with_history()
            } else {
                case.tally_of_first(rounds)
            }
        }),
        Threshold::DeflectionDropPp => strata(look.gate, look.current, |case, _| deflected(case)),
        _ => strata(look.gate, look.current, |case, _| clean(case)),
    };
    let p_value = stratified_worse(&strata)?;
    let (before, now) = strata
        .iter()
        .filter(|(b, n)| b.judged > 0 && n.judged > 0)
        .fold((Tally::default(), Tally::default()), |(b, n), &(cb, cn)| {
            (b + cb, n + cn)
        });
    let effect = (before.fraction()? - now.fraction()?) * 100.0;
    // The most extreme result these runs (and the rounds left) could give: every run failing.
    let extreme: Vec<(Tally, Tally)> = strata
        .iter()
        .map(|&(b, n)| {
            let judged = n
                .judged
                .saturating_add(if n.judged > 0 { look.runs_left } else { 0 });
            (b, Tally { passed: 0, judged })
        })
        .collect();
    let interval = worsening_interval(before, now, 1.0 - 2.0 * look.alpha)
        .map(|i| (i.lo * 100.0, i.hi * 100.0));
    let worse = beyond(effect, delta.limit);
    delta.evidence = Some(Evidence {
        test: Test::Stratified,
        p_value: Some(p_value),
        adjusted_p: None,
        effect: Some(effect),
        interval,
        samples: (u64::from(before.judged), u64::from(now.judged)),
        detectable: look
            .wants_detectable(worse)
            .then(|| detectable_drop(&strata, look.alpha))
            .flatten(),
    });
    Some(Tested {
        p_value: Some(p_value),
        worse,
        open: false,
        reachable: stratified_worse(&extreme).is_some_and(|p| p <= look.alpha),
        min_p: 0.0,
    })
}

/// The smallest drop, in points, of a rate's good outcomes that these strata's runs could show
/// beyond noise at `alpha`: each case's baseline rate, that much lower, on the runs it had now.
/// `None` when not even every run going bad would show.
fn detectable_drop(strata: &[(Tally, Tally)], alpha: f64) -> Option<f64> {
    let shows = |drop: f64| {
        let lowered: Vec<(Tally, Tally)> = strata
            .iter()
            .map(|&(before, now)| {
                let rate = before.fraction().unwrap_or(0.0) - drop / 100.0;
                let passed = (rate.max(0.0) * f64::from(now.judged)).round() as u32;
                (
                    before,
                    Tally {
                        passed,
                        judged: now.judged,
                    },
                )
            })
            .collect();
        stratified_worse(&lowered).is_some_and(|p| p <= alpha)
    };
    smallest(shows, 100.0)
}

/// [`CaseResult::deflected`] as one outcome of one (none when it does not count).
fn deflected(case: &CaseResult) -> Tally {
    let counted = case.deflected();
    Tally {
        passed: u32::from(counted == Some(true)),
        judged: u32::from(counted.is_some()),
    }
}

/// The case's hallucination checks that found none, of those judged.
fn clean(case: &CaseResult) -> Tally {
    case.all_checks()
        .filter(|c| c.category == CheckCategory::Hallucination && c.status.is_judged())
        .fold(Tally::default(), |sum, c| {
            sum + Tally {
                passed: u32::from(!c.status.is_bad()),
                judged: 1,
            }
        })
}

/// The smallest amount in `0..=most` (to a whole unit, rounded up) for which `shows` holds,
/// where it holds of every larger amount once it holds of one; `None` when not even `most`.
pub(super) fn smallest(shows: impl Fn(f64) -> bool, most: f64) -> Option<f64> {
    if !shows(most) {
        return None;
    }
    let (mut low, mut high) = (0.0, most);
    while high - low > 0.5 {
        let middle = (low + high) / 2.0;
        if shows(middle) {
            high = middle;
        } else {
            low = middle;
        }
    }
    Some(high.ceil())
}
