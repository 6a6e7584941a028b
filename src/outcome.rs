//! Typed results of a run: what the runner produces and every report renders.
//!
//! The gate and every sink decide from these types, never from printed text.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::agent::Exchange;
use crate::agent::protocol::Usage;
use crate::model::{Case, Location};
use crate::score::JudgeUsage;

/// The verdict of one check, turn or case. Ordered from best to worst so that the status of a
/// whole is the maximum of its parts (skipped parts do not count). Written as a lowercase word.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Skipped,
    Passed,
    Failed,
    /// The run could not judge: the agent was unreachable, timed out, or a judge failed.
    Error,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Error => "error",
            Status::Skipped => "skipped",
        }
    }

    /// The status of a whole from its parts: the worst part, skipped only when all are.
    pub fn combine(parts: impl IntoIterator<Item = Status>) -> Status {
        parts.into_iter().fold(Status::Skipped, Status::max)
    }
}

/// How a check was judged, so the report can say which method decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Method {
    /// A deterministic comparison (exact, contains, regexp, ignore, structural checks).
    Deterministic(&'static str),
    /// goldgate's local, deterministic similarity (no judge configured).
    LocalSimilarity,
    /// An LLM judge.
    Judge { provider: String, model: String },
    /// Not judged (skipped for lack of a judge, or the agent errored before).
    None,
}

impl Method {
    pub fn describe(&self) -> String {
        match self {
            Method::Deterministic(name) => (*name).to_owned(),
            Method::LocalSimilarity => "local-similarity".to_owned(),
            Method::Judge { provider, model } => format!("judge:{provider}/{model}"),
            Method::None => "none".to_owned(),
        }
    }
}

/// What a check is about. Labels are for people and may change; this is for machines: the
/// aggregates are computed from it, so that they can be recomputed from a saved report alone
/// (`goldgate merge`). Written as a kebab-case word; a new variant is a new word, never a
/// renamed one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CheckCategory {
    /// A turn's expected agent text, or a scorer over the messages (`message-contains`,
    /// `message-matches-regex`, `final-message-equals`).
    AgentText,
    /// The agent had to say nothing (`# silent`, SCRAPI's UNEXPECTED RESPONSE).
    Silence,
    /// An expected tool call: a turn's, or the `tool-called` and `tool-called-with-input`
    /// scorers. Tool-call accuracy counts these.
    ToolCall,
    /// A call no expectation asked for, or the `no-tool-called` scorer.
    UnexpectedToolCall,
    /// The graded `tool-call-accuracy` scorer.
    ToolCallAccuracy,
    ToolResponse,
    Transfer,
    /// `handoff-triggered`, `no-handoff`.
    Handoff,
    /// `error-code`, `no-error`: what the agent reported as its own error.
    AgentError,
    /// `latency-p50-under`, `latency-p95-under`.
    Latency,
    /// `llm-judge-not-hallucinating`. The hallucination rate counts these.
    Hallucination,
    /// `llm-judge-helpfulness`.
    Helpfulness,
    /// `llm-judge-tone-matches`.
    Tone,
    /// A free-text criterion an LLM judge checks (SCRAPI `expectations`).
    Criterion,
    /// A graded Regtrace metric.
    Metric,
}

/// One expectation or case-level check, judged.
#[derive(Clone, Debug)]
pub struct CheckResult {
    /// What was checked, for people: `agent text`, `tool call lookup_order`, `no-handoff`.
    pub label: String,
    pub category: CheckCategory,
    pub location: Location,
    pub status: Status,
    pub expected: String,
    pub actual: String,
    pub method: Method,
    /// A graded score in 0..=1 where the method gives one.
    pub score: Option<f64>,
    /// Why it failed or was skipped.
    pub reason: Option<String>,
}

