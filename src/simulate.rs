//! Plays one SCRAPI simulation (issue 14, part 1) against the agent under test: the first turn
//! is the `welcome` event or the first step's `static_utterance`, sent with the session
//! parameters; after every reply the simulated user ([`SimulatedUser`]) says where each step stands
//! and what the user says next. The conversation stops when every step is completed, when the
//! current step has used its `max_turns` (it is then failed), at [`TURN_CAP`] user turns, when
//! the user has nothing more to say, or when the agent ends the session (an `end_session` tool
//! call, or a handoff).
//!
//! A step's `inject_variables` go with the first turn played while it is the current step, and
//! a later step's `static_utterance` is said word for word when it starts. The runner plays a
//! case that has a simulated user with [`play_with`] ([`Plan::of_case`]), sending each request
//! as it sends scripted turns; the case's expectations are then judged over the played turns
//! like any case's checks. [`judge`] is the same rule for callers that play a simulation
//! outside the runner.

use std::fmt;

use serde_json::{Map, Value};

use crate::agent::protocol::input_object;
use crate::agent::{Agent, TurnRequest};
use crate::model::SimulationStep as Step;
use crate::model::{CaseCheck, CheckKind, Input, Simulation};
use crate::net::EndpointError;
use crate::score::judge::{Judge, JudgeQuestion, NO_JUDGE};
use crate::score::simulated_user::{Line, SimulatedUser, SimulatorError, StepProgress, StepStatus};
use crate::transcript::{Exchange, Reply, Usage};
use std::future::Future;

/// At most this many user turns in one simulation (SCRAPI's global cap).
pub const TURN_CAP: usize = 30;

/// The tool call by which an agent ends the session (SCRAPI's rule).
pub const END_SESSION_TOOL: &str = "end_session";

/// The event sent first when the first step has no `static_utterance`.
pub const WELCOME_EVENT: &str = "welcome";

/// One simulation, ready to play.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The simulation's name: the `conversation` of every request.
    pub name: String,
    /// The `case` of every request (what `--record` and the replay agent key it by).
    pub case: String,
    pub steps: Vec<Step>,
    /// What the user says first (the first step's `static_utterance`); `None`: the `welcome`
    /// event.
    pub opening: Option<String>,
    pub session_parameters: Map<String, Value>,
    /// At most this many user turns (SCRAPI: [`TURN_CAP`]).
    pub turn_cap: usize,
}

impl Plan {
    /// The plan of a loaded simulation: its first step's `static_utterance` opens it.
    pub fn of(simulation: &Simulation) -> Self {
        Self {
            name: simulation.name.clone(),
            case: simulation.name.clone(),
            opening: simulation
                .steps
                .first()
                .and_then(|s| s.static_utterance.clone()),
            steps: simulation.steps.clone(),
            session_parameters: simulation.session_parameters.clone(),
            turn_cap: TURN_CAP,
        }
    }

    /// The plan of a case that has a simulated user (see [`crate::model::Case`]): requests
    /// name it by `case_key`.
    pub fn of_case(case: &crate::model::Case, case_key: String) -> Option<Self> {
        let steps = case.simulated_user.clone()?;
        Some(Self {
            name: case.id.clone(),
            case: case_key,
            opening: steps.first().and_then(|s| s.static_utterance.clone()),
            steps,
            session_parameters: case.session_parameters.clone(),
            turn_cap: TURN_CAP,
        })
    }

    pub fn new(name: impl Into<String>, steps: Vec<Step>) -> Self {
        let name = name.into();
        Self {
            case: name.clone(),
            name,
            steps,
            opening: None,
            session_parameters: Map::new(),
            turn_cap: TURN_CAP,
        }
    }
}

/// Why the conversation stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Every step is completed.
    Completed,
    /// Step N (from 1) used its `max_turns` without completing.
    OutOfTurns { step: usize },
    /// The simulation reached its cap of user turns.
    TurnCap,
    /// The simulated user had nothing more to say.
    UserDone,
    /// The agent ended the session.
    AgentEnded,
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stop::Completed => f.write_str("every step completed"),
            Stop::OutOfTurns { step } => write!(f, "step {step} used all its max_turns"),
            Stop::TurnCap => f.write_str("the cap of user turns was reached"),
            Stop::UserDone => f.write_str("the simulated user had nothing more to say"),
            Stop::AgentEnded => f.write_str("the agent ended the session"),
        }
    }
}

