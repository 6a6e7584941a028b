//! The simulated user of SCRAPI simulations, as scoring and the simulation runner see it: a
//! trait the LLM clients implement (`llm::simulator`), and the words of its answers. Kept here
//! beside [`super::judge::Judge`] so that the runner and the grader need no LLM client.

use std::sync::Arc;

use async_trait::async_trait;

use crate::model::{Provider, SimulationStep};
use crate::results::JudgeUsage;
use crate::transcript::Usage;

/// Plays the user: says the next message and where each step stands.
#[async_trait]
pub trait SimulatedUser: Send + Sync + std::fmt::Debug {
    /// The user's next message and the status of each of `steps` after `conversation`.
    async fn next_turn(
        &self,
        steps: &[SimulationStep],
        conversation: &[Line],
    ) -> Result<(UserTurn, Usage), SimulatorError>;

    /// The simulated user for the `index`-th run (0-based) of a case under `--repeat`, so
    /// that each repeat is its own sample.
    fn for_repeat(&self, index: u32) -> Arc<dyn SimulatedUser>;

    /// What it cost so far (none when it was never asked).
    fn usage(&self) -> Option<JudgeUsage>;

    fn provider(&self) -> Provider;

    fn model(&self) -> String;
}

/// Where a step stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepStatus {
    NotStarted,
    InProgress,
    Completed,
    Failed,
}

impl StepStatus {
    pub const NAMES: [&'static str; 4] = ["not_started", "in_progress", "completed", "failed"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "not_started" => StepStatus::NotStarted,
            "in_progress" => StepStatus::InProgress,
            "completed" => StepStatus::Completed,
            "failed" => StepStatus::Failed,
            _ => return None,
        })
    }
}

/// One step's status, with the simulator's reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepProgress {
    pub status: StepStatus,
    pub justification: String,
}

/// One line of the conversation so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    User(String),
    /// What the agent did in its turn, as text (its messages, tool calls, a transfer).
    Agent(String),
}

/// The simulated user's move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserTurn {
    /// The next message; `None` when the user has nothing more to say.
    pub utterance: Option<String>,
    /// Every step's status, in the steps' order.
    pub steps: Vec<StepProgress>,
}

impl UserTurn {
    pub fn all_completed(&self) -> bool {
        self.steps.iter().all(|s| s.status == StepStatus::Completed)
    }
}

/// Why there is no user turn.
#[derive(Debug, thiserror::Error)]
pub enum SimulatorError {
    #[error("the simulated user could not be asked: {0}")]
    Request(String),
    #[error("the simulated user's answer is unusable: {0}")]
    Answer(String),
}
