//! The few distribution functions the tests need, written out so that `stats` pulls in no
//! numerics crate. Their accuracy (about 1e-7 relative or better) is far finer than any
//! significance level the gate compares against.

use std::f64::consts::TAU;

/// `ln(n!)`: exact up to 20!, Stirling's series beyond (absolute error below 1e-15).
pub(super) fn ln_factorial(n: u64) -> f64 {
    const LARGEST_EXACT: u64 = 20;
    if n <= LARGEST_EXACT {
        return ((1..=n).product::<u64>() as f64).ln();
    }
    let x = n as f64;
    let inv = x.recip();
    let inv2 = inv * inv;
    let series = inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 * (1.0 / 1260.0 - inv2 / 1680.0)));
    x * x.ln() - x + 0.5 * (TAU * x).ln() + series
}

/// `ln C(n, k)`, for `k <= n`.
pub(super) fn ln_choose(n: u64, k: u64) -> f64 {
    ln_factorial(n) - ln_factorial(k) - ln_factorial(n.saturating_sub(k))
}

/// The `p`-quantile of the standard normal, by Acklam's rational fit (relative error below
/// 1.2e-9); `NaN` outside `(0, 1)`.
pub(super) fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 6] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
        1.0,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 5] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
        1.0,
    ];
    const CENTRAL: f64 = 0.975_75;
    let horner = |coefficients: &[f64], x: f64| coefficients.iter().fold(0.0, |acc, c| acc * x + c);
    let tail = |p: f64| {
        let s = (-2.0 * p.ln()).sqrt();
        horner(&C, s) / horner(&D, s)
    };
    if !(p > 0.0 && p < 1.0) {
        f64::NAN
    } else if p < 1.0 - CENTRAL {
        tail(p)
    } else if p > CENTRAL {
        -tail(1.0 - p)
    } else {
        let q = p - 0.5;
        q * horner(&A, q * q) / horner(&B, q * q)
    }
}

#[cfg(test)]
mod tests {
    use super::{ln_choose, ln_factorial, normal_quantile};

    fn close(a: f64, b: f64, relative: f64) -> bool {
        (a - b).abs() <= relative * b.abs()
    }

    #[test]
    fn ln_factorial_is_exact_small_and_continuous_at_the_switch() {
        assert_eq!(ln_factorial(0), 0.0);
        assert_eq!(ln_factorial(1), 0.0);
        assert!(close(ln_choose(10, 5).exp(), 252.0, 1e-14));
        let product_21 = ln_factorial(20) + 21f64.ln();
        assert!(close(ln_factorial(21), product_21, 1e-15));
        let by_sum = (1..=1000u64).map(|i| (i as f64).ln()).sum::<f64>();
        assert!(close(ln_factorial(1000), by_sum, 1e-13));
    }

    #[test]
    fn the_normal_quantile_matches_tables() {
        assert!(close(normal_quantile(0.975), 1.959_963_985, 1e-8));
        assert!(close(normal_quantile(0.995), 2.575_829_304, 1e-8));
        assert!(close(normal_quantile(0.001), -3.090_232_306, 1e-8));
        assert_eq!(normal_quantile(0.5), 0.0);
        assert!(normal_quantile(0.0).is_nan() && normal_quantile(f64::NAN).is_nan());
    }
}
