//! Whether a rate got worse by more than a margin: a pass or deflection rate dropping, a
//! hallucination rate rising.
//!
//! With no margin the question is "any drop beyond chance", which [`fisher_worse`] answers
//! exactly. A margin `δ > 0` turns the null into "dropped by at most δ", which has no exact
//! conditional test; the Farrington–Manning score test, with its p-value computed exactly
//! over the nuisance parameter, answers it (`margin.rs` says why not the usual normal
//! p-value). Both are exact, so neither raises false alarms beyond `alpha`.
//!
//! A rate where higher is worse is the complement of one where lower is worse (a 2%
//! hallucination rate is a 98% clean rate), so [`Direction`] flips the tallies and everything
//! else is written once.

use serde::Serialize;

use super::dist::normal_quantile;
use super::margin::margin_p_value;
use super::{Interval, Tally, fisher_worse};

/// Which way a rate gets worse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Pass rate, deflection rate.
    LowerIsWorse,
    /// Hallucination rate.
    HigherIsWorse,
}

impl Direction {
    /// The tally whose rate drops when things get worse; `None` when it judged nothing or
    /// is malformed.
    fn orient(self, tally: Tally) -> Option<Tally> {
        tally.fraction()?;
        Some(match self {
            Direction::LowerIsWorse => tally,
            Direction::HigherIsWorse => Tally {
                passed: tally.judged - tally.passed,
                judged: tally.judged,
            },
        })
    }
}

/// What [`rate_worse`] found.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RateEvidence {
    /// The rate in the baseline, a fraction.
    pub before: f64,
    /// The rate now, a fraction.
    pub now: f64,
    /// How much worse the rate got: `before - now` when lower is worse, `now - before` when
    /// higher is worse (negative when it improved).
    pub worsening: f64,
    /// The confidence interval of `worsening` ([`worsening_interval`]).
    pub interval: Interval,
    /// The one-sided p-value of "worse by more than the margin".
    pub p_value: f64,
}

/// Tests whether the rate got worse by more than `margin` (a fraction: 0.05 for 5 points):
/// H0 `worsening <= margin` against H1 `worsening > margin`. A margin of 0 is the plain
/// "any worsening" test and uses [`fisher_worse`]; a positive one the Farrington–Manning
/// score test, exact as well (see the module docs). The interval is at `confidence`
/// (two-sided; `1 - 2·alpha` matches a one-sided test at `alpha`).
///
/// `None` when a side judged nothing, `margin` is not in `[0, 1)` or `confidence` not in
/// `(0, 1)`.
pub fn rate_worse(
    before: Tally,
    now: Tally,
    direction: Direction,
    margin: f64,
    confidence: f64,
) -> Option<RateEvidence> {
    if !(0.0..1.0).contains(&margin) {
        return None;
    }
    let interval = worsening_interval(before, now, direction, confidence)?;
    let (oriented_before, oriented_now) = (direction.orient(before)?, direction.orient(now)?);
    let p_value = if margin > 0.0 {
        margin_p_value(oriented_before, oriented_now, margin)?
    } else {
        fisher_worse(oriented_before, oriented_now)?
    };
    Some(RateEvidence {
        before: before.fraction()?,
        now: now.fraction()?,
        worsening: oriented_before.fraction()? - oriented_now.fraction()?,
        interval,
        p_value,
    })
}

/// Newcombe's hybrid score interval (his method 10) for the worsening of the rate: the
/// difference of the two sides' Wilson intervals, combined in quadrature. It stays inside
/// `[-1, 1]` and keeps close to its nominal coverage at 0% or 100% and for small counts,
/// where the Wald interval collapses to a point. `None` when a side judged nothing or
/// `confidence` is not in `(0, 1)`.
pub fn worsening_interval(
    before: Tally,
    now: Tally,
    direction: Direction,
    confidence: f64,
) -> Option<Interval> {
    let z = normal_quantile(0.5 + confidence / 2.0);
    if !(z > 0.0 && z.is_finite()) {
        return None;
    }
    let (before, now) = (direction.orient(before)?, direction.orient(now)?);
    let (p1, p2) = (before.fraction()?, now.fraction()?);
    let (w1, w2) = (wilson(p1, before.judged, z), wilson(p2, now.judged, z));
    let difference = p1 - p2;
    Some(Interval {
        lo: difference - (p1 - w1.lo).hypot(w2.hi - p2),
        hi: difference + (w1.hi - p1).hypot(p2 - w2.lo),
    })
}

/// The Wilson score interval of a proportion `p` of `n > 0` trials at normal quantile `z`.
fn wilson(p: f64, n: u32, z: f64) -> Interval {
    let n = f64::from(n);
    let z2n = z * z / n;
    let centre = (p + z2n / 2.0) / (1.0 + z2n);
    let half = z / (1.0 + z2n) * (p * (1.0 - p) / n + z2n / (4.0 * n)).sqrt();
    Interval {
        lo: centre - half,
        hi: centre + half,
    }
}

#[cfg(test)]
mod tests {
    use super::{Direction, rate_worse, worsening_interval};
    use crate::stats::Tally;

    fn t(passed: u32, judged: u32) -> Tally {
        Tally { passed, judged }
    }

    #[test]
    fn newcombes_published_examples_are_reproduced() {
        // Newcombe (1998), table II, examples (a) 56/70 - 48/80 and (f) 10/10 - 0/20, at 95%.
        let examples = [
            ((56, 70), (48, 80), (0.0524, 0.3339)),
            ((10, 10), (0, 20), (0.6791, 1.0)),
        ];
        for ((a, m), (b, n), (lo, hi)) in examples {
            let ci = worsening_interval(t(a, m), t(b, n), Direction::LowerIsWorse, 0.95).unwrap();
            assert!(
                (ci.lo - lo).abs() < 5e-4 && (ci.hi - hi).abs() < 5e-4,
                "{ci:?}"
            );
        }
    }

    #[test]
    fn higher_is_worse_mirrors_lower_is_worse() {
        let (before, now) = (t(2, 100), t(12, 100));
        let rise = rate_worse(before, now, Direction::HigherIsWorse, 0.02, 0.9).unwrap();
        let drop = rate_worse(t(98, 100), t(88, 100), Direction::LowerIsWorse, 0.02, 0.9).unwrap();
        assert_eq!((rise.before, rise.now), (0.02, 0.12));
        assert!((rise.worsening - 0.1).abs() < 1e-12);
        assert_eq!((rise.p_value, rise.interval), (drop.p_value, drop.interval));
        assert!(rise.p_value < 0.05);
        let exact = rate_worse(now, before, Direction::HigherIsWorse, 0.0, 0.9).unwrap();
        assert!(exact.p_value > 0.99 && exact.worsening < 0.0);
    }

    #[test]
    fn out_of_range_inputs_decide_nothing() {
        let (ok, empty) = (t(5, 10), t(0, 0));
        let lower = Direction::LowerIsWorse;
        assert!(rate_worse(ok, empty, lower, 0.0, 0.9).is_none());
        let malformed = t(6, 5);
        assert!(rate_worse(malformed, ok, Direction::HigherIsWorse, 0.0, 0.9).is_none());
        for margin in [-0.1, 1.0, f64::NAN] {
            assert!(rate_worse(ok, ok, lower, margin, 0.9).is_none(), "{margin}");
        }
        for confidence in [0.0, 1.0, f64::NAN] {
            assert!(
                worsening_interval(ok, ok, lower, confidence).is_none(),
                "{confidence}"
            );
        }
    }
}
