//! The numbers measured over a run (seed 002's pass rate, deflection, latency, TTFT,
//! hallucination rate and tool-call accuracy, plus Regtrace's weighted suite score and the
//! flake rate of repeated cases), as the report keeps them. [`crate::metrics`] computes them.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Status, millis};
use crate::stats::quantile;
use crate::transcript::Usage;

/// `part / whole`, `None` when nothing counted.
pub fn ratio(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// How many cases, turns or checks ended in each status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Counts {
    pub total: usize,
    pub passed: usize,
    pub failed: usize,
    pub errors: usize,
    pub skipped: usize,
}

impl Counts {
    /// Passed and failed: the ones a verdict was reached on.
    pub fn judged(&self) -> usize {
        self.passed + self.failed
    }

    /// `passed / (passed + failed)`: errors and skipped ones are left out.
    pub fn pass_rate(&self) -> Option<f64> {
        ratio(self.passed, self.judged())
    }

    fn add(&mut self, status: Status) {
        self.total += 1;
        match status {
            Status::Passed => self.passed += 1,
            Status::Failed => self.failed += 1,
            Status::Error => self.errors += 1,
            Status::Skipped => self.skipped += 1,
        }
    }
}

impl FromIterator<Status> for Counts {
    fn from_iter<I: IntoIterator<Item = Status>>(statuses: I) -> Self {
        let mut counts = Counts::default();
        statuses.into_iter().for_each(|s| counts.add(s));
        counts
    }
}

/// The median and 95th percentile of a set of durations, by nearest rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Percentiles {
    #[serde(rename = "p50_ms", with = "millis")]
    #[cfg_attr(feature = "schema", schemars(with = "u64"))]
    pub p50: Duration,
    #[serde(rename = "p95_ms", with = "millis")]
    #[cfg_attr(feature = "schema", schemars(with = "u64"))]
    pub p95: Duration,
}

impl Percentiles {
    /// `None` for an empty sample.
    pub fn of(mut sample: Vec<Duration>) -> Option<Self> {
        sample.sort_unstable();
        Some(Self {
            p50: quantile(&sample, 0.50)?,
            p95: quantile(&sample, 0.95)?,
        })
    }
}

impl Percentiles {
    /// The percentiles of durations that weigh differently, `(duration, weight)`: the
    /// smallest duration whose cumulative weight reaches the share (nearest rank when every
    /// weight is 1). `None` when nothing weighs.
    pub(crate) fn of_weighted(mut sample: Vec<(Duration, f64)>) -> Option<Self> {
        sample.retain(|&(_, w)| w > 0.0 && w.is_finite());
        sample.sort_unstable_by_key(|&(d, _)| d);
        let total: f64 = sample.iter().map(|&(_, w)| w).sum();
        let at = |q: f64| {
            // As `quantile`'s nearest rank: a share within 1e-9 of a whole weight counts as it.
            let target = q * total - 1e-9 * total.max(1.0);
            let mut cumulative = 0.0;
            sample
                .iter()
                .find(|&&(_, w)| {
                    cumulative += w;
                    cumulative >= target
                })
                .map(|&(d, _)| d)
        };
        Some(Self {
            p50: at(0.50)?,
            p95: at(0.95)?,
        })
    }
}

/// The latency of directly executed tools (SCRAPI tool tests), at the percentiles SCRAPI
/// reports, by nearest rank like every percentile here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolLatency {
    /// How many executions were timed.
    pub count: usize,
    #[serde(rename = "p50_ms", with = "millis")]
    #[cfg_attr(feature = "schema", schemars(with = "u64"))]
    pub p50: Duration,
    #[serde(rename = "p90_ms", with = "millis")]
    #[cfg_attr(feature = "schema", schemars(with = "u64"))]
    pub p90: Duration,
    #[serde(rename = "p99_ms", with = "millis")]
    #[cfg_attr(feature = "schema", schemars(with = "u64"))]
    pub p99: Duration,
}

impl ToolLatency {
    /// `None` for an empty sample.
    pub fn of(mut sample: Vec<Duration>) -> Option<Self> {
        sample.sort_unstable();
        Some(Self {
            count: sample.len(),
            p50: quantile(&sample, 0.50)?,
            p90: quantile(&sample, 0.90)?,
            p99: quantile(&sample, 0.99)?,
        })
    }
}

