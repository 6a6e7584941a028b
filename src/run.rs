//! Scheduling: cases run concurrently, the turns of a case in order in one session, each turn
//! under a timeout, with retries for what may pass on a second try.
//!
//! Errors of the run (unreachable agent, timeout, bad reply) are kept apart from test failures:
//! they make a turn and its case `error`, never `failed`. Cancellation has two steps: the first
//! stops scheduling new cases and lets those in flight finish; the second cancels them too.
//! Either way the cases that ran are returned, marked incomplete.
//!
//! Repeats (`--repeat N`) are scheduled as N independent units per case, each in its own
//! session, so that they run concurrently with each other and with other cases; their results
//! are then joined into one per case by [`CaseResult::from_runs`].

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tokio::sync::OwnedSemaphorePermit;
use tokio_util::sync::CancellationToken;

mod batch;
mod conversation;
mod platform;
mod simulated;
mod skipped;
mod spend;

pub use spend::{Pricing, Spend};

use crate::agent::protocol;
use crate::agent::{Agent, TurnRequest, replay};
use crate::limit::{DEFAULT_WAIT_BUDGET, Limiter, Limits, Pacing};
use crate::model::{Case, CaseKind, Input, Turn};
use crate::net::{EndpointError, EndpointErrorKind};
use crate::results::{CaseResult, CheckResult, Report, Status, TurnResult};
use crate::score::Grader;
use crate::secrets::Secrets;
use crate::transcript::{Exchange, Reply, Usage};

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
    /// The run's rate limiters (agent and judges share one registry, so the report lists
    /// both); `None`: a registry of the run's own, at `concurrency`, with the default budget.
    pub limits: Option<Arc<Limits>>,
    /// The agent's known quota (`agent.rate_limit`).
    pub agent_pacing: Pacing,
    /// The credentials the run knows, masked out of recordings (`--record`).
    pub secrets: Secrets,
    /// How what the run spends is priced, and its budget.
    pub pricing: Pricing,
    /// What the run has spent so far: shared by its clones (adaptive reruns spend from it).
    pub spend: Arc<Spend>,
}

/// The two steps of stopping (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct Stop {
    pub scheduling: CancellationToken,
    pub in_flight: CancellationToken,
}

/// How many times each case runs, and how many of its runs must pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repeat {
    runs: u32,
    min_pass: u32,
}

/// Why a `--repeat N --min-pass K` cannot be run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RepeatError {
    #[error("a case must run at least once (got 0 runs)")]
    NoRuns,
    #[error("min-pass {min_pass} must be between 1 and the number of runs ({runs})")]
    MinPass { min_pass: u32, runs: u32 },
}

impl Repeat {
    /// Every case once: a plain run.
    pub const ONCE: Repeat = Repeat {
        runs: 1,
        min_pass: 1,
    };

    /// `runs` runs of each case, of which `min_pass` (default: all) must pass.
    pub fn new(runs: u32, min_pass: Option<u32>) -> Result<Self, RepeatError> {
        if runs == 0 {
            return Err(RepeatError::NoRuns);
        }
        let min_pass = min_pass.unwrap_or(runs);
        if min_pass == 0 || min_pass > runs {
            return Err(RepeatError::MinPass { min_pass, runs });
        }
        Ok(Self { runs, min_pass })
    }

    /// N.
    pub fn runs(self) -> u32 {
        self.runs
    }

    /// K.
    pub fn min_pass(self) -> u32 {
        self.min_pass
    }
}

/// What the runner tells whoever shows progress. With repeats, once per run of a case.
#[derive(Clone, Debug)]
pub enum Event<'a> {
    CaseStarted {
        case: &'a Case,
    },
    CaseFinished {
        case: &'a Case,
        status: Status,
    },
    /// More runs were scheduled (adaptive repeats): the total to show grows by `runs`.
    RunsAdded {
        runs: usize,
    },
}