/// One user turn and the agent's answer.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayedTurn {
    /// What the user sent: the step's injected variables first, when it starts, then the
    /// text or event.
    pub inputs: Vec<Input>,
    pub exchange: Exchange,
}

/// A played simulation.
#[derive(Clone, Debug, PartialEq)]
pub struct Played {
    pub turns: Vec<PlayedTurn>,
    /// Every step's final status, with the simulator's justification.
    pub steps: Vec<StepProgress>,
    pub stop: Stop,
    /// Tokens the simulated user spent.
    pub simulator_usage: Usage,
}

impl Played {
    /// SCRAPI's verdict on the steps: all completed (expectations are judged apart).
    pub fn goals_met(&self) -> bool {
        self.steps.iter().all(|s| s.status == StepStatus::Completed)
    }
}

/// Why a simulation could not be played: an error of the run, never a test failure.
#[derive(Debug, thiserror::Error)]
pub enum SimulateError {
    #[error("turn {turn}: {source}")]
    Agent {
        turn: usize,
        #[source]
        source: EndpointError,
    },
    #[error(transparent)]
    Simulator(#[from] SimulatorError),
}

/// Plays `plan` against `agent` in session `session`, with `simulator` as the user, then
/// ends the session.
pub async fn play(
    agent: &dyn Agent,
    simulator: &dyn SimulatedUser,
    plan: &Plan,
    session: &str,
) -> Result<Played, SimulateError> {
    let played = play_with(
        |request| async move { agent.send(&request).await },
        simulator,
        plan,
        session,
    )
    .await;
    agent.end_session(session).await;
    played
}

/// [`play`] with every request sent by `send` (the runner's: through its rate limiter, with
/// its timeout and retries); the caller ends the session.
pub async fn play_with<F, Fut>(
    mut send: F,
    simulator: &dyn SimulatedUser,
    plan: &Plan,
    session: &str,
) -> Result<Played, SimulateError>
where
    F: FnMut(TurnRequest) -> Fut,
    Fut: Future<Output = Result<Exchange, EndpointError>>,
{
    let mut said = match &plan.opening {
        Some(text) => Input::Text(text.clone()),
        None => Input::Event(WELCOME_EVENT.to_owned()),
    };
    let mut state = Conversation::start(plan);
    loop {
        let number = state.turns.len() + 1;
        let inputs = state.inputs_with(plan, said);
        let exchange = send(request(plan, session, number, &inputs))
            .await
            .map_err(|source| SimulateError::Agent {
                turn: number,
                source,
            })?;
        let ended = state.record(inputs, exchange);
        let (turn, spent_tokens) = simulator.next_turn(&plan.steps, &state.lines).await?;
        state.usage = state.usage.plus(spent_tokens);
        let mut steps = turn.steps;
        complete_said_steps(&plan.steps, &state.uttered, &mut steps);
        if let Some(stop) = state.stop(plan, &mut steps, ended, turn.utterance.is_none()) {
            return Ok(Played {
                turns: state.turns,
                steps,
                stop,
                simulator_usage: state.usage,
            });
        }
        said = state.advance(plan, &steps, turn.utterance);
    }
}

/// Where a simulation being played stands between two user turns.
struct Conversation {
    turns: Vec<PlayedTurn>,
    /// The conversation as the simulated user reads it.
    lines: Vec<Line>,
    /// User turns played while each step was the current one.
    spent: Vec<u32>,
    usage: Usage,
    /// The current step (0-based).
    current: usize,
    /// Steps whose `inject_variables` went with a turn.
    injected: Vec<bool>,
    /// Steps whose static utterance was sent: one made of nothing else is then completed.
    uttered: Vec<bool>,
}

impl Conversation {
    fn start(plan: &Plan) -> Self {
        let mut uttered = vec![false; plan.steps.len()];
        if let Some(first) = uttered.first_mut() {
            *first = plan.opening.is_some();
        }
        Self {
            turns: Vec::new(),
            lines: Vec::new(),
            spent: vec![0; plan.steps.len()],
            usage: Usage::default(),
            current: 0,
            injected: vec![false; plan.steps.len()],
            uttered,
        }
    }

