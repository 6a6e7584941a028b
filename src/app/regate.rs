//! A saved report gated again, the one way `report`, `merge` and `compare` all do it: the
//! comparison made anew against the baseline (fitted to the report's cases), the policy the
//! flags ask for, and the [`Summary`] every output then renders.

use super::plan::PlanError;
use super::request::GateRequest;
use crate::gate::Gate;
use crate::report::Summary;
use crate::results::{Policy, Report};

/// How a command gates a saved report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `report`, `merge`: with `--baseline` the comparison is made anew, and with
    /// `--fail-on-regress` the gate decides the exit, as it would have in the run; without
    /// them the report keeps its own.
    IfAsked,
    /// `compare`: the gate always decides; that is all the command is for.
    Always,
}

/// The policy `request` asks for in `mode`; `None` keeps the report's own.
pub fn policy(request: &GateRequest, mode: Mode) -> Result<Option<Policy>, PlanError> {
    match mode {
        Mode::IfAsked => {
            let policy = request.policy()?;
            Ok(policy.fail_on_regress.then_some(policy))
        }
        Mode::Always if request.fail_on_regress => Err(PlanError::AlwaysGated),
        Mode::Always if request.baseline.is_none() => Err(PlanError::NoBaseline),
        Mode::Always => Ok(Some(Policy {
            fail_on_regress: true,
            fail_on_inconclusive: request.fail_on_inconclusive,
        })),
    }
}

/// The report gated, and what to tell people about it.
pub struct Regated<'r> {
    pub summary: Summary<'r>,
    /// Warnings, for people.
    pub notes: Vec<String>,
}

/// Gates `report` (called `name` in warnings) against `gate` when given, under `policy` when
/// given (see [`policy`]), and sums it up for `suite`'s outputs. The report's cases were
/// judged when it ran; whether it could be judged at all still counts.
pub fn regate<'r>(
    report: &'r mut Report,
    gate: Option<Gate>,
    policy: Option<Policy>,
    (name, suite): (&str, &str),
) -> Regated<'r> {
    let mut notes = Vec::new();
    if let Some(gate) = gate {
        let gate = gate.fitted(report);
        // Cases of another suite read as new or missing: say so, as `merge` does for shards.
        if let Some(difference) = gate.baseline.suite.difference(&report.suite) {
            notes.push(format!(
                "warning: the baseline {} and {name} are reports of different suites: {difference}",
                gate.baseline_name
            ));
        }
        report.gate = Some(gate.compare(report));
    }
    if let Some(policy) = policy {
        report.policy = policy;
    }
    Regated {
        summary: Summary::new(report, suite),
        notes,
    }
}
