//! A case into a gecx `*.scenario.yaml` (one scenario per file): `id`, `name`, `description`,
//! `tags`, a `when` item per turn and a `then` entry per scorer, every scorer argument written
//! as the loader reads it. gecx scores the scenario as a whole, so a turn's expected tool call
//! becomes a `tool-called` / `tool-called-with-input` scorer (reported: it is then checked over
//! the whole scenario), and the last turn's exact text `final-message-equals`; gecx compares no
//! text by meaning, so semantic expected text is reported, like everything else gecx cannot say,
//! in [`Losses`].

use std::time::Duration;

use serde_json::Value;

use super::scorers;
use crate::formats::write::{self, Losses, Yaml, exact_args_json, text_of, yaml_str, yaml_value};
use crate::model::{
    ArgsMatcher, Case, CheckKind, ExpectationKind, ExpectedToolCall, Input, Location, MatchType,
    Provider, Scorer, Turn,
};

const FORMAT: &str = "gecx";

/// The scenario file of `case`. A case none of whose turns sends anything gecx can send is
/// written with no turns (reported): it is marked as not carried (`convert`), and played as
/// skipped with that reason rather than left out of the run.
pub fn write(case: &Case, losses: &mut Losses) -> String {
    let mut out = Yaml::default();
    header(case, &mut out, losses);
    let mut when = Yaml::default();
    let mut turns_written = 0;
    let mut from_turns: Vec<Scorer> = Vec::new();
    for (position, turn) in case.turns.iter().enumerate() {
        turns_written += turn_items(turn, &mut when, losses);
        report_mocks(turn, losses);
        let last = position + 1 == case.turns.len();
        from_turns.extend(turn_scorers(turn, last, losses));
    }
    if turns_written == 0 {
        losses.add(
            &case.location,
            format!(
                "a gecx scenario sends user text or tool-call approvals, and no turn of `{}` does: it is written with no turns, to be skipped",
                case.id
            ),
        );
        out.line(0, "when: []");
    } else {
        out.open(0, "when");
        out.text.push_str(&when.text);
    }
    let mut then = case_scorers(case, losses);
    then.extend(from_turns.iter().map(entry));
    if then.is_empty() {
        out.line(0, "then: []");
    } else {
        out.open(0, "then");
        for item in then {
            out.line(2, &format!("- {item}"));
        }
    }
    out.text
}

/// `id`, `name`, `description` and `tags`.
fn header(case: &Case, out: &mut Yaml, losses: &mut Losses) {
    out.comments(0, &case.comments);
    out.field(0, "id", &yaml_str(&case.id));
    if case.name != case.id {
        out.field(0, "name", &yaml_str(&case.name));
    }
    if let Some(description) = &case.description {
        out.field(0, "description", &yaml_str(description));
    }
    if !case.tags.is_empty() {
        let tags: Vec<String> = case.tags.iter().map(|t| yaml_str(t)).collect();
        out.field(0, "tags", &format!("[{}]", tags.join(", ")));
    }
    if !case.session_parameters.is_empty() {
        losses.add(
            &case.location,
            "gecx scenarios have no session parameters: they are left out",
        );
    }
    losses.regtrace_only(case, FORMAT);
}

/// The `when` items of one turn, one per input gecx can send; how many were written.
fn turn_items(turn: &Turn, out: &mut Yaml, losses: &mut Losses) -> usize {
    let mut written = 0;
    for input in &turn.inputs {
        let item = match input {
            Input::Text(text) => format!("user: {}", yaml_str(text)),
            Input::ApproveToolCall(tag) => format!("approveToolCall: {}", yaml_str(tag)),
            Input::DenyToolCall(tag) => format!("denyToolCall: {}", yaml_str(tag)),
            other => {
                losses.add(
                    &turn.location,
                    format!(
                        "a gecx turn sends user text or a tool-call approval: {} is left out",
                        what(other)
                    ),
                );
                continue;
            }
        };
        if written > 0 {
            losses.add(
                &turn.location,
                "a gecx turn sends one input: this turn's next input is sent as a turn of its own",
            );
        }
        if written == 0 {
            out.comments(2, &turn.comments);
        }
        written += 1;
        out.line(2, &format!("- {item}"));
    }
    if written == 0 {
        losses.add(
            &turn.location,
            "a gecx turn must send user text or a tool-call approval: the turn is left out",
        );
    }
    written
}

