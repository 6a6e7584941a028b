//! The p-value of "the rate dropped by more than a margin": the Farrington–Manning score
//! statistic, with its p-value computed exactly (Chan's exact unconditional test).
//!
//! The null "dropped by exactly the margin" leaves a nuisance parameter, the true rate now.
//! The statistic estimates both rates under the null (restricted maximum likelihood), so its
//! variance is the null's and not the sample's. Its usual normal p-value is still
//! anti-conservative where counts are small or a rate is near 0% or 100% — the usual place of
//! an agent's pass rate: computed exactly, its false-alarm rate reaches 1.5 to 2 times `alpha`
//! (5/5 runs, 60 against 20 runs at 97%). So the p-value here is instead the largest, over
//! every rate now compatible with the null, of the exact probability of a score at least as
//! large: valid by construction, at every sample size. The maximum is found on a grid
//! uniform in `asin(√p)`, where a binomial's spread does not depend on `p`, then refined.
//!
//! Past [`LARGEST_EXACT`] runs the normal p-value is used: there the exact one takes a tenth
//! of a second or more, and the two agree unless a side expects only a handful of failures.

use super::Tally;
use super::dist::{ln_choose, normal_upper_tail};

/// The most runs (both sides together) for which the p-value is computed exactly.
const LARGEST_EXACT: u64 = 50_000;

/// Grid points over the nuisance parameter, and refining steps around the best of them.
const GRID: u32 = 100;
const REFINEMENTS: u32 = 20;

/// The one-sided p-value of H0 `p_before - p_now <= margin`, for `0 < margin < 1`. `None`
/// when a side judged nothing.
pub(super) fn margin_p_value(before: Tally, now: Tally, margin: f64) -> Option<f64> {
    let observed = score(before, now, margin)?;
    if u64::from(before.judged) + u64::from(now.judged) > LARGEST_EXACT {
        return Some(normal_upper_tail(observed));
    }
    // Scores within rounding of the observed one count as at least as large.
    let region = Region::at_least(before.judged, now.judged, margin, observed - 1e-9);
    let top = (1.0 - margin).sqrt().asin();
    let probability = |angle: f64| region.probability(angle.sin().powi(2));
    let step = top / f64::from(GRID);
    let (mut best_angle, mut best) = (0.0, 0.0);
    for i in 0..=GRID {
        let angle = f64::from(i) * step;
        let p = probability(angle);
        if p > best {
            (best_angle, best) = (angle, p);
        }
    }
    let (mut lo, mut hi) = ((best_angle - step).max(0.0), (best_angle + step).min(top));
    for _ in 0..REFINEMENTS {
        let (left, right) = (lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0);
        let (p_left, p_right) = (probability(left), probability(right));
        best = best.max(p_left).max(p_right);
        if p_left < p_right {
            lo = left;
        } else {
            hi = right;
        }
    }
    Some(best.min(1.0))
}

/// The Farrington–Manning score: the observed drop beyond the margin over its standard error
/// under the null. `None` when a side judged nothing.
fn score(before: Tally, now: Tally, margin: f64) -> Option<f64> {
    let excess = before.fraction()? - now.fraction()? - margin;
    let r_before = restricted_mle(before, now, margin);
    let r_now = r_before - margin;
    let variance = r_before * (1.0 - r_before) / f64::from(before.judged)
        + r_now * (1.0 - r_now) / f64::from(now.judged);
    // Positive for 0 < margin < 1 (one of the rates lies strictly inside (0, 1)).
    Some(excess / variance.max(f64::MIN_POSITIVE).sqrt())
}

