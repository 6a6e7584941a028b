//! The agent under test, behind one trait: HTTP, a subprocess, recorded transcripts, or a
//! model with the team's prompt and tools (LLM agents).
//!
//! An agent answers one [`TurnRequest`] at a time; the runner owns ordering, timeouts and
//! retries, so an implementation only reports what happened and whether it is worth retrying.

pub mod command;
pub mod connect;
pub mod http;
pub mod llm;
pub mod protocol;
pub mod replay;

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;

pub use protocol::TurnRequest;

use crate::transcript::Exchange;

#[async_trait]
pub trait Agent: Send + Sync {
    /// Plays one turn.
    async fn send(&self, request: &TurnRequest) -> Result<Exchange, AgentError>;

    /// Called once a case is over, so that an agent can drop the session's state.
    async fn end_session(&self, _session: &str) {}

    /// What the report shows about the agent (never a secret).
    fn describe(&self) -> String;

    /// Output the agent wrote for humans (a subprocess's stderr), kept for the report.
    fn diagnostics(&self) -> Option<String> {
        None
    }
}

/// Why a turn could not be played. This is an error of the run, never a test failure.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentError {
    pub kind: AgentErrorKind,
    pub message: String,
    /// The server asked to wait this long before retrying (`Retry-After`).
    pub retry_after: Option<Duration>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentErrorKind {
    /// Could not connect, or the connection broke.
    Connect,
    /// No complete reply within the per-turn timeout.
    Timeout,
    /// A non-2xx HTTP status.
    Status(u16),
    /// A reply that is not the protocol's JSON.
    Protocol,
    /// The agent process exited.
    Crashed,
    /// Nothing recorded for this turn (replay).
    NotRecorded,
}

impl AgentError {
    pub fn new(kind: AgentErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            retry_after: None,
        }
    }

    /// Connection errors, 5xx and 429 may pass on a second try; the rest will not.
    pub fn is_retryable(&self) -> bool {
        match self.kind {
            AgentErrorKind::Connect | AgentErrorKind::Crashed => true,
            AgentErrorKind::Status(code) => code == 429 || (500..600).contains(&code),
            AgentErrorKind::Timeout | AgentErrorKind::Protocol | AgentErrorKind::NotRecorded => {
                false
            }
        }
    }
}

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            AgentErrorKind::Connect => "connection failed".to_owned(),
            AgentErrorKind::Timeout => "timed out".to_owned(),
            AgentErrorKind::Status(code) => format!("HTTP {code}"),
            AgentErrorKind::Protocol => "bad reply".to_owned(),
            AgentErrorKind::Crashed => "agent process exited".to_owned(),
            AgentErrorKind::NotRecorded => "not recorded".to_owned(),
        };
        write!(f, "{kind}: {}", self.message)
    }
}

impl std::error::Error for AgentError {}