#[derive(Clone, Debug)]
pub struct TurnResult {
    pub index: usize,
    pub location: Location,
    pub status: Status,
    /// The user side of the turn, as text for reports.
    pub input: String,
    pub checks: Vec<CheckResult>,
    /// What the agent did; `None` when the turn could not be played.
    pub exchange: Option<Exchange>,
    /// The error of the run that stopped this turn.
    pub error: Option<String>,
    /// How many attempts the turn took (1 when the first one answered).
    pub attempts: u32,
}

#[derive(Clone, Debug)]
pub struct CaseResult {
    pub case: Arc<Case>,
    pub status: Status,
    pub turns: Vec<TurnResult>,
    /// Checks over the whole conversation.
    pub checks: Vec<CheckResult>,
    /// Share of passed checks, in 0..=1 (the mean metric score for graded cases).
    pub score: f64,
    pub duration: Duration,
    pub usage: Usage,
    /// The error of the run that stopped this case, if any.
    pub error: Option<String>,
    /// With `--repeat N` (N > 1): every run of the case. The fields above then describe the
    /// whole: see [`Repeats`].
    pub repeats: Option<Repeats>,
}

impl CaseResult {
    /// Every check of the case, turn checks first.
    pub fn all_checks(&self) -> impl Iterator<Item = &CheckResult> {
        self.turns
            .iter()
            .flat_map(|t| &t.checks)
            .chain(&self.checks)
    }
}

/// The independent runs of one case under `--repeat N --min-pass K`, and the rules that make
/// one verdict of them.
///
/// - **Status**: passed when at least K runs passed. Otherwise errors of the run decide only
///   where they could have made the difference: the case is an error when its passed runs
///   plus its errored (or never finished) runs reach K, and failed when even those passing
///   would leave it short of K. A case none of whose runs could be judged is skipped.
/// - **Flaky**: at least one run passed and at least one failed (errors are not the agent's
///   verdict and do not make a case flaky).
/// - **pass^k**: see [`pass_hat_k`], with k = K.
#[derive(Clone, Debug)]
pub struct Repeats {
    /// Every run that finished, in the order they were scheduled (each with `repeats: None`).
    pub runs: Vec<CaseResult>,
    /// N: the runs asked for (more than `runs.len()` when the run was stopped early).
    pub asked: u32,
    /// K: the case passes when at least this many runs pass.
    pub min_pass: u32,
}

impl Repeats {
    fn count(&self, status: Status) -> u32 {
        let count = self.runs.iter().filter(|r| r.status == status).count();
        u32::try_from(count).unwrap_or(u32::MAX)
    }

    pub fn passed(&self) -> u32 {
        self.count(Status::Passed)
    }

    /// Passed runs / finished runs (0 when none finished).
    pub fn pass_fraction(&self) -> f64 {
        if self.runs.is_empty() {
            return 0.0;
        }
        f64::from(self.passed()) / self.runs.len() as f64
    }

    /// [`pass_hat_k`] of the finished runs, with k = K.
    pub fn pass_hat_k(&self) -> f64 {
        let finished = u32::try_from(self.runs.len()).unwrap_or(u32::MAX);
        pass_hat_k(finished, self.passed(), self.min_pass)
    }

    pub fn flaky(&self) -> bool {
        self.passed() > 0 && self.count(Status::Failed) > 0
    }

    /// The case's verdict (see the type's doc).
    pub fn status(&self) -> Status {
        let passed = self.passed();
        let missing = self
            .asked
            .saturating_sub(u32::try_from(self.runs.len()).unwrap_or(u32::MAX));
        let undecided = self.count(Status::Error).saturating_add(missing);
        if passed >= self.min_pass {
            Status::Passed
        } else if passed.saturating_add(undecided) >= self.min_pass {
            Status::Error
        } else if passed + self.count(Status::Failed) == 0 {
            Status::Skipped
        } else {
            Status::Failed
        }
    }