/// Everything measured over one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Aggregates {
    pub cases: Counts,
    pub turns: Counts,
    pub checks: Counts,
    /// Cases passed / (passed + failed). Errored and skipped cases are left out (see `cases`).
    pub pass_rate: Option<f64>,
    /// Turns passed / (passed + failed), on the same terms.
    pub turn_pass_rate: Option<f64>,
    /// Share of the cases that reached the agent in which no turn reported a handoff with a
    /// status other than `none`.
    pub deflection_rate: Option<f64>,
    /// Over every played turn's latency (request sent to complete reply), tool tests aside.
    pub latency: Option<Percentiles>,
    /// Over the turns where time to first token was measured (streamed replies).
    pub ttft: Option<Percentiles>,
    /// Over the tool tests' executions; `None` when no tool test ran. Absent from older
    /// reports.
    #[serde(default)]
    pub tool_latency: Option<ToolLatency>,
    /// Failed / judged among `llm-judge-not-hallucinating` checks; `None` when none was judged
    /// (no such scorer, or no judge configured).
    pub hallucination_rate: Option<f64>,
    /// Passed / judged among checks that an expected tool was called (turn tool-call
    /// expectations and the `tool-called`, `tool-called-with-input` scorers).
    pub tool_call_accuracy: Option<f64>,
    /// `sum(score * weight) / sum(weight)` over the judged (passed or failed) cases.
    pub suite_score: Option<f64>,
    /// With `--repeat`: the share of the repeated cases that are flaky (their runs disagree);
    /// `None` without repeats.
    pub flake_rate: Option<f64>,
    /// Tokens the agent reported, summed over every case (every run of it), with their cost.
    pub tokens: Usage,
    /// The mean of what one run of a conversation cost the agent, in US dollars, over the
    /// conversations whose cost is wholly known. Absent from older reports.
    #[serde(default)]
    pub cost_per_conversation: Option<f64>,
    /// The mean of the tokens one run of a conversation spent, over those that reported
    /// tokens. Absent from older reports.
    #[serde(default)]
    pub tokens_per_conversation: Option<f64>,
}

/// How a run waited on one endpoint's rate limit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RateLimitWaits {
    /// `agent`, `judge anthropic`, ...
    pub endpoint: String,
    /// Answers that asked to slow down (429, 503).
    pub waits: u64,
    /// Wall time during which requests to the endpoint were paused.
    #[serde(rename = "waited_ms", with = "millis")]
    #[cfg_attr(feature = "schema", schemars(with = "u64"))]
    pub waited: Duration,
}

impl Aggregates {
    /// Drops the value of `metric`, which the run could not measure.
    pub fn forget(&mut self, metric: super::Threshold) {
        use super::Threshold;
        match metric {
            Threshold::PassRateDropPp => self.pass_rate = None,
            Threshold::DeflectionDropPp => self.deflection_rate = None,
            Threshold::P95LatencyIncreasePct => self.latency = None,
            Threshold::TtftP95IncreasePct => self.ttft = None,
            Threshold::HallucinationRateIncreasePp => self.hallucination_rate = None,
            Threshold::CostIncreasePct => self.cost_per_conversation = None,
            Threshold::TokensIncreasePct => self.tokens_per_conversation = None,
        }
    }
}

impl RateLimitWaits {
    /// The waits of several reports (shards) per endpoint, in the order endpoints first appear.
    /// Shards run side by side, so their waits add up as work, not as wall time.
    pub fn sum<'a>(all: impl IntoIterator<Item = &'a RateLimitWaits>) -> Vec<RateLimitWaits> {
        let mut summed: Vec<RateLimitWaits> = Vec::new();
        for waits in all {
            match summed.iter_mut().find(|s| s.endpoint == waits.endpoint) {
                Some(total) => {
                    total.waits += waits.waits;
                    total.waited += waits.waited;
                }
                None => summed.push(waits.clone()),
            }
        }
        summed
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Counts, Percentiles};
    use crate::results::Status;

    fn ms(values: &[u64]) -> Vec<Duration> {
        values.iter().copied().map(Duration::from_millis).collect()
    }

    #[test]
    fn percentiles_sort_their_sample() {
        let p = Percentiles::of(ms(&[900, 100, 300, 200, 400])).unwrap();
        assert_eq!(p.p50, Duration::from_millis(300));
        assert_eq!(p.p95, Duration::from_millis(900));
        assert_eq!(Percentiles::of(Vec::new()), None);
    }

    #[test]
    fn weighted_percentiles_are_nearest_rank_at_equal_weights() {
        let equal: Vec<(Duration, f64)> = ms(&[900, 100, 300, 200, 400])
            .into_iter()
            .map(|d| (d, 1.0))
            .collect();
        assert_eq!(
            Percentiles::of_weighted(equal),
            Percentiles::of(ms(&[900, 100, 300, 200, 400]))
        );
        // 100 ms weighs 3 of 4: the median is it, and the p95 the 900 ms of the last quarter.
        let weighted = vec![(ms(&[100])[0], 3.0), (ms(&[900])[0], 1.0)];
        let p = Percentiles::of_weighted(weighted).unwrap();
        assert_eq!((p.p50, p.p95), (ms(&[100])[0], ms(&[900])[0]));
        assert_eq!(Percentiles::of_weighted(vec![(ms(&[5])[0], 0.0)]), None);
    }

    #[test]
    fn pass_rate_leaves_errors_and_skips_out() {
        let counts: Counts = [
            Status::Passed,
            Status::Passed,
            Status::Passed,
            Status::Failed,
            Status::Error,
            Status::Skipped,
        ]
        .into_iter()
        .collect();
        assert_eq!(counts.total, 6);
        assert_eq!(counts.errors, 1);
        assert_eq!(counts.pass_rate(), Some(0.75));
        let none: Counts = [Status::Error].into_iter().collect();
        assert_eq!(none.pass_rate(), None);
    }

    #[test]
    fn millis_round_trip_in_json() {
        let p = Percentiles {
            p50: Duration::from_micros(120_700),
            p95: Duration::from_secs(2),
        };
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(json, r#"{"p50_ms":120,"p95_ms":2000}"#);
        let back: Percentiles = serde_json::from_str(&json).unwrap();
        assert_eq!(back.p95, Duration::from_secs(2));
    }
}
