//! Agents that run and score whole cases themselves: CX Agent Studio's evaluations
//! (`agent: { ces: { platform: true } }`). The runner hands such an agent the cases to play and
//! gets back one result per case and run, in the one results model, instead of playing turns.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::model::Case;
use crate::results::CaseResult;

/// What bounds a batch of evaluations: the whole batch's time, and when to stop early.
pub struct Bounds<'a> {
    /// The most the batch may take, from its start to its last result (`--timeout`).
    pub timeout: Duration,
    /// Cancelled on Ctrl-C or SIGTERM: what was started is cancelled, the batch ends.
    pub stop: &'a CancellationToken,
}

/// The results of a batch: (case index, run, result), and whether it ended before every run
/// was played (timed out, cancelled, or the platform's run failed as a whole).
pub struct Evaluated {
    pub results: Vec<(usize, usize, CaseResult)>,
    pub incomplete: bool,
}

#[async_trait]
pub trait Evaluations: Send + Sync {
    /// Runs each of `cases` `runs` times and returns every run's result; a case that could not
    /// be run is an error result saying why, never left out.
    async fn evaluate(&self, cases: &[Arc<Case>], runs: u32, bounds: Bounds<'_>) -> Evaluated;

    /// Cases the agent holds itself, with no local file (evaluations already in a CX Agent
    /// Studio app, chosen in goldgate.yaml), to run with the selected ones. One that cannot be
    /// listed is a case that errs with why.
    async fn existing(&self) -> Vec<Case> {
        Vec::new()
    }
}
