//! A compact summary of many latencies, for a baseline file committed across many runs.
//!
//! Buckets are logarithmic in `ms + 1`, each 2% wide, so a value comes back within 1% of
//! `ms + 1`: within 2% of `ms` from 1 ms up and within 0.02 ms below. That is finer than the
//! noise of any latency worth gating on, and a whole history fits in a few hundred buckets.
//! They are stored sparsely, as one line of `bucket:count` pairs in ascending bucket order
//! (`"0:1 90:1 349:2"`), so the JSON is small, a committed baseline's diff shows a changed
//! histogram as one changed line, and a given history always serialises the same.

use serde::{Deserialize, Serialize};

/// The ratio between neighbouring buckets' bounds.
const GROWTH: f64 = 1.02;

/// The most latencies one histogram may hold when read, or give as [`samples`]
/// (8 MB of them): fifty times the window a baseline keeps, and more turns than a report
/// under the read cap can hold. A count past it is an edited file, not a measurement.
///
/// [`samples`]: LatencyHistogram::samples
pub(crate) const MAX_COUNT: u64 = 1_000_000;

/// Latencies in milliseconds, bucketed (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct LatencyHistogram {
    /// `(bucket, count)`, ascending by bucket, no zero counts.
    buckets: Vec<(u32, u64)>,
}

impl Serialize for LatencyHistogram {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let pairs: Vec<String> = self
            .buckets
            .iter()
            .map(|(bucket, count)| format!("{bucket}:{count}"))
            .collect();
        serializer.serialize_str(&pairs.join(" "))
    }
}

/// Reads the file's form, normalised: sorted, duplicates merged, zero counts dropped.
impl TryFrom<String> for LatencyHistogram {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        let mut histogram = LatencyHistogram::default();
        for pair in text.split_whitespace() {
            let parsed = pair
                .split_once(':')
                .and_then(|(b, c)| Some((b.parse().ok()?, c.parse().ok()?)));
            let Some((bucket, count)) = parsed else {
                return Err(format!(
                    "`{pair}` is not a latency bucket: expected `bucket:count`"
                ));
            };
            histogram.add(bucket, count);
        }
        Ok(histogram)
    }
}

fn bucket_of(ms: f64) -> u32 {
    // Saturating cast: only absurd latencies (beyond 1e300 ms) share the last bucket.
    (ms.ln_1p() / GROWTH.ln()).round() as u32
}

fn representative(bucket: u32) -> f64 {
    (f64::from(bucket) * GROWTH.ln()).exp_m1()
}

impl LatencyHistogram {
    /// Records one latency. Negative and non-finite values are not latencies and are skipped.
    pub fn record(&mut self, ms: f64) {
        if ms >= 0.0 && ms.is_finite() {
            self.add(bucket_of(ms), 1);
        }
    }

    /// Adds `other`'s counts to this one's.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        for &(bucket, count) in &other.buckets {
            self.add(bucket, count);
        }
    }

    fn add(&mut self, bucket: u32, count: u64) {
        if count == 0 {
            return;
        }
        match self.buckets.binary_search_by_key(&bucket, |&(b, _)| b) {
            Ok(i) => self.buckets[i].1 = self.buckets[i].1.saturating_add(count),
            Err(i) => self.buckets.insert(i, (bucket, count)),
        }
    }

    /// How many latencies the histogram holds.
    pub fn count(&self) -> u64 {
        self.buckets
            .iter()
            .fold(0, |total, &(_, count)| total.saturating_add(count))
    }

    /// The nearest-rank `q`-quantile, as [`quantile`](fn@super::quantile) takes it of
    /// [`samples`](Self::samples). `None` when empty or `q` is not in `[0, 1]`.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let rank = super::quantile::nearest_rank(self.count(), q)?;
        let mut seen = 0_u64;
        let &(bucket, _) = self.buckets.iter().find(|&&(_, count)| {
            seen = seen.saturating_add(count);
            seen >= rank
        })?;
        Some(representative(bucket))
    }

    /// Each bucket's representative value, as often as it was counted, ascending: lets the
    /// quantile test take a histogram as its `before` sample. At most [`MAX_COUNT`] of them:
    /// a bigger histogram (merged in memory) is scaled down first, as [`cap`](Self::cap) does,
    /// so that no count is ever expanded beyond that.
    pub fn samples(&self) -> impl Iterator<Item = f64> + use<> {
        let mut bounded = self.clone();
        bounded.cap(MAX_COUNT);
        bounded.buckets.into_iter().flat_map(|(bucket, count)| {
            std::iter::repeat_n(
                representative(bucket),
                usize::try_from(count).unwrap_or(usize::MAX),
            )
        })
    }

    /// Scales the counts down proportionally so that they total at most `max_count`.
    ///
    /// Called after merging each run, it keeps a window of about `max_count` samples: a
    /// sample's weight falls by a factor e once about `max_count` newer ones were recorded.
    /// Counts stay integers by rounding the *cumulative* counts, so every quantile's rank
    /// moves by at most half a sample from exact scaling and the total is exactly `max_count`.
    pub fn cap(&mut self, max_count: u64) {
        let total = self.count();
        if total <= max_count {
            return;
        }
        let scale = max_count as f64 / total as f64;
        let (mut cumulative, mut kept_so_far) = (0_u64, 0_u64);
        for (_, count) in &mut self.buckets {
            cumulative = cumulative.saturating_add(*count);
            let kept = (cumulative as f64 * scale).round() as u64;
            *count = kept.saturating_sub(kept_so_far);
            kept_so_far = kept;
        }
        self.buckets.retain(|&(_, count)| count > 0);
    }
}