    /// The run whose turns and checks stand for the case: for a case that did not pass, the
    /// first run that ended the same way; for one that passed, the first failed run (what
    /// made it flaky), else the first run that passed.
    pub fn shown(&self) -> usize {
        let target = match self.status() {
            Status::Passed if self.flaky() => Status::Failed,
            status => status,
        };
        self.runs
            .iter()
            .position(|r| r.status == target)
            .unwrap_or_default()
    }
}

/// The chance that k independent runs of a case all pass, estimated from c passes among n runs
/// without bias: `C(c, k) / C(n, k)` (0 when c < k). It is the share of the k-run subsets of
/// the n runs in which every run passed; with k = n it is 1 only when every run passed, with
/// k = 1 it is the pass fraction c / n.
pub fn pass_hat_k(n: u32, c: u32, k: u32) -> f64 {
    if n == 0 || c < k || k > n {
        return 0.0;
    }
    // C(c,k)/C(n,k) = prod_{i<k} (c-i)/(n-i): no factorials, no overflow.
    (0..k).fold(1.0, |p, i| p * f64::from(c - i) / f64::from(n - i))
}

impl CaseResult {
    /// One result of a case's runs (`runs` in the order scheduled, at least one): the shown
    /// run's turns and checks (see [`Repeats::shown`]) under the verdict of [`Repeats`], the
    /// mean score of the judged runs, and the time and tokens of all runs together.
    pub fn from_runs(runs: Vec<CaseResult>, asked: u32, min_pass: u32) -> Option<CaseResult> {
        let repeats = Repeats {
            runs,
            asked,
            min_pass,
        };
        let mut case = repeats.runs.get(repeats.shown())?.clone();
        case.status = repeats.status();
        let judged: Vec<f64> = repeats
            .runs
            .iter()
            .filter(|r| matches!(r.status, Status::Passed | Status::Failed))
            .map(|r| r.score)
            .collect();
        if !judged.is_empty() {
            case.score = judged.iter().sum::<f64>() / judged.len() as f64;
        }
        case.duration = repeats.runs.iter().map(|r| r.duration).sum();
        case.usage = total_usage(repeats.runs.iter().map(|r| r.usage));
        case.error = match case.status {
            Status::Error => case.error.or_else(|| {
                Some(format!(
                    "only {} of {asked} runs finished",
                    repeats.runs.len()
                ))
            }),
            _ => None,
        };
        case.repeats = Some(repeats);
        Some(case)
    }
}

/// Tokens summed. The agent reports usage: saturate rather than overflow on absurd numbers.
pub fn total_usage(usages: impl IntoIterator<Item = Usage>) -> Usage {
    usages.into_iter().fold(Usage::default(), |sum, u| Usage {
        input_tokens: sum.input_tokens.saturating_add(u.input_tokens),
        output_tokens: sum.output_tokens.saturating_add(u.output_tokens),
    })
}

