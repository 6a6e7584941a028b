//! The agent under test, behind one trait: HTTP, a subprocess, recorded transcripts, or a
//! model with the team's prompt and tools (LLM agents), or a CX Agent Studio app.
//!
//! An agent answers one [`TurnRequest`] at a time; the runner owns ordering, timeouts and
//! retries, so an implementation only reports what happened and whether it is worth retrying.

pub mod ces;
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
    /// An endpoint goldgate will not follow or trust: a redirect loop, a TLS certificate that
    /// is not trusted. A second try cannot pass.
    Refused,
    /// The agent process exited.
    Crashed,
    /// The agent could not be started or set up at all.
    NotStarted,
    /// The golden names something the agent does not have (a tool test's tool): the golden,
    /// not the agent's reply, is at fault.
    NotFound,
    /// Nothing recorded for this turn (replay).
    NotRecorded,
    /// The endpoint asked to wait longer than `--rate-limit-wait` allows. Not retried: a
    /// retry would only wait the same budget out again.
    RateLimited,
    /// goldgate was told to stop (a second Ctrl-C, or SIGTERM) before the turn finished.
    Cancelled,
}

/// What a turn or case stopped by cancellation reports.
const CANCELLED: &str = "cancelled before the case finished";

impl AgentError {
    /// The turn was stopped by goldgate, not by the agent.
    pub fn cancelled() -> Self {
        Self::new(AgentErrorKind::Cancelled, CANCELLED)
    }

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
            AgentErrorKind::Timeout
            | AgentErrorKind::Protocol
            | AgentErrorKind::Refused
            | AgentErrorKind::NotStarted
            | AgentErrorKind::NotFound
            | AgentErrorKind::NotRecorded
            | AgentErrorKind::RateLimited
            | AgentErrorKind::Cancelled => false,
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
            AgentErrorKind::Refused => "refused".to_owned(),
            AgentErrorKind::Crashed => "agent process exited".to_owned(),
            AgentErrorKind::NotStarted => "the agent did not start".to_owned(),
            AgentErrorKind::NotFound => "not found".to_owned(),
            AgentErrorKind::NotRecorded => "not recorded".to_owned(),
            AgentErrorKind::RateLimited => "rate limited".to_owned(),
            // Says all there is to say: no reason to add.
            AgentErrorKind::Cancelled => return f.write_str(CANCELLED),
        };
        write!(f, "{kind}: {}", self.message)
    }
}

impl std::error::Error for AgentError {}

/// Exponential backoff with full jitter, or the server's `Retry-After` when it gave one.
pub fn backoff(base: Duration, attempt: u32, retry_after: Option<Duration>) -> Duration {
    const CAP: Duration = Duration::from_secs(60);
    if let Some(wait) = retry_after {
        return wait.min(CAP);
    }
    let ceiling = base.saturating_mul(1 << attempt.min(16)).min(CAP);
    ceiling.mul_f64(fastrand::f64())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::backoff;

    #[test]
    fn backoff_honours_retry_after_and_stays_under_the_doubled_ceiling() {
        let base = Duration::from_millis(100);
        assert_eq!(
            backoff(base, 1, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
        assert_eq!(
            backoff(base, 1, Some(Duration::from_secs(600))),
            Duration::from_secs(60)
        );
        for attempt in 1..5 {
            assert!(backoff(base, attempt, None) <= base * (1 << attempt));
        }
    }
}
