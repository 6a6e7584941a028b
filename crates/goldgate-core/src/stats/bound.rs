//! Exact (Clopper–Pearson) bounds on a rate from a count: how far the true rate of an event
//! seen `k` times in `n` independent trials can be, at a stated confidence. `goldgate
//! calibrate` states its realised false-alarm rate with the upper one and its power with the
//! lower one, so that 0 red of 200 reads "at most 1.5%", not "never".

use super::dist::ln_choose;

/// `P(X <= k)` for `X ~ Binomial(n, p)`.
fn binomial_cdf(k: u64, n: u64, p: f64) -> f64 {
    if p <= 0.0 {
        return 1.0;
    }
    if p >= 1.0 {
        return if k >= n { 1.0 } else { 0.0 };
    }
    let (ln_p, ln_q) = (p.ln(), (1.0 - p).ln());
    (0..=k.min(n))
        .map(|i| (ln_choose(n, i) + i as f64 * ln_p + (n - i) as f64 * ln_q).exp())
        .sum::<f64>()
        .min(1.0)
}

/// The `p` in `[0, 1]` where `falls(p)` turns from false to true, to 1e-9.
fn bisect(falls: impl Fn(f64) -> bool) -> f64 {
    let (mut low, mut high) = (0.0_f64, 1.0_f64);
    while high - low > 1e-9 {
        let middle = (low + high) / 2.0;
        if falls(middle) {
            high = middle;
        } else {
            low = middle;
        }
    }
    high
}

/// The one-sided upper bound at `confidence` on the rate of an event seen `k` times in `n`
/// trials: the largest rate under which seeing `k` or fewer still has `1 - confidence`
/// chance. 1 when `n` is 0.
pub fn rate_upper_bound(k: u64, n: u64, confidence: f64) -> f64 {
    if k >= n {
        return 1.0;
    }
    bisect(|p| binomial_cdf(k, n, p) < 1.0 - confidence)
}

/// The one-sided lower bound at `confidence`: the rate of the event not seen, bounded above.
pub fn rate_lower_bound(k: u64, n: u64, confidence: f64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    1.0 - rate_upper_bound(n - k.min(n), n, confidence)
}

#[cfg(test)]
mod tests {
    use super::{rate_lower_bound, rate_upper_bound};

    #[test]
    fn the_bounds_are_clopper_pearsons() {
        // None seen in n: the rule of three, 1 - 0.05^(1/n).
        let none = rate_upper_bound(0, 200, 0.95);
        assert!(
            (none - (1.0 - 0.05_f64.powf(1.0 / 200.0))).abs() < 1e-6,
            "{none}"
        );
        // Published values (one-sided 95%): 1 in 100 is at most 4.66%; 10 in 20 at least 30.2%.
        assert!((rate_upper_bound(1, 100, 0.95) - 0.0466).abs() < 5e-4);
        assert!((rate_lower_bound(10, 20, 0.95) - 0.3020).abs() < 5e-4);
        assert_eq!(rate_upper_bound(5, 5, 0.95), 1.0);
        assert!((rate_lower_bound(20, 20, 0.95) - 0.05_f64.powf(1.0 / 20.0)).abs() < 1e-6);
        assert_eq!(rate_lower_bound(0, 0, 0.95), 0.0);
    }
}
