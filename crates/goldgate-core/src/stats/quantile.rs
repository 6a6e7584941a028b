//! Whether a latency quantile (the p95, say) got slower than a ratio limit allows, beyond noise.
//!
//! The test is an exceedance (placement) test: divide `now` by the ratio limit, take the
//! baseline's own `q`-quantile, its `k`-th smallest value, and count the values of the scaled
//! `now` strictly above it. When the scaled `now` has the same distribution as `before`
//! (slower by exactly the limit) the pooled values are exchangeable, and the count `M` has an
//! exact law whatever that distribution: `P(M = m) = C(k-1+n-m, n-m) · C(b-k+m, m) / C(b+n, n)`
//! for `b` values before and `n` now (the arrangements with `m` of `now` after the `k`-th of
//! `before`). It assumes no shape for the distribution, which for an agent's latency is
//! anything but normal. Values *equal* to the baseline's quantile are not above it: a local
//! agent answering 0 ms on both sides never trips.
//!
//! Why not Mood's test at the pooled quantile: it looks only at the top 5% of the pool, so 60
//! latencies a side can never reach 1% even when every one of `now` is slower than every one
//! of `before`; the baseline's own quantile keeps the whole of `now` in play.
//!
//! The p-value decides; the bootstrap interval of `q(now) / q(before)` is for the report.

use serde::Serialize;

use super::Interval;
use super::dist::ln_choose;
use super::sim::uniform_order_statistic;

/// Resamples of the bootstrap interval: a percentile interval's end moves by well under 1%
/// of its width between seeds at this count.
const RESAMPLES: usize = 2000;

/// What [`quantile_worse`] compares, and how it reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuantileTest {
    /// The quantile, in `[0, 1]`: 0.95 for the p95.
    pub quantile: f64,
    /// How many times slower `now` may be: 1.2 allows +20%. Must be positive.
    pub ratio_limit: f64,
    /// Increases of the point estimate up to this many units (those of the samples) are
    /// noise, whatever the test says ([`QuantileEvidence::exceeds_floor`]).
    pub floor: f64,
    /// The two-sided confidence of the ratio's interval, in `(0, 1)`.
    pub confidence: f64,
    /// The bootstrap's seed: the same inputs give the same report.
    pub seed: u64,
}

/// What [`quantile_worse`] found.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct QuantileEvidence {
    /// The baseline's quantile.
    pub before: f64,
    /// The quantile now.
    pub now: f64,
    /// `now / before`; 1 when both are 0, infinite when only `before` is.
    pub ratio: f64,
    /// The bootstrap percentile interval of the ratio at the test's confidence (its ends
    /// can be infinite when `before`'s quantile can be 0).
    pub ratio_interval: Interval,
    /// The one-sided p-value of "slower than the ratio limit allows".
    pub p_value: f64,
    /// The smallest p-value samples of these sizes can give (every value now above the
    /// baseline's quantile): above the level, no result could be beyond noise.
    pub best_p_value: f64,
    /// Whether `now - before` exceeds the test's floor.
    pub exceeds_floor: bool,
}

/// The nearest-rank `q`-quantile of `sorted` (ascending): the value at 1-based rank
/// `ceil(q·n)`, clamped to `1..=n`, so always one of the samples (the p95 of 10 latencies is
/// the largest one, and an even count's median is the lower middle, never an average). `None`
/// when `sorted` is empty or `q` is not in `[0, 1]`. The one percentile rule of goldgate: the
/// report's latencies, the latency scorers and the gate's tests all read it.
pub fn quantile<T: Copy>(sorted: &[T], q: f64) -> Option<T> {
    let rank = nearest_rank(sorted.len() as u64, q)?;
    sorted.get(usize::try_from(rank).ok()? - 1).copied()
}

/// The 1-based rank [`quantile`] takes among `n` values. `q·n` within 1e-9 of an integer
/// counts as that integer, so that 0.07·100 is rank 7, not 8.
pub(super) fn nearest_rank(n: u64, q: f64) -> Option<u64> {
    if n == 0 || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let rank = (q * n as f64 - 1e-9).ceil() as u64;
    Some(rank.clamp(1, n))
}