    /// What the user sends: the current step's variables the first time it plays, then `said`.
    fn inputs_with(&mut self, plan: &Plan, said: Input) -> Vec<Input> {
        let mut inputs = Vec::new();
        if let Some(step) = plan.steps.get(self.current)
            && !self.injected[self.current]
        {
            self.injected[self.current] = true;
            if !step.inject_variables.is_empty() {
                inputs.push(Input::Variables(step.inject_variables.clone()));
            }
        }
        inputs.push(said);
        inputs
    }

    /// Counts the turn against the current step and keeps it; true when the agent ended the
    /// session.
    fn record(&mut self, inputs: Vec<Input>, exchange: Exchange) -> bool {
        if let Some(count) = self.spent.get_mut(self.current) {
            *count += 1;
        }
        self.lines.push(match inputs.last() {
            Some(Input::Text(text)) => Line::User(text.clone()),
            Some(Input::Event(name)) => Line::User(format!("(event: {name})")),
            other => Line::User(format!("{other:?}")),
        });
        self.lines.push(Line::Agent(describe(&exchange.reply)));
        let ended = ends_session(&exchange.reply);
        self.turns.push(PlayedTurn { inputs, exchange });
        ended
    }

    /// Why the conversation stops after this turn, if it does; a step out of turns is marked
    /// failed in `steps`.
    fn stop(
        &self,
        plan: &Plan,
        steps: &mut [StepProgress],
        ended: bool,
        user_done: bool,
    ) -> Option<Stop> {
        if steps.iter().all(|s| s.status == StepStatus::Completed) {
            Some(Stop::Completed)
        } else if ended {
            Some(Stop::AgentEnded)
        } else if let Some(step) = out_of_turns(&plan.steps, steps, &self.spent, self.current) {
            let max = plan.steps[step].max_turns.unwrap_or_default();
            steps[step] = StepProgress {
                status: StepStatus::Failed,
                justification: format!(
                    "not completed within its max_turns ({max}); the simulated user said: {}",
                    steps[step].justification
                ),
            };
            Some(Stop::OutOfTurns { step: step + 1 })
        } else if user_done {
            Some(Stop::UserDone)
        } else if self.turns.len() >= plan.turn_cap {
            Some(Stop::TurnCap)
        } else {
            None
        }
    }

    /// Moves to the first open step and says what the user says next.
    fn advance(&mut self, plan: &Plan, steps: &[StepProgress], utterance: Option<String>) -> Input {
        let next = steps
            .iter()
            .position(|s| !matches!(s.status, StepStatus::Completed | StepStatus::Failed))
            .unwrap_or(self.current);
        // A step that opens with a static utterance says it, word for word, when it starts.
        let opening = plan
            .steps
            .get(next)
            .and_then(|step| step.static_utterance.clone())
            .filter(|_| next != self.current && !self.injected[next]);
        if opening.is_some() {
            self.uttered[next] = true;
        }
        self.current = next;
        Input::Text(opening.unwrap_or_else(|| utterance.unwrap_or_default()))
    }
}

/// The request of user turn `number` (from 1): the session parameters go with the first.
fn request(plan: &Plan, session: &str, number: usize, inputs: &[Input]) -> TurnRequest {
    TurnRequest {
        id: None,
        session: session.to_owned(),
        conversation: plan.name.clone(),
        case: plan.case.clone(),
        turn: number,
        input: input_object(inputs),
        session_parameters: if number == 1 {
            plan.session_parameters.clone()
        } else {
            Map::new()
        },
        tool_mocks: Map::new(),
        mocks: Vec::new(),
        system_prompt: None,
        context: Vec::new(),
    }
}

/// SCRAPI's rule for a step made only of a `static_utterance` (no goal, no success criteria):
/// it is completed once its words are sent, whatever the simulated user says of it (a model
/// that never marks "Thanks, that's all." completed would otherwise run on to `max_turns`).
fn complete_said_steps(plan: &[Step], uttered: &[bool], progress: &mut [StepProgress]) {
    for ((step, &said), progress) in plan.iter().zip(uttered).zip(progress.iter_mut()) {
        let only_words = step.goal.trim().is_empty() && step.success_criteria.is_none();
        if said && only_words && step.static_utterance.is_some() {
            *progress = StepProgress {
                status: StepStatus::Completed,
                justification: "its words were sent: a step made only of a static utterance \
                                completes when it is said, as in SCRAPI"
                    .to_owned(),
            };
        }
    }
}

/// The step (0-based) that is still open and has used its `max_turns`.
fn out_of_turns(
    plan: &[Step],
    progress: &[StepProgress],
    spent: &[u32],
    current: usize,
) -> Option<usize> {
    let max = plan.get(current)?.max_turns?;
    let open = progress
        .get(current)
        .is_some_and(|p| p.status != StepStatus::Completed);
    (open && spent[current] >= max).then_some(current)
}

/// The agent's turn as the simulated user sees it: its messages, tool calls and transfer.
fn describe(reply: &Reply) -> String {
    let mut parts: Vec<String> = reply.messages.iter().map(|m| m.text.clone()).collect();
    for call in &reply.tool_calls {
        parts.push(format!("[calls tool {} with {}]", call.name, call.args));
    }
    if let Some(transfer) = &reply.transfer {
        parts.push(format!("[transfers to {}]", transfer.agent));
    }
    if reply.handoff().is_some() {
        parts.push("[hands the conversation off to a person]".to_owned());
    }
    if parts.is_empty() {
        "(says nothing)".to_owned()
    } else {
        parts.join("\n")
    }
}

fn ends_session(reply: &Reply) -> bool {
    reply.tool_calls.iter().any(|c| c.name == END_SESSION_TOOL) || reply.handoff().is_some()
}

/// What became of one expectation of a simulation.
#[derive(Clone, Debug, PartialEq)]
pub struct ExpectationVerdict {
    pub criterion: String,
    /// `None` when it was not judged (see `reason`).
    pub met: Option<bool>,
    /// The judge's explanation, or why it was not judged.
    pub reason: Option<String>,
    /// The judge could not answer: an error of the run.
    pub error: bool,
}

/// A simulation's outcome, SCRAPI's rule: it passes when every step completed and every
/// expectation is met.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    /// A step did not complete, or an expectation is not met.
    Failed,
    /// Nothing failed, but an expectation could not be judged (no judge): never a pass.
    Skipped(String),
    /// Nothing failed, but the judge could not answer.
    Error(String),
}

