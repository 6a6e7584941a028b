//! The Wilcoxon rank-sum (Mann–Whitney) test, one-sided: do `now`'s values tend to lie above
//! `before`'s?
//!
//! The quantile test looks at the tail only (how many latencies pass the baseline's p95). When
//! the whole distribution moved, as when every turn got slower, the ranks of the whole sample
//! carry far more evidence: 5 latencies a side, all above, give p = 1/252 where the tail test
//! can say little. Ties (latencies are whole milliseconds) get mid-ranks.
//!
//! Exact when the pooled sample is small: the null distribution of the rank sum is counted
//! over every way of choosing `now`'s positions among the mid-ranks (a subset-sum table).
//! Above that, the normal approximation with the tie-corrected variance and a continuity
//! correction, which is accurate there.

/// Pooled samples up to this size get the exact distribution (the table is `n × m × sum`).
const EXACT_UP_TO: usize = 60;

/// The one-sided p-value of "`now` lies above `before`": the chance, if both came from one
/// distribution, of a rank sum of `now` at least as large as observed. The smallest p-value
/// these sample sizes could give is in the second place (`now` all above `before`). `None`
/// when a side is empty. Non-finite values are ignored.
pub fn rank_sum_worse(before: &[f64], now: &[f64]) -> Option<(f64, f64)> {
    let ranked = Ranked::of(before, now)?;
    if ranked.ranks2.len() <= EXACT_UP_TO {
        let tail = |at| exact_tail(&ranked.ranks2, ranked.now, at);
        Some((tail(ranked.observed2), tail(ranked.best2)))
    } else {
        let variance = ranked.variance();
        let normal = |sum2: u64| {
            if variance <= 0.0 {
                return 1.0;
            }
            upper_normal_tail((sum2 as f64 / 2.0 - ranked.mean() - 0.5) / variance.sqrt())
        };
        Some((normal(ranked.observed2), normal(ranked.best2)))
    }
}

/// Two samples ranked together (mid-ranks for ties), as the rank-sum tests read them.
pub(super) struct Ranked {
    /// Every value's mid-rank, doubled (a whole number), ascending by value.
    pub ranks2: Vec<u64>,
    /// How many values `now` has.
    pub now: usize,
    /// The doubled rank sum of `now`.
    pub observed2: u64,
    /// The largest doubled rank sum `now` could have (all above `before`).
    pub best2: u64,
    /// `sum(t^3 - t)` over the groups of `t` tied values.
    tie_term: f64,
}

impl Ranked {
    /// `None` when a side is empty. Non-finite values are ignored.
    pub(super) fn of(before: &[f64], now: &[f64]) -> Option<Self> {
        let before: Vec<f64> = before.iter().copied().filter(|x| x.is_finite()).collect();
        let now: Vec<f64> = now.iter().copied().filter(|x| x.is_finite()).collect();
        if before.is_empty() || now.is_empty() {
            return None;
        }
        let mut pooled: Vec<(f64, bool)> = before
            .iter()
            .map(|&x| (x, false))
            .chain(now.iter().map(|&x| (x, true)))
            .collect();
        pooled.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut ranks2 = vec![0_u64; pooled.len()];
        let mut tie_term = 0.0;
        let mut start = 0;
        while start < pooled.len() {
            let end = (start..pooled.len())
                .find(|&i| pooled[i].0 != pooled[start].0)
                .unwrap_or(pooled.len());
            // Ranks start+1..=end: their mean, doubled, is start + 1 + end.
            let doubled = (start + 1 + end) as u64;
            ranks2[start..end].iter_mut().for_each(|r| *r = doubled);
            let t = (end - start) as f64;
            tie_term += t * t * t - t;
            start = end;
        }
        let observed2 = pooled
            .iter()
            .zip(&ranks2)
            .filter(|((_, is_now), _)| *is_now)
            .map(|(_, &r)| r)
            .sum();
        // Ascending already: the largest are last.
        let best2 = ranks2.iter().rev().take(now.len()).sum();
        Some(Self {
            ranks2,
            now: now.len(),
            observed2,
            best2,
            tie_term,
        })
    }

    /// The rank sum's mean when both samples come from one distribution.
    pub(super) fn mean(&self) -> f64 {
        let (all, m) = (self.ranks2.len() as f64, self.now as f64);
        m * (all + 1.0) / 2.0
    }

    /// The rank sum's variance then, tie-corrected.
    pub(super) fn variance(&self) -> f64 {
        let (all, m) = (self.ranks2.len() as f64, self.now as f64);
        let n = all - m;
        if all < 2.0 {
            return 0.0;
        }
        m * n / 12.0 * ((all + 1.0) - self.tie_term / (all * (all - 1.0)))
    }
}

