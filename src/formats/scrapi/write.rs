//! Cases into a SCRAPI dataset golden (`conversations:`), the shape the loader reads back
//! into the same model: `variables` then `user` / `event` per turn, `agent` chunks (`null` for
//! silence, left out for an UNEXPECTED RESPONSE), `tool_calls` with `args` (`$matchType` where
//! not exact), `output` for a mocked call and `transfer_to_agent` for a transfer, and free-text
//! `expectations`. Parameters every conversation shares become `common_session_parameters`;
//! a name, description, note, responding agent or calls-first order SCRAPI has no key for is
//! written as a `# goldgate` comment that the reader reads back ([`annotation`]), and reported;
//! checks over the whole conversation that SCRAPI says per turn move onto a
//! turn first ([`per_turn`]), and the other gecx scorers become free-text expectations. What
//! SCRAPI cannot say is reported in [`Losses`].

mod call;

use serde_json::{Map, Value};

use super::annotation;
use crate::formats::write::{Losses, Yaml, criterion, per_turn, text_of, yaml_str, yaml_value};
use crate::model::{
    Case, CheckKind, Expectation, ExpectationKind, ExpectedToolCall, Input, Matcher, ToolMock, Turn,
};
use call::tool_call;

const FORMAT: &str = "SCRAPI";

/// The SCRAPI golden holding `cases`.
pub fn write(cases: &[Case], losses: &mut Losses) -> String {
    let cases: Vec<Case> = cases
        .iter()
        .map(|case| per_turn::onto_turns(case, FORMAT, losses))
        .collect();
    let parameters: Vec<Parameters> = cases.iter().map(|c| parameters(c, losses)).collect();
    let common = common_parameters(&parameters);
    let mut out = Yaml::default();
    if !common.is_empty() {
        out.field(
            0,
            "common_session_parameters",
            &yaml_value(&Value::Object(common.clone())),
        );
    }
    out.open(0, "conversations");
    for (case, parameters) in cases.iter().zip(&parameters) {
        conversation(case, parameters, &common, &mut out, losses);
    }
    out.text
}

/// A case's session parameters, and whether they are its first turn's opening variables.
struct Parameters<'a> {
    values: &'a Map<String, Value>,
    lifted: bool,
}

/// A first turn that opens with variables and a case without session parameters: CES's way of
/// writing SCRAPI's session parameters (see the CES writer), read back as such.
fn parameters<'a>(case: &'a Case, losses: &mut Losses) -> Parameters<'a> {
    match case.turns.first().and_then(|t| t.inputs.first()) {
        Some(Input::Variables(variables)) if case.session_parameters.is_empty() => {
            losses.note(
                &case.turns[0].location,
                "the variables the first turn opens with are written as SCRAPI session parameters",
            );
            Parameters {
                values: variables,
                lifted: true,
            }
        }
        _ => Parameters {
            values: &case.session_parameters,
            lifted: false,
        },
    }
}

