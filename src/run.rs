//! Scheduling: cases run concurrently, the turns of a case in order in one session, each turn
//! under a timeout, with retries for what may pass on a second try.
//!
//! Errors of the run (unreachable agent, timeout, bad reply) are kept apart from test failures:
//! they make a turn and its case `error`, never `failed`. Cancellation has two steps: the first
//! stops scheduling new cases and lets those in flight finish; the second cancels them too.
//! Either way the cases that ran are returned, marked incomplete.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::agent::protocol::{self, Usage};
use crate::agent::{Agent, AgentError, AgentErrorKind, Exchange, Reply, TurnRequest, replay};
use crate::model::{Case, Input, Turn};
use crate::outcome::{CaseResult, RunResult, Status, TurnResult};
use crate::score::Grader;

/// How to run, after config and flags are merged.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub concurrency: usize,
    /// Per turn, for the whole exchange (a streamed reply included).
    pub timeout: Duration,
    /// Extra attempts after a retryable error.
    pub retries: u32,
    /// First backoff delay; doubled on each attempt, with full jitter.
    pub backoff: Duration,
    /// Write each case's transcript here (`--record`).
    pub record: Option<PathBuf>,
}

/// The two steps of stopping (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct Stop {
    pub scheduling: CancellationToken,
    pub in_flight: CancellationToken,
}