#[cfg(test)]
mod tests {
    use super::{LatencyHistogram, bucket_of, representative};

    fn histogram_of(latencies: impl IntoIterator<Item = f64>) -> LatencyHistogram {
        let mut histogram = LatencyHistogram::default();
        latencies.into_iter().for_each(|ms| histogram.record(ms));
        histogram
    }

    #[test]
    fn a_bucket_stays_within_one_percent_of_ms_plus_one() {
        let mut ms = 0.0;
        while ms < 1e8 {
            let back = representative(bucket_of(ms));
            assert!((back - ms).abs() <= 0.01 * (ms + 1.0), "{ms} -> {back}");
            if ms >= 1.0 {
                assert!((back - ms).abs() <= 0.02 * ms, "{ms} -> {back}");
            }
            ms = ms * 1.003 + 0.01;
        }
        assert_eq!(representative(bucket_of(0.0)), 0.0);
    }

    #[test]
    fn the_json_is_sparse_sorted_and_round_trips() {
        let histogram = histogram_of([1000.0, 0.0, 1000.0, 5.0]);
        let json = serde_json::to_string(&histogram).unwrap();
        assert_eq!(json, r#""0:1 90:1 349:2""#);
        let back: LatencyHistogram = serde_json::from_str(&json).unwrap();
        assert_eq!(back, histogram);
        // A hand-edited file is normalised: sorted, duplicates merged, zeros dropped.
        let messy = r#""349:1  0:1 7:0 90:1 349:1""#;
        assert_eq!(
            serde_json::from_str::<LatencyHistogram>(messy).unwrap(),
            histogram
        );
        let broken = serde_json::from_str::<LatencyHistogram>(r#""12:x""#).unwrap_err();
        assert!(
            broken
                .to_string()
                .contains("`12:x` is not a latency bucket"),
            "{broken}"
        );
    }

    #[test]
    fn quantiles_and_samples_agree_with_the_recorded_values() {
        let histogram = histogram_of((1..=1000).map(f64::from));
        assert_eq!(histogram.count(), 1000);
        let p95 = histogram.quantile(0.95).unwrap();
        assert!((p95 / 950.0 - 1.0).abs() < 0.02, "{p95}");
        let samples: Vec<f64> = histogram.samples().collect();
        assert_eq!(samples.len(), 1000);
        assert!(samples.is_sorted());
        assert_eq!(crate::stats::quantile(&samples, 0.95), Some(p95));
        assert_eq!(LatencyHistogram::default().quantile(0.5), None);
        assert_eq!(histogram_of([f64::NAN, -1.0, f64::INFINITY]).count(), 0);
    }

    #[test]
    fn merge_adds_and_cap_scales_without_moving_quantiles() {
        let mut history = histogram_of((1..=3000).map(|i| f64::from(i % 1000)));
        history.merge(&histogram_of([10_000.0]));
        assert_eq!(history.count(), 3001);
        let p95 = history.quantile(0.95);
        history.cap(1000);
        assert_eq!(history.count(), 1000);
        assert_eq!(history.quantile(0.95), p95);
        history.cap(2000);
        assert_eq!(history.count(), 1000);
        history.cap(0);
        assert_eq!(history, LatencyHistogram::default());
    }
}