/// The parameters every one of several conversations has with the same value: SCRAPI's
/// `common_session_parameters`, which loading merged into each.
fn common_parameters(parameters: &[Parameters<'_>]) -> Map<String, Value> {
    let Some((first, rest)) = parameters.split_first() else {
        return Map::new();
    };
    if rest.is_empty() {
        return Map::new();
    }
    first
        .values
        .iter()
        .filter(|(key, value)| rest.iter().all(|p| p.values.get(*key) == Some(*value)))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

fn conversation(
    case: &Case,
    parameters: &Parameters<'_>,
    common: &Map<String, Value>,
    out: &mut Yaml,
    losses: &mut Losses,
) {
    out.comments(2, &case.comments);
    label_comments(case, out, losses);
    out.line(2, &format!("- conversation: {}", yaml_str(&case.id)));
    losses.regtrace_only(case, FORMAT);
    if !case.tags.is_empty() {
        let tags: Vec<String> = case.tags.iter().map(|t| yaml_str(t)).collect();
        out.field(4, "tags", &format!("[{}]", tags.join(", ")));
    }
    let own: Map<String, Value> = parameters
        .values
        .iter()
        .filter(|(key, value)| common.get(*key) != Some(*value))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    if !own.is_empty() {
        out.field(4, "session_parameters", &yaml_value(&Value::Object(own)));
    }
    criteria(case, out, losses);
    if case.turns.is_empty() {
        // A case convert could not carry any input of (a scenario of events only, marked).
        out.field(4, "turns", "[]");
    } else {
        out.open(4, "turns");
    }
    for (i, turn) in case.turns.iter().enumerate() {
        write_turn(turn, i == 0 && parameters.lifted, out, losses);
    }
}

/// The name and description SCRAPI has no key for, as goldgate comments above the
/// conversation ([`annotation`]).
fn label_comments(case: &Case, out: &mut Yaml, losses: &mut Losses) {
    if case.name != case.id {
        losses.note(
            &case.location,
            format!(
                "SCRAPI names a conversation once: the name `{}` is kept in a goldgate comment (SCRAPI ignores it), the id `{}` is the conversation",
                case.name, case.id
            ),
        );
        out.line(2, &format!("# {}", annotation::comment("name", &case.name)));
    }
    if let Some(description) = &case.description {
        losses.note(
            &case.location,
            "SCRAPI has no description: it is kept in a goldgate comment (SCRAPI ignores it)",
        );
        out.line(
            2,
            &format!("# {}", annotation::comment("description", description)),
        );
    }
}

/// Free-text `expectations`: the case's criteria, and each gecx scorer an LLM judge can check
/// over the transcript, worded as a criterion.
fn criteria(case: &Case, out: &mut Yaml, losses: &mut Losses) {
    let mut criteria = Vec::new();
    for check in &case.checks {
        match &check.kind {
            CheckKind::Criterion(prompt) => criteria.push(prompt.clone()),
            CheckKind::Scorer(scorer) => match criterion::of(scorer) {
                Some(prompt) => {
                    losses.add(
                        &check.location,
                        format!(
                            "SCRAPI has no `{}` check: it becomes a free-text expectation, which an LLM judge checks",
                            check.label
                        ),
                    );
                    criteria.push(prompt);
                }
                None => losses.add(
                    &check.location,
                    format!("SCRAPI has no `{}` check: it is left out", check.label),
                ),
            },
            CheckKind::Metric { .. } => losses.add(
                &check.location,
                format!(
                    "SCRAPI has no `{}` metric (only free-text expectations): it is left out",
                    check.label
                ),
            ),
        }
    }
    if !criteria.is_empty() {
        out.open(4, "expectations");
        for prompt in criteria {
            out.line(6, &format!("- {}", yaml_str(&prompt)));
        }
    }
}

/// One turn, built as `key: value` lines: the inputs, `agent`, then `tool_calls`.
fn write_turn(turn: &Turn, skip_first: bool, out: &mut Yaml, losses: &mut Losses) {
    let responses = tool_responses_as_outputs(turn);
    let mut lines = input_lines(turn, skip_first, &responses, losses);
    let mut expected = expected_of(turn, &responses, losses);
    unused_mocks(turn, &expected.used_mocks, losses);
    if let Some(agent) = expected.agent_line(turn, losses) {
        lines.push(("agent".into(), agent));
    }
    out.comments(6, &turn.comments);
    if expected.calls_first && !expected.chunks.is_empty() {
        // SCRAPI reads a turn's texts before its calls; CES rows keep the order written.
        out.line(
            6,
            &format!(
                "# {}",
                annotation::comment("order", annotation::CALLS_FIRST)
            ),
        );
    }
    out.comments(6, &expected.comments);
    for (i, (key, value)) in lines.iter().enumerate() {
        let lead = if i == 0 { "- " } else { "  " };
        out.line(6, &format!("{lead}{key}: {value}"));
    }
    if !expected.calls.is_empty() {
        let lead = if lines.is_empty() { "- " } else { "  " };
        out.line(6, &format!("{lead}tool_calls:"));
        for call in &expected.calls {
            out.line(10, &format!("- {call}"));
        }
    } else if lines.is_empty() {
        out.line(6, "- {}");
    }
}

/// `variables` then `user` or `event`; every other input is reported.
fn input_lines(
    turn: &Turn,
    skip_first: bool,
    responses: &[(usize, usize)],
    losses: &mut Losses,
) -> Vec<(String, String)> {
    let mut lines: Vec<(String, String)> = Vec::new();
    let mut inputs = turn
        .inputs
        .iter()
        .enumerate()
        .skip(usize::from(skip_first))
        .filter(|(i, _)| !responses.iter().any(|(input, _)| input == i))
        .map(|(_, input)| input)
        .peekable();
    if let Some(Input::Variables(variables)) = inputs.peek() {
        lines.push((
            "variables".into(),
            yaml_value(&Value::Object(variables.clone())),
        ));
        inputs.next();
    }
    let mut said = false;
    for input in inputs {
        match input {
            Input::Text(text) if !said => lines.push(("user".into(), yaml_str(text))),
            Input::Event(name) if !said => lines.push(("event".into(), yaml_str(name))),
            other => {
                losses.add(
                    &turn.location,
                    format!(
                        "SCRAPI cannot send {}: it is left out",
                        describe(other, said)
                    ),
                );
                continue;
            }
        }
        said = true;
    }
    if !said {
        losses.add(
            &turn.location,
            "the turn sends no text or event, and SCRAPI then sends the `welcome` event",
        );
    }
    lines
}

/// What a turn expects, as SCRAPI writes it.
#[derive(Default)]
struct Expected {
    chunks: Vec<String>,
    silent: bool,
    unexpected: bool,
    calls: Vec<String>,
    /// What SCRAPI has no key for (notes, the agent of expected text), as goldgate comments.
    comments: Vec<String>,
    used_mocks: Vec<bool>,
    /// Whether a tool call or transfer is expected before any agent text.
    calls_first: bool,
}

impl Expected {
    /// `agent`: the chunks, `null` for silence, none for an UNEXPECTED RESPONSE, and none
    /// with a goldgate comment for a turn that checks no agent text.
    fn agent_line(&mut self, turn: &Turn, losses: &mut Losses) -> Option<String> {
        if self.chunks.is_empty() && !self.silent && !self.unexpected {
            losses.note(
                &turn.location,
                "the turn checks no agent text, and SCRAPI flags any reply to a turn without `agent` as an UNEXPECTED RESPONSE: it is written with a `# goldgate agent: not checked` comment, which goldgate reads back (SCRAPI itself ignores it)",
            );
            let (field, value) = annotation::AGENT_NOT_CHECKED;
            self.comments.push(annotation::comment(field, value));
        }
        match self.chunks.as_slice() {
            [] if self.silent => Some("null".into()),
            [] => None,
            [chunk] => Some(chunk.clone()),
            chunks => Some(format!("[{}]", chunks.join(", "))),
        }
    }
}

fn expected_of(turn: &Turn, responses: &[(usize, usize)], losses: &mut Losses) -> Expected {
    let mut expected = Expected {
        used_mocks: vec![false; turn.tool_mocks.len()],
        ..Expected::default()
    };
    let mut expectations = turn.expectations.iter().enumerate().peekable();
    let mut texts = 0;
    while let Some((at, expectation)) = expectations.next() {
        let place = match &expectation.kind {
            ExpectationKind::AgentText { .. } => Some(format!("agent[{texts}]")),
            ExpectationKind::ToolCall(_) | ExpectationKind::Transfer { .. } => {
                Some(format!("tool_calls[{}]", expected.calls.len()))
            }
            _ => None,
        };
        note(
            expectation,
            place.as_deref(),
            &mut expected.comments,
            losses,
        );
        match &expectation.kind {
            ExpectationKind::AgentText { matcher, agent } => {
                let chunk = agent_chunk(matcher, agent.as_deref(), expectation, losses);
                if let Some(agent) = agent {
                    let field = format!("agent[{texts}] response_agent");
                    expected.comments.push(annotation::comment(&field, agent));
                }
                texts += 1;
                expected.chunks.push(chunk);
            }
            ExpectationKind::NoAgentText => expected.silent = true,
            ExpectationKind::UnexpectedResponse => expected.unexpected = true,
            ExpectationKind::ToolCall(call) => {
                expected.calls_first |= texts == 0;
                let output = match expectations.peek().map(|(_, next)| *next) {
                    Some(next) if call_output(call, next).is_some() => {
                        expectations.next();
                        let output = call_output(call, next);
                        if let Some(output) = output {
                            take_mock(
                                turn,
                                call,
                                output,
                                &mut expected.used_mocks,
                                losses,
                                expectation,
                            );
                        }
                        output
                    }
                    _ => answered_by_input(turn, responses, at),
                };
                expected.calls.push(tool_call(call, output));
            }
            ExpectationKind::Transfer { agent } => {
                expected.calls_first |= texts == 0;
                expected.calls.push(format!(
                    "{{action: transfer_to_agent, args: {{agent: {}}}}}",
                    yaml_str(agent)
                ));
            }
            other => losses.add(&expectation.location, lost_expectation(other)),
        }
    }
    expected
}

/// An expectation's note, as a goldgate comment on the expected text or call at `place`;
/// reported as left out where the expectation has no such place.
fn note(
    expectation: &Expectation,
    place: Option<&str>,
    comments: &mut Vec<String>,
    losses: &mut Losses,
) {
    let Some(note) = &expectation.note else {
        return;
    };
    match place {
        Some(place) => {
            losses.note(
                &expectation.location,
                format!("SCRAPI has no expectation notes: `{note}` is kept in a goldgate comment (SCRAPI ignores it)"),
            );
            comments.push(annotation::comment(&format!("{place} note"), note));
        }
        None => losses.note(
            &expectation.location,
            format!("SCRAPI has no expectation notes: `{note}` is left out"),
        ),
    }
}

/// The output SCRAPI writes on `call` when `next` is its expected response.
fn call_output<'a>(call: &ExpectedToolCall, next: &'a Expectation) -> Option<&'a Value> {
    match next {
        Expectation {
            kind:
                ExpectationKind::ToolResponse {
                    tool,
                    output: Some(output),
                },
            note: None,
            ..
        } if *tool == call.name && (output.is_string() || output.is_object()) => Some(output),
        _ => None,
    }
}