/// Judges the `expectations` (free-text criteria) of a played simulation over its transcript,
/// then gives the verdict. Without a judge the expectations are skipped with
/// [`NO_JUDGE`], and so is the simulation unless a step already failed it.
pub async fn judge(
    played: &Played,
    expectations: &[CaseCheck],
    judge: Option<&dyn Judge>,
) -> (Verdict, Vec<ExpectationVerdict>) {
    let transcript = transcript(played);
    let mut verdicts = Vec::with_capacity(expectations.len());
    for check in expectations {
        let CheckKind::Criterion(criterion) = &check.kind else {
            continue;
        };
        let verdict = match judge {
            None => ExpectationVerdict {
                criterion: criterion.clone(),
                met: None,
                reason: Some(NO_JUDGE.to_owned()),
                error: false,
            },
            Some(judge) => match judge
                .criterion(JudgeQuestion::Criterion(criterion), &transcript)
                .await
            {
                Ok(answer) => ExpectationVerdict {
                    criterion: criterion.clone(),
                    met: Some(answer.passed),
                    reason: answer.explanation,
                    error: false,
                },
                Err(err) => ExpectationVerdict {
                    criterion: criterion.clone(),
                    met: None,
                    reason: Some(err.to_string()),
                    error: true,
                },
            },
        };
        verdicts.push(verdict);
    }
    let failed = !played.goals_met() || verdicts.iter().any(|v| v.met == Some(false));
    let first_reason = |error: bool| {
        verdicts
            .iter()
            .find(|v| v.met.is_none() && v.error == error)
            .map(|v| v.reason.clone().unwrap_or_default())
    };
    let verdict = if failed {
        Verdict::Failed
    } else if let Some(reason) = first_reason(true) {
        Verdict::Error(reason)
    } else if let Some(reason) = first_reason(false) {
        Verdict::Skipped(reason)
    } else {
        Verdict::Passed
    };
    (verdict, verdicts)
}

/// The played simulation as text for the judge: each user turn and what the agent did.
pub fn transcript(played: &Played) -> String {
    let mut out = String::new();
    for (i, turn) in played.turns.iter().enumerate() {
        let said = match turn.inputs.last() {
            Some(Input::Text(text)) => text.clone(),
            Some(Input::Event(name)) => format!("(event: {name})"),
            _ => String::new(),
        };
        out.push_str(&format!("[turn {}] user: {said}\n", i + 1));
        for line in describe(&turn.exchange.reply).lines() {
            out.push_str(&format!("agent: {line}\n"));
        }
    }
    out
}
