//! Cases into a SCRAPI dataset golden (`conversations:`), the shape the loader reads back
//! into the same model: `variables` then `user` / `event` per turn, `agent` chunks (`null` for
//! silence, left out for an UNEXPECTED RESPONSE), `tool_calls` with `args` (`$matchType` where
//! not exact), `output` for a mocked call and `transfer_to_agent` for a transfer, and free-text
//! `expectations`. What SCRAPI cannot say is reported in [`Losses`].

use serde_json::Value;

use crate::formats::write::{Losses, Yaml, yaml_str, yaml_value};
use crate::model::{
    Case, CheckKind, Expectation, ExpectationKind, ExpectedToolCall, Input, MatchType, Matcher,
    ToolMock, Turn, ValueMatcher,
};

const FORMAT: &str = "SCRAPI";

/// The SCRAPI golden holding `cases`.
pub fn write(cases: &[Case], losses: &mut Losses) -> String {
    let mut out = Yaml::default();
    out.open(0, "conversations");
    for case in cases {
        conversation(case, &mut out, losses);
    }
    out.text
}

fn conversation(case: &Case, out: &mut Yaml, losses: &mut Losses) {
    out.line(2, &format!("- conversation: {}", yaml_str(&case.id)));
    if case.name != case.id {
        losses.add(
            &case.location,
            format!(
                "SCRAPI names a conversation once: the name `{}` is left out, the id `{}` kept",
                case.name, case.id
            ),
        );
    }
    if case.description.is_some() {
        losses.add(&case.location, "SCRAPI has no description: it is left out");
    }
    losses.regtrace_only(case, FORMAT);
    if !case.tags.is_empty() {
        let tags: Vec<String> = case.tags.iter().map(|t| yaml_str(t)).collect();
        out.field(4, "tags", &format!("[{}]", tags.join(", ")));
    }
    // A first turn that opens with variables and a case without session parameters: CES's way
    // of writing SCRAPI's session parameters (see the CES writer), read back as such.
    let lifted = match case.turns.first().and_then(|t| t.inputs.first()) {
        Some(Input::Variables(variables)) if case.session_parameters.is_empty() => {
            losses.add(
                &case.turns[0].location,
                "the variables the first turn opens with are written as SCRAPI session parameters",
            );
            Some(variables)
        }
        _ => None,
    };
    if let Some(parameters) = lifted
        .or(Some(&case.session_parameters))
        .filter(|p| !p.is_empty())
    {
        out.field(
            4,
            "session_parameters",
            &yaml_value(&Value::Object(parameters.clone())),
        );
    }
    let mut criteria = Vec::new();
    for check in &case.checks {
        match &check.kind {
            CheckKind::Criterion(prompt) => criteria.push(prompt),
            CheckKind::Scorer(_) | CheckKind::Metric { .. } => losses.add(
                &check.location,
                format!(
                    "SCRAPI has no `{}` check (only free-text expectations): it is left out",
                    check.label
                ),
            ),
        }
    }
    if !criteria.is_empty() {
        out.open(4, "expectations");
        for prompt in criteria {
            out.line(6, &format!("- {}", yaml_str(prompt)));
        }
    }
    out.open(4, "turns");
    for (i, turn) in case.turns.iter().enumerate() {
        write_turn(turn, i == 0 && lifted.is_some(), out, losses);
    }
}