/// The user-side tool response paired with the expectation at `at`, if any.
fn answered_by_input<'a>(
    turn: &'a Turn,
    responses: &[(usize, usize)],
    at: usize,
) -> Option<&'a Value> {
    responses
        .iter()
        .find(|(_, call_at)| *call_at == at)
        .and_then(|(input, _)| match &turn.inputs[*input] {
            Input::ToolResponse { response, .. } => Some(response),
            _ => None,
        })
}

fn lost_expectation(kind: &ExpectationKind) -> String {
    match kind {
        ExpectationKind::ToolResponse {
            tool,
            output: Some(_),
        } => format!(
            "SCRAPI expects a tool's response only as the `output` of its call, right after it: the expected response of `{tool}` is left out"
        ),
        ExpectationKind::ToolResponse { tool, output: None } => format!(
            "SCRAPI has no expected tool response without its output: the one of `{tool}` is left out"
        ),
        ExpectationKind::Reply(_) => {
            "a SCRAPI golden has no turn-eval checks: the check is left out".to_owned()
        }
        _ => "a SCRAPI golden has no checks on a tool's result: the check is left out".to_owned(),
    }
}

/// Reports each mock no written call carries.
fn unused_mocks(turn: &Turn, used: &[bool], losses: &mut Losses) {
    for (mock, used) in turn.tool_mocks.iter().zip(used) {
        let answers_input = turn.inputs.iter().any(|input| {
            matches!(input, Input::ToolResponse { name, response } if *name == mock.tool && *response == mock.output)
        });
        if !used && !answers_input {
            losses.add(
                &mock.location,
                format!("SCRAPI mocks a tool only through an expected call: the mocked output of `{}` is left out", mock.tool),
            );
        }
    }
}

