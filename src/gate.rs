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

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use crate::results::{
    Aggregates, CaseFlip, CaseResult, Comparison, MetricDelta, Percentiles, Report, Status,
    Threshold, Unit,
};
use crate::shard;

pub use crate::config::thresholds::Thresholds;

/// Latency increases smaller than this never trip a threshold (see the module docs).
pub const LATENCY_FLOOR: Duration = Duration::from_millis(50);

impl Threshold {
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
        let before: HashMap<String, &CaseResult> =
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
fn key(case: &CaseResult) -> String {
    shard::key(&case.file, &case.id)
}

enum Flip {
    Worse(CaseFlip),
    Better(CaseFlip),
}

/// How `case` moved since `earlier` (its baseline run, `None` when it is new).
fn flip(earlier: Option<&CaseResult>, case: &CaseResult) -> Option<Flip> {
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
        let (before, now) = (repeats::tally(before), repeats::tally(now));
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
