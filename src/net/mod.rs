//! The network underneath every endpoint goldgate talks to (the agent under test, the LLM
//! providers, GitHub): one HTTP client, the error an endpoint call ends with, backoff and
//! `Retry-After`, and reading replies within goldgate's memory bounds.
//!
//! It sits below `agent`, `llm`, `limit` and `github` so that none of them needs another's
//! helpers: an LLM client reads a body exactly as an agent does, without depending on agents.

mod body;
mod retry_after;
pub mod tls;
mod transport;

use std::fmt;
use std::time::Duration;

pub use body::{
    MAX_BODY, ReplyMemory, append, holding_large_replies, read_body, read_parsed, read_start,
    too_big,
};
pub use retry_after::{parse_imf_fixdate, retry_after};
pub use transport::{quote, status_error, transport_error};

/// A client with its own connection pool over the process's one TLS set-up ([`tls::config`]),
/// that never carries a request to another origin: no `Referer`, and a redirect to another
/// origin is an error ([`CrossOrigin`]). Every endpoint goldgate calls (agents, LLM
/// providers, Google's token endpoints, GitHub) is called through one of these.
pub fn http_client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .user_agent(concat!("goldgate/", env!("CARGO_PKG_VERSION")))
        .tls_backend_preconfigured(tls::config()?)
        .referer(false)
        .redirect(same_origin_redirects())
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

/// As many redirects as reqwest follows by default.
const MAX_REDIRECTS: usize = 10;

/// Follows redirects within the origin first asked only. Followed to another origin, a
/// request would carry its body (307, 308), its URL's token and every header reqwest does not
/// know to be a credential (an `X-Api-Key`) to a server nobody configured.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let first = attempt.previous().first().map(reqwest::Url::origin);
        if first.is_some_and(|origin| origin != attempt.url().origin()) {
            let to = attempt.url().origin().ascii_serialization();
            attempt.error(CrossOrigin { to })
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// A redirect to another origin, refused ([`http_client`]).
#[derive(Debug)]
pub struct CrossOrigin {
    /// Scheme, host and port only: no user, path or query, which may be secret.
    to: String,
}

impl fmt::Display for CrossOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "answered with a redirect to another origin ({}), not followed: it would carry the \
             request's credentials there (configure the URL it redirects to)",
            self.to
        )
    }
}

impl std::error::Error for CrossOrigin {}

/// Why a call to an endpoint (a turn of the agent, a judge's question) could not be made.
/// For a turn this is an error of the run, never a test failure.
#[derive(Clone, Debug, PartialEq)]
pub struct EndpointError {
    pub kind: EndpointErrorKind,
    pub message: String,
    /// The server asked to wait this long before retrying (`Retry-After`).
    pub retry_after: Option<Duration>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndpointErrorKind {
    /// Could not connect, or the connection broke.
    Connect,
    /// No complete reply within the per-turn timeout.
    Timeout,
    /// A non-2xx HTTP status.
    Status(u16),
    /// A reply that is not the protocol's JSON, or that a template's response paths do not fit
    /// (a path that finds nothing, or would visit too much). Not retried: the agent answering
    /// the same way, the same config would read it the same way.
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

impl EndpointError {
    /// The turn was stopped by goldgate, not by the agent.
    pub fn cancelled() -> Self {
        Self::new(EndpointErrorKind::Cancelled, CANCELLED)
    }

    pub fn new(kind: EndpointErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            retry_after: None,
        }
    }

    /// Connection errors, 5xx and 429 may pass on a second try; the rest will not.
    pub fn is_retryable(&self) -> bool {
        match self.kind {
            EndpointErrorKind::Connect | EndpointErrorKind::Crashed => true,
            EndpointErrorKind::Status(code) => code == 429 || (500..600).contains(&code),
            EndpointErrorKind::Timeout
            | EndpointErrorKind::Protocol
            | EndpointErrorKind::Refused
            | EndpointErrorKind::NotStarted
            | EndpointErrorKind::NotFound
            | EndpointErrorKind::NotRecorded
            | EndpointErrorKind::RateLimited
            | EndpointErrorKind::Cancelled => false,
        }
    }
}

impl fmt::Display for EndpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            EndpointErrorKind::Connect => "connection failed".to_owned(),
            EndpointErrorKind::Timeout => "timed out".to_owned(),
            EndpointErrorKind::Status(code) => format!("HTTP {code}"),
            EndpointErrorKind::Protocol => "bad reply".to_owned(),
            EndpointErrorKind::Refused => "refused".to_owned(),
            EndpointErrorKind::Crashed => "agent process exited".to_owned(),
            EndpointErrorKind::NotStarted => "the agent did not start".to_owned(),
            EndpointErrorKind::NotFound => "not found".to_owned(),
            EndpointErrorKind::NotRecorded => "not recorded".to_owned(),
            EndpointErrorKind::RateLimited => "rate limited".to_owned(),
            // Says all there is to say: no reason to add.
            EndpointErrorKind::Cancelled => return f.write_str(CANCELLED),
        };
        write!(f, "{kind}: {}", self.message)
    }
}

impl std::error::Error for EndpointError {}

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
