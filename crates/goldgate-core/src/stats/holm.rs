//! Combining a run's p-values: Holm's step-down procedure.
//!
//! The promise to users is "a gated run of an unchanged agent trips at most `alpha` of the
//! time": the family-wise error rate, the chance of even one false alarm in the suite. Holm
//! controls it under any dependence between the tests (cases share an agent, a judge and a
//! machine, so independence cannot be assumed), and rejects everything Bonferroni does and
//! more. Benjamini–Hochberg is more powerful but controls the false discovery rate, the
//! expected *share* of false alarms among the alarms raised; that bounds nothing about how
//! often an unchanged suite goes red, since an all-null suite with one alarm has 100% false
//! discoveries and BH only limits how often that happens to `alpha` under independence or
//! positive dependence, not any dependence.

/// Holm-adjusted p-values, in input order: the smallest `alpha` at which each test would be
/// rejected. Monotone in the raw p-values and capped at 1. A `NaN` counts as 1 and values
/// outside `[0, 1]` are clamped.
fn holm_adjusted(p_values: &[f64]) -> Vec<f64> {
    let clean = |p: f64| if p.is_nan() { 1.0 } else { p.clamp(0.0, 1.0) };
    let mut order: Vec<usize> = (0..p_values.len()).collect();
    order.sort_by(|&a, &b| clean(p_values[a]).total_cmp(&clean(p_values[b])));
    let mut adjusted = vec![1.0; p_values.len()];
    let mut running_max = 0.0_f64;
    for (rank, &index) in order.iter().enumerate() {
        let still_tested = (p_values.len() - rank) as f64;
        running_max = running_max.max((still_tested * clean(p_values[index])).min(1.0));
        adjusted[index] = running_max;
    }
    adjusted
}

/// Holm over only the tests that can still reject at `alpha` (Tarone's exclusion, with Holm's
/// step-down inside: Hommel & Krummenauer 1998). An exact test on few runs cannot give every
/// p-value: a case with 4 runs on main and 5 here never goes below 1/126 whatever happens.
/// Such a test can never reject, yet in plain Holm it still counts towards `m`, diluting the
/// tests that can. With `min_attainable[i]` the smallest p-value test `i`'s sample sizes
/// allow (known before its outcome), take the smallest `k` with at most `k` tests whose
/// minimum is at most `alpha / k`: only those form the family, and every other test reads 1.
/// The family-wise error rate stays at most `alpha` under any dependence.
pub fn tarone_holm_adjusted(p_values: &[f64], min_attainable: &[f64], alpha: f64) -> Vec<f64> {
    let m = p_values.len();
    let can_reject = |k: usize| {
        let bar = alpha / k as f64;
        move |min: &f64| *min <= bar
    };
    let k = (1..=m.max(1))
        .find(|&k| min_attainable.iter().filter(|m| can_reject(k)(m)).count() <= k)
        .unwrap_or(m);
    let family: Vec<usize> = (0..m)
        .filter(|&i| can_reject(k)(&min_attainable.get(i).copied().unwrap_or(0.0)))
        .collect();
    let within = holm_adjusted(&family.iter().map(|&i| p_values[i]).collect::<Vec<_>>());
    let mut adjusted = vec![1.0; m];
    for (&i, p) in family.iter().zip(within) {
        adjusted[i] = p;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::{holm_adjusted, tarone_holm_adjusted};

    #[test]
    fn tests_that_cannot_reject_do_not_dilute_those_that_can() {
        // One metric test (could reach any p) and 15 cases whose sample sizes cannot go below
        // 1/126: plain Holm multiplies the metric's p by 16, Tarone's family keeps it alone.
        let mut p = vec![0.0005];
        let mut min = vec![0.0];
        p.extend([0.2; 15]);
        min.extend([1.0 / 126.0; 15]);
        let plain = holm_adjusted(&p);
        let tarone = tarone_holm_adjusted(&p, &min, 0.006);
        assert!(plain[0] > 0.006, "{plain:?}");
        assert!((tarone[0] - 0.0005).abs() < 1e-12, "{tarone:?}");
        assert!(tarone[1..].iter().all(|&a| a == 1.0));
        // When every test can reach the bar, it is Holm's procedure.
        let all = [0.04, 0.01, 0.03, 0.5];
        assert_eq!(
            tarone_holm_adjusted(&all, &[0.0; 4], 0.05),
            holm_adjusted(&all)
        );
    }

    /// Which tests Holm's procedure rejects at family-wise level `alpha`.
    fn holm(p_values: &[f64], alpha: f64) -> Vec<bool> {
        holm_adjusted(p_values)
            .into_iter()
            .map(|p| p <= alpha)
            .collect()
    }

    #[test]
    fn adjusted_values_step_down_and_keep_input_order() {
        let adjusted = holm_adjusted(&[0.04, 0.01, 0.03, 0.5]);
        // Sorted 0.01, 0.03, 0.04, 0.5 scale by 4, 3, 2, 1: 0.04, 0.09, 0.08 -> 0.09, 0.5.
        let expected = [0.09, 0.04, 0.09, 0.5];
        for (got, want) in adjusted.iter().zip(expected) {
            assert!((got - want).abs() < 1e-12, "{adjusted:?}");
        }
        assert_eq!(
            holm(&[0.04, 0.01, 0.03, 0.5], 0.05),
            [false, true, false, false]
        );
        assert_eq!(
            holm(&[0.04, 0.01, 0.03, 0.5], 0.1),
            [true, true, true, false]
        );
    }

    #[test]
    fn holm_rejects_at_least_what_bonferroni_rejects() {
        let p = [0.001, 0.012, 0.013, 0.02, 0.9];
        let bonferroni: Vec<bool> = p.iter().map(|&p| p <= 0.05 / 5.0).collect();
        let holm = holm(&p, 0.05);
        assert!(bonferroni.iter().zip(&holm).all(|(b, h)| !b || *h));
        assert_eq!(holm, [true, true, true, true, false]);
    }

    #[test]
    fn odd_inputs_are_total() {
        assert!(holm_adjusted(&[]).is_empty());
        assert_eq!(holm_adjusted(&[f64::NAN, 0.25, 7.0]), [1.0, 0.75, 1.0]);
        assert_eq!(holm(&[0.0, 0.5], f64::NAN), [false, false]);
        assert_eq!(holm_adjusted(&[0.3, 0.3]), [0.6, 0.6]);
    }
}
