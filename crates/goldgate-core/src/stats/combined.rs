//! Whether cases that each look a little worse add up to a regression: the exact combined
//! test of "now passes less often" over a suite's cases.
//!
//! Each case's own test (Fisher's, [`super::fisher_worse`]) needs a large change on few runs;
//! five cases each failing 30% of the time where they never failed may each stay short of the
//! bar. This test scores every case by how far its runs lean towards "worse now" and sums the
//! scores, so that several cases leaning the same way add up.
//!
//! The score of a case is `-2 ln midp`, Fisher's method on the mid-p value of the one-sided
//! conditional test (half the chance of the observed count plus that of any fewer passes now),
//! rounded to `1 / RESOLUTION`. Mid-p alone is not a valid p-value, and Fisher's method assumes
//! continuous ones; neither matters here, since the sum is not read against a chi-square: under
//! "nothing changed" each case's passes that land on the `now` side, given its pooled passes,
//! are hypergeometric whatever its rate, so the law of the sum is the convolution of each
//! case's score law (as [`super::stratified_worse`] convolves counts), and `P(S >= s)` is an
//! exact p-value at every sample size. Cases whose pooled runs all agree (all passing, say)
//! have one possible outcome and add nothing.

use super::Tally;
use super::fisher::Hypergeometric;

/// Steps of a score per unit of `-2 ln midp`: fine enough that rounding loses little, coarse
/// enough that the law of a suite's sum stays a few thousand entries long.
const RESOLUTION: f64 = 10.0;

/// The largest score a case counts (a mid-p of about `e^-30`): a case that far gone is a break
/// its own test decides, and the cap keeps the law's length bounded.
const MOST: f64 = 60.0;

/// The combined test's result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CombinedTest {
    /// `P(S >= s)` under "nothing changed": exact.
    pub p_value: f64,
    /// Cases that took part: judged on both sides, with more than one possible outcome.
    pub cases: usize,
}

/// The exact combined p-value that `now` passes less often than `before`, over cases given as
/// `(before, now)` tallies. Cases where a side judged nothing (or is malformed) are left out;
/// `None` when no case is left with more than one possible outcome.
pub fn combined_worse(cases: &[(Tally, Tally)]) -> Option<CombinedTest> {
    let laws: Vec<(Vec<(usize, f64)>, usize)> = cases
        .iter()
        .filter_map(|&(before, now)| score_law(before, now))
        .collect();
    if laws.is_empty() {
        return None;
    }
    let observed: usize = laws.iter().map(|(_, score)| score).sum();
    // The law of the sum so far over 0..=observed, the last entry holding "observed or more":
    // nothing beyond it matters to `P(S >= observed)`.
    let mut law = vec![0.0; observed + 1];
    law[0] = 1.0;
    for (case, _) in &laws {
        let mut next = vec![0.0; observed + 1];
        for (s, &p_s) in law.iter().enumerate().filter(|(_, p)| **p > 0.0) {
            for &(score, p_x) in case {
                next[(s + score).min(observed)] += p_s * p_x;
            }
        }
        law = next;
    }
    Some(CombinedTest {
        p_value: law[observed].min(1.0),
        cases: laws.len(),
    })
}

/// A case's score law (score, probability) under "nothing changed", and its observed score;
/// `None` when a side judged nothing or only one outcome is possible.
fn score_law(before: Tally, now: Tally) -> Option<(Vec<(usize, f64)>, usize)> {
    before.fraction()?;
    now.fraction()?;
    let law = Hypergeometric {
        population: u64::from(before.judged) + u64::from(now.judged),
        successes: u64::from(before.passed) + u64::from(now.passed),
        draws: u64::from(now.judged),
    };
    let (lowest, highest) = (law.lowest(), law.highest());
    if lowest == highest {
        return None;
    }
    let weight = weight(1.0 - law.successes as f64 / law.population as f64);
    let mut below = 0.0;
    let mut scores = Vec::with_capacity((highest - lowest + 1) as usize);
    for x in lowest..=highest {
        let p_x = law.pmf(x);
        let mid_p = (below + p_x / 2.0).min(1.0);
        below += p_x;
        scores.push((score(mid_p, weight), p_x));
    }
    let observed = scores[(u64::from(now.passed) - lowest) as usize].0;
    Some((scores, observed))
}

