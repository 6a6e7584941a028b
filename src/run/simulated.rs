//! Cases with a simulated user (SCRAPI simulations): the conversation is played by
//! [`crate::simulate::play_with`], each request sent as a scripted turn's is (the agent's
//! limiter, the turn timeout, retries, the second Ctrl-C). What it leaves is a [`Session`] as
//! for scripted cases: a turn result per played turn (no expectations of its own), the
//! exchanges to record, and one check per step with the simulated user's justification. The
//! case's checks (the simulation's `expectations`) are then judged over those turns like any
//! case's, so that repeats, shards, reports and the gate need nothing of their own.

use std::sync::Mutex;

use serde_json::{Map, Value};

use super::{RunOptions, Session, Stop, describe_inputs, send};
use crate::agent::{Agent, TurnRequest};
use crate::limit::Limiter;
use crate::model::{Case, Input};
use crate::net::EndpointError;
use crate::results::{CaseResult, CheckCategory, CheckResult, Method, Status, TurnResult};
use crate::score::simulated_user::{SimulatedUser, StepStatus};
use crate::score::{Grader, NO_JUDGE};
use crate::simulate::{self, Plan, SimulateError};
use crate::transcript::{Exchange, Usage};

/// Why a simulation is skipped when no simulated user is configured at all.
pub const NO_SIMULATOR: &str =
    "no simulated user: configure `simulator:` or `judge:` in goldgate.yaml";

/// The plan of `case` when a simulated user plays it.
pub(super) fn plan(case: &Case) -> Option<Plan> {
    Plan::of_case(case, crate::shard::case_key(case))
}

/// Plays `plan` with the grader's simulated user; `Err` with the reason when there is none.
/// Turns and steps are reported at `line`, the simulation's (they have none of their own).
pub(super) async fn play(
    (plan, line): (&Plan, u32),
    session: &str,
    (agent, limiter): (&dyn Agent, &Limiter),
    grader: &Grader,
    options: &RunOptions,
    stop: &Stop,
) -> Result<Session, String> {
    let Some(simulator) = grader.simulator.as_deref() else {
        return Err(grader
            .no_simulator
            .clone()
            .unwrap_or_else(|| NO_SIMULATOR.to_owned()));
    };
    // Every exchange, with its request and attempts, as it happens: an error later in the
    // conversation keeps the turns played before it.
    let sent: Mutex<Vec<(TurnRequest, Exchange, u32)>> = Mutex::new(Vec::new());
    let send_one = |request: TurnRequest| {
        let sent = &sent;
        async move {
            let (exchange, attempts) = send(&request, (agent, limiter), options)
                .await
                .map_err(|(err, _)| err)?;
            lock(sent).push((request, exchange.clone(), attempts));
            Ok(exchange)
        }
    };
    let outcome = tokio::select! {
        played = simulate::play_with(send_one, simulator, plan, session) => played,
        () = stop.in_flight.cancelled() => Err(SimulateError::Agent {
            turn: lock(&sent).len() + 1,
            source: EndpointError::cancelled(),
        }),
    };
    let sent = std::mem::take(&mut *lock(&sent));
    let mut usage = Usage::default();
    let mut turns = Vec::with_capacity(sent.len());
    for (request, exchange, attempts) in &sent {
        usage = usage.plus(exchange.reply.usage.unwrap_or_default());
        let inputs = inputs_of(&request.input);
        turns.push(TurnResult {
            index: request.turn,
            line,
            // A simulated turn has no expectations of its own (the steps are judged over the
            // conversation): as a scripted turn without any, it is not judged.
            status: Status::combine([]),
            input: describe_inputs(&inputs),
            attempts: *attempts,
            error: None,
            reply: Some(exchange.reply.clone()),
            cut: None,
            latency: Some(exchange.latency),
            ttft: exchange.ttft,
            checks: Vec::new(),
        });
    }
    // Kept for a recording only: a second copy of every reply otherwise.
    let played = match options.record {
        Some(_) => sent.into_iter().map(|(r, e, _)| (r, e)).collect(),
        None => Vec::new(),
    };
    Ok(match outcome {
        Ok(done) => Session {
            turns,
            played,
            usage,
            error: None,
            steps: step_checks((plan, line), &done, simulator),
        },
        Err(err) => Session {
            turns,
            played,
            usage,
            error: Some(err.to_string()),
            steps: Vec::new(),
        },
    })
}