/// Everything one run produced.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub cases: Vec<CaseResult>,
    /// Stopped early (Ctrl-C): some cases never ran.
    pub incomplete: bool,
    /// The agent, as [`crate::agent::Agent::describe`] tells it.
    pub agent: String,
    /// The judges configured for this run (empty: LLM-judge checks were skipped).
    pub judges: Vec<String>,
    /// What each judge that answered cost: calls, cached answers, tokens.
    pub judge_usage: Vec<JudgeUsage>,
    pub duration: Duration,
    /// What the agent wrote on stderr (command agents), kept for the report.
    pub agent_log: Option<String>,
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;
    use std::time::Duration;

    use super::{CaseResult, Status, pass_hat_k};
    use crate::agent::protocol::Usage;
    use crate::model::{Case, Format, Location};

    #[test]
    fn pass_hat_k_is_the_unbiased_estimate() {
        // C(4,3)/C(5,3) = 4/10.
        assert!((pass_hat_k(5, 4, 3) - 0.4).abs() < 1e-12);
        // C(3,3)/C(5,3) = 1/10.
        assert!((pass_hat_k(5, 3, 3) - 0.1).abs() < 1e-12);
        assert_eq!(pass_hat_k(5, 2, 3), 0.0);
        assert_eq!(pass_hat_k(5, 5, 5), 1.0);
        assert_eq!(pass_hat_k(5, 4, 5), 0.0);
        // k = 1 is the pass fraction.
        assert!((pass_hat_k(5, 3, 1) - 0.6).abs() < 1e-12);
        assert_eq!(pass_hat_k(0, 0, 1), 0.0);
    }

    fn run(status: Status, score: f64) -> CaseResult {
        let file: Arc<Path> = Arc::from(Path::new("a.scenario.yaml"));
        CaseResult {
            case: Arc::new(Case {
                id: "c".into(),
                name: "c".into(),
                description: None,
                format: Format::GecxScenario,
                location: Location::new(&file, 1, 1),
                tags: Vec::new(),
                session_parameters: Default::default(),
                system_prompt: None,
                context: Vec::new(),
                turns: Vec::new(),
                checks: Vec::new(),
                weight: 1.0,
            }),
            status,
            turns: Vec::new(),
            checks: Vec::new(),
            score,
            duration: Duration::from_millis(10),
            usage: Usage {
                input_tokens: 1,
                output_tokens: 2,
            },
            error: (status == Status::Error).then(|| "timed out".to_owned()),
            repeats: None,
        }
    }

    fn joined(statuses: &[Status], min_pass: u32) -> CaseResult {
        let runs = statuses
            .iter()
            .map(|&s| run(s, if s == Status::Passed { 1.0 } else { 0.0 }))
            .collect();
        CaseResult::from_runs(runs, 5, min_pass).unwrap()
    }

    use Status::{Error as E, Failed as F, Passed as P, Skipped as S};

    #[test]
    fn the_verdict_of_runs() {
        let case = joined(&[P, F, P, P, F], 3);
        assert_eq!(case.status, P);
        let repeats = case.repeats.as_ref().unwrap();
        assert!(repeats.flaky());
        assert_eq!(repeats.passed(), 3);
        assert!((repeats.pass_fraction() - 0.6).abs() < 1e-12);
        // A flaky pass shows the run that failed.
        assert_eq!(repeats.shown(), 1);
        assert_eq!(case.error, None);
        assert!((case.score - 0.6).abs() < 1e-12);
        assert_eq!(case.duration, Duration::from_millis(50));
        assert_eq!(case.usage.output_tokens, 10);

        assert_eq!(joined(&[P, F, F, P, F], 3).status, F);
        // Errors decide only where they could have made the difference.
        assert_eq!(joined(&[P, E, F, P, F], 3).status, E);
        assert_eq!(joined(&[E, F, F, P, F], 3).status, F);
        assert_eq!(joined(&[P, E, P, P, E], 3).status, P);
        assert_eq!(joined(&[S, S, S, S, S], 3).status, S);
        // Never flaky without a pass and a failure.
        assert!(!joined(&[P, E, P, P, P], 5).repeats.unwrap().flaky());
        assert!(!joined(&[F, F, F, F, F], 3).repeats.unwrap().flaky());
        // An errored case shows its first errored run, with its error.
        let errored = joined(&[F, P, E, P, F], 3);
        assert_eq!(errored.repeats.as_ref().unwrap().shown(), 2);
        assert_eq!(errored.error.as_deref(), Some("timed out"));
    }

    #[test]
    fn runs_that_never_finished_leave_the_verdict_open() {
        let runs = vec![run(P, 1.0), run(P, 1.0)];
        let case = CaseResult::from_runs(runs, 5, 3).unwrap();
        assert_eq!(case.status, E);
        assert_eq!(case.error.as_deref(), Some("only 2 of 5 runs finished"));
        assert!(CaseResult::from_runs(Vec::new(), 5, 3).is_none());
    }
}
