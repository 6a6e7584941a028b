//! Seeded samplers: the bootstrap of [`quantile_worse`](super::quantile_worse), the simulated
//! agents of `goldgate calibrate` (`goldgate::gate::simulation`), and the calibration tests.
//!
//! Each takes the caller's [`fastrand::Rng`], so a fixed seed replays the same draws.

use fastrand::Rng;

#[cfg(test)]
use super::Tally;

/// A standard normal draw (Box–Muller, one value of the pair).
fn standard_normal(rng: &mut Rng) -> f64 {
    // 1 - [0, 1) is (0, 1]: the logarithm stays finite.
    let radius = (-2.0 * (1.0 - rng.f64()).ln()).sqrt();
    radius * (std::f64::consts::TAU * rng.f64()).cos()
}

/// A log-normal draw with the given median and log-scale standard deviation `sigma`: the
/// usual shape of response times.
pub fn log_normal(rng: &mut Rng, median: f64, sigma: f64) -> f64 {
    median * (sigma * standard_normal(rng)).exp()
}

/// `true` with probability `p`.
pub fn bernoulli(rng: &mut Rng, p: f64) -> bool {
    rng.f64() < p
}

/// The tally of `runs` runs that each pass with probability `p`.
#[cfg(test)]
pub fn tally(rng: &mut Rng, p: f64, runs: u32) -> Tally {
    let passed = (0..runs).filter(|_| bernoulli(rng, p)).count();
    Tally {
        passed: u32::try_from(passed).unwrap_or(runs),
        judged: runs,
    }
}

/// The `k`-th smallest of `n` independent uniforms, `1 <= k <= n` (clamped into range): a
/// Beta(k, n + 1 - k) draw, in time independent of `n`.
pub(super) fn uniform_order_statistic(rng: &mut Rng, k: u64, n: u64) -> f64 {
    let k = k.clamp(1, n.max(1));
    let below = gamma(rng, k);
    let above = gamma(rng, n.max(1) + 1 - k);
    below / (below + above)
}

/// A Gamma(shape, 1) draw for an integer `shape >= 1` (0 counts as 1), by Marsaglia and
/// Tsang's squeeze method; each try is accepted with probability above 0.95.
fn gamma(rng: &mut Rng, shape: u64) -> f64 {
    let d = shape.max(1) as f64 - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = standard_normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v > 0.0 && rng.f64().ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{log_normal, standard_normal, tally, uniform_order_statistic};
    use fastrand::Rng;

    fn mean_and_variance(draws: &[f64]) -> (f64, f64) {
        let n = draws.len() as f64;
        let mean = draws.iter().sum::<f64>() / n;
        let variance = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
        (mean, variance)
    }

    #[test]
    fn samplers_have_their_laws_moments() {
        let mut rng = Rng::with_seed(7);
        let normal: Vec<f64> = (0..20_000).map(|_| standard_normal(&mut rng)).collect();
        let (mean, variance) = mean_and_variance(&normal);
        assert!(
            mean.abs() < 0.03 && (variance - 1.0).abs() < 0.04,
            "{mean} {variance}"
        );

        let mut latencies: Vec<f64> = (0..20_001)
            .map(|_| log_normal(&mut rng, 400.0, 0.5))
            .collect();
        latencies.sort_by(f64::total_cmp);
        assert!(
            (latencies[10_000] / 400.0 - 1.0).abs() < 0.03,
            "{}",
            latencies[10_000]
        );

        let runs = tally(&mut rng, 0.3, 10_000);
        assert!(
            runs.judged == 10_000 && runs.passed.abs_diff(3_000) < 150,
            "{runs:?}"
        );

        // Beta(k, n + 1 - k) has mean k / (n + 1).
        for (k, n) in [(1, 1), (3, 10), (95, 100), (950, 1000)] {
            let draws: Vec<f64> = (0..4_000)
                .map(|_| uniform_order_statistic(&mut rng, k, n))
                .collect();
            let (mean, _) = mean_and_variance(&draws);
            let expected = k as f64 / (n + 1) as f64;
            assert!((mean - expected).abs() < 0.01, "{k} of {n}: {mean}");
        }
    }

    #[test]
    fn a_seed_replays_the_same_draws() {
        let draw = |seed| log_normal(&mut Rng::with_seed(seed), 400.0, 0.5);
        assert_eq!(draw(3), draw(3));
        assert_ne!(draw(3), draw(4));
    }
}