/// `-2 ln mid_p` times `weight`, capped at [`MOST`], in steps of `1 / RESOLUTION`.
fn score(mid_p: f64, weight: f64) -> usize {
    let raw = (-2.0 * mid_p.max(f64::MIN_POSITIVE).ln() * weight).clamp(0.0, MOST);
    (raw * RESOLUTION).round() as usize
}

/// The share of failed runs up to which a case counts nearly fully (see [`weight`]): a case
/// wrong a quarter of the time or more is flaky on main already.
const RARE: f64 = 0.25;

/// How much a case counts, by the share of its pooled runs (main's and now's) that failed:
/// fully while failures are rare, then less and less. A regression worth finding makes a case
/// that rarely failed fail more; a case that fails a third of its runs on both sides moves its
/// score just as much by chance and would only add noise. The share is fixed by the pooled
/// runs the test conditions on, so the weighted sum's law is still exact under "nothing
/// changed", whatever each case's rate.
fn weight(failed_share: f64) -> f64 {
    1.0 / (1.0 + (failed_share / RARE).powi(6))
}

/// At most the smallest p-value the combined test could give on cases of these sizes, whatever
/// their outcomes: every run passing on main and failing now (each case's most extreme table,
/// whose chance is `1 / C(before + now, now)`); exactly that while the cases count fully (see
/// [`weight`]). Known before the outcome, as Tarone's pruning needs; a bound below the true
/// smallest value only keeps a test in the family, which is conservative.
pub fn combined_min_p(cases: &[(Tally, Tally)]) -> f64 {
    let ln: f64 = cases
        .iter()
        .filter(|(before, now)| before.judged > 0 && now.judged > 0)
        .map(|(before, now)| {
            -super::dist::ln_choose(
                u64::from(before.judged) + u64::from(now.judged),
                u64::from(now.judged),
            )
        })
        .sum();
    ln.exp()
}

#[cfg(test)]
mod tests {
    use fastrand::Rng;

    use super::{combined_min_p, combined_worse};
    use crate::stats::sim::tally;
    use crate::stats::{Tally, fisher_worse};

    #[test]
    fn cases_that_cannot_move_say_nothing() {
        assert_eq!(combined_worse(&[]), None);
        assert_eq!(
            combined_worse(&[
                (Tally::new(10, 10), Tally::new(5, 5)),
                (Tally::new(0, 4), Tally::new(0, 2)),
                (Tally::new(0, 0), Tally::new(0, 2)),
            ]),
            None
        );
        // One case that can move: at least as conservative as its own mid-p, never above
        // Fisher's p-value by more than the rounding.
        let one = combined_worse(&[(Tally::new(10, 10), Tally::new(3, 5))]).unwrap();
        let fisher = fisher_worse(Tally::new(10, 10), Tally::new(3, 5)).unwrap();
        assert_eq!(one.cases, 1);
        assert!((one.p_value - fisher).abs() < 1e-9, "{one:?} {fisher}");
    }

    #[test]
    fn several_cases_each_a_little_worse_add_up() {
        // Five cases that never failed in 10 runs, now 3 of 5 each: each alone is p = 0.095,
        // together about 0.095^5; the 40 cases passing every run on both sides add nothing.
        let mut cases = vec![(Tally::new(10, 10), Tally::new(3, 5)); 5];
        cases.extend(vec![(Tally::new(10, 10), Tally::new(5, 5)); 40]);
        let alone = fisher_worse(Tally::new(10, 10), Tally::new(3, 5)).unwrap();
        let combined = combined_worse(&cases).unwrap();
        assert!(alone > 0.09, "{alone}");
        assert!(combined.p_value < 1e-4, "{combined:?}");
        assert_eq!(combined.cases, 5);
    }

