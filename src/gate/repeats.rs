//! Whether a case's pass fraction changed by more than chance, for cases run `--repeat N`
//! times in the baseline and now.
//!
//! A flaky case that passed 4 of 5 runs in the baseline and 3 of 5 now has not regressed:
//! five runs cannot tell those two fractions apart. The gate counts a drop as a regression
//! only when a one-sided Fisher exact test rejects "same pass probability" at the 5% level.
//! Fisher's test is exact for the small run counts used here (where the normal approximation
//! of a two-proportion z-test is poor) and needs no tuning. What it takes, at most 5% false
//! alarms per flaky case:
//!
//! | runs (each side) | baseline | smallest drop that trips |
//! |---|---|---|
//! | 5 | 5/5 | 1/5 |
//! | 10 | 10/10 | 6/10 |
//! | 20 | 20/20 | 15/20 |
//!
//! Errored runs are not judged: they count on neither side.

use crate::results::Repeats;
use crate::results::Status;

/// The significance level of the test.
pub const ALPHA: f64 = 0.05;

/// The runs of one case that reached a verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tally {
    pub passed: u32,
    /// Passed and failed runs (errored and skipped ones are left out).
    pub judged: u32,
}

impl Tally {
    pub fn of(repeats: &Repeats) -> Self {
        let count = |wanted: &[Status]| {
            let n = repeats.runs.iter().filter(|s| wanted.contains(s)).count();
            u32::try_from(n).unwrap_or(u32::MAX)
        };
        Self {
            passed: count(&[Status::Passed]),
            judged: count(&[Status::Passed, Status::Failed]),
        }
    }

    /// passed / judged; `None` when no run was judged.
    pub fn fraction(self) -> Option<f64> {
        (self.judged > 0).then(|| f64::from(self.passed) / f64::from(self.judged))
    }
}

/// True when `now` passes less often than `before` beyond what their run counts can tell
/// apart: the one-sided Fisher exact p-value of "now is worse" is below [`ALPHA`].
pub fn worse_beyond_chance(before: Tally, now: Tally) -> bool {
    fisher_lower_tail(before, now).is_some_and(|p| p < ALPHA)
}

/// P(X <= now.passed) where X, the passes that fall in `now` when the runs of both sides are
/// pooled, is hypergeometric: the chance of a split at least this lopsided if both sides had
/// the same pass probability. `None` when a side has no judged run.
fn fisher_lower_tail(before: Tally, now: Tally) -> Option<f64> {
    if [before, now]
        .iter()
        .any(|t| t.judged == 0 || t.passed > t.judged)
    {
        return None;
    }
    let (n_before, n_now) = (u64::from(before.judged), u64::from(now.judged));
    let total = n_before + n_now;
    let passes = u64::from(before.passed) + u64::from(now.passed);
    let ln_fact = ln_factorials(total);
    let ln_choose =
        |n: u64, k: u64| ln_fact[n as usize] - ln_fact[k as usize] - ln_fact[(n - k) as usize];
    let ln_all = ln_choose(total, n_now);
    let lowest = passes.saturating_sub(n_before);
    let highest = u64::from(now.passed).min(passes);
    let p = (lowest..=highest)
        .map(|x| (ln_choose(passes, x) + ln_choose(total - passes, n_now - x) - ln_all).exp())
        .sum::<f64>();
    Some(p.min(1.0))
}

/// `ln(i!)` for `i` in `0..=n`.
fn ln_factorials(n: u64) -> Vec<f64> {
    let mut table = Vec::with_capacity(n as usize + 1);
    let mut sum = 0.0;
    table.push(0.0);
    for i in 1..=n {
        sum += (i as f64).ln();
        table.push(sum);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::{Tally, fisher_lower_tail, worse_beyond_chance};

    fn t(passed: u32, judged: u32) -> Tally {
        Tally { passed, judged }
    }

    #[test]
    fn p_values_match_hand_computed_hypergeometric_tails() {
        // 5/5 then 2/5: only the split 7 passes = 5 + 2 is as lopsided: C(7,2)C(3,3)/C(10,5).
        let p = fisher_lower_tail(t(5, 5), t(2, 5)).unwrap();
        assert!((p - 21.0 / 252.0).abs() < 1e-12, "{p}");
        // 5/5 then 1/5: C(6,1)C(4,4)/C(10,5).
        let p = fisher_lower_tail(t(5, 5), t(1, 5)).unwrap();
        assert!((p - 6.0 / 252.0).abs() < 1e-12, "{p}");
        // 3/5 then 1/5: C(4,0)C(6,5)/C(10,5) + C(4,1)C(6,4)/C(10,5) = (6 + 60) / 252.
        let p = fisher_lower_tail(t(3, 5), t(1, 5)).unwrap();
        assert!((p - 66.0 / 252.0).abs() < 1e-12, "{p}");
        // No change, or better: the tail is large.
        assert!(fisher_lower_tail(t(4, 5), t(4, 5)).unwrap() > 0.5);
        assert_eq!(fisher_lower_tail(t(5, 5), t(5, 5)), Some(1.0));
    }

    #[test]
    fn the_documented_table_holds() {
        for (runs, first_tripping) in [(5, 1), (10, 6), (20, 15)] {
            assert!(
                worse_beyond_chance(t(runs, runs), t(first_tripping, runs)),
                "{runs}: {first_tripping}"
            );
            assert!(
                !worse_beyond_chance(t(runs, runs), t(first_tripping + 1, runs)),
                "{runs}: {}",
                first_tripping + 1
            );
        }
    }

    #[test]
    fn a_flaky_case_wobbling_is_not_a_regression_and_no_runs_decide_nothing() {
        assert!(!worse_beyond_chance(t(4, 5), t(3, 5)));
        assert!(!worse_beyond_chance(t(3, 5), t(1, 5)));
        assert!(worse_beyond_chance(t(5, 5), t(0, 5)));
        // Unequal run counts work too: one pass against 0 of 10 is p = 1/11, 0 of 20 is 1/21.
        assert!(!worse_beyond_chance(t(1, 1), t(0, 10)));
        assert!(worse_beyond_chance(t(1, 1), t(0, 20)));
        assert!(worse_beyond_chance(t(30, 30), t(5, 20)));
        assert_eq!(fisher_lower_tail(t(0, 0), t(0, 5)), None);
        assert_eq!(fisher_lower_tail(t(5, 5), t(0, 0)), None);
        // A large count stays finite and in range.
        let p = fisher_lower_tail(t(900, 1000), t(850, 1000)).unwrap();
        assert!((0.0..=1.0).contains(&p) && p < 1e-3, "{p}");
    }
}
