//! What the regression gate found, as the report keeps it: each threshold's metric before
//! and now, and the cases whose verdict changed. [`crate::gate`] decides them.

use serde::{Deserialize, Serialize};

use super::Status;

/// The five regression thresholds, by their seed names.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
pub enum Threshold {
    #[serde(rename = "passRateDropPp")]
    PassRateDropPp,
    #[serde(rename = "deflectionDropPp")]
    DeflectionDropPp,
    #[serde(rename = "p95LatencyIncreasePct")]
    P95LatencyIncreasePct,
    #[serde(rename = "ttftP95IncreasePct")]
    TtftP95IncreasePct,
    #[serde(rename = "hallucinationRateIncreasePp")]
    HallucinationRateIncreasePp,
}

/// What a threshold's change and limit are measured in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Percentage points of a rate.
    PercentagePoints,
    /// Percent of the baseline's value.
    Percent,
}

impl Unit {
    /// A change or a limit in this unit, to one decimal without a trailing `.0`: `5 pp`,
    /// `66.7%`.
    pub fn amount(self, amount: f64) -> String {
        let text = format!("{amount:.1}");
        let number = text.strip_suffix(".0").unwrap_or(&text);
        match self {
            Unit::PercentagePoints => format!("{number} pp"),
            Unit::Percent => format!("{number}%"),
        }
    }
}

impl Threshold {
    pub const ALL: [Threshold; 5] = [
        Threshold::PassRateDropPp,
        Threshold::DeflectionDropPp,
        Threshold::P95LatencyIncreasePct,
        Threshold::TtftP95IncreasePct,
        Threshold::HallucinationRateIncreasePp,
    ];

    /// The seed's name, as written in config files.
    pub fn name(self) -> &'static str {
        match self {
            Threshold::PassRateDropPp => "passRateDropPp",
            Threshold::DeflectionDropPp => "deflectionDropPp",
            Threshold::P95LatencyIncreasePct => "p95LatencyIncreasePct",
            Threshold::TtftP95IncreasePct => "ttftP95IncreasePct",
            Threshold::HallucinationRateIncreasePp => "hallucinationRateIncreasePp",
        }
    }

    /// The metric it watches, for people.
    pub fn metric(self) -> &'static str {
        match self {
            Threshold::PassRateDropPp => "pass rate",
            Threshold::DeflectionDropPp => "deflection rate",
            Threshold::P95LatencyIncreasePct => "p95 latency",
            Threshold::TtftP95IncreasePct => "p95 TTFT",
            Threshold::HallucinationRateIncreasePp => "hallucination rate",
        }
    }

    pub fn unit(self) -> Unit {
        match self {
            Threshold::P95LatencyIncreasePct | Threshold::TtftP95IncreasePct => Unit::Percent,
            _ => Unit::PercentagePoints,
        }
    }

    /// The seed's default limit.
    pub fn default_limit(self) -> f64 {
        match self {
            Threshold::PassRateDropPp => 0.0,
            Threshold::DeflectionDropPp => 5.0,
            Threshold::P95LatencyIncreasePct => 20.0,
            Threshold::TtftP95IncreasePct => 20.0,
            Threshold::HallucinationRateIncreasePp => 2.0,
        }
    }
}

/// One metric of the run against the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MetricDelta {
    pub threshold: Threshold,
    /// The metric in the baseline and now: a rate in 0..=1, or milliseconds for latencies.
    pub baseline: Option<f64>,
    pub current: Option<f64>,
    /// How much worse the run is, in the threshold's unit: percentage points for rates (a
    /// drop of the pass or deflection rate, a rise of the hallucination rate), percent for
    /// latencies; negative when it got better. `None` when either side was not measured.
    pub change: Option<f64>,
    /// The threshold's limit in the same unit.
    pub limit: f64,
    pub tripped: bool,
}

/// A case whose verdict differs from the baseline's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CaseFlip {
    pub id: String,
    pub name: String,
    pub file: String,
    pub line: u32,
    /// `None` when the case is new (not in the baseline).
    pub baseline: Option<Status>,
    pub current: Status,
    /// With repeats: the pass fractions compared (passed / judged runs), baseline then now.
    pub pass_fraction: Option<(f64, f64)>,
}

/// Everything the gate found. It is part of the JSON report (`gate`), so that `compare`, the
/// Markdown summary and the PR comment render the same facts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Comparison {
    /// The baseline file compared with, as given.
    pub baseline: String,
    pub metrics: Vec<MetricDelta>,
    /// Passed in the baseline (or new) and failed now: these always trip the gate.
    pub newly_failing: Vec<CaseFlip>,
    /// Failed in the baseline and passed now.
    pub newly_passing: Vec<CaseFlip>,
    /// Keys (`file#id`, see [`crate::shard::key`]) of the baseline's cases that did not run now.
    pub missing: Vec<String>,
}

impl Comparison {
    /// True when the gate trips: a threshold, or a case that newly fails.
    pub fn regressed(&self) -> bool {
        !self.newly_failing.is_empty() || self.metrics.iter().any(|m| m.tripped)
    }

    /// The thresholds that tripped.
    pub fn tripped(&self) -> impl Iterator<Item = &MetricDelta> {
        self.metrics.iter().filter(|m| m.tripped)
    }
}