    /// A case of a simulated suite: its rate, its runs on main and its runs now.
    type SimulatedCase = (f64, u32, u32);

    /// How often the combined test rejects at `alpha` in `trials` suites of `suite`, nothing
    /// changed.
    fn false_alarms(seed: u64, suite: &[SimulatedCase], alpha: f64, trials: u32) -> f64 {
        let mut rng = Rng::with_seed(seed);
        let alarms = (0..trials)
            .filter(|_| {
                let cases: Vec<(Tally, Tally)> = suite
                    .iter()
                    .map(|&(rate, before, now)| {
                        (tally(&mut rng, rate, before), tally(&mut rng, rate, now))
                    })
                    .collect();
                combined_worse(&cases).is_some_and(|t| t.p_value <= alpha)
            })
            .count();
        alarms as f64 / f64::from(trials)
    }

    #[test]
    fn unchanged_suites_of_every_shape_keep_alpha() {
        let alpha = 0.05;
        let trials = 2000;
        // Three standard errors over the level.
        let allowed = alpha + 3.0 * (alpha * (1.0 - alpha) / f64::from(trials)).sqrt();
        let mixed: Vec<SimulatedCase> = (0..40)
            .map(|i| match i % 4 {
                0 | 1 => (1.0, 10, 1),
                2 => (0.95, 10, 2),
                _ => (0.7, 10, 5),
            })
            .collect();
        let shapes: [(&str, Vec<SimulatedCase>); 4] = [
            ("mixed", mixed),
            ("one flaky case", vec![(0.5, 10, 5)]),
            ("few runs", vec![(0.8, 1, 1); 30]),
            (
                "lopsided",
                vec![(0.9, 100, 2), (0.3, 2, 100), (0.99, 20, 20)],
            ),
        ];
        for (seed, (name, suite)) in shapes.iter().enumerate() {
            let rate = false_alarms(seed as u64, suite, alpha, trials);
            assert!(rate <= allowed, "{name}: {rate}");
        }
    }

    #[test]
    fn the_smallest_p_value_is_every_case_at_its_extreme() {
        // Cases that rarely fail count fully: the bound is what the extreme tables give.
        let cases = [
            (Tally::new(9, 10), Tally::new(1, 1)),
            (Tally::new(20, 20), Tally::new(1, 2)),
        ];
        // C(11, 1) = 11 and C(22, 2) = 231.
        assert!((combined_min_p(&cases) - 1.0 / 2541.0).abs() < 1e-12);
        let extreme = [
            (Tally::new(10, 10), Tally::new(0, 1)),
            (Tally::new(20, 20), Tally::new(0, 2)),
        ];
        let p = combined_worse(&extreme).unwrap().p_value;
        assert!((p - 1.0 / 2541.0).abs() < 1e-12, "{p}");
        // A case that fails half its pooled runs counts for little: the bound stays below.
        let flaky = [(Tally::new(1, 1), Tally::new(0, 1))];
        let p = combined_worse(&flaky).unwrap().p_value;
        assert!(combined_min_p(&flaky) <= p, "{p}");
    }

    #[test]
    fn cases_flaky_on_both_sides_weigh_less_than_cases_that_rarely_failed() {
        // Three cases that never failed now failing 2 runs of 5, alone and among ten cases
        // that fail half their runs on both sides: the flaky ones, whose scores move as much
        // by chance, barely dilute the evidence.
        let rare = vec![(Tally::new(20, 20), Tally::new(3, 5)); 3];
        let mut among_flaky = rare.clone();
        among_flaky.extend(vec![(Tally::new(5, 10), Tally::new(3, 5)); 10]);
        let alone = combined_worse(&rare).unwrap().p_value;
        let diluted = combined_worse(&among_flaky).unwrap().p_value;
        assert!(alone < 1e-3, "{alone}");
        assert!(diluted < 2.0 * alone, "{diluted} against {alone}");
    }
}
