//! One turn of a dataset golden (`user` / `event`, `agent`, `tool_calls`, `variables`) into a
//! [`Turn`], with SCRAPI's readings: a null or missing `user` is the `welcome` event,
//! `<event>NAME</event>` is the event NAME, `# silent` or a null `agent` expects no text, a
//! missing `agent` makes any reply an UNEXPECTED RESPONSE (unless a `# goldgate agent: not
//! checked` comment says the turn checks no text), and `transfer_to_agent` is a transfer.

use serde_json::Value as Json;

use super::annotation::{self, Target};
use super::{items, matcher, parameters, take_container, warn_at_key};
use crate::diagnostic::{Code, Diagnostics};
use crate::model::{
    ArgsMatcher, Expectation, ExpectationKind, ExpectedToolCall, Input, MatchType, Matcher,
    ToolMock, Turn, WELCOME_EVENT,
};
use crate::yaml::{Fields, Node, Value, expect_text, indexed};

/// SCRAPI drops any expected agent chunk containing this marker: the agent says nothing.
const SILENT_MARKER: &str = "# silent";
/// The action SCRAPI turns into an agent-transfer expectation.
const TRANSFER_ACTION: &str = "transfer_to_agent";

/// A loaded turn, plus the first tool call with nothing to mock its output (for E006).
pub(super) struct ParsedTurn {
    pub turn: Turn,
    pub unmocked_call: Option<UnmockedCall>,
}

/// Where a tool call without `output` is written.
pub(super) struct UnmockedCall {
    pub line: u32,
    pub column: u32,
    pub path: String,
}

