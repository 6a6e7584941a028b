//! `response:` where a template agent's reply holds the turn's parts, and, for a stream,
//! `response.events`: rules that tell its events apart (by the SSE `event:` name, or by a
//! JSONPath that must find something in the event's data), each kind read with its own paths.

use crate::diagnostic::{Code, Diagnostics};
use crate::model::JsonPath;
use crate::yaml::{self, Fields, Node, Value};

/// Where a tool call's name and arguments are read when `response` does not say.
pub const DEFAULT_TOOL_NAME: &str = "$.name";
pub const DEFAULT_TOOL_ARGS: &str = "$.arguments";
/// Where an error's code and message are read within the node `error` found.
pub const DEFAULT_ERROR_CODE: &str = "$.code";
pub const DEFAULT_ERROR_MESSAGE: &str = "$.message";

/// Where in the reply (or in one streamed event) the turn's parts are.
#[derive(Clone, Debug, PartialEq)]
pub struct ResponsePaths {
    /// Every node found is a message.
    pub text: Option<JsonPath>,
    /// The paths `text` goes through, longest first: when `text` finds nothing but one of
    /// these finds something, the reply has the expected shape and holds no text (a silent
    /// turn), rather than a path that does not fit the reply.
    pub text_parents: Vec<JsonPath>,
    /// Every node found is a tool call; none: no tool calls.
    pub tool_calls: Option<JsonPath>,
    /// Within each tool call.
    pub tool_name: JsonPath,
    pub tool_args: JsonPath,
    /// Within each tool call of a stream: the calls found with the same key are fragments of
    /// one (OpenAI's `index`, Anthropic's content block index), their argument strings joined.
    pub tool_index: Option<JsonPath>,
    /// The agent transferred to; none: no transfer.
    pub transfer: Option<JsonPath>,
    /// The handoff's status (`none` or empty is no handoff); none found: no handoff.
    pub handoff: Option<JsonPath>,
    /// The agent's own error; a string found is its code, an object is read with
    /// `error_code` and `error_message`.
    pub error: Option<JsonPath>,
    pub error_code: JsonPath,
    pub error_message: JsonPath,
    /// A session id the server assigns, sent back as `{{session}}` in later turns.
    pub session: Option<JsonPath>,
}

/// One kind of streamed event and how it is read.
#[derive(Clone, Debug, PartialEq)]
pub struct EventRule {
    /// The SSE `event:` name it has (`message` when the server names none).
    pub event: Option<String>,
    /// A JSONPath filter expression the event's data must pass (`@.type == 'delta'`),
    /// compiled as `$[?EXPR]`, which is evaluated on a list holding only the data.
    pub matches: Option<JsonPath>,
    pub paths: ResponsePaths,
    /// The event ends the turn: the stream is read no further.
    pub end: bool,
}

/// `response:`: the paths of a whole reply (or of a streamed event no rule selects), and the
/// rules of a stream's events, the first that selects an event reading it.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    pub paths: ResponsePaths,
    pub events: Vec<EventRule>,
}

impl Response {
    /// Whether any reply could show a handoff: without a path for one, deflection cannot be
    /// measured.
    pub fn reads_handoffs(&self) -> bool {
        self.any(|paths| paths.handoff.is_some())
    }

    /// Whether the server assigns the session id: then `{{session}}` is null until it did.
    pub fn reads_session(&self) -> bool {
        self.any(|paths| paths.session.is_some())
    }

    fn any(&self, has: impl Fn(&ResponsePaths) -> bool) -> bool {
        has(&self.paths) || self.events.iter().any(|e| has(&e.paths))
    }
}

/// The keys of a set of paths.
const PATH_KEYS: [&str; 11] = [
    "text",
    "tool_calls",
    "tool_name",
    "tool_args",
    "tool_index",
    "transfer",
    "handoff",
    "error",
    "error_code",
    "error_message",
    "session",
];

/// `response: { text, tool_calls, ..., events }`. `text` is required unless `events` reads it.
pub(super) fn parse(node: &Node, path: &str, diags: &mut Diagnostics) -> Option<Response> {
    let mut fields = Fields::of(node, path, diags)?;
    let events = match fields.take("events") {
        Some(list) => event_rules(list, &format!("{path}.events"), diags),
        None => Some(Vec::new()),
    };
    let paths = paths(&mut fields, path, diags);
    fields.finish(diags);
    let (paths, events) = (paths?, events?);
    if paths.text.is_none() && events.iter().all(|e| e.paths.text.is_none()) {
        diags
            .at(node)
            .error(
                Code::G102,
                "missing required key `text` (the JSONPath of the reply's text)",
            )
            .field(format!("{path}.text"))
            .hint("e.g. `text: $.reply`");
        return None;
    }
    Some(Response { paths, events })
}