/// The `p_before` maximising the likelihood of both tallies subject to
/// `p_before - p_now = margin`. That likelihood is concave in `p_before` on `(margin, 1)`,
/// so bisection on its derivative finds the maximum, on the boundary when none is inside.
fn restricted_mle(before: Tally, now: Tally, margin: f64) -> f64 {
    const HALVINGS: u32 = 60;
    let (x1, f1) = (
        f64::from(before.passed),
        f64::from(before.judged - before.passed),
    );
    let (x2, f2) = (f64::from(now.passed), f64::from(now.judged - now.passed));
    let slope = |p1: f64| {
        let p2 = p1 - margin;
        x1 / p1 - f1 / (1.0 - p1) + x2 / p2 - f2 / (1.0 - p2)
    };
    let (mut lo, mut hi) = (margin, 1.0);
    for _ in 0..HALVINGS {
        let mid = 0.5 * (lo + hi);
        if slope(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The outcomes scoring at least a threshold. The score grows with the passes before and
/// falls with the passes now (a test checks it), so for each `passed` before the region holds
/// the first `counts[passed]` values of `passed` now: a staircase, walked in `n1 + n2` scores.
struct Region {
    counts: Vec<usize>,
    judged_now: u32,
    margin: f64,
}

impl Region {
    fn at_least(judged_before: u32, judged_now: u32, margin: f64, threshold: f64) -> Region {
        let mut counts = Vec::with_capacity(judged_before as usize + 1);
        let mut count = 0_u32;
        for passed_before in 0..=judged_before {
            let before = Tally {
                passed: passed_before,
                judged: judged_before,
            };
            while count <= judged_now {
                let now = Tally {
                    passed: count,
                    judged: judged_now,
                };
                if score(before, now, margin).is_none_or(|s| s < threshold) {
                    break;
                }
                count += 1;
            }
            counts.push(count as usize);
        }
        Region {
            counts,
            judged_now,
            margin,
        }
    }

    /// The region's probability when the rate now is `p_now` and before `p_now + margin`.
    fn probability(&self, p_now: f64) -> f64 {
        let judged_before = (self.counts.len() - 1) as u32;
        let before = binomial_pmfs(judged_before, (p_now + self.margin).min(1.0));
        let mut below = vec![0.0];
        below.extend(
            binomial_pmfs(self.judged_now, p_now)
                .iter()
                .scan(0.0, |sum, p| {
                    *sum += p;
                    Some(*sum)
                }),
        );
        before
            .iter()
            .zip(&self.counts)
            .map(|(p, &count)| p * below[count])
            .sum()
    }
}

/// `P(X = k)` for `k` in `0..=n`, `X` binomial: the mode's term in log space, the others by
/// the ratio recurrence outward from it (no underflow where the mass is).
pub(super) fn binomial_pmfs(n: u32, p: f64) -> Vec<f64> {
    let n_usize = n as usize;
    let mut pmfs = vec![0.0; n_usize + 1];
    if !(p > 0.0 && p < 1.0) {
        pmfs[if p >= 1.0 { n_usize } else { 0 }] = 1.0;
        return pmfs;
    }
    let mode = (((f64::from(n) + 1.0) * p).floor() as usize).min(n_usize);
    let (ln_p, ln_q) = (p.ln(), (-p).ln_1p());
    let odds = p / (1.0 - p);
    pmfs[mode] = (ln_choose(u64::from(n), mode as u64)
        + mode as f64 * ln_p
        + (n_usize - mode) as f64 * ln_q)
        .exp();
    for k in mode..n_usize {
        pmfs[k + 1] = pmfs[k] * (n_usize - k) as f64 / (k + 1) as f64 * odds;
    }
    for k in (1..=mode).rev() {
        pmfs[k - 1] = pmfs[k] * k as f64 / ((n_usize - k + 1) as f64 * odds);
    }
    pmfs
}

#[cfg(test)]
mod tests {
    use super::{binomial_pmfs, margin_p_value, restricted_mle, score};
    use crate::stats::Tally;

    fn t(passed: u32, judged: u32) -> Tally {
        Tally { passed, judged }
    }

    #[test]
    fn the_restricted_mle_maximises_the_constrained_likelihood() {
        let margin = 0.1;
        let log_likelihood = |p1: f64| {
            let p2 = p1 - margin;
            45.0 * p1.ln() + 5.0 * (1.0 - p1).ln() + 38.0 * p2.ln() + 12.0 * (1.0 - p2).ln()
        };
        let best = restricted_mle(t(45, 50), t(38, 50), margin);
        for nearby in [best - 1e-4, best + 1e-4] {
            assert!(log_likelihood(best) > log_likelihood(nearby), "{best}");
        }
        // All passes on both sides: the maximum sits on the boundary p_before = 1.
        assert!((restricted_mle(t(20, 20), t(20, 20), 0.05) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn the_score_is_monotone_so_the_region_is_a_staircase() {
        for (n1, n2, margin) in [(12, 12, 0.05), (30, 10, 0.1), (7, 25, 0.2), (20, 20, 0.01)] {
            let at = |x1, x2| score(t(x1, n1), t(x2, n2), margin).unwrap();
            for x1 in 0..=n1 {
                for x2 in 0..=n2 {
                    assert!(x1 == n1 || at(x1 + 1, x2) >= at(x1, x2), "{x1} {x2}");
                    assert!(x2 == n2 || at(x1, x2 + 1) <= at(x1, x2), "{x1} {x2}");
                }
            }
        }
    }

    #[test]
    fn binomial_pmfs_sum_to_one_and_match_the_formula() {
        for (n, p) in [(0, 0.3), (10, 0.5), (1000, 0.999), (7, 0.0), (7, 1.0)] {
            // ln C(1000, 999) from Stirling's series carries ~1e-12 of rounding.
            let sum: f64 = binomial_pmfs(n, p).iter().sum();
            assert!((sum - 1.0).abs() < 1e-11, "{n} {p}: {sum}");
        }
        assert!((binomial_pmfs(5, 0.2)[2] - 10.0 * 0.04 * 0.512).abs() < 1e-15);
    }

    #[test]
    fn the_exact_p_value_is_above_the_normal_one_where_that_misleads() {
        // 10 of 10 against 8 of 10, margin 5 points: the normal p-value is about 0.09.
        let exact = margin_p_value(t(10, 10), t(8, 10), 0.05).unwrap();
        let normal = super::normal_upper_tail(score(t(10, 10), t(8, 10), 0.05).unwrap());
        assert!(exact > normal && exact < 0.5, "{exact} {normal}");
        // A 20-point drop on 200 runs is well beyond a 5-point margin, a 5-point one is not.
        assert!(margin_p_value(t(180, 200), t(140, 200), 0.05).unwrap() < 0.001);
        assert!(margin_p_value(t(180, 200), t(170, 200), 0.05).unwrap() > 0.5);
        assert_eq!(margin_p_value(t(0, 0), t(1, 2), 0.05), None);
    }
}
