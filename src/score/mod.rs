//! Scoring: each turn's expectations and each case's checks judged into [`CheckResult`]s.
//!
//! [`Grader::grade_turn`] judges one played turn against its [`Expectation`]s
//! (agent text, silence, tool calls and responses, transfers). [`Grader::grade_case`] judges
//! the checks over the whole conversation: gecx scorers, SCRAPI criteria and Regtrace metrics.
//! Deterministic checks never need a judge; `semantic` matches fall back to the local
//! similarity of [`semantic`]; every other LLM-judge check is [`Status::Skipped`] with
//! [`NO_JUDGE`] (or [`Grader::no_judge`]) when there is no judge, never passed.
//!
//! A judge that fails makes its check [`Status::Error`]: the run could not judge it.
//!
//! [`Expectation`]: crate::model::Expectation

pub mod judge;
mod matchers;
mod metrics;
mod reply;
mod scorers;
pub mod semantic;
pub mod simulated_user;
pub mod tool_result;
mod turn;

use std::fmt;
use std::sync::Arc;

pub use judge::{Judge, JudgeError, JudgeQuestion, JudgeScore, JudgeVerdict, NO_JUDGE};
pub use matchers::{json_equal, render_calls};
pub use metrics::NEEDS_BASELINE;
pub use turn::NO_TEXT;

use crate::config::llm::SIMILARITY_PASS;
use crate::model::{ArgsMatcher, Case, CheckKind, Location};
use crate::results::{CheckCategory, CheckResult, JudgeUsage, Method, Status, TurnResult};

/// How strictly turns are scored.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoreOptions {
    /// Let an agent make tool calls no expectation asked for (default: each one fails the turn).
    pub allow_extra_tool_calls: bool,
    /// Pass mark of the local similarity used for `semantic` matches without a judge: the
    /// share, in 0..=1, of the expected text's content words the answer must contain, once
    /// every fact agrees. Default [`semantic::DEFAULT_THRESHOLD`] (0.6).
    pub semantic_threshold: f64,
    /// Pass mark of a judge's 0-4 similarity for `semantic` matches. Default
    /// [`SIMILARITY_PASS`] (3).
    pub similarity_pass: f64,
}

impl Default for ScoreOptions {
    fn default() -> Self {
        Self {
            allow_extra_tool_calls: false,
            semantic_threshold: semantic::DEFAULT_THRESHOLD,
            similarity_pass: SIMILARITY_PASS,
        }
    }
}

/// Judges turns and cases; cheap to clone and share between tasks.
#[derive(Clone, Default)]
pub struct Grader {
    /// The LLM judge, when one is configured.
    pub judge: Option<Arc<dyn Judge>>,
    pub options: ScoreOptions,
    /// Why LLM-judge checks are skipped when there is no judge (default [`NO_JUDGE`]), e.g.
    /// the configured judge's key is not set.
    pub no_judge: Option<String>,
    /// The simulated user that plays the cases that have one (SCRAPI simulations).
    pub simulator: Option<Arc<dyn simulated_user::SimulatedUser>>,
    /// Why there is no simulated user (its key is not set): such cases are skipped with it.
    pub no_simulator: Option<String>,
}

impl fmt::Debug for Grader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Grader")
            .field("judges", &self.judges())
            .field("options", &self.options)
            .finish()
    }
}

impl Grader {
    pub fn new(judge: Option<Arc<dyn Judge>>, options: ScoreOptions) -> Self {
        Self {
            judge,
            options,
            no_judge: None,
            simulator: None,
            no_simulator: None,
        }
    }

    /// The grader for the `index`-th run (0-based) of a case under `--repeat`: its judge
    /// keeps the runs independent samples (see [`Judge::for_repeat`]).
    pub fn for_repeat(&self, index: u32) -> Grader {
        let judge = self
            .judge
            .as_ref()
            .map(|judge| judge.for_repeat(index).unwrap_or_else(|| Arc::clone(judge)));
        let simulator = self.simulator.as_ref().map(|s| s.for_repeat(index));
        Grader {
            judge,
            simulator,
            ..self.clone()
        }
    }

    /// What the judges and the simulated user cost so far (empty: none, or none answered).
    pub fn judge_usage(&self) -> Vec<JudgeUsage> {
        let simulator = self.simulator.iter().filter_map(|s| s.usage());
        self.judge
            .iter()
            .flat_map(|judge| judge.usage())
            .chain(simulator)
            .collect()
    }

    /// The configured judges as `provider/model`, for the report (empty: none).
    pub fn judges(&self) -> Vec<String> {
        self.judge
            .iter()
            .map(|judge| format!("{}/{}", judge.provider().name(), judge.model()))
            .collect()
    }

