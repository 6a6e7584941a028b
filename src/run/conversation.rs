//! A scripted conversation: its turns played in order in one session while the case holds its
//! place with the agent, and graded once that place is given back, so that a judge's answer
//! never holds up the agent's next turn, nor another case waiting to talk to the agent.

use futures_util::future::join_all;

use super::{Agent, EndpointError, Limiter, RunOptions, TurnRequest};
use super::{Session, Stop, play, request_for, unplayed};
use crate::model::Case;
use crate::results::{Status, TurnResult};
use crate::score::Grader;
use crate::transcript::{Exchange, Usage};

/// What a conversation left, ungraded: per turn, in order, what the agent answered (with the
/// attempts it took) or the turn's result when it could not be played.
pub(super) struct Conversation {
    turns: Vec<Result<Answered, TurnResult>>,
    usage: Usage,
    error: Option<String>,
}

struct Answered {
    request: TurnRequest,
    exchange: Exchange,
    attempts: u32,
}

/// Why a turn was not played once the run's spending reached `--budget`.
const BUDGET_REACHED: &str = "not played: the run reached its budget";

/// Plays the turns of `case` in order; after an error the rest are not played (a later turn
/// depends on the earlier ones) but still listed.
pub(super) async fn play_turns(
    case: &Case,
    session: &str,
    asked: (&dyn Agent, &Limiter),
    options: &RunOptions,
    stop: &Stop,
) -> Conversation {
    let mut done = Conversation {
        turns: Vec::with_capacity(case.turns.len()),
        usage: Usage::default(),
        error: None,
    };
    for turn in &case.turns {
        if let Some(message) = &done.error {
            let result = unplayed(turn, format!("not played: {message}"));
            done.turns.push(Err(result));
            continue;
        }
        // The budget bounds what a run spends, inside a case too: a long conversation stops
        // at the turn that would start past it.
        if options.spend.budget_reached() {
            done.error = Some(BUDGET_REACHED.to_owned());
            done.turns
                .push(Err(unplayed(turn, BUDGET_REACHED.to_owned())));
            continue;
        }
        let request = request_for(case, turn, session);
        let outcome = tokio::select! {
            outcome = play(turn, &request, asked, options) => outcome,
            () = stop.in_flight.cancelled() => Err((EndpointError::cancelled(), 1)),
        };
        match outcome {
            Ok((exchange, attempts)) => {
                done.usage = done.usage.plus(exchange.reply.usage.unwrap_or_default());
                done.turns.push(Ok(Answered {
                    request,
                    exchange,
                    attempts,
                }));
            }
            Err((err, attempts)) => {
                let message = err.to_string();
                done.error = Some(message.clone());
                let mut result = unplayed(turn, message);
                result.attempts = attempts;
                done.turns.push(Err(result));
            }
        }
    }
    done
}

/// Grades every answered turn of `conversation`, all at once; judge calls stop with the turns
/// on the second Ctrl-C, and the case then errs. The exchanges are kept for `recording` only:
/// a reply may be megabytes, and a second copy of it per case in flight adds up.
pub(super) async fn grade(
    case: &Case,
    conversation: Conversation,
    (grader, recording): (&Grader, bool),
    stop: &Stop,
) -> Session {
    let Conversation {
        turns,
        usage,
        mut error,
    } = conversation;
    let answered = (case.turns.iter().zip(&turns)).filter_map(|(turn, t)| {
        t.as_ref()
            .ok()
            .map(|a| grader.grade_turn(turn, &a.exchange))
    });
    let graded = stop.in_flight.run_until_cancelled(join_all(answered)).await;
    if graded.is_none() {
        error.get_or_insert_with(|| EndpointError::cancelled().to_string());
    }
    let mut graded = graded.unwrap_or_default().into_iter();
    let mut session = Session {
        turns: Vec::with_capacity(turns.len()),
        played: Vec::new(),
        usage,
        error,
        steps: Vec::new(),
    };
    for (turn, outcome) in case.turns.iter().zip(turns) {
        let answered = match outcome {
            Ok(answered) => answered,
            Err(result) => {
                session.turns.push(result);
                continue;
            }
        };
        let Some(checks) = graded.next() else {
            let mut result = unplayed(turn, EndpointError::cancelled().to_string());
            result.attempts = answered.attempts;
            session.turns.push(result);
            continue;
        };
        let Answered {
            request,
            exchange,
            attempts,
        } = answered;
        if recording {
            session.played.push((request, exchange.clone()));
        }
        session.turns.push(TurnResult {
            index: turn.index,
            line: turn.location.line,
            status: Status::combine(checks.iter().map(|c| c.status)),
            input: super::describe_inputs(&turn.inputs),
            attempts,
            error: None,
            reply: Some(exchange.reply),
            cut: None,
            latency: Some(exchange.latency),
            ttft: exchange.ttft,
            checks,
        });
    }
    session
}
