//! Calibration: the false-alarm rates and power the gate can document, measured with fixed
//! seeds (or computed exactly), so they are the same on every machine.
//!
//! `cargo test calibration -- --nocapture` prints the figures for the README's power table.
//! Monte-Carlo bounds allow three standard errors over the nominal level.
// These tests report their figures: printing is their point (the library itself never prints).
#![allow(clippy::print_stdout)]

use std::collections::HashMap;

use fastrand::Rng;

use super::margin::{binomial_pmfs, margin_p_value};
use super::quantile::exceedance_p_value;
use super::sim::{log_normal, tally};
use super::{CaseCall, Looks, Tally, classify_case, fisher_worse, holm};

/// The share of `trials` for which `trial` returns true.
fn rate(trials: u32, mut trial: impl FnMut() -> bool) -> f64 {
    f64::from((0..trials).filter(|_| trial()).count() as u32) / f64::from(trials)
}

/// The nominal level plus three Monte-Carlo standard errors.
fn allowed(alpha: f64, trials: u32) -> f64 {
    alpha + 3.0 * (alpha * (1.0 - alpha) / f64::from(trials)).sqrt()
}

/// The margin test's largest false-alarm rate along the null boundary `drop = margin`,
/// computed exactly by summing the probabilities of the rejected outcomes.
fn exact_size(judged: (u32, u32), margin: f64, alpha: f64) -> f64 {
    let rejected: Vec<Vec<bool>> = (0..=judged.0)
        .map(|x1| {
            (0..=judged.1)
                .map(|x2| {
                    let before = Tally {
                        passed: x1,
                        judged: judged.0,
                    };
                    let now = Tally {
                        passed: x2,
                        judged: judged.1,
                    };
                    margin_p_value(before, now, margin).is_some_and(|p| p <= alpha)
                })
                .collect()
        })
        .collect();
    let boundary = (0..=60).map(|i| margin + (1.0 - margin) * f64::from(i) / 60.0);
    boundary
        .map(|p_before| {
            let before = binomial_pmfs(judged.0, p_before.min(1.0));
            let now = binomial_pmfs(judged.1, (p_before - margin).max(0.0));
            let mut size = 0.0;
            for (x1, row) in rejected.iter().enumerate() {
                for (x2, &reject) in row.iter().enumerate() {
                    size += if reject { before[x1] * now[x2] } else { 0.0 };
                }
            }
            size
        })
        .fold(0.0, f64::max)
}

#[test]
fn the_margin_test_never_exceeds_alpha_on_the_null_boundary() {
    let alpha = 0.05;
    for (judged, margin) in [
        ((5, 5), 0.05),
        ((10, 10), 0.1),
        ((20, 20), 0.05),
        ((60, 20), 0.1),
    ] {
        let size = exact_size(judged, margin, alpha);
        println!("margin test, exact size, {judged:?} runs, margin {margin}: {size:.4}");
        assert!(size <= alpha + 1e-9, "{judged:?} {margin}: {size}");
    }
}

/// How often the margin test (5 points) rejects at `alpha` when `runs` runs a side pass
/// with probabilities `rates` (before, now).
fn margin_rejections(rng: &mut Rng, runs: u32, rates: (f64, f64), alpha: f64, trials: u32) -> f64 {
    // The p-value depends on the tallies alone and outcomes repeat: remember them.
    let mut p_values = HashMap::new();
    rate(trials, || {
        let (before, now) = (tally(rng, rates.0, runs), tally(rng, rates.1, runs));
        let p = p_values
            .entry((before.passed, now.passed))
            .or_insert_with(|| margin_p_value(before, now, 0.05));
        p.is_some_and(|p| p <= alpha)
    })
}

#[test]
fn rate_tests_simulated_at_the_null_boundary_keep_alpha() {
    let (alpha, trials) = (0.05, 2000);
    let mut rng = Rng::with_seed(11);
    for runs in [5, 10, 20, 100] {
        let margin_rate = margin_rejections(&mut rng, runs, (0.9, 0.85), alpha, trials);
        let fisher_rate = rate(trials, || {
            let (before, now) = (tally(&mut rng, 0.9, runs), tally(&mut rng, 0.9, runs));
            fisher_worse(before, now).is_some_and(|p| p <= alpha)
        });
        println!(
            "rates, {runs} runs a side, alpha {alpha}: margin 5 pts (90% -> 85%) false alarms \
             {margin_rate:.4}; no margin (90% both) {fisher_rate:.4}"
        );
        assert!(
            margin_rate <= allowed(alpha, trials),
            "{runs}: {margin_rate}"
        );
        assert!(
            fisher_rate <= allowed(alpha, trials),
            "{runs}: {fisher_rate}"
        );
    }
}

#[test]
fn rate_power_for_the_readme() {
    let mut rng = Rng::with_seed(12);
    for (runs, floor) in [(50, 0.1), (200, 0.5)] {
        let power = margin_rejections(&mut rng, runs, (0.95, 0.8), 0.01, 1000);
        println!(
            "rates, {runs} runs a side: power for 95% -> 80% past a 5-pt margin at 1%: {power:.3}"
        );
        assert!(power > floor, "{runs}: {power}");
    }
}