    /// Judges the checks over the whole conversation, given every turn (played or not; the
    /// ones not played add nothing). Returns exactly one result per [`Case::checks`] entry, in
    /// order.
    pub async fn grade_case(&self, case: &Case, turns: &[TurnResult]) -> Vec<CheckResult> {
        let played = scorers::Played::new(turns);
        let transcript = judge::transcript(turns);
        let mut results = Vec::with_capacity(case.checks.len());
        for check in &case.checks {
            let category = match &check.kind {
                CheckKind::Scorer(scorer) => scorers::category(scorer),
                CheckKind::Criterion(_) => CheckCategory::Criterion,
                CheckKind::Metric { .. } => CheckCategory::Metric,
            };
            let graded = match &check.kind {
                CheckKind::Scorer(scorer) => {
                    self.scorer(&check.label, scorer, &played, &transcript)
                        .await
                }
                CheckKind::Criterion(text) => {
                    let question = JudgeQuestion::Criterion(text);
                    self.ask(&check.label, question, None, &played, &transcript)
                        .await
                }
                CheckKind::Metric {
                    metric,
                    threshold,
                    expected_output,
                } => {
                    let answer = played.last_answer();
                    let label = &check.label;
                    self.metric(
                        label,
                        *metric,
                        *threshold,
                        expected_output,
                        &answer,
                        &transcript,
                    )
                    .await
                }
            };
            results.push(graded.at(&check.location, category));
        }
        results
    }

    /// The case's score in 0..=1. A case with Regtrace metrics scores the mean of its metric
    /// scores (metrics that were skipped or could not be judged have none); any other case
    /// scores the share of passed checks among the judged ones (turn and case checks, skipped
    /// ones left out). `None` when nothing was judged. `checks` are the case-level results of
    /// [`Grader::grade_case`] for this case.
    pub fn case_score(case: &Case, turns: &[TurnResult], checks: &[CheckResult]) -> Option<f64> {
        let is_metric = |kind: &CheckKind| matches!(kind, CheckKind::Metric { .. });
        if case.checks.iter().any(|check| is_metric(&check.kind)) {
            let scores: Vec<f64> = case
                .checks
                .iter()
                .zip(checks)
                .filter(|(check, _)| is_metric(&check.kind))
                .filter_map(|(_, result)| result.score)
                .collect();
            return mean(&scores);
        }
        let judged: Vec<f64> = turns
            .iter()
            .flat_map(|turn| &turn.checks)
            .chain(checks)
            .filter(|check| check.status != Status::Skipped)
            .map(|check| {
                if check.status == Status::Passed {
                    1.0
                } else {
                    0.0
                }
            })
            .collect();
        mean(&judged)
    }
}

/// Whether a call's `args` match `matcher` as an expected call's arguments would (`semantic`
/// by local similarity). LLM agents pick a tool's mock with it.
pub async fn args_match(matcher: &ArgsMatcher, args: &serde_json::Value) -> bool {
    Grader::default().match_args(matcher, args).await.status == Status::Passed
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// How a check came out, before it is placed and labelled.
#[derive(Clone, Debug)]
struct Verdict {
    status: Status,
    method: Method,
    score: Option<f64>,
    reason: Option<String>,
}

impl Verdict {
    /// Passed or failed; `reason` is kept only on failure.
    fn decided(passed: bool, method: Method, reason: Option<String>) -> Self {
        Self {
            status: if passed {
                Status::Passed
            } else {
                Status::Failed
            },
            method,
            score: None,
            reason: if passed { None } else { reason },
        }
    }

    fn fail(method: Method, reason: String) -> Self {
        Self::decided(false, method, Some(reason))
    }

    fn error(method: Method, reason: String) -> Self {
        Self {
            status: Status::Error,
            method,
            score: None,
            reason: Some(reason),
        }
    }

    fn skipped(reason: impl Into<String>) -> Self {
        Self {
            status: Status::Skipped,
            method: Method::None,
            score: None,
            reason: Some(reason.into()),
        }
    }

    fn with_score(mut self, score: f64) -> Self {
        self.score = Some(score);
        self
    }

    fn labelled(self, label: impl Into<String>, expected: String, actual: String) -> Graded {
        Graded {
            label: label.into(),
            expected,
            actual,
            verdict: self,
        }
    }
}

/// A labelled verdict, waiting for its location and category.
struct Graded {
    label: String,
    expected: String,
    actual: String,
    verdict: Verdict,
}

impl Graded {
    fn at(self, location: &Location, category: CheckCategory) -> CheckResult {
        CheckResult {
            label: self.label,
            category,
            line: location.line,
            status: self.verdict.status,
            expected: self.expected,
            actual: self.actual,
            method: self.verdict.method,
            score: self.verdict.score,
            reason: self.verdict.reason,
        }
    }
}
