//! What a report means, decided once. Every output (the terminal, the Markdown and PR
//! comment, the page, JUnit, the annotations, the step outputs) renders a [`Summary`] and
//! none re-derives the verdict, its severity, the counts or whether a failing case blocks: so
//! no two outputs can disagree, and none can disagree with the exit code.

mod findings;
mod metric;

pub use findings::{FindingKind, RunFinding};
pub use metric::{MetricStanding, RowTone};

use std::fmt::{self, Write as _};

use super::plural;
use crate::exit::Exit;
use crate::results::Counts as CaseCounts;
use crate::results::{
    CaseFlip, CaseResult, CasesCombined, Comparison, Decision, FloorResult, Report, Status, Verdict,
};

/// The suite's name when no config file names it; the sticky comment's marker uses it.
pub const DEFAULT_SUITE: &str = "default";

/// One report, and what it means.
pub struct Summary<'r> {
    pub report: &'r Report,
    pub verdict: Verdict,
    /// The exit code the report stands for: [`Report::exit`].
    pub exit: Exit,
    pub severity: Severity,
    /// The verdict in a few words, with its asides: every output opens with it.
    pub headline: String,
    pub counts: Counts,
    /// The suite's name: the config file's path as the run was given it, or
    /// [`DEFAULT_SUITE`]. It names the sticky comment, so each suite keeps its own.
    pub suite: String,
}

/// How an output colours the verdict. It follows the exit code: a green exit is never shown
/// red, and a red one never green or amber.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// Exit 0, nothing open.
    Passed,
    /// Exit 0, but a decision the runs left open, or an advisory gate that found a regression.
    Warning,
    /// Exit 1.
    Failed,
    /// Exit 2: the run could not be judged.
    Error,
}

impl Severity {
    /// The word outputs mark it with (the page's class).
    pub fn name(self) -> &'static str {
        match self {
            Severity::Passed => "passed",
            Severity::Warning => "warning",
            Severity::Failed => "failed",
            Severity::Error => "error",
        }
    }

    /// The sign the Markdown heading opens with.
    pub fn sign(self) -> &'static str {
        match self {
            Severity::Passed => "✅",
            Severity::Warning => "🟡",
            Severity::Failed => "❌",
            Severity::Error => "⚠️",
        }
    }
}

/// The cases, counted once for every output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// The aggregates' cases by status, as they are.
    pub cases: CaseCounts,
    pub turns: usize,
    /// Failed cases that do not fail the run ([`Standing::Excused`]).
    pub excused: usize,
    /// Failed cases under a quarantine, as the gate counts them: a quarantine excuses a
    /// failure, never an error of the run.
    pub quarantined: usize,
    /// Flaky cases of those run more than once: `(flaky, repeated)`; `None` without repeats.
    pub flaky: Option<(usize, usize)>,
}

impl Counts {
    /// Beside the four counts: failures that do not block, flaky cases.
    pub fn asides(&self) -> Vec<String> {
        let mut asides = Vec::new();
        if self.excused > 0 {
            asides.push(format!("{} not blocking", plural(self.excused, "failure")));
        }
        if let Some((flaky, repeated)) = self.flaky.filter(|&(flaky, _)| flaky > 0) {
            asides.push(format!("{flaky} of {repeated} repeated cases flaky"));
        }
        asides
    }
}

impl fmt::Display for Counts {
    /// `3 passed, 1 failed, 0 errors, 0 skipped (1 failure not blocking)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} passed, {} failed, {} errors, {} skipped",
            self.cases.passed, self.cases.failed, self.cases.errors, self.cases.skipped
        )?;
        let asides = self.asides();
        if !asides.is_empty() {
            write!(f, " ({})", asides.join("; "))?;
        }
        Ok(())
    }
}

/// Where a case stands in the verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    Passed,
    Skipped,
    /// An error of the run: never judged. Errors beyond `--max-errors` fail the run.
    Errored,
    /// The case failed, and that fails the run.
    Blocks,
    /// The case failed, and the run does not fail for it.
    Excused(Excuse),
}

/// Why a failed case does not fail the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Excuse {
    /// Under an unexpired quarantine.
    Quarantined,
    /// Failing on main too (the baseline).
    KnownFailure,
    /// Looks worse than on main, but the runs could not tell it from noise.
    Undecided,
    /// Fails no more often than on main: the gate saw no change.
    NoWorse,
}

impl Excuse {
    /// For people, after "not blocking: ".
    pub fn describe(self) -> &'static str {
        match self {
            Excuse::Quarantined => "quarantined",
            Excuse::KnownFailure => "failing on main too",
            Excuse::Undecided => "looks worse, but could be noise (undecided)",
            Excuse::NoWorse => "fails no more often than on main",
        }
    }
}

