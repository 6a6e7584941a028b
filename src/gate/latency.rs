//! The latency thresholds (`p95LatencyIncreasePct`, `ttftP95IncreasePct`): is the agent
//! slower than the limit and the [`LATENCY_FLOOR`] allow, beyond noise?
//!
//! **What is shown.** The suite's p95 as the report's aggregates give it
//! ([`suite_percentiles`]): every case weighs as one run of it, however often it ran, so that
//! reruns of some cases cannot move it. The baseline's is taken the same way over the builds
//! of main it keeps. The metric's values and change are those two numbers, the same in every
//! output, and only a change beyond the limit and the floor can trip.
//!
//! **What is tested.** Each case's latencies now (every turn of every run) against its own in
//! the baseline, by the rank-sum test within each case summed over the cases
//! ([`stratified_rank_sum_worse`]). A case that answers in 100 ms is compared with itself,
//! never with one that answers in 600 ms, so a mixture of fast and slow cases cannot hide a
//! slowdown, and rerunning some cases only adds to their own comparison, so it cannot fake
//! one. Each latency now is divided by the limit's ratio (1.2 for +20%) first, so that the test
//! rejects only latencies that rose beyond the limit. Where the floor binds (a baseline p95
//! under 250 ms at +20%: 20% of it is less than 50 ms), a second test takes the floor off each
//! latency instead, and the p-value is the larger of the two, at the full rate (an
//! intersection–union test: rejecting needs both, so neither pays for the other) ([`Allowed`]).
//! Neither test blends the two: taking the smaller of `x / 1.2` and `x - 50` of each latency, as
//! the pooled test does, reads a fast turn 60 ms to 90 ms as faster (40 ms against 60), and
//! fast turns that got slower then hide slow turns that did too. Tested apart, a fast turn that
//! got slower says "slower" to the one test and at most "not beyond the floor" to the other;
//! never "faster". And the p95 shown must itself rise beyond the limit and the floor to trip.
//!
//! A baseline written before cases kept their times is compared pooled, as before ([`pooled`]),
//! and its evidence names those tests.

use super::metrics::{beyond_floor, smallest};
use super::{LATENCY_FLOOR, Look, Tested, beyond};
use crate::metrics::Timing;
use crate::results::{Evidence, MetricDelta, Report, Test, Threshold};
use crate::stats::{
    LatencyHistogram, QuantileTest, Stratum, quantile, quantile_worse, rank_sum_worse,
    stratified_rank_sum_worse,
};

/// The latency threshold of `delta` tested at `look`; `None` when nothing is there to test on
/// (the values decide).
pub(super) fn compare(look: Look<'_>, delta: &mut MetricDelta) -> Option<Tested> {
    let timing = match delta.threshold {
        Threshold::TtftP95IncreasePct => Timing::Ttft,
        _ => Timing::Latency,
    };
    let test = QuantileTest {
        quantile: 0.95,
        ratio_limit: 1.0 + delta.limit / 100.0,
        floor: LATENCY_FLOOR.as_secs_f64() * 1000.0,
        confidence: 1.0 - 2.0 * look.alpha,
        seed: 95,
    };
    if timing.kept_by(&look.gate.baseline.cases) && timing.kept_by(&look.current.cases) {
        case_by_case(look, delta, timing, &test)
    } else {
        pooled(look, delta, &test)
    }
}

/// Each case's latencies now against its own in the baseline (see the module docs).
fn case_by_case(
    look: Look<'_>,
    delta: &mut MetricDelta,
    timing: Timing,
    test: &QuantileTest,
) -> Option<Tested> {
    // Ascending, as a histogram gives them.
    let strata: Vec<Stratum> = super::paired(look.gate, look.current, |case, _| {
        let times = timing.of_case(case);
        (times.count() > 0).then(|| times.samples().collect())
    });
    let (before, now, change) = (delta.baseline?, delta.current?, delta.change?);
    let allowed = Allowed::at(before, test);
    let (p_value, best_p_value) = allowed.rose_beyond(&strata, 1.0)?;
    let worse = beyond(change, delta.limit) && beyond_floor(delta);
    // One run's p95 is rough: with runs left, a rise beyond half the limit (and half the
    // floor) stays open rather than clear.
    let open = !worse
        && look.runs_left > 0
        && change > delta.limit / 2.0
        && now - before > test.floor / 2.0;
    let samples = strata.iter().fold((0, 0), |(b, n), (before, now)| {
        (b + before.len() as u64, n + now.len() as u64)
    });
    delta.evidence = Some(Evidence {
        test: Test::CaseRankSum,
        p_value: Some(p_value),
        adjusted_p: None,
        effect: Some(change),
        interval: None,
        samples,
        detectable: look
            .wants_detectable(worse || open)
            .then(|| detectable_case_rise(&strata, allowed, look.alpha))
            .flatten(),
    });
    Some(tested(&look, (p_value, best_p_value), worse, open))
}

