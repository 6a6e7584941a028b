//! The verdict of a run: the one answer every output opens with, and the exit code follows.
//!
//! A pull request shows the exit code, not the gate's line, so both come from here. Without an
//! enforced gate a failing case fails the run. With one (`--baseline F --fail-on-regress`) the
//! gate alone decides: a regression beyond noise fails the run; a known failure (failing on
//! main too), a quarantined case and a decision the runs left open do not (open decisions are
//! reported, and fail the run only with `--fail-on-inconclusive`).

use serde::{Deserialize, Serialize};

use super::{Comparison, Report, Status, Unit};
use crate::exit::Exit;
use crate::model::{Floor, FloorKind};
use crate::shard::Shard;

/// What decides the exit code besides whether the run could be judged. Kept in the report so
/// that every command reading it (`report`, `merge`) exits as the run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Policy {
    /// The gate decides (`--fail-on-regress`): failing cases alone do not fail the run.
    pub fail_on_regress: bool,
    /// With the gate deciding: a comparison the runs left undecided fails the run too
    /// (`--fail-on-inconclusive`).
    pub fail_on_inconclusive: bool,
}

/// What a run came to, from worst to best.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Stopped before every case ran (Ctrl-C, SIGTERM, an agent lost mid-run).
    Interrupted,
    /// Stopped scheduling cases once the run had spent its budget (`--budget`).
    OverBudget,
    /// More cases ended in an error of the run than `--max-errors` allows.
    TooManyErrors,
    /// Cases ran, but none was judged: every one skipped or errored.
    NothingJudged,
    /// The run was gated (`--fail-on-regress`), but the report holds no comparison with the
    /// baseline (shards merged without `--baseline`): failing cases alone cannot stand in for
    /// the gate, which may have tripped on a metric or excused a known failure.
    Ungated,
    /// The enforced gate found a regression beyond noise.
    Regressed,
    /// A floor the whole run must clear was not met.
    BelowFloor,
    /// A case failed (no enforced gate).
    Failed,
    /// The enforced gate found no regression, but some comparison is still open.
    Inconclusive,
    /// Nothing failed, or the gate found no regression and nothing open.
    Pass,
}

impl Verdict {
    /// The word the JSON report and the Action's `verdict` output carry.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Interrupted
            | Verdict::OverBudget
            | Verdict::TooManyErrors
            | Verdict::NothingJudged
            | Verdict::Ungated => "error",
            Verdict::Regressed => "regressed",
            Verdict::BelowFloor | Verdict::Failed => "failed",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Pass => "pass",
        }
    }

    /// The run could not be judged.
    pub fn is_error(self) -> bool {
        matches!(
            self,
            Verdict::Interrupted
                | Verdict::OverBudget
                | Verdict::TooManyErrors
                | Verdict::NothingJudged
                | Verdict::Ungated
        )
    }

    /// The exit code: 2 when the run could not be judged, 1 when it failed (an inconclusive
    /// gate only under `fail_on_inconclusive`), else 0.
    pub fn exit(self, policy: Policy) -> Exit {
        match self {
            v if v.is_error() => Exit::Error,
            Verdict::Regressed | Verdict::BelowFloor | Verdict::Failed => Exit::Failure,
            Verdict::Inconclusive if policy.fail_on_inconclusive => Exit::Failure,
            _ => Exit::Success,
        }
    }
}

impl Report {
    /// The verdict this report stands for, under its [`Policy`].
    pub fn verdict(&self) -> Verdict {
        let judged = self.cases.iter().any(|c| c.status.is_judged());
        let gate = self.gate.as_ref().filter(|_| self.policy.fail_on_regress);
        if self.budget.is_some_and(|b| b.reached) {
            Verdict::OverBudget
        } else if self.incomplete {
            Verdict::Interrupted
        } else if self.too_many_errors() {
            Verdict::TooManyErrors
        } else if !judged && !self.cases.is_empty() {
            Verdict::NothingJudged
        } else if self.policy.fail_on_regress && self.gate.is_none() {
            Verdict::Ungated
        } else if gate.is_some_and(Comparison::regressed) {
            Verdict::Regressed
        } else if self.floors.iter().any(|f| !f.met) {
            Verdict::BelowFloor
        } else if let Some(comparison) = gate {
            if comparison.undecided_count() > 0 {
                Verdict::Inconclusive
            } else {
                Verdict::Pass
            }
        } else if self.blocking_failures().next().is_some() {
            Verdict::Failed
        } else {
            Verdict::Pass
        }
    }