fn report_mocks(turn: &Turn, losses: &mut Losses) {
    for mock in &turn.tool_mocks {
        losses.add(
            &mock.location,
            format!(
                "gecx scenarios cannot mock tools: the mocked output of `{}` is left out",
                mock.tool
            ),
        );
    }
}

/// The scorers a turn's expectations become: each expected tool call, and the last turn's
/// exact text as `final-message-equals`; every other expectation is reported.
fn turn_scorers(turn: &Turn, last: bool, losses: &mut Losses) -> Vec<Scorer> {
    let mut scorers = Vec::new();
    for expectation in &turn.expectations {
        let location = &expectation.location;
        match &expectation.kind {
            ExpectationKind::ToolCall(call) => {
                scorers.push(call_scorer(call, turn.index, location, losses));
            }
            ExpectationKind::AgentText { matcher, agent }
                if last && matcher.match_type == MatchType::Exact =>
            {
                if let Some(agent) = agent {
                    losses.add(
                        location,
                        format!("gecx's final message names no agent: `{agent}` is left out"),
                    );
                }
                scorers.push(Scorer::FinalMessageEquals {
                    pattern: text_of(&matcher.expected),
                });
            }
            other => losses.add(location, lost_expectation(other)),
        }
    }
    scorers
}

fn lost_expectation(kind: &ExpectationKind) -> String {
    match kind {
        ExpectationKind::AgentText { matcher, .. } => format!(
            "gecx compares messages exactly, by substring or by regular expression, never by meaning: the expected `{}` agent text is left out",
            matcher.match_type.name()
        ),
        other => format!(
            "gecx scenarios have no per-turn expectations: {} is left out",
            expectation_what(other)
        ),
    }
}

/// An expected tool call as a `tool-called` / `tool-called-with-input` scorer.
fn call_scorer(
    call: &ExpectedToolCall,
    turn: usize,
    location: &Location,
    losses: &mut Losses,
) -> Scorer {
    losses.add(
        location,
        format!("gecx checks tool calls over the whole scenario: the call of `{}` expected in turn {turn} becomes a scorer", call.name),
    );
    if call.agent.is_some() {
        losses.add(
            location,
            "gecx's tool-call scorers name no agent: the agent is left out",
        );
    }
    let input = exact_args_json(&call.args, location, FORMAT, losses);
    if input.is_empty() {
        Scorer::ToolCalled {
            name: call.name.clone(),
        }
    } else {
        Scorer::ToolCalledWithInput {
            name: call.name.clone(),
            input: ArgsMatcher::exact(input),
        }
    }
}

/// The case's own scorers; its criteria and metrics are reported.
fn case_scorers(case: &Case, losses: &mut Losses) -> Vec<String> {
    let mut then = Vec::new();
    for check in &case.checks {
        match &check.kind {
            CheckKind::Scorer(scorer) => then.push(entry(scorer)),
            CheckKind::Criterion(_) => losses.add(
                &check.location,
                "gecx has no free-text expectation: it is left out",
            ),
            CheckKind::Metric { .. } => losses.add(
                &check.location,
                format!("gecx has no `{}` metric: it is left out", check.label),
            ),
        }
    }
    then
}

fn what(input: &Input) -> String {
    match input {
        Input::Event(name) => format!("the event `{name}`"),
        Input::ToolResponse { name, .. } => {
            format!("a tool response from the user side (`{name}`)")
        }
        Input::Variables(_) => "a variables update".to_owned(),
        Input::Image { .. } => "an image".to_owned(),
        Input::ExecuteTool(execution) => format!("the direct execution of `{}`", execution.tool),
        Input::Text(_) | Input::ApproveToolCall(_) | Input::DenyToolCall(_) => {
            "an input".to_owned()
        }
    }
}