/// What "beyond the limit and the floor" takes of each case's latencies now: the limit's ratio
/// alone when it binds at the baseline's p95 (from 250 ms up at +20%, a rise beyond the limit
/// is beyond the floor too), both apart when the floor binds.
#[derive(Clone, Copy)]
struct Allowed {
    ratio: f64,
    /// Tested beside the ratio: the floor binds.
    floor: Option<f64>,
}

impl Allowed {
    fn at(baseline_p95: f64, test: &QuantileTest) -> Self {
        let floor_binds = baseline_p95 * (test.ratio_limit - 1.0) < test.floor;
        Self {
            ratio: test.ratio_limit,
            floor: floor_binds.then_some(test.floor),
        }
    }

    /// The p-value that each case's latencies now, made `rise` times slower, rose beyond what
    /// is allowed, with the smallest p-value these sample sizes could give. With the floor,
    /// two tests, divided by the ratio and less the floor, and the larger p-value at the full
    /// rate (an intersection–union test: rejecting needs both).
    fn rose_beyond(self, strata: &[Stratum], rise: f64) -> Option<(f64, f64)> {
        let moved = |allowed: &dyn Fn(f64) -> f64| -> Vec<Stratum> {
            strata
                .iter()
                .map(|(before, now)| {
                    let now = now.iter().map(|&x| allowed(x * rise)).collect();
                    (before.clone(), now)
                })
                .collect()
        };
        let ratio = stratified_rank_sum_worse(&moved(&|x| x / self.ratio))?;
        let Some(floor) = self.floor else {
            return Some(ratio);
        };
        let less_floor = stratified_rank_sum_worse(&moved(&|x| x - floor))?;
        Some((ratio.0.max(less_floor.0), ratio.1.max(less_floor.1)))
    }
}

/// The smallest rise, in percent, that the case-by-case test could show beyond noise at
/// `alpha` with as many latencies of each case as now: each case's own baseline latencies (at
/// evenly spaced quantiles) made that much slower. `None` when not even a hundredfold rise
/// would show.
fn detectable_case_rise(strata: &[Stratum], allowed: Allowed, alpha: f64) -> Option<f64> {
    let typical: Vec<Stratum> = strata
        .iter()
        .map(|(before, now)| {
            let runs = now.len();
            let spread = (0..runs).filter_map(|i| quantile(before, (i as f64 + 0.5) / runs as f64));
            (before.clone(), spread.collect())
        })
        .collect();
    let shows = |rise: f64| {
        allowed
            .rose_beyond(&typical, 1.0 + rise / 100.0)
            .is_some_and(|(p, _)| p <= alpha)
    };
    smallest(shows, 10_000.0)
}