/// P(the doubled rank sum of `m` positions chosen at random among `ranks2` is at least `at`).
fn exact_tail(ranks2: &[u64], m: usize, at: u64) -> f64 {
    let total: u64 = ranks2.iter().sum();
    let width = usize::try_from(total)
        .unwrap_or(usize::MAX)
        .saturating_add(1);
    // ways[k][s]: subsets of size k of the ranks seen so far with doubled sum s, as f64 (the
    // counts reach C(60, 30) ~ 1.2e17, beyond what f64 holds exactly, but only the ratio is
    // used and its relative error stays near 1e-16 per step).
    let mut ways = vec![vec![0.0_f64; width]; m + 1];
    ways[0][0] = 1.0;
    for &r in ranks2 {
        let r = usize::try_from(r).unwrap_or(usize::MAX);
        for k in (1..=m).rev() {
            let (lower, upper) = ways.split_at_mut(k);
            let (from, to) = (&lower[k - 1], &mut upper[0]);
            for s in (r..width).rev() {
                to[s] += from[s - r];
            }
        }
    }
    let all: f64 = ways[m].iter().sum();
    let at = usize::try_from(at).unwrap_or(usize::MAX).min(width);
    let tail: f64 = ways[m][at..].iter().sum();
    (tail / all).clamp(0.0, 1.0)
}

/// P(Z >= z) for a standard normal Z, from the complementary error function (Numerical
/// Recipes' Chebyshev fit, relative error under 1.2e-7: ample for a gate at 1e-2).
pub(super) fn upper_normal_tail(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * x.abs());
    let poly = -x * x - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * poly.exp();
    let erfc = if x >= 0.0 { erfc } else { 2.0 - erfc };
    (erfc / 2.0).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::{rank_sum_worse, upper_normal_tail};

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance * b.abs().max(1e-300)
    }

    #[test]
    fn five_a_side_all_above_is_one_in_252() {
        let before = [1.0, 2.0, 3.0, 4.0, 5.0];
        let now = [6.0, 7.0, 8.0, 9.0, 10.0];
        let (p, best) = rank_sum_worse(&before, &now).unwrap();
        assert!(close(p, 1.0 / 252.0, 1e-12), "{p}");
        assert!(close(best, 1.0 / 252.0, 1e-12));
        // The other way round, nothing is shown.
        let (p, _) = rank_sum_worse(&now, &before).unwrap();
        assert!(close(p, 1.0, 1e-12), "{p}");
    }

    #[test]
    fn exact_small_table() {
        // 3 vs 3: rank sums of `now` run 6..=15 over 20 subsets; {4, 5, 6} minus one step:
        // now = ranks 3, 5, 6 -> sum 14, subsets with sum >= 14: {3,5,6}, {4,5,6} -> 2/20.
        let (p, _) = rank_sum_worse(&[1.0, 2.0, 4.0], &[3.0, 5.0, 6.0]).unwrap();
        assert!(close(p, 0.1, 1e-12), "{p}");
    }

    #[test]
    fn identical_samples_are_unremarkable_and_all_ties_say_nothing() {
        let same = [3.0, 1.0, 2.0, 5.0, 4.0];
        let (p, _) = rank_sum_worse(&same, &same).unwrap();
        assert!(p > 0.4, "{p}");
        let (p, best) = rank_sum_worse(&[0.0; 5], &[0.0; 5]).unwrap();
        assert!(
            close(p, 1.0, 1e-12) && close(best, 1.0, 1e-12),
            "{p} {best}"
        );
        assert_eq!(rank_sum_worse(&[], &[1.0]), None);
    }

    #[test]
    fn the_normal_approximation_agrees_with_the_exact_count_where_they_meet() {
        // 40 vs 40 by the normal formula; 30 vs 30 exactly: shifted by the same amount, both
        // are far below 1e-3, and unshifted both near 1/2.
        let before: Vec<f64> = (0..40).map(f64::from).collect();
        let shifted: Vec<f64> = (0..40).map(|i| f64::from(i) + 15.0).collect();
        let (p, _) = rank_sum_worse(&before, &shifted).unwrap();
        assert!(p < 1e-3, "{p}");
        let (p, _) = rank_sum_worse(&before, &before).unwrap();
        assert!((0.4..0.6).contains(&p), "{p}");
        assert!(close(upper_normal_tail(1.959_964), 0.025, 1e-5));
        assert!(close(upper_normal_tail(-1.0), 0.841_344_746, 1e-6));
    }
}