/// Whoever shows progress: called from the tasks that play the cases.
pub type OnEvent = Arc<dyn Fn(Event<'_>) + Send + Sync>;

/// What a run hands back: the report of the cases that ran (of the suite made of all the
/// cases given, with no `--max-errors` allowance and no gate: the caller sets those), and
/// how long the run took.
#[derive(Clone, Debug)]
pub struct Played {
    pub report: Report,
    pub duration: Duration,
}

/// Runs each of `cases` `repeat.runs()` times against `agent`, returning one result per case
/// (its runs joined, see [`crate::results::Repeats`]) in the order of `cases`.
pub async fn run_repeated(
    cases: Vec<Arc<Case>>,
    repeat: Repeat,
    agent: Arc<dyn Agent>,
    grader: Arc<Grader>,
    options: &RunOptions,
    stop: &Stop,
    on_event: OnEvent,
) -> Played {
    let started = Instant::now();
    let limits = options
        .limits
        .clone()
        .unwrap_or_else(|| Limits::new(options.concurrency, DEFAULT_WAIT_BUDGET));
    let players = batch::Players {
        limiter: limits.endpoint("agent", options.agent_pacing),
        agent,
        grader,
        options: Arc::new(options.clone()),
        on_event,
    };
    let runs = repeat.runs as usize;
    // An agent that runs whole cases itself (CX Agent Studio evaluations) gets them in a batch.
    let (mut results, cut_short) = match players.agent.evaluations() {
        Some(evaluations) => {
            let bounds = (options, stop);
            platform::play(evaluations, &cases, runs, bounds, &players.on_event).await
        }
        None => (players.play(&cases, runs, stop).await, false),
    };
    results.sort_unstable_by_key(|(index, run, _)| (*index, *run));
    // Cases stopped in flight ended as errors; the run is incomplete either way.
    let incomplete =
        cut_short || results.len() < cases.len() * runs || stop.in_flight.is_cancelled();
    let mut report = players.report(&cases, results, repeat, &limits);
    report.incomplete = incomplete;
    Played {
        report,
        duration: started.elapsed(),
    }
}

async fn run_case(
    case: Arc<Case>,
    ((agent, limiter), place): ((&dyn Agent, &Limiter), OwnedSemaphorePermit),
    grader: &Grader,
    options: &RunOptions,
    stop: &Stop,
) -> CaseResult {
    if case.kind() == CaseKind::ToolTest && !agent.executes_tools() {
        return skipped::tool_test(&case, &agent.describe());
    }
    let started = Instant::now();
    let session = format!("{}-{:016x}", case.id, fastrand::u64(..));
    let talked = match simulated::plan(&case) {
        // A case with a simulated user: played with it, or skipped without one.
        Some(plan) => match simulated::play(
            (&plan, case.location.line),
            &session,
            (agent, limiter),
            grader,
            options,
            stop,
        )
        .await
        {
            Ok(session) => Talked::Simulated(session),
            Err(reason) => return simulated::skipped(&case, &reason),
        },
        None => Talked::Scripted(
            conversation::play_turns(&case, &session, (agent, limiter), options, stop).await,
        ),
    };
    agent.end_session(&session).await;
    // The conversation is over: the next case may talk to the agent while this one's turns and
    // checks are graded. Yielding lets it send its first request now, rather than after this
    // grading on the same thread: the agent's time is what bounds a run.
    drop(place);
    tokio::task::yield_now().await;
    let Session {
        turns,
        played,
        usage,
        mut error,
        steps,
    } = match talked {
        Talked::Simulated(session) => session,
        Talked::Scripted(scripted) => {
            let recording = options.record.is_some();
            conversation::grade(&case, scripted, (grader, recording), stop).await
        }
    };
    let checks = [
        steps,
        case_checks(&case, &turns, &mut error, grader, stop).await,
    ]
    .concat();
    if let (Some(dir), None) = (&options.record, &error)
        && let Err(e) = record(dir, &case, played, &options.secrets).await
    {
        error = Some(format!(
            "could not record the transcript in {}: {e}",
            dir.display()
        ));
    }
    let status = case_status(&case, (&turns, &checks), &mut error);
    let score = Grader::case_score(&case, &turns, &checks).unwrap_or_default();
    let mut result = CaseResult {
        status,
        score,
        duration: started.elapsed(),
        error,
        usage,
        turns,
        checks,
        ..CaseResult::of(&case)
    };
    // Judged whole; kept in part, so that what the run holds and writes stays bounded.
    result.clip(&options.secrets);
    result
}

/// The case-level checks of a case whose turns all played (none after an error), graded
/// unless the run is cancelled in flight: then the case errs.
async fn case_checks(
    case: &Case,
    turns: &[TurnResult],
    error: &mut Option<String>,
    grader: &Grader,
    stop: &Stop,
) -> Vec<CheckResult> {
    if error.is_some() {
        return Vec::new();
    }
    let graded = stop
        .in_flight
        .run_until_cancelled(grader.grade_case(case, turns))
        .await;
    if graded.is_none() {
        *error = Some(EndpointError::cancelled().to_string());
    }
    graded.unwrap_or_default()
}

/// A case's status from its turns and checks; an ungraded simulation is skipped with why.
fn case_status(
    case: &Case,
    (turns, checks): (&[TurnResult], &[CheckResult]),
    error: &mut Option<String>,
) -> Status {
    if error.is_some() {
        return Status::Error;
    }
    let status = Status::combine(
        turns
            .iter()
            .map(|t| t.status)
            .chain(checks.iter().map(|c| c.status)),
    );
    match simulated::ungraded(case, status, checks).or_else(|| unproven_pass(case, status)) {
        Some(reason) => {
            *error = Some(reason);
            Status::Skipped
        }
        None => status,
    }
}

/// A pass of a case that `convert` could not carry whole ([`Case::not_carried`]) is no pass:
/// returns why it is skipped instead (also when nothing was left to check). A check left out
/// might have failed; one that ran and failed still fails the case.
fn unproven_pass(case: &Case, status: Status) -> Option<String> {
    let unproven = matches!(status, Status::Passed | Status::Skipped);
    let lost = case.not_carried().filter(|_| unproven)?;
    Some(format!(
        "not judged whole: goldgate convert could not carry every check of this case into its format ({lost})"
    ))
}

/// Writes the case's transcript under `dir` (`--record`) on a blocking thread: a file written
/// and synced must not hold up the async workers that play the other cases.
async fn record(
    dir: &std::path::Path,
    case: &Case,
    mut played: Vec<(TurnRequest, Exchange)>,
    secrets: &Secrets,
) -> std::io::Result<()> {
    // Recordings are committed and uploaded like reports: an echoed credential stays out.
    for (request, exchange) in &mut played {
        let mut input = Value::Object(std::mem::take(&mut request.input));
        secrets.mask_json(&mut input);
        if let Value::Object(input) = input {
            request.input = input;
        }
        crate::results::mask_reply(&mut exchange.reply, secrets);
    }
    let (dir, key, id) = (
        dir.to_path_buf(),
        crate::shard::case_key(case),
        case.id.clone(),
    );
    tokio::task::spawn_blocking(move || replay::record_case(&dir, &key, &id, &played))
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e)))
}

