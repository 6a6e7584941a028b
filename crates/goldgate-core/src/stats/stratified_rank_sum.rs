//! The rank-sum test over strata (van Elteren's): do `now`'s values tend to lie above
//! `before`'s within each stratum, over all of them together?
//!
//! The gate's strata are cases: a suite mixes cases that answer in 100 ms with cases that
//! answer in 600 ms, and pooling their latencies measures the mixture (which cases ran how
//! often) as much as the agent. Ranking each case's latencies only among its own, and summing
//! the cases' rank sums, removes every case's own level: under "nothing changed" each case's
//! rank sum has the law of a Wilcoxon rank sum whatever that case's latencies are, however many
//! runs it had on either side. Each case's centred rank sum is weighted by `1 / (N + 1)`, `N`
//! its latencies on both sides (van Elteren's weights, the locally most powerful for a shift
//! that all cases share), so that a case with a long history does not outweigh the others, and
//! the sum is referred to the normal law with its exact mean and tie-corrected variance, with a
//! continuity correction of half the largest weighted step. A stratum with values on one side
//! only says nothing; with one informative stratum the test is the rank-sum test itself
//! ([`rank_sum_worse`](super::rank_sum_worse), exact when small).

use super::rank_sum::{Ranked, rank_sum_worse, upper_normal_tail};

/// One stratum's values: `(before, now)`.
pub type Stratum = (Vec<f64>, Vec<f64>);

/// The one-sided p-value of "`now` lies above `before`" over strata given as `(before, now)`,
/// and in the second place the smallest p-value these sample sizes could give (`now` above
/// `before` in every stratum). `None` when no stratum has values on both sides. Non-finite
/// values are ignored.
pub fn stratified_rank_sum_worse(strata: &[Stratum]) -> Option<(f64, f64)> {
    let informative: Vec<(&Stratum, Ranked)> = strata
        .iter()
        .filter_map(|stratum| Some((stratum, Ranked::of(&stratum.0, &stratum.1)?)))
        .collect();
    match informative.as_slice() {
        [] => return None,
        [((before, now), _)] => return rank_sum_worse(before, now),
        _ => {}
    }
    let ranked: Vec<Ranked> = informative.into_iter().map(|(_, r)| r).collect();
    let weight = |r: &Ranked| 1.0 / (r.ranks2.len() as f64 + 1.0);
    let variance: f64 = ranked
        .iter()
        .map(|r| weight(r).powi(2) * r.variance())
        .sum();
    if variance <= 0.0 {
        return Some((1.0, 1.0));
    }
    let correction = ranked.iter().map(weight).fold(0.0, f64::max) / 2.0;
    let tail = |sum2: fn(&Ranked) -> u64| {
        let centred: f64 = ranked
            .iter()
            .map(|r| weight(r) * (sum2(r) as f64 / 2.0 - r.mean()))
            .sum();
        upper_normal_tail((centred - correction) / variance.sqrt())
    };
    Some((tail(|r| r.observed2), tail(|r| r.best2)))
}

#[cfg(test)]
mod tests {
    // The calibration test reports its figures for docs/gate.md.
    #![allow(clippy::print_stdout)]

    use super::{Stratum, stratified_rank_sum_worse};
    use crate::stats::rank_sum_worse;
    use crate::stats::sim::log_normal;

    #[test]
    fn one_stratum_is_the_rank_sum_test_and_empty_sides_say_nothing() {
        let (before, now) = (vec![1.0, 2.0, 4.0], vec![3.0, 5.0, 6.0]);
        let one = [(before.clone(), now.clone()), (vec![], vec![9.0])];
        assert_eq!(
            stratified_rank_sum_worse(&one),
            rank_sum_worse(&before, &now)
        );
        assert_eq!(stratified_rank_sum_worse(&[(vec![1.0], vec![])]), None);
        assert_eq!(stratified_rank_sum_worse(&[]), None);
    }

    #[test]
    fn all_ties_say_nothing() {
        let tied = vec![(vec![5.0; 4], vec![5.0; 3]); 3];
        assert_eq!(stratified_rank_sum_worse(&tied), Some((1.0, 1.0)));
    }

    /// Fast and slow strata, before with many values and now with few (a baseline's history
    /// against one run): the levels of the strata neither fake a rise nor hide one.
    fn mixed(rng: &mut fastrand::Rng, rise: f64) -> Vec<Stratum> {
        (0..30)
            .map(|case| {
                let median = if case % 2 == 0 { 100.0 } else { 600.0 };
                let now = if case % 2 == 0 { median } else { median * rise };
                let before = (0..20).map(|_| log_normal(rng, median, 0.4)).collect();
                (before, (0..2).map(|_| log_normal(rng, now, 0.4)).collect())
            })
            .collect()
    }

    #[test]
    fn an_unchanged_mixture_rejects_at_most_its_level_and_a_slower_half_is_seen() {
        let mut rng = fastrand::Rng::with_seed(7);
        let trials = 2000;
        let rejected = |rng: &mut fastrand::Rng, rise: f64, level: f64| {
            (0..trials)
                .filter(|_| stratified_rank_sum_worse(&mixed(rng, rise)).unwrap().0 <= level)
                .count()
        };
        // At 5% and 1%: within binomial noise of the level (2000 trials: sd 0.5% and 0.2%).
        let at_5 = rejected(&mut rng, 1.0, 0.05);
        let at_1 = rejected(&mut rng, 1.0, 0.01);
        // Half the cases twice as slow, the fast half unchanged.
        let seen = rejected(&mut rng, 2.0, 0.01);
        println!(
            "stratified rank sum, 30 cases, 20 before and 2 now a case: unchanged rejected \
             {at_5} (5%) and {at_1} (1%) of {trials}; slow half twice as slow {seen} (1%)"
        );
        assert!(at_5 <= 120 && at_1 <= 30, "{at_5} {at_1} of {trials}");
        assert!(seen >= trials * 9 / 10, "{seen} of {trials}");
    }

    #[test]
    fn the_best_p_value_is_every_stratum_above() {
        let strata = vec![(vec![1.0, 2.0, 3.0], vec![4.0, 5.0]); 4];
        let (p, best) = stratified_rank_sum_worse(&strata).unwrap();
        assert_eq!(p, best);
        assert!(p < 0.01, "{p}");
        let below = vec![(vec![4.0, 5.0, 6.0], vec![1.0, 2.0]); 4];
        assert!(stratified_rank_sum_worse(&below).unwrap().0 > 0.99);
    }
}
