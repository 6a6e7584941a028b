//! How much a rate got worse: an interval for the report. (Whether it got worse beyond noise
//! is the stratified test's question, [`stratified_worse`](super::stratified_worse).)

use super::dist::normal_quantile;
use super::{Interval, Tally};

/// Newcombe's hybrid score interval (his method 10) for `before`'s rate minus `now`'s: the
/// difference of the two sides' Wilson intervals, combined in quadrature. It stays inside
/// `[-1, 1]` and keeps close to its nominal coverage at 0% or 100% and for small counts,
/// where the Wald interval collapses to a point. `None` when a side judged nothing or
/// `confidence` is not in `(0, 1)`.
pub fn worsening_interval(before: Tally, now: Tally, confidence: f64) -> Option<Interval> {
    let z = normal_quantile(0.5 + confidence / 2.0);
    if !(z > 0.0 && z.is_finite()) {
        return None;
    }
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
    use super::worsening_interval;
    use crate::stats::Tally;

    #[test]
    fn newcombes_published_examples_are_reproduced() {
        // Newcombe (1998), table II, examples (a) 56/70 - 48/80 and (f) 10/10 - 0/20, at 95%.
        let examples = [
            ((56, 70), (48, 80), (0.0524, 0.3339)),
            ((10, 10), (0, 20), (0.6791, 1.0)),
        ];
        for ((a, m), (b, n), (lo, hi)) in examples {
            let ci = worsening_interval(Tally::new(a, m), Tally::new(b, n), 0.95).unwrap();
            assert!(
                (ci.lo - lo).abs() < 5e-4 && (ci.hi - hi).abs() < 5e-4,
                "{ci:?}"
            );
        }
    }

    #[test]
    fn out_of_range_inputs_give_no_interval() {
        let (ok, empty) = (Tally::new(5, 10), Tally::new(0, 0));
        assert!(worsening_interval(ok, empty, 0.9).is_none());
        assert!(worsening_interval(Tally::new(6, 5), ok, 0.9).is_none());
        for confidence in [0.0, 1.0, f64::NAN] {
            assert!(
                worsening_interval(ok, ok, confidence).is_none(),
                "{confidence}"
            );
        }
    }
}
