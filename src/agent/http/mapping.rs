//! Reads a template agent's reply (or one event of its stream) with one set of response paths:
//! the messages' text, the tool calls with their names and arguments, a transfer, a handoff,
//! the agent's own error, and a session id the server assigned.
//!
//! The paths are the team's, the reply is the agent's: a path with several descendant
//! segments (`$..*..*`) over a deep reply would visit billions of nodes, synchronously, where
//! the turn's timeout cannot stop it. So each path's work is bounded before it is evaluated:
//! a reply (or event) past [`VISIT_LIMIT`] is an error of the turn, not a stall.

use serde_json::{Map, Value as Json};

use crate::config::http::ResponsePaths;
use crate::model::JsonPath;
use crate::transcript::{Handoff, ReplyError, Transfer};

/// What one reply, or one event of a stream, holds.
#[derive(Debug, Default, PartialEq)]
pub struct Fragment {
    /// The text of every node the `text` path found (a null found is no text); `None` when it
    /// found no node at all.
    pub texts: Option<Vec<String>>,
    /// The `text` path found nothing, but a path it goes through did: the reply has the shape
    /// the path expects and holds no text there.
    pub shaped: bool,
    pub tool_calls: Vec<CallPart>,
    pub transfer: Option<Transfer>,
    pub handoff: Option<Handoff>,
    pub error: Option<ReplyError>,
    pub session: Option<Json>,
}

/// A tool call as one reply or event shows it: whole, or (with a key) a fragment that the
/// other fragments of the same key complete.
#[derive(Debug, Default, PartialEq)]
pub struct CallPart {
    pub key: Option<Json>,
    pub name: Option<String>,
    /// As found: an object, or a string holding JSON (whole, or a piece of it).
    pub args: Option<Json>,
}

/// Why a reply or event could not be read.
#[derive(Debug, PartialEq)]
pub enum Unread {
    /// A path that had to find something found nothing.
    NothingFound(NothingFound),
    /// Evaluating a path would visit more than [`VISIT_LIMIT`] nodes.
    TooDeep {
        path: String,
        nodes: u64,
        depth: u64,
    },
}

/// A path that had to find something and did not.
#[derive(Debug, PartialEq)]
pub struct NothingFound {
    /// The path as the config wrote it.
    pub path: String,
    /// Where it looked: `None`, the reply; `Some(n)`, the reply's `n`th tool call (1-based).
    pub tool_call: Option<usize>,
    /// The path that is wrong when it is not `path` itself, said after the error.
    pub hint: Option<String>,
}

impl NothingFound {
    /// Names `tool_calls` as the wrong path when the "call" it found is a whole list: a path
    /// without `[*]` finds the list, not each call in it.
    fn in_list(self, tool_calls: &JsonPath, call: &Json) -> NothingFound {
        if !call.is_array() {
            return self;
        }
        let source = &tool_calls.source;
        NothingFound {
            hint: Some(format!(
                "`response.tool_calls: {source}` found a list, not the calls in it: write \
                 `{source}[*]` to read each item as a tool call"
            )),
            ..self
        }
    }
}

/// The most nodes evaluating the paths may visit in one reply or event: well above what a
/// 16 MiB reply holds for a path with one `..`, and a fraction of a second of work.
pub const VISIT_LIMIT: u64 = 5_000_000;

impl Unread {
    /// The error message, quoting the start of what was searched (masked by the caller).
    pub fn message(&self, what: &str, quoted: &str) -> String {
        match self {
            Unread::NothingFound(missing) => {
                let within = match missing.tool_call {
                    Some(n) => format!("tool call {n} of {what}"),
                    None => what.to_owned(),
                };
                let hint = (missing.hint.as_deref()).map_or(String::new(), |h| format!("; {h}"));
                format!(
                    "the response path `{}` found nothing in {within}: {quoted}{hint}",
                    missing.path
                )
            }
            Unread::TooDeep { path, nodes, depth } => format!(
                "the response path `{path}` would visit more than {VISIT_LIMIT} nodes of {what} \
                 ({nodes} nodes, {depth} levels deep; each `..` after the first multiplies by \
                 the depth), so it was not evaluated: {quoted}"
            ),
        }
    }
}

/// A reply's bytes as JSON; a reply that is not JSON is read as one JSON string, so that
/// `text: $` reads a plain-text reply.
pub fn parse(bytes: &[u8]) -> Json {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| Json::String(String::from_utf8_lossy(bytes).into_owned()))
}

/// Evaluates paths on one document within the visit limit.
struct Bounded<'a> {
    value: &'a Json,
    /// Its nodes and depth, measured the first time a path with a `..` needs them.
    shape: Option<(u64, u64)>,
}

impl<'a> Bounded<'a> {
    fn new(value: &'a Json) -> Self {
        Self { value, shape: None }
    }