impl<'r> Summary<'r> {
    /// The summary of `report`; `suite` names it when the report does not (reports older than
    /// the name).
    pub fn new(report: &'r Report, suite: &str) -> Self {
        let verdict = report.verdict();
        let exit = verdict.exit(report.policy);
        let advisory_regression = report.gate.as_ref().is_some_and(Comparison::regressed);
        let severity = match exit {
            Exit::Error => Severity::Error,
            Exit::Failure => Severity::Failed,
            Exit::Success if verdict == Verdict::Inconclusive || advisory_regression => {
                Severity::Warning
            }
            Exit::Success => Severity::Passed,
        };
        let mut summary = Summary {
            report,
            verdict,
            exit,
            severity,
            headline: String::new(),
            counts: Counts::default(),
            suite: report
                .suite
                .name
                .clone()
                .unwrap_or_else(|| suite.to_owned()),
        };
        summary.counts = summary.count();
        summary.headline = summary.headline();
        summary
    }

    /// Where `case` stands: whether its failure fails the run, and if not, why.
    pub fn standing(&self, case: &CaseResult) -> Standing {
        let report = self.report;
        match case.status {
            Status::Passed => return Standing::Passed,
            Status::Skipped => return Standing::Skipped,
            Status::Error => return Standing::Errored,
            Status::Failed => {}
        }
        let gate = report
            .gate
            .as_ref()
            .filter(|_| report.policy.fail_on_regress);
        let Some(gate) = gate else {
            return if case.is_quarantined() {
                Standing::Excused(Excuse::Quarantined)
            } else {
                Standing::Blocks
            };
        };
        let key = case.key();
        let listed = |flips: &[CaseFlip]| flips.iter().any(|f| f.key() == key);
        if listed(&gate.newly_failing) {
            Standing::Blocks
        } else if listed(&gate.quarantined) {
            Standing::Excused(Excuse::Quarantined)
        } else if listed(&gate.known_failures) {
            Standing::Excused(Excuse::KnownFailure)
        } else if listed(&gate.undecided) && report.policy.fail_on_inconclusive {
            Standing::Blocks
        } else if listed(&gate.undecided) {
            Standing::Excused(Excuse::Undecided)
        } else {
            Standing::Excused(Excuse::NoWorse)
        }
    }

    /// What an output says of `case` beside its status: that its failure does not fail the
    /// run, and why; that its quarantine has expired.
    pub fn case_notes(&self, case: &CaseResult) -> Vec<String> {
        let excused = match self.standing(case) {
            Standing::Excused(excuse) => Some(format!("not blocking: {}", excuse.describe())),
            _ => None,
        };
        let expired = case.expired_quarantine().map(|q| q.describe());
        excused.into_iter().chain(expired).collect()
    }

    /// The last line of the gate's part of an output: what the gate found, which the
    /// verdict then decides on. A run that could not be judged has no gate verdict, whatever
    /// its comparison found among the cases that were.
    pub fn gate_line(&self) -> Option<String> {
        let comparison = self.report.gate.as_ref()?;
        if self.verdict.is_error() && !comparison.regressed() {
            return Some("not decided: the run could not be judged (see the result)".to_owned());
        }
        Some(super::gate::verdict(comparison))
    }

    fn count(&self) -> Counts {
        let report = self.report;
        let excused: Vec<Excuse> = report
            .cases
            .iter()
            .filter_map(|c| match self.standing(c) {
                Standing::Excused(excuse) => Some(excuse),
                _ => None,
            })
            .collect();
        let repeated: Vec<bool> = (report.cases.iter())
            .filter_map(|c| c.repeats.as_ref().map(|r| r.flaky))
            .collect();
        Counts {
            cases: report.aggregates.cases,
            turns: report.aggregates.turns.total,
            excused: excused.len(),
            quarantined: excused
                .iter()
                .filter(|&&e| e == Excuse::Quarantined)
                .count(),
            flaky: (!repeated.is_empty())
                .then(|| (repeated.iter().filter(|&&f| f).count(), repeated.len())),
        }
    }