/// CES's user-side tool responses that answer a call the turn expects and carries no output
/// of its own: SCRAPI writes each as that call's `output` (a mock, as CES's loader makes it).
/// Pairs of (input index, expectation index).
fn tool_responses_as_outputs(turn: &Turn) -> Vec<(usize, usize)> {
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for (at, expectation) in turn.expectations.iter().enumerate() {
        let ExpectationKind::ToolCall(call) = &expectation.kind else {
            continue;
        };
        let has_output = matches!(
            turn.expectations.get(at + 1).map(|e| &e.kind),
            Some(ExpectationKind::ToolResponse { tool, output: Some(_) }) if *tool == call.name
        );
        if has_output {
            continue;
        }
        let input = turn.inputs.iter().enumerate().position(|(i, input)| {
            matches!(input, Input::ToolResponse { name, response }
                if *name == call.name && (response.is_string() || response.is_object()))
                && !pairs.iter().any(|(taken, _)| *taken == i)
        });
        if let Some(input) = input {
            pairs.push((input, at));
        }
    }
    pairs
}

fn describe(input: &Input, said: bool) -> String {
    let again = if said {
        " after the turn's user text"
    } else {
        ""
    };
    match input {
        Input::Text(_) => format!("a second user text{again}"),
        Input::Event(name) => format!("the event `{name}`{again}"),
        Input::Variables(_) => "variables after the turn's input".to_owned(),
        Input::ToolResponse { name, .. } => {
            format!("a tool response from the user side (`{name}`)")
        }
        Input::Image { .. } => "an image".to_owned(),
        Input::ApproveToolCall(tag) => format!("the approval of tool call `{tag}`"),
        Input::DenyToolCall(tag) => format!("the denial of tool call `{tag}`"),
        Input::ExecuteTool(execution) => format!("the direct execution of `{}`", execution.tool),
    }
}

