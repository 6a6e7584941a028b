//! Fisher's exact test of "now passes less often than before".
//!
//! Exact, because the gate's counts are often tiny (a case rerun 5 times), where normal
//! approximations misjudge the tails; conditional on the pooled passes it needs no nuisance
//! parameter and is never anti-conservative. The tail is summed outward from the observed
//! count, in log space for the first term and by the pmf's ratio recurrence after, so it
//! stays exact and cheap for counts into the millions.

use super::Tally;
use super::dist::ln_choose;

/// The one-sided Fisher exact p-value that `now` passes less often than `before`:
/// `P(X <= now.passed)` where `X`, the passes that land in `now` when both sides' runs are
/// pooled, is hypergeometric. `None` when either side judged nothing (or is malformed).
pub fn fisher_worse(before: Tally, now: Tally) -> Option<f64> {
    before.fraction()?;
    now.fraction()?;
    let judged = u64::from(before.judged) + u64::from(now.judged);
    let law = Hypergeometric {
        population: judged,
        successes: u64::from(before.passed) + u64::from(now.passed),
        draws: u64::from(now.judged),
    };
    Some(law.cdf(u64::from(now.passed)))
}

/// Successes among `draws` taken without replacement from `population` items, `successes`
/// of which succeed.
pub(super) struct Hypergeometric {
    pub(super) population: u64,
    pub(super) successes: u64,
    pub(super) draws: u64,
}

#[derive(Clone, Copy)]
enum Step {
    Down,
    Up,
}

impl Hypergeometric {
    pub(super) fn lowest(&self) -> u64 {
        self.draws.saturating_sub(self.population - self.successes)
    }

    pub(super) fn highest(&self) -> u64 {
        self.draws.min(self.successes)
    }

    fn mode(&self) -> u64 {
        let (n, k, total) = (
            self.draws as f64,
            self.successes as f64,
            self.population as f64,
        );
        ((n + 1.0) * (k + 1.0) / (total + 2.0)).floor() as u64
    }

    pub(super) fn pmf(&self, x: u64) -> f64 {
        let ln = ln_choose(self.successes, x)
            + ln_choose(self.population - self.successes, self.draws - x)
            - ln_choose(self.population, self.draws);
        ln.exp()
    }

    /// The neighbour of `x` one step away and `pmf(neighbour) / pmf(x)`; `None` past the
    /// support.
    fn neighbour(&self, x: u64, step: Step) -> Option<(u64, f64)> {
        let (k, n, at) = (self.successes as f64, self.draws as f64, x as f64);
        let failures_left = (self.population - self.successes) as f64 - n;
        match step {
            Step::Down if x > self.lowest() => {
                let ratio = at * (failures_left + at) / ((k - at + 1.0) * (n - at + 1.0));
                Some((x - 1, ratio))
            }
            Step::Up if x < self.highest() => {
                let ratio = (k - at) * (n - at) / ((at + 1.0) * (failures_left + at + 1.0));
                Some((x + 1, ratio))
            }
            _ => None,
        }
    }

    /// `P(X <= x)`. Sums whichever tail lies away from the mode, where terms only shrink.
    fn cdf(&self, x: u64) -> f64 {
        if x >= self.highest() {
            1.0
        } else if x < self.lowest() {
            0.0
        } else if x < self.mode() {
            self.tail_from(x, Step::Down)
        } else {
            (1.0 - self.tail_from(x + 1, Step::Up)).max(0.0)
        }
    }

    /// `pmf(start) + pmf(start ± 1) + …`, moving away from the mode. The pmf is log-concave,
    /// so the ratios shrink outward and the rest of the tail after a term `t` with ratio `r`
    /// is below `t·r / (1 - r)`: the sum stops once that is negligible.
    fn tail_from(&self, start: u64, step: Step) -> f64 {
        let mut term = self.pmf(start);
        let mut sum = term;
        let mut x = start;
        while let Some((next, ratio)) = self.neighbour(x, step) {
            term *= ratio;
            sum += term;
            x = next;
            if term <= (1.0 - ratio) * sum * f64::EPSILON {
                break;
            }
        }
        sum.min(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::{Hypergeometric, fisher_worse};
    use crate::stats::Tally;

    #[test]
    fn p_values_match_hand_computed_hypergeometric_tails() {
        let cases = [
            // Only the split 7 = 5 + 2 is as lopsided: C(7,2)·C(3,3) / C(10,5).
            ((5, 5), (2, 5), 21.0 / 252.0),
            ((5, 5), (1, 5), 6.0 / 252.0),
            // C(4,0)·C(6,5) + C(4,1)·C(6,4), over C(10,5).
            ((3, 5), (1, 5), 66.0 / 252.0),
            ((5, 5), (5, 5), 1.0),
            // One pass against 0 of 10: 1/11.
            ((1, 1), (0, 10), 1.0 / 11.0),
        ];
        for ((bp, bj), (np, nj), expected) in cases {
            let p = fisher_worse(Tally::new(bp, bj), Tally::new(np, nj)).unwrap();
            assert!((p - expected).abs() < 1e-12, "{bp}/{bj} {np}/{nj}: {p}");
        }
        assert!(fisher_worse(Tally::new(4, 5), Tally::new(4, 5)).unwrap() > 0.5);
    }

    #[test]
    fn empty_or_malformed_sides_decide_nothing() {
        assert_eq!(fisher_worse(Tally::new(0, 0), Tally::new(0, 5)), None);
        assert_eq!(fisher_worse(Tally::new(5, 5), Tally::new(0, 0)), None);
        assert_eq!(fisher_worse(Tally::new(6, 5), Tally::new(0, 5)), None);
    }

    #[test]
    fn the_tail_agrees_with_a_direct_sum_on_both_sides_of_the_mode() {
        let law = Hypergeometric {
            population: 60,
            successes: 25,
            draws: 30,
        };
        let mut direct = 0.0;
        for x in 0..=25 {
            direct += law.pmf(x);
            assert!((law.cdf(x) - direct).abs() < 1e-12, "{x}");
        }
    }

    #[test]
    fn large_counts_stay_finite_in_range_and_monotone() {
        let p = fisher_worse(Tally::new(900, 1000), Tally::new(850, 1000)).unwrap();
        assert!(p > 0.0 && p < 1e-3, "{p}");
        let huge = fisher_worse(
            Tally::new(4_000_000, 5_000_000),
            Tally::new(3_990_000, 5_000_000),
        )
        .unwrap();
        assert!(huge > 0.0 && huge < 1e-6, "{huge}");
        let same = fisher_worse(Tally::new(40_000, 50_000), Tally::new(40_000, 50_000)).unwrap();
        assert!((0.5..=1.0).contains(&same), "{same}");
        let mut last = 0.0;
        for passed in 9_000..9_100 {
            let p = fisher_worse(Tally::new(9_500, 10_000), Tally::new(passed, 10_000)).unwrap();
            assert!(p >= last, "{passed}");
            last = p;
        }
    }
}