    /// Every node `path` finds. A path without `..` visits each node at most once per
    /// selector; the first `..` visits every node, and each one after it up to the depth
    /// times more.
    fn nodes(&mut self, path: &JsonPath) -> Result<Vec<&'a Json>, Unread> {
        let descendants = path.descendant_segments();
        if descendants > 0 {
            let (nodes, depth) = *self.shape.get_or_insert_with(|| shape(self.value));
            let exponent = u32::try_from(descendants - 1).unwrap_or(u32::MAX);
            let visits = depth
                .checked_pow(exponent)
                .and_then(|d| d.checked_mul(nodes));
            if visits.is_none_or(|v| v > VISIT_LIMIT) {
                return Err(Unread::TooDeep {
                    path: path.source.clone(),
                    nodes,
                    depth,
                });
            }
        }
        Ok(path.nodes(self.value))
    }

    /// The first non-null node `path` finds.
    fn first(&mut self, path: Option<&JsonPath>) -> Result<Option<&'a Json>, Unread> {
        let Some(path) = path else { return Ok(None) };
        Ok(self.nodes(path)?.into_iter().find(|node| !node.is_null()))
    }
}

/// How many nodes a document has and how deep it goes (serde_json parses at most 128 levels,
/// so the recursion is bounded).
fn shape(value: &Json) -> (u64, u64) {
    let children: Box<dyn Iterator<Item = &Json>> = match value {
        Json::Array(items) => Box::new(items.iter()),
        Json::Object(entries) => Box::new(entries.values()),
        _ => Box::new(std::iter::empty()),
    };
    children.fold((1, 1), |(nodes, depth), child| {
        let (n, d) = shape(child);
        (nodes + n, depth.max(d + 1))
    })
}

/// Whether `path` finds anything in `value`, within the visit limit.
pub fn finds(path: &JsonPath, value: &Json) -> Result<bool, Unread> {
    Ok(!Bounded::new(value).nodes(path)?.is_empty())
}

/// Reads one reply or event.
pub fn read(paths: &ResponsePaths, value: &Json) -> Result<Fragment, Unread> {
    let mut doc = Bounded::new(value);
    let mut fragment = Fragment::default();
    if let Some(text) = &paths.text {
        let found = doc.nodes(text)?;
        if found.is_empty() {
            fragment.shaped = value.is_array() && text.starts_with_items();
            for parent in &paths.text_parents {
                if !doc.nodes(parent)?.is_empty() {
                    fragment.shaped = true;
                    break;
                }
            }
        } else {
            let texts = found.into_iter().filter(|n| !n.is_null()).map(words);
            fragment.texts = Some(texts.collect());
        }
    }
    if let Some(path) = &paths.tool_calls {
        for (i, call) in doc.nodes(path)?.into_iter().enumerate() {
            let part = tool_call(paths, call, i + 1).map_err(|unread| match unread {
                Unread::NothingFound(missing) => Unread::NothingFound(missing.in_list(path, call)),
                other => other,
            })?;
            fragment.tool_calls.push(part);
        }
    }
    fragment.transfer = doc.first(paths.transfer.as_ref())?.map(|agent| Transfer {
        agent: words(agent),
        resource: None,
    });
    fragment.handoff = doc.first(paths.handoff.as_ref())?.map(|status| Handoff {
        status: words(status),
    });
    if let Some(found) = doc.first(paths.error.as_ref())? {
        fragment.error = Some(error(paths, found)?);
    }
    fragment.session = doc.first(paths.session.as_ref())?.cloned();
    Ok(fragment)
}

