//! The statistics behind the regression gate: is `now` worse than the baseline beyond the
//! noise of an LLM agent, at a false-alarm rate the gate can promise for a whole suite?
//!
//! The promise is family-wise: *a gated run of an unchanged agent trips at most `alpha` of the
//! time* (default 1%), however many cases and metrics it checks. Everything here serves it:
//!
//! - Each comparison yields a one-sided p-value that is valid (never anti-conservative), from
//!   an exact test, because a flaky case run 5 times is where normal approximations mislead:
//!   Fisher's for a case's pass counts ([`fisher_worse`]), the exact stratified test for a
//!   suite's rates, whose cases each have their own ([`stratified_worse`]), and an exact
//!   exceedance test for latency quantiles ([`quantile_worse`]), beside the rank-sum test of
//!   the whole latency sample ([`rank_sum_worse`]) for a distribution that moved as a whole;
//!   for latencies kept case by case, the rank-sum test within each case, summed over the
//!   cases ([`stratified_rank_sum_worse`]; normal, not exact, over many cases); and the exact
//!   combined test of every case's conditional outcome ([`combined_worse`]), for several
//!   cases each a little worse.
//! - The p-values of a run are combined by Holm's procedure ([`holm_adjusted`]), which bounds
//!   the chance of *any* false alarm under any dependence between cases.
//! - Adaptive reruns share `alpha` between planned looks (`goldgate::gate::adaptive`).
//! - Intervals ([`worsening_interval`], [`QuantileEvidence::ratio_interval`]) are for the
//!   report: they say how large a change is; the p-values decide.
//!
//! [`LatencyHistogram`] keeps a baseline's latencies compact enough to commit, and [`sim`]
//! holds the seeded samplers that the calibration tests (`calibration.rs`) and the project's
//! simulations share.

mod bound;
mod combined;
mod dist;
mod fisher;
mod histogram;
mod holm;
mod quantile;
mod rank_sum;
mod rate;
mod sign;
pub mod sim;
mod stratified;
mod stratified_rank_sum;

#[cfg(test)]
mod calibration;

use serde::{Deserialize, Serialize};

pub use bound::{rate_lower_bound, rate_upper_bound};
pub use combined::{CombinedTest, combined_min_p, combined_worse};
pub use fisher::fisher_worse;
pub use histogram::LatencyHistogram;
pub(crate) use histogram::MAX_COUNT as MAX_HISTOGRAM_COUNT;
pub use holm::tarone_holm_adjusted;
pub use quantile::{QuantileEvidence, QuantileTest, quantile, quantile_worse};
pub use rank_sum::rank_sum_worse;
pub use rate::worsening_interval;
pub use sign::sign_worse;
pub use stratified::stratified_worse;
pub use stratified_rank_sum::{Stratum, stratified_rank_sum_worse};

/// The runs of one case (or one rate's events) that reached a verdict.
///
/// A tally with `passed > judged` is malformed: every function here treats it like an empty one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub passed: u32,
    /// Passed and failed runs (errored and skipped ones are left out).
    pub judged: u32,
}

impl Tally {
    /// `passed` runs of `judged`.
    pub const fn new(passed: u32, judged: u32) -> Self {
        Self { passed, judged }
    }

    /// `passed / judged`; `None` when no run was judged or the tally is malformed.
    pub fn fraction(self) -> Option<f64> {
        (self.judged > 0 && self.passed <= self.judged)
            .then(|| f64::from(self.passed) / f64::from(self.judged))
    }
}

/// Pools two tallies, saturating at `u32::MAX` (which keeps `passed <= judged`).
impl std::ops::Add for Tally {
    type Output = Tally;

    fn add(self, other: Tally) -> Tally {
        Tally {
            passed: self.passed.saturating_add(other.passed),
            judged: self.judged.saturating_add(other.judged),
        }
    }
}

/// A two-sided confidence interval, `lo <= hi`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

#[cfg(test)]
mod tests {
    use super::Tally;

    #[test]
    fn a_tally_knows_its_fraction_and_pools_without_overflow() {
        assert_eq!(
            Tally {
                passed: 3,
                judged: 4
            }
            .fraction(),
            Some(0.75)
        );
        assert_eq!(Tally::default().fraction(), None);
        assert_eq!(
            Tally {
                passed: 5,
                judged: 4
            }
            .fraction(),
            None
        );
        let big = Tally {
            passed: u32::MAX - 1,
            judged: u32::MAX,
        };
        let pooled = big
            + Tally {
                passed: 2,
                judged: 2,
            };
        assert_eq!(
            pooled,
            Tally {
                passed: u32::MAX,
                judged: u32::MAX
            }
        );
        let json = serde_json::to_string(&Tally {
            passed: 1,
            judged: 2,
        })
        .unwrap();
        assert_eq!(json, r#"{"passed":1,"judged":2}"#);
        assert_eq!(serde_json::from_str::<Tally>(&json).unwrap().judged, 2);
    }
}
