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
//! - `gate`: the comparison with the previous baseline.
//!
//! Kept: everything else, including the latency and TTFT percentiles in `aggregates`. Those
//! are measurements too, and will differ between two runs of the same agent, but they are
//! what `p95LatencyIncreasePct` and `ttftP95IncreasePct` compare with; they are four lines.

use std::path::Path;
use std::time::Duration;

use super::{Gate, Thresholds};
use crate::results::json::{self, ReadError};
use crate::results::{CheckCategory, Status};
use crate::results::{CheckResult, Report};

impl Gate {
    /// Reads the baseline at `path` (a JSON report of this schema version).
    pub fn load(path: &Path, thresholds: Thresholds) -> Result<Gate, ReadError> {
        Ok(Gate {
            baseline_name: path.display().to_string(),
            baseline: json::read_file(path)?,
            thresholds,
        })
    }
}

/// `report` as it is committed: the volatile fields listed in the module docs cleared.
pub fn for_baseline(report: &Report) -> Report {
    let mut baseline = report.clone();
    baseline.agent_log = None;
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