/// The suite's latencies pooled, against the baseline's: for a baseline written before cases
/// kept their times. Mood's quantile test of the p95 and the rank-sum test of the whole sample,
/// each at half the metric's rate. A mixture of fast and slow cases, and reruns of some of
/// them, move these: the case-by-case test replaces them wherever it can.
fn pooled(look: Look<'_>, delta: &mut MetricDelta, test: &QuantileTest) -> Option<Tested> {
    let threshold = delta.threshold;
    let histogram = |report: &Report| -> LatencyHistogram {
        match threshold {
            Threshold::TtftP95IncreasePct => report.samples.ttft.clone(),
            _ => report.samples.latency.clone(),
        }
    };
    // Ascending, as a histogram gives them: the medians and quantiles below read them as is.
    let before: Vec<f64> = histogram(&look.gate.baseline).samples().collect();
    let now: Vec<f64> = histogram(look.current).samples().collect();
    let found = quantile_worse(&before, &now, test)?;
    let whole = WholeSample::of(&before, &now, test)?;
    // Either test may show the rise: two looks at one metric, so each counts at half the
    // metric's rate (Bonferroni), and the run's Holm then treats the pair as one p-value.
    let p_value = (2.0 * found.p_value.min(whole.p_value)).min(1.0);
    let best_p_value = (2.0 * found.best_p_value.min(whole.best_p_value)).min(1.0);
    let percent = |ratio: f64| (ratio - 1.0) * 100.0;
    // Against such a baseline the metric shown is the one tested: the pooled p95.
    delta.baseline = Some(found.before);
    delta.current = Some(found.now);
    delta.change = Some(threshold.worsening(found.before, found.now));
    delta.evidence = Some(Evidence {
        test: if whole.p_value < found.p_value {
            Test::RankSum
        } else {
            Test::Quantile
        },
        p_value: Some(p_value),
        adjusted_p: None,
        effect: delta.change,
        interval: Some((
            percent(found.ratio_interval.lo),
            percent(found.ratio_interval.hi),
        )),
        samples: (before.len() as u64, now.len() as u64),
        detectable: None,
    });
    let change = delta.change.unwrap_or_default();
    let worse = (beyond(change, delta.limit) && found.exceeds_floor) || whole.moved_beyond;
    // A p95 or a median of one latency a case is rough: with runs left, either measuring
    // worse than half the limit (and half the floor) stays open rather than clear.
    let half_worse = |before: f64, now: f64| {
        threshold.worsening(before, now) > delta.limit / 2.0 && now - before > test.floor / 2.0
    };
    let open = !worse
        && look.runs_left > 0
        && (half_worse(found.before, found.now) || half_worse(whole.median.0, whole.median.1));
    if let Some(evidence) = delta
        .evidence
        .as_mut()
        .filter(|_| look.wants_detectable(worse || open))
    {
        evidence.detectable = detectable_rise(&before, now.len(), test, look.alpha);
    }
    Some(tested(&look, (p_value, best_p_value), worse, open))
}

/// The rank-sum test of the whole sample: each latency now, divided by the limit's ratio and
/// less the floor (the smaller), against the baseline's. Rejecting says that latencies rose
/// beyond both the limit and the floor, whatever the tail did.
struct WholeSample {
    p_value: f64,
    best_p_value: f64,
    /// The median rose beyond the limit and the floor, as measured.
    moved_beyond: bool,
    /// The medians, before and now.
    median: (f64, f64),
}

impl WholeSample {
    fn of(before: &[f64], now: &[f64], test: &QuantileTest) -> Option<Self> {
        let (p_value, best_p_value) = rank_sum_worse(before, &scaled(now, test))?;
        let (was, is) = (quantile(before, 0.5)?, quantile(now, 0.5)?);
        Some(Self {
            p_value,
            best_p_value,
            moved_beyond: is > was * test.ratio_limit && is - was > test.floor,
            median: (was, is),
        })
    }
}

/// Latencies as the whole-sample test compares them with the baseline's.
fn scaled(now: &[f64], test: &QuantileTest) -> Vec<f64> {
    now.iter()
        .map(|&x| (x / test.ratio_limit).min(x - test.floor))
        .collect()
}

/// The smallest rise, in percent, that `runs` latencies could show beyond noise at `alpha`:
/// the baseline's own distribution (at `runs` evenly spaced quantiles) made that much slower,
/// against the baseline. `None` when not even a hundredfold rise would show.
fn detectable_rise(before: &[f64], runs: usize, test: &QuantileTest, alpha: f64) -> Option<f64> {
    let typical: Vec<f64> = (0..runs)
        .filter_map(|i| quantile(before, (i as f64 + 0.5) / runs as f64))
        .collect();
    let shows = |rise: f64| {
        let slower: Vec<f64> = typical.iter().map(|x| x * (1.0 + rise / 100.0)).collect();
        rank_sum_worse(before, &scaled(&slower, test)).is_some_and(|(p, _)| 2.0 * p <= alpha)
    };
    smallest(shows, 10_000.0)
}

/// What a latency test found at `look`, its p-value and the best one the latencies could
/// have given.
fn tested(look: &Look<'_>, (p_value, best_p_value): (f64, f64), worse: bool, open: bool) -> Tested {
    Tested {
        p_value: Some(p_value),
        worse,
        open,
        // More runs bring more latencies, which can reach any level.
        reachable: best_p_value <= look.alpha || look.runs_left > 0,
        min_p: 0.0,
    }
}
