//! The exact sign test: of the pairs that differ, how many went the worse way.

use super::dist::ln_choose;

/// The one-sided p-value of "pairs go the worse way more often than not": the chance of at
/// least `worse` of `worse + better` fair coin flips landing worse, with the smallest p-value
/// that many pairs could give (all worse). `None` with no pair that differs.
pub fn sign_worse(worse: u64, better: u64) -> Option<(f64, f64)> {
    let n = worse.checked_add(better).filter(|&n| n > 0)?;
    let half = 0.5f64.ln() * n as f64;
    let p_value = (worse..=n)
        .map(|k| (ln_choose(n, k) + half).exp())
        .sum::<f64>()
        .min(1.0);
    Some((p_value, half.exp()))
}

#[cfg(test)]
mod tests {
    use super::sign_worse;

    #[test]
    fn tails_of_fair_coins() {
        let (p, best) = sign_worse(10, 0).unwrap();
        assert!((p - 1.0 / 1024.0).abs() < 1e-12);
        assert_eq!(p, best);
        // 8 or more of 10: (45 + 10 + 1) / 1024.
        let (p, _) = sign_worse(8, 2).unwrap();
        assert!((p - 56.0 / 1024.0).abs() < 1e-9, "{p}");
        assert!((sign_worse(0, 5).unwrap().0 - 1.0).abs() < 1e-12);
        assert_eq!(sign_worse(0, 0), None);
    }
}