    /// `what the exit code stands for (what does not block but is worth a look)`.
    fn headline(&self) -> String {
        let report = self.report;
        let cases = &self.counts.cases;
        let gate = report.gate.as_ref();
        let mut text = match self.verdict {
            Verdict::Interrupted => "stopped early: some cases did not run".to_owned(),
            Verdict::OverBudget => format!(
                "stopped at the budget: spent {} of {}; {} cases skipped",
                report.spending().total,
                crate::transcript::dollars(report.budget.map_or(0.0, |b| b.limit_usd)),
                cases.skipped
            ),
            Verdict::TooManyErrors => format!(
                "could not be judged: {} of {} cases errored (--max-errors {})",
                cases.errors, cases.total, report.max_errors
            ),
            Verdict::NothingJudged => format!(
                "nothing was judged: of {} cases, {} skipped and {} errored",
                cases.total, cases.skipped, cases.errors
            ),
            Verdict::Ungated => "not gated: the run was gated on a baseline, and this report \
                                  holds no comparison with it (give --baseline FILE \
                                  --fail-on-regress)"
                .to_owned(),
            Verdict::Regressed => {
                format!("regressed: {}", gate.map(regressions).unwrap_or_default())
            }
            Verdict::BelowFloor => {
                let unmet: Vec<String> = (report.floors.iter())
                    .filter(|f| !f.met)
                    .map(FloorResult::describe)
                    .collect();
                format!("below the floor: {}", unmet.join("; "))
            }
            Verdict::Failed => format!("{} of {} cases failed", cases.failed, cases.total),
            Verdict::Inconclusive if self.exit == Exit::Failure => format!(
                "inconclusive: {} left open, and --fail-on-inconclusive fails the run",
                plural(gate.map_or(0, Comparison::undecided_count), "decision")
            ),
            Verdict::Inconclusive => "no regression shown".to_owned(),
            Verdict::Pass if cases.total == 0 => match &report.scope {
                Some(scope) => format!("nothing to run: {}", scope.describe()),
                None => "no case ran".to_owned(),
            },
            Verdict::Pass if gate.is_some() && report.policy.fail_on_regress => {
                "no regression".to_owned()
            }
            Verdict::Pass if cases.failed > 0 => {
                format!("passed, {} of {} cases failed", cases.failed, cases.total)
            }
            Verdict::Pass if cases.passed == 1 => "the 1 case passed".to_owned(),
            Verdict::Pass => format!("all {} cases passed", cases.passed),
        };
        let aside = self.asides();
        if !aside.is_empty() && !self.verdict.is_error() {
            let _ = write!(text, " ({})", aside.join(", "));
        }
        // An error of the run outranks the gate, but a regression it found is no flake of the
        // infrastructure: rerunning the job will not clear it.
        if self.verdict.is_error() && gate.is_some_and(Comparison::regressed) {
            text.push_str("; the gate found a regression too");
        }
        text
    }

    /// What does not block but is worth a look, beside the verdict: undecided comparisons,
    /// known failures, quarantined cases, other failures the gate excused, errors within
    /// `--max-errors`, checks nobody judged.
    fn asides(&self) -> Vec<String> {
        let report = self.report;
        let counts = &self.counts;
        let mut aside = Vec::new();
        if let Some(comparison) = report.gate.as_ref() {
            let undecided = comparison.undecided_count();
            // The headline of an open decision that fails the run counts them already.
            let counted = self.verdict == Verdict::Inconclusive && self.exit == Exit::Failure;
            if undecided > 0 && !counted {
                aside.push(format!("{undecided} undecided"));
            }
            if !comparison.known_failures.is_empty() {
                aside.push(plural(comparison.known_failures.len(), "known failure"));
            }
            if !report.policy.fail_on_regress && comparison.regressed() {
                aside.push("the gate (advisory) found a regression".to_owned());
            }
        }
        if counts.quarantined > 0 {
            aside.push(format!("{} quarantined", counts.quarantined));
        }
        let no_worse = (report.cases.iter())
            .filter(|c| self.standing(c) == Standing::Excused(Excuse::NoWorse))
            .count();
        if no_worse > 0 {
            aside.push(format!(
                "{} failing no more often than on main",
                plural(no_worse, "case")
            ));
        }
        // Errors within --max-errors do not fail the run, but the cases were not judged.
        if counts.cases.errors > 0 {
            aside.push(format!("{} errored", counts.cases.errors));
        }
        // A green verdict with checks nobody judged (a judge's key missing, as on a fork's
        // pull request) is weaker than it reads: say so where the verdict is read.
        let skipped = report.aggregates.checks.skipped;
        if skipped > 0 {
            aside.push(format!("{} not judged", plural(skipped, "check")));
        }
        aside
    }
}

/// What tripped the gate: `2 cases newly failing, p95 latency`.
fn regressions(comparison: &Comparison) -> String {
    let mut parts = Vec::new();
    if !comparison.newly_failing.is_empty() {
        parts.push(format!(
            "{} newly failing",
            plural(comparison.newly_failing.len(), "case")
        ));
    }
    parts.extend(
        comparison
            .tripped()
            .map(|m| m.threshold.metric().to_owned()),
    );
    if comparison.combined_decision() == Some(Decision::Regressed) {
        parts.push(CasesCombined::NAME.to_owned());
    }
    parts.join(", ")
}
