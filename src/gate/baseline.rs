//! The committed baseline: reading one to gate against, and what `--update-baseline` writes.
//!
//! A baseline is the JSON report, minus what changes from run to run without meaning, so
//! that its diff in a pull request shows only real changes. Left out (written as `null`, or
//! `0` for the case duration, whose type has no absent value):
//! - each case's `duration_ms` and each turn's `latency_ms` and `ttft_ms`: timings of single
//!   requests, different on every run;
//! - the measured values of latency checks (`latency-p95-under` and the like): their
//!   `actual` and `reason` (`p95 = 8 ms over 2 turns`); their verdict is kept;
//! - `agent_log`: what a command agent wrote on stderr (timestamps, process ids);
//! - `agent_startup_ms` and `rate_limits`: timings of the run's surroundings, not of the
//!   agent's answers;
//! - `gate`: the comparison with the previous baseline.
//!
//! Kept: everything else, including the latency and TTFT percentiles in `aggregates`, the
//! latency `samples` and each case's `turn_times`. Those are measurements too, and differ
//! between two runs of the same agent, but they are what `p95LatencyIncreasePct` and
//! `ttftP95IncreasePct` compare with.
//!
//! **History.** A baseline written over a previous one folds that one's history in
//! ([`fold_history`]), so that the gate measures a case's flake rate and the latency spread
//! over many builds of main rather than one:
//! - each case keeps the tallies (passed / judged runs) of up to [`HISTORY_BUILDS`] - 1
//!   earlier builds, oldest first, plus its own runs: a window of the last 20 builds;
//! - each case's turn times of all builds are pooled and scaled down to at most
//!   [`CASE_SAMPLES_KEPT`] per metric, older ones fading first
//!   ([`LatencyHistogram::cap`](crate::stats::LatencyHistogram::cap)), and the latency and
//!   TTFT percentiles of `aggregates` are taken again over them: the p95 the gate compares
//!   with is the one the baseline shows;
//! - the suite's pooled latency samples (read only against a baseline written before cases
//!   kept their times) likewise, at most [`SAMPLES_KEPT`] per metric.
//!
//! A case that left the suite leaves its history behind; a new case starts with none.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use super::{Gate, Thresholds};
use crate::metrics::{Timing, suite_percentiles};
use crate::results::json::{self, ReadError};
use crate::results::{CheckCategory, Samples, Status, TurnTimes};
use crate::results::{CheckResult, Report, Threshold, Unmeasured};
use crate::shard::SuiteId;

/// The builds of main a baseline remembers for each case, the latest included.
pub const HISTORY_BUILDS: usize = 20;

/// The most latencies (and, apart, TTFTs) a baseline keeps.
pub const SAMPLES_KEPT: u64 = 20_000;

/// The most latencies (and, apart, TTFTs) a baseline keeps of each case: 20 builds of a
/// ten-turn case run 5 times fit twice over before older ones fade.
pub const CASE_SAMPLES_KEPT: u64 = 2_000;

/// Folds `previous` (the baseline being replaced) into `baseline`'s history (see the module
/// docs). Returns how many builds the history now spans.
pub fn fold_history(baseline: &mut Report, previous: &Report) -> u32 {
    let earlier = super::by_key(previous);
    for case in &mut baseline.cases {
        let Some(before) = earlier.get(&case.key()) else {
            continue;
        };
        let mut history = before.history.clone();
        history.push(before.tally());
        let excess = history.len().saturating_sub(HISTORY_BUILDS - 1);
        history.drain(..excess);
        case.history = history;
        let times = &mut case.turn_times;
        times.merge(&before.turn_times);
        times.latency.cap(CASE_SAMPLES_KEPT);
        times.ttft.cap(CASE_SAMPLES_KEPT);
    }
    // Over the builds kept; a report written before cases kept their times keeps its own.
    if Timing::Latency.kept_by(&baseline.cases) {
        baseline.aggregates.latency = suite_percentiles(&baseline.cases, Timing::Latency);
    }
    if Timing::Ttft.kept_by(&baseline.cases) {
        baseline.aggregates.ttft = suite_percentiles(&baseline.cases, Timing::Ttft);
    }
    let samples = &mut baseline.samples;
    samples.merge(&previous.samples);
    samples.latency.cap(SAMPLES_KEPT);
    samples.ttft.cap(SAMPLES_KEPT);
    let builds = previous
        .samples
        .builds
        .max(1)
        .saturating_add(samples.builds.max(1));
    samples.builds = builds.min(HISTORY_BUILDS as u32);
    samples.builds
}