/// Loads the turn at `node`; `index` is 1-based. `None` when it is not a mapping.
pub(super) fn parse(
    node: &Node,
    index: usize,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<ParsedTurn> {
    let mut fields = Fields::of(node, path, diags)?;
    let mut inputs = Vec::new();
    // Variables are staged before the turn's input, as SCRAPI's steps do.
    if let Some(variables) = take_container(&mut fields, "variables", "{}", diags) {
        let variables = parameters(variables, &fields.path_of("variables"), diags);
        inputs.push(Input::Variables(variables));
    }
    inputs.extend(user_input(&mut fields, diags));

    let mut expectations = Vec::new();
    let comments = crate::formats::first_key_comments(node);
    match fields.take("agent") {
        Some(agent) => {
            agent_expectations(agent, &fields.path_of("agent"), &mut expectations, diags);
        }
        // `convert` wrote a turn that checked no agent text: goldgate reads it as it was.
        None if annotation::agent_not_checked(comments) => {}
        None => {
            diags
                .at(node)
                .warning(
                    Code::E008,
                    "turn has no `agent`: any agent response will be flagged as UNEXPECTED RESPONSE",
                )
                .field(fields.path_of("agent"))
                .hint("add `agent:` with the expected reply, or `agent: null` when the agent stays silent");
            expectations.push(expectation(
                node,
                ExpectationKind::UnexpectedResponse,
                diags,
            ));
        }
    }

    let mut calls = ToolCalls::default();
    if let Some(list) = take_container(&mut fields, "tool_calls", "[]", diags) {
        let list_path = fields.path_of("tool_calls");
        for (path, call) in indexed(
            items(list, &list_path, "a list of tool calls", diags),
            &list_path,
        ) {
            calls.add(call, &path, diags);
        }
    }
    fields.finish(diags);

    expectations.extend(calls.expectations);
    annotate(&mut expectations, node);
    Some(ParsedTurn {
        turn: Turn {
            index,
            location: diags.location(node.line, node.column),
            inputs,
            expectations,
            tool_mocks: calls.mocks,
            recorded_reply: None,
            comments: crate::formats::author_comments(node),
        },
        unmocked_call: calls.unmocked,
    })
}

/// The notes, responding agents and order goldgate keeps in comments above the turn.
fn annotate(expectations: &mut [Expectation], node: &Node) {
    for (field, value) in annotation::read(crate::formats::first_key_comments(node)) {
        if (field, value.as_str()) == ("order", annotation::CALLS_FIRST) {
            // The calls (and their responses) ahead of the texts, as a CES turn had them.
            let texts = expectations.iter().take_while(|e| !is_call(e)).count();
            expectations.rotate_left(texts);
            continue;
        }
        let Some((target, what)) = annotation::target(field) else {
            continue;
        };
        let found = match target {
            Target::Text(i) => expectations
                .iter_mut()
                .filter(|e| matches!(e.kind, ExpectationKind::AgentText { .. }))
                .nth(i),
            Target::Call(i) => expectations.iter_mut().filter(|e| is_call(e)).nth(i),
        };
        let Some(expectation) = found else { continue };
        match (what, &mut expectation.kind) {
            ("note", _) => expectation.note = Some(value),
            ("response_agent", ExpectationKind::AgentText { agent, .. }) => *agent = Some(value),
            _ => {}
        }
    }
}

fn is_call(expectation: &Expectation) -> bool {
    matches!(
        expectation.kind,
        ExpectationKind::ToolCall(_) | ExpectationKind::Transfer { .. }
    )
}

fn expectation(node: &Node, kind: ExpectationKind, diags: &Diagnostics) -> Expectation {
    Expectation {
        location: diags.location(node.line, node.column),
        kind,
        note: None,
    }
}

/// What the user side sends: `user` text, an `event`, or the `welcome` event.
fn user_input(fields: &mut Fields<'_>, diags: &mut Diagnostics) -> Option<Input> {
    let user = fields.take("user");
    let event = fields.take("event");
    if user.is_some() && event.is_some() {
        let message = "SCRAPI ignores `event` when `user` is given; so does goldgate";
        warn_at_key(fields, "event", Code::G110, message, diags)
            .hint("keep one of `user` and `event`");
    }
    match (user, event) {
        (Some(user), _) if user.is_null() => Some(Input::Event(WELCOME_EVENT.to_owned())),
        (Some(user), _) => {
            let text = expect_text(user, &fields.path_of("user"), diags)?;
            Some(match event_tag(&text) {
                Some(name) => Input::Event(name.to_owned()),
                None => Input::Text(text),
            })
        }
        (None, Some(event)) => {
            expect_text(event, &fields.path_of("event"), diags).map(Input::Event)
        }
        (None, None) => Some(Input::Event(WELCOME_EVENT.to_owned())),
    }
}

/// `<event>NAME</event>` written as user text names an event.
fn event_tag(text: &str) -> Option<&str> {
    text.trim()
        .strip_prefix("<event>")?
        .strip_suffix("</event>")
        .map(str::trim)
}

/// `agent`: a string, a list of strings (one chunk each), or null for silence.
fn agent_expectations(
    node: &Node,
    path: &str,
    out: &mut Vec<Expectation>,
    diags: &mut Diagnostics,
) {
    let chunks: Vec<&Node> = match &node.value {
        Value::Null => Vec::new(),
        Value::Str(_) => vec![node],
        Value::Seq(list) => {
            let mut chunks = Vec::new();
            for (item_path, item) in indexed(list, path) {
                if item.as_str().is_some() {
                    chunks.push(item);
                } else {
                    report_agent_type(item, &item_path, diags);
                }
            }
            if chunks.len() < list.len() {
                return;
            }
            chunks
        }
        _ => {
            report_agent_type(node, path, diags);
            return;
        }
    };
    let before = out.len();
    for chunk in chunks {
        let text = chunk.as_str().unwrap_or_default();
        if !text.contains(SILENT_MARKER) && !text.trim().is_empty() {
            let matcher = Matcher::new(MatchType::Semantic, Json::String(text.to_owned()));
            let kind = ExpectationKind::AgentText {
                matcher,
                agent: None,
            };
            out.push(expectation(chunk, kind, diags));
        }
    }
    if out.len() == before {
        out.push(expectation(node, ExpectationKind::NoAgentText, diags));
    }
}

fn report_agent_type(node: &Node, path: &str, diags: &mut Diagnostics) {
    diags
        .at(node)
        .error(
            Code::E007,
            format!(
                "`agent` must be a string or a list of strings, found {}",
                node.kind()
            ),
        )
        .field(path)
        .hint(
            "write the expected reply as plain text, compared by meaning; for an exact or regexp \
             reply use a turn eval's `equals` or a gecx scenario's `message-matches-regex`",
        );
}

/// The expectations and mocks a turn's `tool_calls` produce.
#[derive(Default)]
struct ToolCalls {
    expectations: Vec<Expectation>,
    mocks: Vec<ToolMock>,
    unmocked: Option<UnmockedCall>,
}

impl ToolCalls {
    fn add(&mut self, node: &Node, path: &str, diags: &mut Diagnostics) {
        let Some(mut fields) = Fields::of(node, path, diags) else {
            return;
        };
        let action = fields.required_string("action", diags);
        let args_node = take_args(&mut fields, diags);
        let args = args_node.map_or_else(ArgsMatcher::default, |(key, args)| {
            matcher::args(args, &fields.path_of(key), diags)
        });
        let output = fields
            .take("output")
            .and_then(|output| tool_output(output, &fields.path_of("output"), diags));
        let agent = fields.string("agent", diags);
        fields.finish(diags);
        let Some(action) = action else {
            return;
        };

        if action == TRANSFER_ACTION {
            let target = args_node
                .and_then(|(_, args)| args.get("agent"))
                .and_then(Node::scalar_text)
                .or_else(|| agent.clone());
            if let Some(agent) = target {
                let kind = ExpectationKind::Transfer { agent };
                self.expectations.push(expectation(node, kind, diags));
                return;
            }
        }

        let call = ExpectedToolCall {
            name: action.clone(),
            args: args.clone(),
            agent,
        };
        self.expectations
            .push(expectation(node, ExpectationKind::ToolCall(call), diags));
        match output {
            Some((output_node, output)) => {
                let kind = ExpectationKind::ToolResponse {
                    tool: action.clone(),
                    output: Some(output.clone()),
                };
                self.expectations
                    .push(expectation(output_node, kind, diags));
                self.mocks.push(ToolMock {
                    tool: action,
                    args: (!args.fields.is_empty()).then_some(args),
                    output,
                    location: diags.location(output_node.line, output_node.column),
                });
            }
            None => {
                self.unmocked.get_or_insert_with(|| UnmockedCall {
                    line: node.line,
                    column: node.column,
                    path: path.to_owned(),
                });
            }
        }
    }
}

/// `args`, or `arguments` (which SCRAPI's loader silently drops) read in its place.
fn take_args<'a>(
    fields: &mut Fields<'a>,
    diags: &mut Diagnostics,
) -> Option<(&'static str, &'a Node)> {
    let args = take_container(fields, "args", "{}", diags).map(|node| ("args", node));
    if fields.take("arguments").is_none() {
        return args;
    }
    let has_args_key = fields.node().get("args").is_some();
    let message = if has_args_key {
        "`arguments` next to `args` is ignored"
    } else {
        "SCRAPI ignores `arguments`; goldgate reads it as `args`"
    };
    warn_at_key(fields, "arguments", Code::G110, message, diags)
        .hint("rename it to `args` so that SCRAPI checks the arguments too");
    if has_args_key {
        return args;
    }
    take_container(fields, "arguments", "{}", diags).map(|node| ("arguments", node))
}

/// A tool call's `output`: a string or a mapping (null: none).
fn tool_output<'a>(
    node: &'a Node,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<(&'a Node, Json)> {
    match &node.value {
        Value::Null => None,
        Value::Str(_) | Value::Map(_) => Some((node, node.to_json())),
        _ => {
            node.wrong_type("a string or a mapping", diags).field(path);
            None
        }
    }
}