/// Latencies of one side: log-normal, median 400 ms times `slowdown`, sigma 0.5, sorted.
fn latencies(rng: &mut Rng, n: usize, slowdown: f64) -> Vec<f64> {
    let mut samples: Vec<f64> = (0..n)
        .map(|_| log_normal(rng, 400.0 * slowdown, 0.5))
        .collect();
    samples.sort_by(f64::total_cmp);
    samples
}

/// How often the quantile test at ratio limit 1.2 rejects at `alpha`.
fn quantile_rejections(q: f64, sizes: (usize, usize), slowdown: f64, alpha: f64) -> f64 {
    let mut rng = Rng::with_seed(21);
    rate(1000, || {
        let before = latencies(&mut rng, sizes.0, 1.0);
        let now = latencies(&mut rng, sizes.1, slowdown);
        exceedance_p_value(&before, &now, q, 1.2).is_some_and(|p| p <= alpha)
    })
}

#[test]
fn the_quantile_test_keeps_alpha_for_an_unchanged_agent_and_at_the_limit() {
    let alpha = 0.01;
    for sizes in [(60, 60), (600, 60)] {
        let unchanged = quantile_rejections(0.95, sizes, 1.0, alpha);
        // Exactly 20% slower: the null's boundary, where the test is exact.
        let at_limit = quantile_rejections(0.95, sizes, 1.2, alpha);
        println!(
            "p95, before/now {sizes:?}, alpha {alpha}: false alarms unchanged {unchanged:.4}, \
             at exactly +20% {at_limit:.4}"
        );
        assert!(unchanged <= allowed(alpha, 1000) && at_limit <= allowed(alpha, 1000));
    }
}

#[test]
fn quantile_power_for_the_readme() {
    let alpha = 0.01;
    for q in [0.5, 0.95] {
        for sizes in [(60, 60), (600, 60), (600, 200)] {
            let power = quantile_rejections(q, sizes, 2.0, alpha);
            println!("quantile {q}, before/now {sizes:?}: power for 2x slower at 1%: {power:.3}");
            let floor = 0.8;
            assert!(power >= floor, "{q} {sizes:?}: {power}");
        }
    }
}

/// Pass probabilities of a suite of 40 cases: mostly stable, some flaky.
fn suite() -> Vec<f64> {
    [vec![1.0; 30], vec![0.9; 6], vec![0.6; 4]].concat()
}

/// One gated run with adaptive reruns (1, then up to 3, then up to 5 runs a case) against a
/// baseline of 20 runs a case, following `sequential.rs`. Returns whether the suite tripped,
/// and the runs it took.
fn gated_run(rng: &mut Rng, baseline: &[f64], now: &[f64], alpha: f64) -> (bool, u32) {
    const SCHEDULE: [u32; 3] = [1, 3, 5];
    let looks = Looks {
        alpha,
        max_looks: SCHEDULE.len() as u32,
    };
    let per_case = looks.alpha_per_look() / baseline.len() as f64;
    let before: Vec<Tally> = baseline.iter().map(|&p| tally(rng, p, 20)).collect();
    let mut tallies = vec![Tally::default(); now.len()];
    let mut open = vec![true; now.len()];
    let (mut tripped, mut runs) = (false, 0);
    for runs_by_now in SCHEDULE {
        let mut p_values = vec![1.0; now.len()];
        for case in 0..now.len() {
            if !open[case] {
                continue;
            }
            let more = runs_by_now - tallies[case].judged;
            tallies[case] = tallies[case] + tally(rng, now[case], more);
            runs += more;
            let left = SCHEDULE[SCHEDULE.len() - 1] - runs_by_now;
            match classify_case(before[case], tallies[case], per_case, left) {
                CaseCall::Regressed { p } => (open[case], p_values[case]) = (false, p),
                CaseCall::Clear => open[case] = false,
                CaseCall::Open { p } => p_values[case] = p,
            }
        }
        tripped |= holm(&p_values, looks.alpha_per_look()).contains(&true);
    }
    (tripped, runs)
}

#[test]
fn an_unchanged_suite_with_adaptive_reruns_keeps_alpha() {
    let (alpha, trials) = (0.05, 400);
    let mut rng = Rng::with_seed(31);
    let mut total_runs = 0;
    let false_alarms = rate(trials, || {
        let (tripped, runs) = gated_run(&mut rng, &suite(), &suite(), alpha);
        total_runs += runs;
        tripped
    });
    let runs_per_case = f64::from(total_runs) / f64::from(trials) / suite().len() as f64;
    println!(
        "suite of 40, adaptive reruns, alpha {alpha}: false alarms {false_alarms:.4}, \
         {runs_per_case:.2} runs a case"
    );
    assert!(false_alarms <= allowed(alpha, trials), "{false_alarms}");
    assert!(runs_per_case < 1.6, "{runs_per_case}");
}

#[test]
fn a_broken_case_trips_the_adaptive_suite() {
    let (alpha, trials) = (0.01, 300);
    let mut rng = Rng::with_seed(32);
    for (broken_to, floor) in [(0.0, 0.99), (0.3, 0.1)] {
        let mut now = suite();
        now[0] = broken_to;
        let power = rate(trials, || gated_run(&mut rng, &suite(), &now, alpha).0);
        println!(
            "suite of 40 at alpha {alpha}: power when a 100% case drops to {broken_to}: {power:.3}"
        );
        assert!(power >= floor, "{broken_to}: {power}");
    }
}