/// What talking to the agent left: a simulated user's conversation comes graded (its steps
/// are judged as it goes); a scripted one is graded after the agent's place is given back.
enum Talked {
    Simulated(Session),
    Scripted(conversation::Conversation),
}

/// What playing a case's turns in one session left: a result per turn, the exchanges to
/// record, the agent's usage and the error that stopped the case, if any.
struct Session {
    turns: Vec<TurnResult>,
    played: Vec<(TurnRequest, Exchange)>,
    usage: Usage,
    error: Option<String>,
    /// Where each step of a simulated user's conversation ended, as checks.
    steps: Vec<crate::results::CheckResult>,
}

/// One turn: a reply recorded in the golden is used as is; otherwise the agent is asked
/// through its limiter (which waits 429s out, uncounted), with retries for other errors.
/// Returns the exchange (or the last error) and the number of attempts.
async fn play(
    turn: &Turn,
    request: &TurnRequest,
    (agent, limiter): (&dyn Agent, &Limiter),
    options: &RunOptions,
) -> Result<(Exchange, u32), (EndpointError, u32)> {
    if let Some(text) = &turn.recorded_reply {
        let reply = Reply {
            messages: vec![crate::transcript::Message {
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
    send(request, (agent, limiter), options).await
}

/// One request, through the agent's limiter (which waits 429s out, uncounted), under the
/// turn timeout, with retries for other errors. Returns the exchange (or the last error) and
/// the number of attempts.
async fn send(
    request: &TurnRequest,
    (agent, limiter): (&dyn Agent, &Limiter),
    options: &RunOptions,
) -> Result<(Exchange, u32), (EndpointError, u32)> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let once = || async {
            match tokio::time::timeout(options.timeout, agent.send(request)).await {
                Ok(result) => result,
                Err(_) => Err(EndpointError::new(
                    EndpointErrorKind::Timeout,
                    format!("no complete reply within {:?}", options.timeout),
                )),
            }
        };
        let tokens = |exchange: &Exchange| {
            let usage = exchange.reply.usage.unwrap_or_default();
            usage.input_tokens.saturating_add(usage.output_tokens)
        };
        let result = limiter.call(once, tokens).await;
        match result {
            Ok(mut exchange) => {
                exchange.reply.usage = exchange
                    .reply
                    .usage
                    .map(|usage| options.spend.agent_reply(usage, &options.pricing));
                return Ok((exchange, attempt));
            }
            Err(err) if err.is_retryable() && attempt <= options.retries => {
                // A 503's wait is the limiter's pause (timed for the report, within the
                // budget): sleeping here too would wait it twice, untimed.
                if !crate::limit::is_limit(&err) {
                    tokio::time::sleep(crate::net::backoff(
                        options.backoff,
                        attempt,
                        err.retry_after,
                    ))
                    .await;
                }
            }
            Err(err) => return Err((err, attempt)),
        }
    }
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
        case: crate::shard::case_key(case),
        turn: turn.index,
        input: protocol::input_object(&turn.inputs),
        session_parameters: if turn.index == 1 {
            case.session_parameters.clone()
        } else {
            Map::new()
        },
        tool_mocks,
        mocks: turn.tool_mocks.clone(),
        system_prompt: case.system_prompt.clone(),
        context: case.context.clone(),
    }
}

fn unplayed(turn: &Turn, message: String) -> TurnResult {
    TurnResult {
        index: turn.index,
        line: turn.location.line,
        status: Status::Error,
        input: describe_inputs(&turn.inputs),
        attempts: 0,
        error: Some(message),
        reply: None,
        cut: None,
        latency: None,
        ttft: None,
        checks: Vec::new(),
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
            Input::ExecuteTool(execution) => format!(
                "<execute tool {} {}>",
                execution.tool,
                Value::Object(execution.args.clone())
            ),
        })
        .collect();
    if parts.is_empty() {
        "<no input>".to_owned()
    } else {
        parts.join(" ")
    }
}