/// SCRAPI's rule: a simulation passes only when every expectation is met. One whose steps
/// all passed but an expectation of which could not be graded (no judge) is skipped, never
/// passed; returns why, for the case's `error`. `None` for other kinds and other verdicts.
pub(super) fn ungraded(case: &Case, status: Status, checks: &[CheckResult]) -> Option<String> {
    if case.simulated_user.is_none() || status != Status::Passed {
        return None;
    }
    // Steps are passed or failed; a skipped check is an expectation.
    let skipped: Vec<&CheckResult> = checks
        .iter()
        .filter(|c| c.status == Status::Skipped)
        .collect();
    let first = skipped.first()?;
    let count = match skipped.len() {
        1 => "an expectation".to_owned(),
        n => format!("{n} expectations"),
    };
    Some(format!(
        "{count} could not be graded: {}",
        first.reason.as_deref().unwrap_or(NO_JUDGE)
    ))
}

/// What the simulated user sent (a request's `input`: the variables a step injects, then the
/// text or event).
fn inputs_of(input: &Map<String, Value>) -> Vec<Input> {
    let mut inputs = Vec::new();
    if let Some(Value::Object(vars)) = input.get("variables") {
        inputs.push(Input::Variables(vars.clone()));
    }
    if let Some(Value::String(text)) = input.get("text") {
        inputs.push(Input::Text(text.clone()));
    }
    if let Some(Value::String(name)) = input.get("event") {
        inputs.push(Input::Event(name.clone()));
    }
    inputs
}

/// One check per step: passed when the simulated user saw it completed, with its
/// justification (and why the conversation stopped, for a step that did not complete).
fn step_checks(
    (plan, line): (&Plan, u32),
    played: &simulate::Played,
    simulator: &dyn SimulatedUser,
) -> Vec<CheckResult> {
    plan.steps
        .iter()
        .zip(&played.steps)
        .enumerate()
        .map(|(i, (step, progress))| {
            let completed = progress.status == StepStatus::Completed;
            let mut reason = progress.justification.clone();
            if !completed {
                reason.push_str(&format!(" (the conversation stopped: {})", played.stop));
            }
            CheckResult {
                label: step_label(i, step),
                category: CheckCategory::Criterion,
                line,
                status: if completed {
                    Status::Passed
                } else {
                    Status::Failed
                },
                expected: step
                    .success_criteria
                    .clone()
                    .unwrap_or_else(|| step.goal.clone()),
                actual: progress.status.name().to_owned(),
                method: Method::Judge {
                    provider: simulator.provider(),
                    model: simulator.model(),
                },
                score: None,
                reason: Some(reason),
            }
        })
        .collect()
}

fn step_label(index: usize, step: &crate::model::SimulationStep) -> String {
    let what = if step.goal.is_empty() {
        step.static_utterance.clone().unwrap_or_default()
    } else {
        step.goal.clone()
    };
    format!("step {}: {what}", index + 1)
}

/// A simulation no simulated user can play: skipped, every step and expectation with the
/// reason.
pub(super) fn skipped(case: &Case, reason: &str) -> CaseResult {
    let steps = case.simulated_user.iter().flatten().enumerate();
    let mut checks: Vec<CheckResult> = steps
        .map(|(i, step)| {
            let at = (step_label(i, step), CheckCategory::Criterion);
            let expected = step.success_criteria.as_ref().unwrap_or(&step.goal);
            CheckResult::skipped(at, case.location.line, expected.clone(), reason)
        })
        .collect();
    let criterion_reason = if reason.is_empty() { NO_JUDGE } else { reason };
    checks.extend(case.checks.iter().map(|check| {
        let expected = match &check.kind {
            crate::model::CheckKind::Criterion(text) => text.clone(),
            _ => String::new(),
        };
        let at = (check.label.clone(), CheckCategory::Criterion);
        CheckResult::skipped(at, check.location.line, expected, criterion_reason)
    }));
    CaseResult {
        status: Status::Skipped,
        checks,
        ..CaseResult::of(case)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
