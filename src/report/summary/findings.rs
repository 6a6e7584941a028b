//! What the run found as a whole, with no case to point at: a floor not met, a threshold the
//! gate tripped, the cases combined regressed, a metric the runs left undecided. A failing
//! case shows itself in every output; these would show only in the headline, so the outputs
//! that list failures one by one (the annotations, JUnit) render them from here.

use super::Summary;
use crate::report::gate;
use crate::results::{CasesCombined, Decision, Unit};

/// One finding about the run as a whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFinding {
    pub kind: FindingKind,
    /// A few words: `p95 latency regressed`, `floor not met`.
    pub title: String,
    /// What was found, with its evidence.
    pub message: String,
    /// It fails the run (exit 1); else it is worth a look and does not.
    pub blocks: bool,
    /// Where it is written (a floor's file and line), when it is.
    pub place: Option<(String, u32)>,
}

/// What a [`RunFinding`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FindingKind {
    /// A floor the whole run must clear (`floors:`, Regtrace's `quality_gates`).
    Floor,
    /// A threshold tripped, or the cases combined, beyond noise.
    Regression,
    /// Worse than the limit, but the runs could not tell it from noise.
    Undecided,
}

impl FindingKind {
    /// The word outputs type it with (JUnit's failure `type`).
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::Floor => "floor",
            FindingKind::Regression => "regression",
            FindingKind::Undecided => "undecided",
        }
    }
}

impl Summary<'_> {
    /// The run's findings with no case to point at, floors first: a floor always fails the
    /// run; a regression when the gate decides the exit (`--fail-on-regress`); an undecided
    /// metric under `--fail-on-inconclusive`.
    pub fn run_findings(&self) -> Vec<RunFinding> {
        let report = self.report;
        let floors = report
            .floors
            .iter()
            .filter(|f| !f.met)
            .map(|floor| RunFinding {
                kind: FindingKind::Floor,
                title: "floor not met".to_owned(),
                message: floor.describe(),
                blocks: true,
                place: Some((floor.file.clone(), floor.line)),
            });
        let mut findings: Vec<RunFinding> = floors.collect();
        let Some(comparison) = &report.gate else {
            return findings;
        };
        let (regress, inconclusive) = (
            report.policy.fail_on_regress,
            report.policy.fail_on_inconclusive,
        );
        findings.extend(comparison.tripped().map(|m| {
            RunFinding {
                kind: FindingKind::Regression,
                title: format!("{} regressed", m.threshold.metric()),
                message: format!(
                    "{}: worse than its limit beyond noise, against {}. {}",
                    gate::tripped_words(m),
                    comparison.baseline,
                    m.evidence_words().unwrap_or_default()
                )
                .trim_end()
                .to_owned(),
                blocks: regress,
                place: None,
            }
        }));
        let combined = comparison.combined.as_ref();
        findings.extend(
            combined
                .filter(|c| c.decision == Decision::Regressed)
                .map(|c| RunFinding {
                    kind: FindingKind::Regression,
                    title: format!("{} regressed", CasesCombined::NAME),
                    message: format!(
                        "{}: {}",
                        gate::combined_regressed_words(),
                        c.evidence.describe(Unit::PercentagePoints)
                    ),
                    blocks: regress,
                    place: None,
                }),
        );
        findings.extend(comparison.undecided_metrics().map(|m| RunFinding {
            kind: FindingKind::Undecided,
            title: format!("{} {}", m.threshold.metric(), m.decision.name()),
            message: format!(
                "{} looks worse than its limit ({}) against the baseline, but the runs could \
                 not tell it from noise: {}",
                m.threshold.metric(),
                m.threshold.name(),
                m.evidence_words().unwrap_or_default()
            ),
            blocks: regress && inconclusive,
            place: None,
        }));
        findings.extend(
            combined
                .filter(|c| c.decision.is_undecided())
                .map(|c| RunFinding {
                    kind: FindingKind::Undecided,
                    title: format!("{} {}", CasesCombined::NAME, c.decision.name()),
                    message: format!(
                        "the cases together lean worse than the baseline, but the runs could \
                         not tell it from noise: {}",
                        c.evidence.describe(Unit::PercentagePoints)
                    ),
                    blocks: regress && inconclusive,
                    place: None,
                }),
        );
        findings
    }
}