/// A node as text: a string as it is, anything else as compact JSON.
fn words(node: &Json) -> String {
    match node {
        Json::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// One tool call, or a fragment of one when it has a key. A whole call must have a name.
fn tool_call(paths: &ResponsePaths, call: &Json, n: usize) -> Result<CallPart, Unread> {
    let mut within = Bounded::new(call);
    let key = within.first(paths.tool_index.as_ref())?.cloned();
    let name = within.first(Some(&paths.tool_name))?.map(words);
    if name.is_none() && key.is_none() {
        return Err(Unread::NothingFound(NothingFound {
            path: paths.tool_name.source.clone(),
            tool_call: Some(n),
            hint: None,
        }));
    }
    let args = within.first(Some(&paths.tool_args))?.cloned();
    Ok(CallPart { key, name, args })
}

/// The agent's error: a string found is its code; an object is read with `error_code` (a
/// code of `error` when it has none) and `error_message`.
fn error(paths: &ResponsePaths, found: &Json) -> Result<ReplyError, Unread> {
    if let Json::String(code) = found {
        return Ok(ReplyError {
            code: code.clone(),
            message: String::new(),
        });
    }
    let mut within = Bounded::new(found);
    let code = within.first(Some(&paths.error_code))?.map(words);
    let message = within.first(Some(&paths.error_message))?.map(words);
    Ok(ReplyError {
        code: code.unwrap_or_else(|| "error".to_owned()),
        message: message.unwrap_or_default(),
    })
}

/// Tool-call arguments as found: an object as it is, a string holding JSON parsed (as
/// OpenAI sends them), any other string kept, none an empty object.
pub fn arguments(found: Option<Json>) -> Json {
    match found {
        None => Json::Object(Map::new()),
        Some(Json::String(text)) if text.trim().is_empty() => Json::Object(Map::new()),
        Some(Json::String(text)) => match serde_json::from_str::<Json>(&text) {
            Ok(object @ Json::Object(_)) => object,
            _ => Json::String(text),
        },
        Some(other) => other,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn path(p: &str) -> JsonPath {
        JsonPath::parse(p).unwrap()
    }

    fn paths(tool_calls: Option<&str>) -> ResponsePaths {
        let text = path("$.reply.parts[*].text");
        ResponsePaths {
            text_parents: text.parents(),
            text: Some(text),
            tool_calls: tool_calls.map(path),
            tool_name: path("$.name"),
            tool_args: path("$.arguments"),
            tool_index: None,
            transfer: Some(path("$.transfer.agent")),
            handoff: Some(path("$.handoff")),
            error: Some(path("$.error")),
            error_code: path("$.code"),
            error_message: path("$.message"),
            session: Some(path("$.sid")),
        }
    }

    #[test]
    fn reads_text_calls_transfer_handoff_error_and_session() {
        let reply = json!({
            "reply": { "parts": [{ "text": "Shipped." }] },
            "tools": [{ "name": "lookup", "arguments": "{\"id\": 7}" }, { "name": "log" }],
            "transfer": { "agent": "billing" },
            "handoff": "requested",
            "error": { "code": "INTERNAL", "message": "boom" },
            "sid": 42,
        });
        let fragment = read(&paths(Some("$.tools[*]")), &reply).unwrap();
        assert_eq!(fragment.texts, Some(vec!["Shipped.".to_owned()]));
        let args: Vec<Json> = fragment
            .tool_calls
            .into_iter()
            .map(|c| arguments(c.args))
            .collect();
        assert_eq!(args, vec![json!({ "id": 7 }), json!({})]);
        assert_eq!(fragment.transfer.unwrap().agent, "billing");
        assert_eq!(fragment.handoff.unwrap().status, "requested");
        let error = fragment.error.unwrap();
        assert_eq!(
            (error.code.as_str(), error.message.as_str()),
            ("INTERNAL", "boom")
        );
        assert_eq!(fragment.session, Some(json!(42)));
    }

    #[test]
    fn an_empty_reply_of_the_expected_shape_is_silence_and_a_missing_name_is_an_error() {
        let silent = read(&paths(None), &json!({ "reply": { "parts": [] } })).unwrap();
        assert_eq!((silent.texts, silent.shaped), (None, true));
        let other = read(&paths(None), &json!({ "answer": "hi" })).unwrap();
        assert_eq!((other.texts, other.shaped), (None, false));
        let error = read(
            &paths(Some("$.tools[*]")),
            &json!({ "tools": [{ "n": 1 }] }),
        );
        assert_eq!(
            error.unwrap_err().message("the reply", "{…}"),
            "the response path `$.name` found nothing in tool call 1 of the reply: {…}"
        );
    }

    #[test]
    fn a_tool_calls_path_finding_the_list_itself_is_named_with_its_fix() {
        let reply = json!({ "reply": "ok", "tools": [{ "name": "lookup" }] });
        let error = read(&paths(Some("$.tools")), &reply).unwrap_err();
        assert_eq!(
            error.message("the reply", "{…}"),
            "the response path `$.name` found nothing in tool call 1 of the reply: {…}; \
             `response.tool_calls: $.tools` found a list, not the calls in it: write \
             `$.tools[*]` to read each item as a tool call"
        );
    }

    /// Defect #16: `$..*..*..*` over 1000 arrays nested 100 deep took 17.8 s and 1.39 GB
    /// outside the turn's timeout. It is refused before it is evaluated.
    #[test]
    fn a_path_that_would_visit_too_many_nodes_is_refused_unevaluated() {
        let mut nested = json!(1);
        for _ in 0..100 {
            nested = json!([nested]);
        }
        let reply = Json::Array(vec![nested; 1000]);
        let mut hungry = paths(None);
        hungry.text = Some(path("$..*..*..*"));
        let refused = read(&hungry, &reply).unwrap_err();
        assert!(
            matches!(
                refused,
                Unread::TooDeep {
                    nodes: 101_001,
                    depth: 102,
                    ..
                }
            ),
            "{refused:?}"
        );
        assert!(
            refused
                .message("the reply", "[…]")
                .contains("more than 5000000 nodes")
        );
        // One `..` visits each node once: allowed on the same reply.
        hungry.text = Some(path("$..text"));
        assert!(read(&hungry, &reply).is_ok());
    }
}
