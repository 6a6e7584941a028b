//! Typed results of a run: what the runner produces and every report renders.
//!
//! The gate and every sink decide from these types, never from printed text.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::agent::Exchange;
use crate::agent::protocol::Usage;
use crate::model::{Case, Location};

/// The verdict of one check, turn or case. Ordered from best to worst so that the status of a
/// whole is the maximum of its parts (skipped parts do not count). Written as a lowercase word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
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

/// One expectation or case-level check, judged.
#[derive(Clone, Debug)]
pub struct CheckResult {
    /// What was checked, for people: `agent text`, `tool call lookup_order`, `no-handoff`.
    pub label: String,
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
    pub duration: Duration,
    /// What the agent wrote on stderr (command agents), kept for the report.
    pub agent_log: Option<String>,
}
