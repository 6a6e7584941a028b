//! Whether a rate got worse over a suite of cases that each have their own rate: the exact
//! stratified test of "now passes less often than before".
//!
//! A suite's pass rate pools cases that differ: one always passes, another passes half the
//! time. Pooling their runs into one 2×2 table (Fisher's test) assumes they share a rate, and
//! misleads when the cases weigh differently on the two sides (a baseline with a long
//! history for some cases and not others). Conditioning on each case's pooled passes instead
//! removes every case's own rate: under "nothing changed", the passes that land on the `now`
//! side of case `c` are hypergeometric whatever that case's rate is, and their sum `T` over
//! the cases has the convolution of those laws. The p-value is `P(T <= t)`, exact at every
//! sample size (the Mantel–Haenszel statistic's exact form).
//!
//! With one run a side per case, it is the exact McNemar test on the cases that changed.

use super::Tally;
use super::fisher::Hypergeometric;

/// The one-sided exact p-value that `now` passes less often than `before`, over cases given
/// as `(before, now)` tallies. Cases where a side judged nothing (or is malformed) say
/// nothing and are left out; `None` when no case is left.
pub fn stratified_worse(cases: &[(Tally, Tally)]) -> Option<f64> {
    // The law of T so far, over 0..law.len(): starts as "T = 0 for sure".
    let mut law = vec![1.0_f64];
    let mut observed = 0_u64;
    let mut informative = false;
    for &(before, now) in cases {
        if before.fraction().is_none() || now.fraction().is_none() {
            continue;
        }
        informative = true;
        observed += u64::from(now.passed);
        let case = Hypergeometric {
            population: u64::from(before.judged) + u64::from(now.judged),
            successes: u64::from(before.passed) + u64::from(now.passed),
            draws: u64::from(now.judged),
        };
        law = convolve(&law, &case);
    }
    informative.then(|| law.iter().take(observed as usize + 1).sum::<f64>().min(1.0))
}

/// The law of `T + X`, `T` with the probabilities `law` over `0..law.len()` and `X` the
/// case's hypergeometric count, independent of it.
fn convolve(law: &[f64], case: &Hypergeometric) -> Vec<f64> {
    let (lowest, highest) = (case.lowest(), case.highest());
    let pmf: Vec<f64> = (lowest..=highest).map(|x| case.pmf(x)).collect();
    let mut next = vec![0.0; law.len() + highest as usize];
    for (t, &p_t) in law.iter().enumerate() {
        if p_t == 0.0 {
            continue;
        }
        for (i, &p_x) in pmf.iter().enumerate() {
            next[t + lowest as usize + i] += p_t * p_x;
        }
    }
    next
}

#[cfg(test)]
mod tests {
    use fastrand::Rng;

    use super::stratified_worse;
    use crate::stats::sim::tally;
    use crate::stats::{Tally, fisher_worse};

    #[test]
    fn one_case_is_fishers_test() {
        for (before, now) in [
            (Tally::new(5, 5), Tally::new(0, 5)),
            (Tally::new(9, 10), Tally::new(3, 4)),
            (Tally::new(17, 20), Tally::new(1, 1)),
        ] {
            let (one, fisher) = (
                stratified_worse(&[(before, now)]),
                fisher_worse(before, now),
            );
            assert!(
                (one.unwrap() - fisher.unwrap()).abs() < 1e-12,
                "{before:?} {now:?}"
            );
        }
    }

    #[test]
    fn one_run_a_side_is_mcnemars_test_on_the_cases_that_changed() {
        // 6 cases went from pass to fail, none the other way, 14 stayed: the sign test's
        // P(Bin(6, 1/2) <= 0) = 1/64.
        let mut cases = vec![(Tally::new(1, 1), Tally::new(0, 1)); 6];
        cases.extend(vec![(Tally::new(1, 1), Tally::new(1, 1)); 10]);
        cases.extend(vec![(Tally::new(0, 1), Tally::new(0, 1)); 4]);
        let p = stratified_worse(&cases).unwrap();
        assert!((p - 1.0 / 64.0).abs() < 1e-12, "{p}");
        assert_eq!(
            stratified_worse(&[(Tally::new(0, 0), Tally::new(1, 1))]),
            None
        );
        assert_eq!(stratified_worse(&[]), None);
    }

    #[test]
    fn cases_of_different_rates_and_weights_keep_alpha() {
        // Half the cases always pass, half pass 30% of the time; the baseline ran the
        // reliable ones 20 times and the flaky ones once. Pooled, the baseline looks far
        // better than an unchanged run; stratified, it does not.
        let mut rng = Rng::with_seed(5);
        let (alpha, trials) = (0.05, 2000);
        let mut pooled_alarms = 0;
        let mut alarms = 0;
        for _ in 0..trials {
            let cases: Vec<(Tally, Tally)> = (0..20)
                .map(|i| {
                    let (rate, history) = if i % 2 == 0 { (1.0, 20) } else { (0.3, 1) };
                    (tally(&mut rng, rate, history), tally(&mut rng, rate, 1))
                })
                .collect();
            let pooled = cases
                .iter()
                .fold((Tally::default(), Tally::default()), |(b, n), &(cb, cn)| {
                    (b + cb, n + cn)
                });
            pooled_alarms += usize::from(fisher_worse(pooled.0, pooled.1).unwrap() <= alpha);
            alarms += usize::from(stratified_worse(&cases).unwrap() <= alpha);
        }
        let rate = alarms as f64 / f64::from(trials);
        assert!(rate <= alpha, "{rate}");
        assert!(
            pooled_alarms > 10 * alarms.max(1),
            "{pooled_alarms} {alarms}"
        );
    }

    #[test]
    fn a_suite_that_halved_its_pass_rate_is_caught_with_one_run_a_case() {
        let mut rng = Rng::with_seed(6);
        for _ in 0..200 {
            let cases: Vec<(Tally, Tally)> = (0..20)
                .map(|_| (tally(&mut rng, 0.9, 5), tally(&mut rng, 0.45, 5)))
                .collect();
            assert!(stratified_worse(&cases).unwrap() < 1e-4);
        }
    }
}
