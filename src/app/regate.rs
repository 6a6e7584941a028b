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
    /// `compare`: the gate always decides; that is all the command is for (and why it has no
    /// `--fail-on-regress`).
    Always,
}

/// The policy `request` asks for in `mode`; `None` keeps the report's own.
pub fn policy(request: &GateRequest, mode: Mode) -> Result<Option<Policy>, PlanError> {
    match mode {
        Mode::IfAsked => {
            let policy = request.policy()?;
            Ok(policy.fail_on_regress.then_some(policy))
        }
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

/// The runs beyond `--repeat` that adaptive repeats played for `report`, as its run's gate
/// recorded them (a merged report has no gate: see [`crate::merge::Merged::extra_runs`]).
pub fn played(report: &Report) -> u64 {
    report.gate.as_ref().map_or(0, |run| run.extra_runs)
}

/// Gates `report` (called `name` in warnings) against `gate` when given, under `policy` when
/// given (see [`policy`]), and sums it up for `suite`'s outputs. The report's cases were
/// judged when it ran; whether it could be judged at all still counts. So do the `played`
/// runs of its adaptive repeats (see [`played`]): they are in its cases, which the new
/// comparison judges.
pub fn regate<'r>(
    report: &'r mut Report,
    (gate, played): (Option<Gate>, u64),
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
        let mut comparison = gate.compare(report);
        comparison.extra_runs = played;
        report.gate = Some(comparison);
    }
    if let Some(policy) = policy {
        report.policy = policy;
    }
    Regated {
        summary: Summary::new(report, suite),
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::{Mode, policy};
    use crate::app::plan::PlanError;
    use crate::app::request::GateRequest;
    use crate::results::Policy;

    fn asked(baseline: bool, fail_on_regress: bool, fail_on_inconclusive: bool) -> GateRequest {
        GateRequest {
            baseline: baseline.then(|| "baseline.json".into()),
            fail_on_regress,
            fail_on_inconclusive,
            ..GateRequest::default()
        }
    }

    #[test]
    fn report_and_merge_keep_the_saved_policy_unless_the_gate_is_asked_to_decide() {
        assert_eq!(
            policy(&asked(true, false, false), Mode::IfAsked).unwrap(),
            None
        );
        assert_eq!(
            policy(&asked(true, true, true), Mode::IfAsked).unwrap(),
            Some(Policy {
                fail_on_regress: true,
                fail_on_inconclusive: true
            })
        );
        assert!(matches!(
            policy(&asked(true, false, true), Mode::IfAsked),
            Err(PlanError::InconclusiveWithoutRegress)
        ));
    }

    #[test]
    fn compare_always_lets_the_gate_decide_and_needs_a_baseline() {
        assert_eq!(
            policy(&asked(true, false, true), Mode::Always).unwrap(),
            Some(Policy {
                fail_on_regress: true,
                fail_on_inconclusive: true
            })
        );
        assert!(matches!(
            policy(&asked(false, false, false), Mode::Always),
            Err(PlanError::NoBaseline)
        ));
    }
}