    /// The exit status this report stands for: the one rule every command applies.
    pub fn exit(&self) -> Exit {
        self.verdict().exit(self.policy)
    }

    /// Failed cases that fail a run without an enforced gate: all but the quarantined.
    pub(crate) fn blocking_failures(&self) -> impl Iterator<Item = &super::CaseResult> {
        self.cases
            .iter()
            .filter(|c| c.status == Status::Failed && !c.is_quarantined())
    }
}

/// A floor, checked against the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FloorResult {
    pub kind: FloorKind,
    pub limit: f64,
    /// The run's value; `None` when it measured nothing to compare (no case judged).
    pub actual: Option<f64>,
    pub met: bool,
    /// Where the floor is written.
    pub file: String,
    pub line: u32,
}

impl FloorResult {
    /// Checks `floor` against `report`'s aggregates. Nothing measured meets no floor, but a
    /// report of no case of a part of the suite (nothing a change selected, an empty shard)
    /// has nothing to hold to one: it meets them, and a merge checks the whole again. A run of
    /// the whole suite that played nothing (an app with no evaluation chosen) does not.
    pub fn check(floor: &Floor, report: &Report) -> FloorResult {
        let file = floor.location.file.to_string_lossy().into_owned();
        Self::measure(floor.kind, floor.limit, (file, floor.location.line), report)
    }

    /// The same floor checked again, against another report (shards merged into one).
    pub fn recheck(&self, report: &Report) -> FloorResult {
        Self::measure(
            self.kind,
            self.limit,
            (self.file.clone(), self.line),
            report,
        )
    }

    fn measure(kind: FloorKind, limit: f64, (file, line): (String, u32), report: &Report) -> Self {
        let actual = match kind {
            FloorKind::MinPassRate => report.aggregates.pass_rate,
            FloorKind::MinSuiteScore => report.aggregates.suite_score,
            FloorKind::MaxFailedCases => Some(report.blocking_failures().count() as f64),
        };
        let empty_part = report.cases.is_empty()
            && (report.scope.is_some() || report.suite.shard.is_some_and(Shard::is_part));
        let met = empty_part
            || actual.is_some_and(|value| match kind {
                FloorKind::MaxFailedCases => value <= limit,
                _ => value + 1e-9 >= limit,
            });
        FloorResult {
            kind,
            limit,
            actual,
            met,
            file,
            line,
        }
    }

    /// For people: `pass rate at least 90%: 85.0% (goldgate.yaml:4)`.
    pub fn describe(&self) -> String {
        let bar = match self.kind {
            FloorKind::MinPassRate => {
                format!(
                    "pass rate at least {}",
                    Unit::Percent.amount(self.limit * 100.0)
                )
            }
            FloorKind::MinSuiteScore => {
                format!(
                    "suite score at least {}",
                    Unit::Percent.amount(self.limit * 100.0)
                )
            }
            FloorKind::MaxFailedCases => format!("at most {} failed cases", self.limit),
        };
        let actual = match (self.kind, self.actual) {
            (_, None) if self.met => "no case ran".to_owned(),
            (_, None) => "nothing measured".to_owned(),
            (FloorKind::MaxFailedCases, Some(n)) => format!("{n} failed"),
            (_, Some(v)) => format!("{:.1}%", v * 100.0),
        };
        format!("{bar}: {actual} ({}:{})", self.file, self.line)
    }
}