fn write_turn(turn: &Turn, skip_first: bool, out: &mut Yaml, losses: &mut Losses) {
    let mut lines: Vec<(String, String)> = Vec::new();
    let responses = tool_responses_as_outputs(turn);
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
            Input::Text(text) if !said => {
                said = true;
                lines.push(("user".into(), yaml_str(text)));
            }
            Input::Event(name) if !said => {
                said = true;
                lines.push(("event".into(), yaml_str(name)));
            }
            other => losses.add(
                &turn.location,
                format!(
                    "SCRAPI cannot send {}: it is left out",
                    describe(other, said)
                ),
            ),
        }
    }
    if !said {
        losses.add(
            &turn.location,
            "the turn sends no text or event, and SCRAPI then sends the `welcome` event",
        );
    }

    let mut used_mocks = vec![false; turn.tool_mocks.len()];
    let mut chunks: Vec<String> = Vec::new();
    let mut silent = false;
    let mut unexpected = false;
    let mut calls: Vec<String> = Vec::new();
    let mut expectations = turn.expectations.iter().enumerate().peekable();
    while let Some((at, expectation)) = expectations.next() {
        if let Some(note) = &expectation.note {
            losses.add(
                &expectation.location,
                format!("SCRAPI has no expectation notes: `{note}` is left out"),
            );
        }
        match &expectation.kind {
            ExpectationKind::AgentText { matcher, agent } => {
                chunks.push(agent_chunk(matcher, agent.as_deref(), expectation, losses));
            }
            ExpectationKind::NoAgentText => silent = true,
            ExpectationKind::UnexpectedResponse => unexpected = true,
            ExpectationKind::ToolCall(call) => {
                let output = match expectations.peek().map(|(_, next)| *next) {
                    Some(Expectation {
                        kind:
                            ExpectationKind::ToolResponse {
                                tool,
                                output: Some(output),
                            },
                        note: None,
                        ..
                    }) if *tool == call.name && (output.is_string() || output.is_object()) => {
                        expectations.next();
                        take_mock(turn, call, output, &mut used_mocks, losses, expectation);
                        Some(output)
                    }
                    _ => responses
                        .iter()
                        .find(|(_, call_at)| *call_at == at)
                        .and_then(|(input, _)| match &turn.inputs[*input] {
                            Input::ToolResponse { response, .. } => Some(response),
                            _ => None,
                        }),
                };
                calls.push(tool_call(call, output));
            }
            ExpectationKind::ToolResponse { tool, output } => losses.add(
                &expectation.location,
                match output {
                    Some(_) => format!("SCRAPI expects a tool's response only as the `output` of its call, right after it: the expected response of `{tool}` is left out"),
                    None => format!("SCRAPI has no expected tool response without its output: the one of `{tool}` is left out"),
                },
            ),
            ExpectationKind::Reply(_) => losses.add(
                &expectation.location,
                "a SCRAPI golden has no turn-eval checks: the check is left out",
            ),
            ExpectationKind::ToolResult(_) => losses.add(
                &expectation.location,
                "a SCRAPI golden has no checks on a tool's result: the check is left out",
            ),
            ExpectationKind::Transfer { agent } => calls.push(format!(
                "{{action: transfer_to_agent, args: {{agent: {}}}}}",
                yaml_str(agent)
            )),
        }
    }
    for (mock, used) in turn.tool_mocks.iter().zip(&used_mocks) {
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

    if chunks.is_empty() && !silent && !unexpected {
        losses.add(
            &turn.location,
            "the turn expects no agent text and SCRAPI checks every turn's: written without `agent`, any reply is an UNEXPECTED RESPONSE",
        );
    }
    match chunks.len() {
        0 if silent => lines.push(("agent".into(), "null".into())),
        0 => {}
        1 => lines.push(("agent".into(), chunks.remove(0))),
        _ => lines.push(("agent".into(), format!("[{}]", chunks.join(", ")))),
    }
    if !calls.is_empty() {
        lines.push(("tool_calls".into(), String::new()));
    }
    for (i, (key, value)) in lines.iter().enumerate() {
        let lead = if i == 0 { "- " } else { "  " };
        if key == "tool_calls" {
            out.line(6, &format!("{lead}tool_calls:"));
            for call in &calls {
                out.line(10, &format!("- {call}"));
            }
        } else {
            out.line(6, &format!("{lead}{key}: {value}"));
        }
    }
    if lines.is_empty() {
        out.line(6, "- {}");
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
    if matcher.match_type != MatchType::Semantic {
        losses.add(
            &expectation.location,
            format!(
                "SCRAPI compares agent text by meaning: this `{}` match becomes semantic",
                matcher.match_type.name()
            ),
        );
    }
    if let Some(agent) = agent {
        losses.add(
            &expectation.location,
            format!("SCRAPI's agent text names no agent: `{agent}` is left out"),
        );
    }
    let text = match &matcher.expected {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
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

fn tool_call(call: &ExpectedToolCall, output: Option<&Value>) -> String {
    let mut parts = vec![format!("action: {}", yaml_str(&call.name))];
    if !call.args.fields.is_empty() {
        parts.push(format!("args: {}", fields(&call.args.fields)));
    }
    if let Some(output) = output {
        parts.push(format!("output: {}", yaml_value(output)));
    }
    if let Some(agent) = &call.agent {
        parts.push(format!("agent: {}", yaml_str(agent)));
    }
    format!("{{{}}}", parts.join(", "))
}

/// Arguments as SCRAPI reads them back: a bare value is exact, other match types are
/// `{$matchType, value}` maps, and an object that lists keys to check writes its exact leaves
/// as matcher maps too (a bare map is one exact value to SCRAPI).
fn fields(fields: &[(String, ValueMatcher)]) -> String {
    let parts: Vec<String> = fields
        .iter()
        .map(|(key, matcher)| format!("{}: {}", yaml_str(key), value_matcher(matcher, false)))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

fn value_matcher(matcher: &ValueMatcher, in_object: bool) -> String {
    match matcher {
        ValueMatcher::Object(inner) => {
            let parts: Vec<String> = inner
                .iter()
                .map(|(key, m)| format!("{}: {}", yaml_str(key), value_matcher(m, true)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        ValueMatcher::Leaf(leaf) => {
            let bare_is_exact = !in_object && !has_dollar_key(&leaf.expected);
            match leaf.match_type {
                MatchType::Exact if bare_is_exact => yaml_value(&leaf.expected),
                MatchType::Ignore if leaf.expected.is_null() => "{$matchType: ignore}".to_owned(),
                other => format!(
                    "{{$matchType: {}, value: {}}}",
                    other.name(),
                    yaml_value(&leaf.expected)
                ),
            }
        }
    }
}

fn has_dollar_key(value: &Value) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k.starts_with('$') || has_dollar_key(v)),
        _ => false,
    }
}