impl Gate {
    /// Reads the baseline at `path` (a JSON report of this schema version).
    pub fn load(path: &Path, thresholds: Thresholds) -> Result<Gate, ReadError> {
        Ok(Gate::new(
            path.display().to_string(),
            json::read_file(path)?,
            thresholds,
        ))
    }

    /// The gate of a run of part of the suite (`run --changed-since`): the baseline's cases
    /// that `keys` (see [`crate::shard::key`]) does not name are left out, so that they are
    /// neither missing nor counted, and its aggregates are recomputed over the rest. Its
    /// latency samples go too (pooled, and each case's turn times): the pooled ones mix every
    /// case of the suite, and a few cases' latencies against the whole suite's would measure
    /// the choice of cases, not the agent. The latency thresholds are then compared only where
    /// the baseline's cases kept their latencies (a report used as a baseline), by the values,
    /// as before cases kept their times.
    pub fn only(mut self, keys: &HashSet<String>) -> Gate {
        let baseline = &mut self.baseline;
        let timed = [
            Threshold::P95LatencyIncreasePct,
            Threshold::TtftP95IncreasePct,
        ];
        let measured = timed.map(|t| t.value(&baseline.aggregates).is_some());
        baseline.cases.retain(|case| keys.contains(&case.key()));
        baseline.suite = SuiteId::of_keys(baseline.cases.iter().map(|c| c.key()), None);
        baseline.samples = Samples::default();
        baseline
            .cases
            .iter_mut()
            .for_each(|c| c.turn_times = TurnTimes::default());
        baseline.aggregate();
        // Measured on the whole suite, gone with its samples: every output says why, rather
        // than that the baseline never measured it.
        for (metric, measured) in timed.into_iter().zip(measured) {
            if measured && metric.value(&baseline.aggregates).is_none() {
                baseline.unmeasured.push(Unmeasured {
                    metric,
                    why: "kept for the whole suite only, and the run played part of it".to_owned(),
                });
            }
        }
        self
    }

    /// The gate for a saved `report`: over its own cases when it covers part of the suite
    /// ([`Scope::is_partial`](crate::results::Scope::is_partial)), as the run that wrote it
    /// compared them; else as it is.
    pub fn fitted(self, report: &Report) -> Gate {
        if report.scope.as_ref().is_some_and(|s| s.is_partial()) {
            let keys: HashSet<String> = report.cases.iter().map(|c| c.key()).collect();
            self.only(&keys)
        } else {
            self
        }
    }
}

/// `report` as it is committed: the volatile fields listed in the module docs cleared.
pub fn for_baseline(report: &Report) -> Report {
    let mut baseline = report.clone();
    baseline.agent_log = None;
    baseline.agent_startup = None;
    baseline.rate_limits.clear();
    // How much of the false-alarm rate this run's own gate spent says nothing about the next.
    baseline.alpha_share = 1.0;
    baseline.gate = None;
    for case in &mut baseline.cases {
        case.duration = Duration::ZERO;
        for turn in &mut case.turns {
            turn.latency = None;
            turn.ttft = None;
            turn.checks.iter_mut().for_each(forget_measurement);
        }
        case.checks.iter_mut().for_each(forget_measurement);
    }
    baseline
}

/// What a latency check measured, as a baseline writes it in place of the value.
pub const MEASURED: &str = "(measured: not kept in the baseline)";

fn forget_measurement(check: &mut CheckResult) {
    if check.category == CheckCategory::Latency {
        check.actual = MEASURED.to_owned();
        check.reason = None;
    }
}

/// Why `report` must not become the baseline (unless forced): a baseline from an
/// interrupted run, or one where the agent errored, would hide or invent regressions.
pub fn unfit(report: &Report) -> Option<String> {
    if let Some(shard) = report.suite.shard.filter(|s| s.is_part()) {
        return Some(format!(
            "the run is shard {shard} of the suite: a baseline of it would drop the other \
             shards' cases (merge the shards' reports, then write the baseline from a run of the \
             whole suite)"
        ));
    }
    if let Some(scope) = report.scope.as_ref().filter(|s| s.is_partial()) {
        return Some(format!(
            "the run played part of the suite ({}): a baseline of it would drop the other cases",
            scope.describe()
        ));
    }
    let errors: Vec<&str> = report
        .cases
        .iter()
        .filter(|c| c.status == Status::Error)
        .map(|c| c.id.as_str())
        .collect();
    match (report.incomplete, errors.as_slice()) {
        (true, _) => Some("the run was interrupted: some cases did not run".to_owned()),
        (false, []) => None,
        (false, errors) => Some(format!(
            "{} case(s) could not be judged (errors of the run): {}",
            errors.len(),
            errors.join(", ")
        )),
    }
}