/// `events: [{ event, match, end, text, tool_calls, ... }]`.
fn event_rules(list: &Node, path: &str, diags: &mut Diagnostics) -> Option<Vec<EventRule>> {
    let Value::Seq(items) = &list.value else {
        list.wrong_type("a list of event rules", diags).field(path);
        return None;
    };
    let errors = diags.error_count();
    let rules: Vec<EventRule> = items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| event_rule(item, &format!("{path}[{i}]"), diags))
        .collect();
    (diags.error_count() == errors).then_some(rules)
}

fn event_rule(node: &Node, path: &str, diags: &mut Diagnostics) -> Option<EventRule> {
    let mut fields = Fields::of(node, path, diags)?;
    let event = fields
        .take("event")
        .and_then(|n| yaml::expect_text(n, &format!("{path}.event"), diags));
    let matches = filter(&mut fields, &format!("{path}.match"), diags).ok()?;
    let end = match fields.take("end") {
        None => false,
        Some(Node {
            value: Value::Bool(b),
            ..
        }) => *b,
        Some(other) => {
            other
                .wrong_type("true or false", diags)
                .field(format!("{path}.end"));
            return None;
        }
    };
    let paths = paths(&mut fields, path, diags);
    fields.finish(diags);
    if event.is_none() && matches.is_none() {
        diags
            .at(node)
            .error(Code::G102, "an event rule selects no event")
            .field(path)
            .hint("give `event: NAME` (the SSE event name), `match: FILTER`, or both");
        return None;
    }
    Some(EventRule {
        event,
        matches,
        paths: paths?,
        end,
    })
}

/// The path keys of `response` or of one event rule.
fn paths(fields: &mut Fields, path: &str, diags: &mut Diagnostics) -> Option<ResponsePaths> {
    let mut get = |key, diags: &mut Diagnostics| json_path(fields, key, path, diags);
    let [
        text,
        tool_calls,
        tool_name,
        tool_args,
        tool_index,
        transfer,
        handoff,
        error,
        error_code,
        error_message,
        session,
    ] = PATH_KEYS.map(|key| get(key, diags));
    let or = |found: Result<Option<JsonPath>, ()>, default: &str| {
        found.map(|p| p.unwrap_or_else(|| JsonPath::parse(default).expect("a default compiles")))
    };
    let text = text.ok()?;
    Some(ResponsePaths {
        text_parents: text.as_ref().map(JsonPath::parents).unwrap_or_default(),
        text,
        tool_calls: tool_calls.ok()?,
        tool_name: or(tool_name, DEFAULT_TOOL_NAME).ok()?,
        tool_args: or(tool_args, DEFAULT_TOOL_ARGS).ok()?,
        tool_index: tool_index.ok()?,
        transfer: transfer.ok()?,
        handoff: handoff.ok()?,
        error: error.ok()?,
        error_code: or(error_code, DEFAULT_ERROR_CODE).ok()?,
        error_message: or(error_message, DEFAULT_ERROR_MESSAGE).ok()?,
        session: session.ok()?,
    })
}

/// `match: EXPR`: a JSONPath filter expression, compiled as `$[?EXPR]`.
fn filter(
    fields: &mut Fields,
    field: &str,
    diags: &mut Diagnostics,
) -> Result<Option<JsonPath>, ()> {
    let Some(node) = fields.take("match") else {
        return Ok(None);
    };
    let text = yaml::expect_text(node, field, diags).ok_or(())?;
    match JsonPath::parse(&format!("$[?{text}]")) {
        Ok(compiled) => Ok(Some(compiled)),
        Err(error) => {
            diags
                .at(node)
                .error(Code::G104, format!("`{text}` is not a JSONPath filter: {error}"))
                .field(field)
                .hint("an RFC 9535 filter expression on the event's data, such as `@.type == 'delta'`");
            Err(())
        }
    }
}

/// The JSONPath at `key`, if given; `Err` when it does not compile (reported).
fn json_path(
    fields: &mut Fields,
    key: &'static str,
    path: &str,
    diags: &mut Diagnostics,
) -> Result<Option<JsonPath>, ()> {
    let field = format!("{path}.{key}");
    let Some(node) = fields.take(key) else {
        return Ok(None);
    };
    let text = yaml::expect_text(node, &field, diags).ok_or(())?;
    match JsonPath::parse(&text) {
        Ok(compiled) => Ok(Some(compiled)),
        Err(error) => {
            diags
                .at(node)
                .error(Code::G104, format!("`{text}` is not a JSONPath: {error}"))
                .field(field)
                .hint("an RFC 9535 JSONPath such as `$.reply` or `$.messages[*].text`");
            Err(())
        }
    }
}
