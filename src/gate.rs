//! The regression gate: a run's report against a committed baseline, under thresholds.
//!
//! Thresholds keep the names and defaults of gecx (seed 002). A case that passed in the
//! baseline, or is new, and fails now always trips the gate, whatever the metrics say. Errors
//! of the run are never regressions: a case that errored now is left out (the run's exit is
//! decided by `--max-errors`), and so is a metric that was not measured on both sides.
//!
//! The rules, in full:
//! - `passRateDropPp`, `deflectionDropPp`: trip when the rate dropped by more than the limit,
//!   in percentage points (a limit of 0 means any drop).
//! - `hallucinationRateIncreasePp`: trips when the rate rose by more than the limit, in points.
//! - `p95LatencyIncreasePct`, `ttftP95IncreasePct`: trip when the p95 rose by more than the
//!   limit in percent *and* by more than [`LATENCY_FLOOR`]. Below that floor the difference is
//!   the scheduling noise of a shared CI machine, not the agent: a local agent answering in
//!   1 ms one run and 2 ms the next has not slowed down by 100%. A baseline p95 of 0 ms (the
//!   report's resolution is 1 ms) counts as 1 ms, so that the percentage stays finite.
//! - Cases are matched by file and id (the file compared with `./` and `\` normalised). With
//!   `--repeat` on both sides, pass fractions are compared instead of verdicts
//!   ([`repeats::worse_beyond_chance`]: a one-sided Fisher exact test at the 5% level).

pub mod baseline;
pub mod repeats;
pub mod thresholds;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::metrics::{Aggregates, Percentiles};
use crate::outcome::Status;
use crate::report::json::{CaseReport, Report};
use crate::shard;

pub use thresholds::Thresholds;

/// Latency increases smaller than this never trip a threshold (see the module docs).
pub const LATENCY_FLOOR: Duration = Duration::from_millis(50);

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

    /// The metric in a report's aggregates: a rate in `0..=1`, or milliseconds.
    fn value(self, aggregates: &Aggregates) -> Option<f64> {
        let p95_ms = |p: Percentiles| p.p95.as_millis() as f64;
        match self {
            Threshold::PassRateDropPp => aggregates.pass_rate,
            Threshold::DeflectionDropPp => aggregates.deflection_rate,
            Threshold::P95LatencyIncreasePct => aggregates.latency.map(p95_ms),
            Threshold::TtftP95IncreasePct => aggregates.ttft.map(p95_ms),
            Threshold::HallucinationRateIncreasePp => aggregates.hallucination_rate,
        }
    }

    /// How much worse `current` is than `baseline`, in the threshold's unit.
    fn worsening(self, baseline: f64, current: f64) -> f64 {
        match self {
            Threshold::PassRateDropPp | Threshold::DeflectionDropPp => (baseline - current) * 100.0,
            Threshold::HallucinationRateIncreasePp => (current - baseline) * 100.0,
            Threshold::P95LatencyIncreasePct | Threshold::TtftP95IncreasePct => {
                let base = baseline.max(1.0);
                (current - base) / base * 100.0
            }
        }
    }
}

/// Rates are ratios of counts: equal rates computed from different counts may differ in the
/// last bits, and must not read as a drop when the limit is 0.
const EPSILON: f64 = 1e-9;

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

impl MetricDelta {
    fn new(threshold: Threshold, baseline: &Aggregates, current: &Aggregates, limit: f64) -> Self {
        let (before, now) = (threshold.value(baseline), threshold.value(current));
        let change = before
            .zip(now)
            .map(|(before, now)| threshold.worsening(before, now));
        let beyond_floor = || match (threshold.unit(), before, now) {
            (Unit::Percent, Some(before), Some(now)) => {
                now - before > LATENCY_FLOOR.as_millis() as f64
            }
            _ => true,
        };
        Self {
            threshold,
            baseline: before,
            current: now,
            change,
            limit,
            tripped: change.is_some_and(|c| c > limit + EPSILON) && beyond_floor(),
        }
    }

    /// Worse by more than the limit, but a latency change within [`LATENCY_FLOOR`].
    pub fn within_latency_floor(&self) -> bool {
        !self.tripped && self.change.is_some_and(|c| c > self.limit + EPSILON)
    }
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
    /// Keys (`file#id`, see [`shard::key`]) of the baseline's cases that did not run now.
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

/// A baseline ready to judge runs against.
#[derive(Clone, Debug)]
pub struct Gate {
    /// The baseline file, as the user named it.
    pub baseline_name: String,
    pub baseline: Report,
    pub thresholds: Thresholds,
}

impl Gate {
    /// Judges `current` against the baseline.
    pub fn compare(&self, current: &Report) -> Comparison {
        let metrics = Threshold::ALL
            .into_iter()
            .map(|t| {
                let limit = self.thresholds.limit(t);
                MetricDelta::new(t, &self.baseline.aggregates, &current.aggregates, limit)
            })
            .collect();
        let before: HashMap<String, &CaseReport> =
            self.baseline.cases.iter().map(|c| (key(c), c)).collect();
        let mut comparison = Comparison {
            baseline: self.baseline_name.clone(),
            metrics,
            ..Comparison::default()
        };
        for case in &current.cases {
            let earlier = before.get(&key(case)).copied();
            match flip(earlier, case) {
                Some(Flip::Worse(flip)) => comparison.newly_failing.push(flip),
                Some(Flip::Better(flip)) => comparison.newly_passing.push(flip),
                None => {}
            }
        }
        let now: HashSet<String> = current.cases.iter().map(key).collect();
        comparison.missing = self
            .baseline
            .cases
            .iter()
            .map(key)
            .filter(|k| !now.contains(k))
            .collect();
        comparison
    }
}

/// Cases are the same case when their keys agree: file and id, the file's separators and `.`
/// segments normalised ([`shard::key`]), so that a baseline written on Windows, or from
/// `./evals` rather than `evals`, still matches.
fn key(case: &CaseReport) -> String {
    shard::key(&case.file, &case.id)
}

enum Flip {
    Worse(CaseFlip),
    Better(CaseFlip),
}

/// How `case` moved since `earlier` (its baseline run, `None` when it is new).
fn flip(earlier: Option<&CaseReport>, case: &CaseReport) -> Option<Flip> {
    let made = |pass_fraction| CaseFlip {
        id: case.id.clone(),
        name: case.name.clone(),
        file: case.file.clone(),
        line: case.line,
        baseline: earlier.map(|c| c.status),
        current: case.status,
        pass_fraction,
    };
    if case.status == Status::Error {
        return None;
    }
    // With repeats on both sides the fractions decide, not the verdicts.
    if let Some((before, now)) = earlier
        .and_then(|c| c.repeats.as_ref())
        .zip(case.repeats.as_ref())
    {
        let (before, now) = (repeats::Tally::of(before), repeats::Tally::of(now));
        let fractions = before.fraction().zip(now.fraction());
        return if repeats::worse_beyond_chance(before, now) {
            Some(Flip::Worse(made(fractions)))
        } else if repeats::worse_beyond_chance(now, before) {
            Some(Flip::Better(made(fractions)))
        } else {
            None
        };
    }
    let before = earlier.map(|c| c.status);
    match case.status {
        // Only the same failure in the baseline excuses one now: a case that passed, was new,
        // errored or was skipped then was not known to fail.
        Status::Failed if before != Some(Status::Failed) => Some(Flip::Worse(made(None))),
        Status::Passed if before == Some(Status::Failed) => Some(Flip::Better(made(None))),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
