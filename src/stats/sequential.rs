//! Adaptive reruns: run every case once, rerun only the cases whose verdict is still open,
//! and look again, up to a fixed number of looks.
//!
//! Looking several times at accumulating data inflates false alarms unless the level is
//! split between the looks. [`Looks`] splits it evenly (Bonferroni): valid whatever the runs
//! per look and whatever the stopping rule, with no assumption about how much information
//! each look adds. It is conservative, because successive looks at growing data are strongly
//! correlated; group-sequential boundaries (Pocock, O'Brien–Fleming) would recover some of
//! that, but with the 2 to 4 looks a gate affords the loss is small and the rule stays one
//! line anyone can check.
//!
//! How a gate uses it, keeping the suite's false alarms within `alpha` for `cases` cases:
//! 1. fix the looks and the runs each look adds in advance;
//! 2. at each look, call [`classify_case`] with `looks.alpha_per_look() / cases`, and rerun
//!    the [`CaseCall::Open`] cases;
//! 3. at each look Holm at `alpha_per_look()` may combine the latest p-values, counting a
//!    case that stopped as `p = 1`: a p-value under the Bonferroni share above is always
//!    rejected by Holm too.
//!
//! Stopping a case early only removes chances to reject, so no stopping rule can raise the
//! false-alarm rate; what [`CaseCall::Clear`] trades is power, see there.

use super::{Tally, fisher_worse};

/// A significance level shared by a planned number of looks at the data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Looks {
    /// The level for all looks together.
    pub alpha: f64,
    /// How many looks at most (0 counts as 1).
    pub max_looks: u32,
}

impl Looks {
    /// Each look's share of `alpha` (see the module docs).
    pub fn alpha_per_look(self) -> f64 {
        self.alpha / f64::from(self.max_looks.max(1))
    }
}

/// Where one case stands after a look.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CaseCall {
    /// `now` passes less often than `before` at the level asked: `p <= alpha`.
    Regressed { p: f64 },
    /// No rerun is needed: the case cannot be called regressed.
    Clear,
    /// More runs could decide; `p` is where the case stands.
    Open { p: f64 },
}

/// Classifies a case from its baseline and current tallies, at level `alpha` for this look,
/// with at most `runs_left` more runs allowed.
///
/// [`CaseCall::Clear`] when either
/// - `now` passes at least as often as `before` (compared exactly, in integers): so an
///   unchanged agent that passed its first run is not rerun. The price is power: a case
///   whose pass rate fell from 100% to 60% passes its first run 60% of the time and is then
///   cleared; but a single-run gate would have missed it then too; or
/// - the test could not reach `alpha` even if every remaining run failed (futility).
///
/// With no judged run now and runs left, the case is open at `p = 1`; with no baseline
/// runs there is nothing to regress from, and the case is clear.
pub fn classify_case(before: Tally, now: Tally, alpha: f64, runs_left: u32) -> CaseCall {
    let Some(p) = fisher_worse(before, now) else {
        let awaiting_runs = before.fraction().is_some() && now.judged == 0 && runs_left > 0;
        return if awaiting_runs {
            CaseCall::Open { p: 1.0 }
        } else {
            CaseCall::Clear
        };
    };
    if p <= alpha {
        return CaseCall::Regressed { p };
    }
    let as_good = u64::from(now.passed) * u64::from(before.judged)
        >= u64::from(before.passed) * u64::from(now.judged);
    let all_failing = Tally {
        passed: now.passed,
        judged: now.judged.saturating_add(runs_left),
    };
    let out_of_reach = fisher_worse(before, all_failing).is_none_or(|best| best > alpha);
    if as_good || out_of_reach {
        CaseCall::Clear
    } else {
        CaseCall::Open { p }
    }
}

#[cfg(test)]
mod tests {
    use super::{CaseCall, Looks, classify_case};
    use crate::stats::Tally;

    fn t(passed: u32, judged: u32) -> Tally {
        Tally { passed, judged }
    }

    #[test]
    fn looks_split_alpha_evenly() {
        let looks = Looks {
            alpha: 0.01,
            max_looks: 4,
        };
        assert_eq!(looks.alpha_per_look(), 0.0025);
        assert_eq!(
            Looks {
                alpha: 0.01,
                max_looks: 0
            }
            .alpha_per_look(),
            0.01
        );
    }

    #[test]
    fn a_first_pass_clears_and_a_first_failure_reruns() {
        let baseline = t(20, 20);
        assert_eq!(classify_case(baseline, t(1, 1), 0.001, 4), CaseCall::Clear);
        assert!(matches!(
            classify_case(baseline, t(0, 1), 0.001, 4),
            CaseCall::Open { .. }
        ));
        // Four failures in five runs after a clean baseline of 20: p = C(21,1)/C(25,5).
        match classify_case(baseline, t(1, 5), 0.005, 0) {
            CaseCall::Regressed { p } => assert!((p - 21.0 / 53130.0).abs() < 1e-12, "{p}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_case_that_cannot_reach_the_level_is_cleared() {
        // 5/5 before; even 1 of 5 now gives p = 6/252 > 0.01: no rerun can decide.
        assert_eq!(classify_case(t(5, 5), t(1, 2), 0.01, 3), CaseCall::Clear);
        // With no runs left, what is not regressed is clear.
        assert_eq!(classify_case(t(20, 20), t(0, 1), 0.001, 0), CaseCall::Clear);
        // A flaky baseline wobbling down a little stays open while runs could still tell.
        assert!(matches!(
            classify_case(t(16, 20), t(2, 3), 0.01, 10),
            CaseCall::Open { .. }
        ));
    }

    #[test]
    fn missing_runs_wait_or_clear() {
        assert_eq!(
            classify_case(t(5, 5), t(0, 0), 0.01, 3),
            CaseCall::Open { p: 1.0 }
        );
        assert_eq!(classify_case(t(5, 5), t(0, 0), 0.01, 0), CaseCall::Clear);
        assert_eq!(classify_case(t(0, 0), t(0, 3), 0.01, 3), CaseCall::Clear);
    }
}