fn agent_chunk(
    matcher: &Matcher,
    agent: Option<&str>,
    expectation: &Expectation,
    losses: &mut Losses,
) -> String {
    losses.semantic_only(matcher, &expectation.location, FORMAT);
    if let Some(agent) = agent {
        losses.note(
            &expectation.location,
            format!("SCRAPI's agent text names no agent: `{agent}` is kept in a goldgate comment (SCRAPI ignores it)"),
        );
    }
    let text = text_of(&matcher.expected);
    yaml_str(&text)
}

/// Marks the mock that SCRAPI's loader makes of this call's `output`, so that it is not
/// reported as left out; reports a mock that differs from it.
fn take_mock(
    turn: &Turn,
    call: &ExpectedToolCall,
    output: &Value,
    used: &mut [bool],
    losses: &mut Losses,
    expectation: &Expectation,
) {
    let found = turn
        .tool_mocks
        .iter()
        .enumerate()
        .position(|(i, mock): (usize, &ToolMock)| {
            !used[i] && mock.tool == call.name && mock.output == *output
        });
    match found {
        Some(i) => used[i] = true,
        None => losses.add(
            &expectation.location,
            format!(
                "SCRAPI mocks every call it expects an output of: `{}` gets a mock it did not have",
                call.name
            ),
        ),
    }
}
