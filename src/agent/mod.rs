//! The agent under test, behind one trait: HTTP, a subprocess, recorded transcripts, or a
//! model with the team's prompt and tools (LLM agents), or a CX Agent Studio app.
//!
//! An agent answers one [`TurnRequest`] at a time; the runner owns ordering, timeouts and
//! retries, so an implementation only reports what happened and whether it is worth retrying.

pub mod ces;
pub mod command;
pub mod connect;
pub mod evaluations;
pub mod http;
pub mod llm;
pub mod protocol;
pub mod replay;

use std::time::Duration;

use async_trait::async_trait;

pub use protocol::TurnRequest;

use crate::net::EndpointError;
use crate::results::Unmeasured;

use crate::transcript::Exchange;

#[async_trait]
pub trait Agent: Send + Sync {
    /// Plays one turn.
    async fn send(&self, request: &TurnRequest) -> Result<Exchange, EndpointError>;

    /// Called once a case is over, so that an agent can drop the session's state.
    async fn end_session(&self, _session: &str) {}

    /// Called once the run is over: stops what the agent started (subprocesses).
    async fn shutdown(&self) {}

    /// How long the agent took to become ready, timed apart from the turns (command agents).
    fn startup(&self) -> Option<Duration> {
        None
    }

    /// Whether the agent can run one of its tools directly, outside a conversation (SCRAPI
    /// tool tests, [`protocol::EXECUTE_TOOL`]). Cases that need it are skipped otherwise.
    fn executes_tools(&self) -> bool {
        false
    }

    /// The metrics this agent's replies cannot show, and why (a reply format with no place
    /// for a handoff): the report says they were not measured instead of reading a value
    /// that no reply could have moved.
    fn unmeasured(&self) -> Vec<Unmeasured> {
        Vec::new()
    }

    /// An agent that runs and scores whole cases itself (CX Agent Studio's evaluations): the
    /// runner hands it the cases instead of playing their turns.
    fn evaluations(&self) -> Option<&dyn evaluations::Evaluations> {
        None
    }

    /// What the report shows about the agent (never a secret).
    fn describe(&self) -> String;

    /// Output the agent wrote for humans (a subprocess's stderr), kept for the report.
    fn diagnostics(&self) -> Option<String> {
        None
    }
}