fn expectation_what(kind: &ExpectationKind) -> String {
    match kind {
        ExpectationKind::AgentText { .. } => "the expected agent text".to_owned(),
        ExpectationKind::NoAgentText | ExpectationKind::UnexpectedResponse => {
            "the check that the agent says nothing".to_owned()
        }
        ExpectationKind::ToolCall(call) => format!("the call of `{}`", call.name),
        ExpectationKind::ToolResponse { tool, .. } => format!("the expected response of `{tool}`"),
        ExpectationKind::Transfer { agent } => format!("the expected transfer to `{agent}`"),
        ExpectationKind::Reply(_) => "the turn-eval check".to_owned(),
        ExpectationKind::ToolResult(_) => "the check on a tool's result".to_owned(),
    }
}

/// One `then` entry, as `{scorer: NAME, args: {...}}`.
fn entry(scorer: &Scorer) -> String {
    let name = scorers::name(scorer);
    let text = |key: &str, value: &str| format!("{key}: {}", yaml_str(value));
    let args: Vec<String> = match scorer {
        Scorer::MessageContains { pattern } | Scorer::FinalMessageEquals { pattern } => {
            vec![text("pattern", pattern)]
        }
        Scorer::MessageMatchesRegex { regex } => {
            let (flags, pattern) = split_flags(regex.as_str());
            let mut args = vec![text("pattern", pattern)];
            if !flags.is_empty() {
                args.push(text("flags", flags));
            }
            args
        }
        Scorer::ToolCalled { name } => vec![text("name", name)],
        Scorer::ToolCalledWithInput { name, input } => {
            vec![
                text("name", name),
                format!("input: {}", yaml_value(&Value::Object(args_json(input)))),
            ]
        }
        Scorer::NoToolCalled { name } => name.iter().map(|n| text("name", n)).collect(),
        Scorer::ToolCallAccuracy { expected } => {
            let calls: Vec<String> = expected
                .iter()
                .map(|call| {
                    if call.args.fields.is_empty() {
                        yaml_str(&call.name)
                    } else {
                        format!(
                            "{{name: {}, input: {}}}",
                            yaml_str(&call.name),
                            yaml_value(&Value::Object(args_json(&call.args)))
                        )
                    }
                })
                .collect();
            vec![format!("expected: [{}]", calls.join(", "))]
        }
        Scorer::HandoffTriggered | Scorer::NoHandoff | Scorer::NoError => Vec::new(),
        Scorer::ErrorCode { code } => vec![text("code", code)],
        Scorer::LatencyP50Under { limit } | Scorer::LatencyP95Under { limit } => {
            vec![format!("ms: {}", millis(*limit))]
        }
        Scorer::JudgeNotHallucinating {
            grounding_context,
            provider,
        } => with_provider(vec![text("groundingContext", grounding_context)], *provider),
        Scorer::JudgeHelpfulness { criteria, provider } => with_provider(
            criteria.iter().map(|c| text("criteria", c)).collect(),
            *provider,
        ),
        Scorer::JudgeToneMatches { tone, provider } => {
            with_provider(vec![text("tone", tone)], *provider)
        }
    };
    if args.is_empty() {
        format!("{{scorer: {name}}}")
    } else {
        format!("{{scorer: {name}, args: {{{}}}}}", args.join(", "))
    }
}

fn with_provider(mut args: Vec<String>, provider: Option<Provider>) -> Vec<String> {
    if let Some(provider) = provider {
        args.push(format!("provider: {}", provider.name()));
    }
    args
}

/// A gecx scorer's input as written: the loader builds only objects of keys and exact leaves,
/// which JSON says as they are.
fn args_json(args: &ArgsMatcher) -> serde_json::Map<String, Value> {
    write::args_json(args, FORMAT).0
}

/// `ms` as the loader reads it back to the same duration: whole milliseconds as an integer.
fn millis(limit: Duration) -> String {
    let ms = limit.as_secs_f64() * 1000.0;
    if ms.fract() == 0.0 {
        format!("{}", ms as u64)
    } else {
        format!("{ms}")
    }
}

/// `(?ims)pattern` (how the loader stores JavaScript flags) back into flags and pattern.
fn split_flags(source: &str) -> (&str, &str) {
    if let Some(rest) = source.strip_prefix("(?")
        && let Some(end) = rest.find(')')
    {
        let flags = &rest[..end];
        if !flags.is_empty() && flags.chars().all(|c| "ims".contains(c)) {
            return (flags, &rest[end + 1..]);
        }
    }
    ("", source)
}
