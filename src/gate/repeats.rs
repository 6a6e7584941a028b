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

use crate::results::{Repeats, Status};
use crate::stats::{Tally, fisher_worse};

/// The significance level of the test.
pub const ALPHA: f64 = 0.05;

/// The runs of one case that reached a verdict (errored and skipped runs are left out).
pub fn tally(repeats: &Repeats) -> Tally {
    let count = |wanted: &[Status]| {
        let n = repeats.runs.iter().filter(|s| wanted.contains(s)).count();
        u32::try_from(n).unwrap_or(u32::MAX)
    };
    Tally {
        passed: count(&[Status::Passed]),
        judged: count(&[Status::Passed, Status::Failed]),
    }
}

/// True when `now` passes less often than `before` beyond what their run counts can tell
/// apart: the one-sided Fisher exact p-value of "now is worse" is below [`ALPHA`].
pub fn worse_beyond_chance(before: Tally, now: Tally) -> bool {
    fisher_worse(before, now).is_some_and(|p| p < ALPHA)
}

#[cfg(test)]
mod tests {
    use super::{Tally, worse_beyond_chance};
    use crate::stats::fisher_worse;

    fn t(passed: u32, judged: u32) -> Tally {
        Tally { passed, judged }
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
        assert_eq!(fisher_worse(t(0, 0), t(0, 5)), None);
        assert_eq!(fisher_worse(t(5, 5), t(0, 0)), None);
        // A large count stays finite and in range.
        let p = fisher_worse(t(900, 1000), t(850, 1000)).unwrap();
        assert!((0.0..=1.0).contains(&p) && p < 1e-3, "{p}");
    }
}