/// What the runner tells whoever shows progress.
#[derive(Clone, Debug)]
pub enum Event<'a> {
    CaseStarted { case: &'a Case },
    CaseFinished { case: &'a Case, status: Status },
}

/// Runs `cases` against `agent`, returning results in the order of `cases`.
pub async fn run(
    cases: Vec<Arc<Case>>,
    agent: Arc<dyn Agent>,
    grader: Arc<Grader>,
    options: &RunOptions,
    stop: &Stop,
    on_event: &(dyn Fn(Event<'_>) + Send + Sync),
) -> RunResult {
    let started = Instant::now();
    let total = cases.len();
    let mut results: Vec<(usize, CaseResult)> =
        futures_util::stream::iter(cases.into_iter().enumerate())
            .take_until(stop.scheduling.clone().cancelled_owned())
            .map(|(index, case)| {
                let agent = Arc::clone(&agent);
                let grader = Arc::clone(&grader);
                async move {
                    on_event(Event::CaseStarted { case: &case });
                    let result =
                        run_case(Arc::clone(&case), agent.as_ref(), &grader, options, stop).await;
                    on_event(Event::CaseFinished {
                        case: &case,
                        status: result.status,
                    });
                    (index, result)
                }
            })
            .buffer_unordered(options.concurrency.max(1))
            .collect()
            .await;
    results.sort_by_key(|(index, _)| *index);
    let cancelled = results
        .iter()
        .any(|(_, r)| r.error.as_deref() == Some(CANCELLED));
    RunResult {
        incomplete: results.len() < total || cancelled,
        cases: results.into_iter().map(|(_, r)| r).collect(),
        agent: agent.describe(),
        judges: grader.judges(),
        duration: started.elapsed(),
        agent_log: agent.diagnostics(),
    }
}

const CANCELLED: &str = "cancelled before the case finished";

async fn run_case(
    case: Arc<Case>,
    agent: &dyn Agent,
    grader: &Grader,
    options: &RunOptions,
    stop: &Stop,
) -> CaseResult {
    let started = Instant::now();
    let session = format!("{}-{:016x}", case.id, fastrand::u64(..));
    let mut turns = Vec::with_capacity(case.turns.len());
    let mut played: Vec<(TurnRequest, Exchange)> = Vec::new();
    let mut usage = Usage::default();
    let mut error = None;
    for turn in &case.turns {
        if let Some(message) = &error {
            turns.push(unplayed(turn, format!("not played: {message}")));
            continue;
        }
        let request = request_for(&case, turn, &session);
        let outcome = tokio::select! {
            outcome = play(turn, &request, agent, options) => outcome,
            () = stop.in_flight.cancelled() => Err((AgentError::new(AgentErrorKind::Connect, CANCELLED), 1)),
        };
        match outcome {
            Ok((exchange, attempts)) => {
                if let Some(u) = exchange.reply.usage {
                    usage.input_tokens += u.input_tokens;
                    usage.output_tokens += u.output_tokens;
                }
                let checks = grader.grade_turn(turn, &exchange).await;
                let status = Status::combine(checks.iter().map(|c| c.status));
                played.push((request, exchange.clone()));
                turns.push(TurnResult {
                    index: turn.index,
                    location: turn.location.clone(),
                    status,
                    input: describe_inputs(&turn.inputs),
                    checks,
                    exchange: Some(exchange),
                    error: None,
                    attempts,
                });
            }
            Err((err, attempts)) => {
                let message = if err.message == CANCELLED {
                    CANCELLED.to_owned()
                } else {
                    err.to_string()
                };
                error = Some(message.clone());
                let mut result = unplayed(turn, message);
                result.attempts = attempts;
                turns.push(result);
            }
        }
    }
    agent.end_session(&session).await;
    let checks = if error.is_none() {
        grader.grade_case(&case, &turns).await
    } else {
        Vec::new()
    };
    if let (Some(dir), None) = (&options.record, &error)
        && let Err(e) = replay::record_case(dir, &case.id, &played)
    {
        error = Some(format!(
            "could not record the transcript in {}: {e}",
            dir.display()
        ));
    }
    let status = if error.is_some() {
        Status::Error
    } else {
        Status::combine(
            turns
                .iter()
                .map(|t| t.status)
                .chain(checks.iter().map(|c| c.status)),
        )
    };
    let score = Grader::case_score(&case, &turns, &checks).unwrap_or_default();
    CaseResult {
        case,
        status,
        turns,
        checks,
        score,
        duration: started.elapsed(),
        usage,
        error,
    }
}

/// One turn: a reply recorded in the golden is used as is; otherwise the agent is asked, with
/// retries. Returns the exchange (or the last error) and the number of attempts.
async fn play(
    turn: &Turn,
    request: &TurnRequest,
    agent: &dyn Agent,
    options: &RunOptions,
) -> Result<(Exchange, u32), (AgentError, u32)> {
    if let Some(text) = &turn.recorded_reply {
        let reply = Reply {
            messages: vec![protocol::Message {
                text: text.clone(),
                agent: None,
            }],
            ..Reply::default()
        };
        return Ok((
            Exchange {
                reply,
                latency: Duration::ZERO,
                ttft: None,
            },
            0,
        ));
    }
    let mut attempt = 0;
    loop {
        attempt += 1;
        let result = match tokio::time::timeout(options.timeout, agent.send(request)).await {
            Ok(result) => result,
            Err(_) => Err(AgentError::new(
                AgentErrorKind::Timeout,
                format!("no complete reply within {:?}", options.timeout),
            )),
        };
        match result {
            Ok(exchange) => return Ok((exchange, attempt)),
            Err(err) if err.is_retryable() && attempt <= options.retries => {
                tokio::time::sleep(backoff(options.backoff, attempt, err.retry_after)).await;
            }
            Err(err) => return Err((err, attempt)),
        }
    }
}

/// Exponential backoff with full jitter, or the server's `Retry-After` when it gave one.
fn backoff(base: Duration, attempt: u32, retry_after: Option<Duration>) -> Duration {
    const CAP: Duration = Duration::from_secs(60);
    if let Some(wait) = retry_after {
        return wait.min(CAP);
    }
    let ceiling = base.saturating_mul(1 << attempt.min(16)).min(CAP);
    ceiling.mul_f64(fastrand::f64())
}

fn request_for(case: &Case, turn: &Turn, session: &str) -> TurnRequest {
    let mut tool_mocks = Map::new();
    for mock in &turn.tool_mocks {
        // The protocol maps a tool to one output: the first mock written wins.
        tool_mocks
            .entry(mock.tool.clone())
            .or_insert_with(|| mock.output.clone());
    }
    TurnRequest {
        id: None,
        session: session.to_owned(),
        conversation: case.id.clone(),
        turn: turn.index,
        input: protocol::input_object(&turn.inputs),
        session_parameters: if turn.index == 1 {
            case.session_parameters.clone()
        } else {
            Map::new()
        },
        tool_mocks,
        mocks: turn.tool_mocks.clone(),
    }
}

fn unplayed(turn: &Turn, message: String) -> TurnResult {
    TurnResult {
        index: turn.index,
        location: turn.location.clone(),
        status: Status::Error,
        input: describe_inputs(&turn.inputs),
        checks: Vec::new(),
        exchange: None,
        error: Some(message),
        attempts: 0,
    }
}

/// The user side of a turn as one line for reports.
pub fn describe_inputs(inputs: &[Input]) -> String {
    let parts: Vec<String> = inputs
        .iter()
        .map(|input| match input {
            Input::Text(text) => text.clone(),
            Input::Event(name) => format!("<event {name}>"),
            Input::ToolResponse { name, response } => format!("<tool response {name}: {response}>"),
            Input::Variables(vars) => format!("<variables {}>", Value::Object(vars.clone())),
            Input::Image { mime_type, .. } => format!("<image {mime_type}>"),
            Input::ApproveToolCall(tag) => format!("<approve tool call {tag}>"),
            Input::DenyToolCall(tag) => format!("<deny tool call {tag}>"),
        })
        .collect();
    if parts.is_empty() {
        "<no input>".to_owned()
    } else {
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