/// Tests whether `now`'s quantile exceeds `test.ratio_limit` times `before`'s beyond noise
/// (see the module docs). Non-finite samples are ignored. `None` when a side has no
/// samples or a parameter of `test` is out of range.
pub fn quantile_worse(
    before: &[f64],
    now: &[f64],
    test: &QuantileTest,
) -> Option<QuantileEvidence> {
    let in_range = test.ratio_limit > 0.0
        && test.ratio_limit.is_finite()
        && test.confidence > 0.0
        && test.confidence < 1.0;
    if !in_range {
        return None;
    }
    let (before, now) = (sorted_finite(before), sorted_finite(now));
    let before_q = quantile(&before, test.quantile)?;
    let now_q = quantile(&now, test.quantile)?;
    Some(QuantileEvidence {
        before: before_q,
        now: now_q,
        ratio: ratio(now_q, before_q),
        ratio_interval: bootstrap_ratio_interval(&before, &now, test)?,
        p_value: exceedance_p_value(&before, &now, test.quantile, test.ratio_limit)?,
        best_p_value: exceedance_tail(
            before.len() as u64,
            now.len() as u64,
            test.quantile,
            now.len() as u64,
        )?,
        exceeds_floor: now_q - before_q > test.floor,
    })
}

fn sorted_finite(samples: &[f64]) -> Vec<f64> {
    let mut finite: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    finite.sort_by(f64::total_cmp);
    finite
}

fn ratio(now: f64, before: f64) -> f64 {
    if before > 0.0 {
        now / before
    } else if now > before {
        f64::INFINITY
    } else {
        1.0
    }
}

/// The one-sided p-value that more of `now / ratio_limit` lies above `before`'s `q`-quantile
/// than chance gives (see the module docs). Both inputs sorted.
pub(super) fn exceedance_p_value(
    before: &[f64],
    now: &[f64],
    q: f64,
    ratio_limit: f64,
) -> Option<f64> {
    let k = nearest_rank(before.len() as u64, q)?;
    let split = before[usize::try_from(k).ok()? - 1];
    let above = now.iter().filter(|&&x| x / ratio_limit > split).count() as u64;
    exceedance_tail(before.len() as u64, now.len() as u64, q, above)
}

/// `P(M >= above)` for `b` values before and `n` now (see the module docs).
fn exceedance_tail(b: u64, n: u64, q: f64, above: u64) -> Option<f64> {
    let k = nearest_rank(b, q)?;
    if above == 0 {
        // The whole law: 1 exactly, not a sum that rounds below it.
        return Some(1.0);
    }
    let ln_total = ln_choose(b + n, n);
    let term =
        |m: u64| (ln_choose(k - 1 + n - m, n - m) + ln_choose(b - k + m, m) - ln_total).exp();
    Some((above..=n).map(term).sum::<f64>().min(1.0))
}

/// The bootstrap percentile interval of `q(now) / q(before)`. A resample's quantile is drawn
/// directly: the k-th smallest of n values resampled from `sorted` is the value at rank
/// `ceil(n·U)`, `U` the k-th smallest of n uniforms, so a resample costs two draws, not n.
fn bootstrap_ratio_interval(before: &[f64], now: &[f64], test: &QuantileTest) -> Option<Interval> {
    let mut rng = fastrand::Rng::with_seed(test.seed);
    let mut resampled_quantile = |sorted: &[f64]| -> Option<f64> {
        let n = sorted.len() as u64;
        let u = uniform_order_statistic(&mut rng, nearest_rank(n, test.quantile)?, n);
        let rank = ((u * n as f64).ceil() as u64).clamp(1, n);
        sorted.get(usize::try_from(rank).ok()? - 1).copied()
    };
    let mut ratios = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        let before_q = resampled_quantile(before)?;
        ratios.push(ratio(resampled_quantile(now)?, before_q));
    }
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - test.confidence) / 2.0;
    Some(Interval {
        lo: quantile(&ratios, tail)?,
        hi: quantile(&ratios, 1.0 - tail)?,
    })
}

#[cfg(test)]
mod tests {
    use super::{QuantileTest, exceedance_p_value, nearest_rank, quantile, quantile_worse};

