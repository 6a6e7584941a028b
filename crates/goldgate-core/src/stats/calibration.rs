//! Calibration: the false-alarm rates and power the gate can document, measured with fixed
//! seeds (or computed exactly), so they are the same on every machine.
//!
//! `cargo test calibration -- --nocapture` prints the figures for docs/gate.md's power table.
//! Monte-Carlo bounds allow three standard errors over the nominal level.
// These tests report their figures: printing is their point (the library itself never prints).
#![allow(clippy::print_stdout)]

use fastrand::Rng;

use super::fisher_worse;
use super::quantile::exceedance_p_value;
use super::sim::{log_normal, tally};

/// The share of `trials` for which `trial` returns true.
fn rate(trials: u32, mut trial: impl FnMut() -> bool) -> f64 {
    f64::from((0..trials).filter(|_| trial()).count() as u32) / f64::from(trials)
}

/// The nominal level plus three Monte-Carlo standard errors.
fn allowed(alpha: f64, trials: u32) -> f64 {
    alpha + 3.0 * (alpha * (1.0 - alpha) / f64::from(trials)).sqrt()
}

#[test]
fn the_fisher_test_simulated_for_an_unchanged_rate_keeps_alpha() {
    let (alpha, trials) = (0.05, 2000);
    let mut rng = Rng::with_seed(11);
    for runs in [5, 10, 20, 100] {
        let false_alarms = rate(trials, || {
            let (before, now) = (tally(&mut rng, 0.9, runs), tally(&mut rng, 0.9, runs));
            fisher_worse(before, now).is_some_and(|p| p <= alpha)
        });
        println!(
            "fisher, {runs} runs a side, 90% both, alpha {alpha}: false alarms {false_alarms:.4}"
        );
        assert!(
            false_alarms <= allowed(alpha, trials),
            "{runs}: {false_alarms}"
        );
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