    const P95: QuantileTest = QuantileTest {
        quantile: 0.95,
        ratio_limit: 1.2,
        floor: 50.0,
        confidence: 0.9,
        seed: 1,
    };

    #[test]
    fn nearest_rank_picks_a_sample() {
        let sorted: Vec<f64> = (1..=100).map(f64::from).collect();
        for (q, want) in [
            (0.95, 95.0),
            (0.07, 7.0),
            (0.071, 8.0),
            (0.0, 1.0),
            (1.0, 100.0),
        ] {
            assert_eq!(quantile(&sorted, q), Some(want), "{q}");
        }
        assert_eq!(quantile(&[3.0], 0.5), Some(3.0));
        assert_eq!(quantile::<f64>(&[], 0.5), None);
        // ceil(0.5 * 5) = 3rd, ceil(0.95 * 5) = 5th, ceil(0.2 * 5) = 1st exactly.
        let five = [10, 20, 30, 40, 50];
        for (q, want) in [(0.5, 30), (0.95, 50), (0.2, 10), (0.21, 20)] {
            assert_eq!(quantile(&five, q), Some(want), "{q}");
        }
        // An even count: the lower middle, never an average.
        assert_eq!(quantile(&[1, 2, 3, 4], 0.5), Some(2));
        assert_eq!(quantile(&sorted, 1.5), None);
        assert_eq!(nearest_rank(20, f64::NAN), None);
        assert_eq!(nearest_rank(20, 0.95), Some(19));
    }

    /// 1..=200, and each of them `factor` times.
    fn slowed(factor: f64) -> (Vec<f64>, Vec<f64>) {
        let before: Vec<f64> = (1..=200).map(f64::from).collect();
        let now = before.iter().map(|x| x * factor).collect();
        (before, now)
    }

    #[test]
    fn a_clear_slowdown_is_caught_and_reported() {
        let (before, now) = slowed(2.0);
        let evidence = quantile_worse(&before, &now, &P95).unwrap();
        assert_eq!(
            (evidence.before, evidence.now, evidence.ratio),
            (190.0, 380.0, 2.0)
        );
        assert!(
            evidence.p_value < 1e-6 && evidence.exceeds_floor,
            "{evidence:?}"
        );
        let interval = evidence.ratio_interval;
        assert!(
            interval.lo < 2.0 && 2.0 < interval.hi && interval.lo > 1.5,
            "{interval:?}"
        );
        // Seeded: the same inputs give the same report.
        assert_eq!(quantile_worse(&before, &now, &P95), Some(evidence));
    }

    #[test]
    fn within_the_limit_or_the_floor_is_not_worse() {
        let (before, now) = slowed(1.1);
        let evidence = quantile_worse(&before, &now, &P95).unwrap();
        assert!(
            evidence.p_value > 0.5 && !evidence.exceeds_floor,
            "{evidence:?}"
        );
    }

    #[test]
    fn ties_at_the_split_are_not_above_it() {
        let zeros = vec![0.0; 50];
        let evidence = quantile_worse(&zeros, &zeros, &P95).unwrap();
        assert_eq!((evidence.ratio, evidence.p_value), (1.0, 1.0));
        assert_eq!(
            (evidence.ratio_interval.lo, evidence.ratio_interval.hi),
            (1.0, 1.0)
        );
        // The median split is 1 ms, where `now` has more values than `before`; counting
        // them as above would cry regression.
        let before = [vec![0.0; 10], vec![1.0; 30]].concat();
        let now = vec![1.0; 40];
        assert_eq!(exceedance_p_value(&before, &now, 0.5, 1.0), Some(1.0));
    }

    #[test]
    fn empty_sides_and_bad_parameters_decide_nothing() {
        let some = [1.0, 2.0, 3.0];
        assert!(quantile_worse(&[], &some, &P95).is_none());
        assert!(quantile_worse(&some, &[f64::NAN], &P95).is_none());
        for test in [
            QuantileTest {
                ratio_limit: 0.0,
                ..P95
            },
            QuantileTest {
                confidence: 1.0,
                ..P95
            },
            QuantileTest {
                quantile: f64::NAN,
                ..P95
            },
        ] {
            assert!(quantile_worse(&some, &some, &test).is_none(), "{test:?}");
        }
    }
}
