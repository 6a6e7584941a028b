//! Reads a template agent's reply (or each event of its stream) with the configured JSONPaths:
//! the messages' text, the tool calls with their names and arguments, a transfer, and a session
//! id the server assigned.
//!
//! Only the text must be found: a reply whose `text` path finds nothing is an error of the
//! turn naming the path, since a typo in it would otherwise read as an agent that said
//! nothing. The other paths finding nothing mean there is none (no tool call, no transfer).

use serde_json::{Map, Value as Json};

use crate::config::http::ResponsePaths;
use crate::model::JsonPath;
use crate::transcript::{ToolCall, Transfer};

/// What one reply, or one event of a stream, holds.
#[derive(Debug, Default, PartialEq)]
pub struct Fragment {
    /// The text of every node the `text` path found (a null found is no text); `None` when it
    /// found no node at all.
    pub texts: Option<Vec<String>>,
    pub tool_calls: Vec<ToolCall>,
    pub transfer: Option<Transfer>,
    pub session: Option<Json>,
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
    /// The error message, quoting the start of what was searched (masked by the caller).
    pub fn message(&self, what: &str, quoted: &str) -> String {
        let within = match self.tool_call {
            Some(n) => format!("tool call {n} of {what}"),
            None => what.to_owned(),
        };
        let hint = self
            .hint
            .as_deref()
            .map_or(String::new(), |h| format!("; {h}"));
        format!(
            "the response path `{}` found nothing in {within}: {quoted}{hint}",
            self.path
        )
    }

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

/// A reply's bytes as JSON; a reply that is not JSON is read as one JSON string, so that
/// `text: $` reads a plain-text reply.
pub fn parse(bytes: &[u8]) -> Json {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| Json::String(String::from_utf8_lossy(bytes).into_owned()))
}

/// Reads one reply or event.
pub fn read(paths: &ResponsePaths, value: &Json) -> Result<Fragment, NothingFound> {
    let found = paths.text.nodes(value);
    let texts = (!found.is_empty()).then(|| {
        found
            .into_iter()
            .filter(|node| !node.is_null())
            .map(words)
            .collect()
    });
    let tool_calls = match &paths.tool_calls {
        Some(path) => path
            .nodes(value)
            .into_iter()
            .enumerate()
            .map(|(i, call)| tool_call(paths, call, i + 1).map_err(|e| e.in_list(path, call)))
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    let transfer = first(paths.transfer.as_ref(), value).map(|agent| Transfer {
        agent: words(agent),
        resource: None,
    });
    let session = first(paths.session.as_ref(), value).cloned();
    Ok(Fragment {
        texts,
        tool_calls,
        transfer,
        session,
    })
}

/// The first non-null node `path` finds.
fn first<'a>(path: Option<&JsonPath>, value: &'a Json) -> Option<&'a Json> {
    path?.nodes(value).into_iter().find(|node| !node.is_null())
}

/// A node as text: a string as it is, anything else as compact JSON.
fn words(node: &Json) -> String {
    match node {
        Json::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// One tool call; its arguments may be an object or a string holding one (as OpenAI sends
/// them), and none found are no arguments.
fn tool_call(paths: &ResponsePaths, call: &Json, n: usize) -> Result<ToolCall, NothingFound> {
    let name = first(Some(&paths.tool_name), call).ok_or_else(|| NothingFound {
        path: paths.tool_name.source.clone(),
        tool_call: Some(n),
        hint: None,
    })?;
    let args = match first(Some(&paths.tool_args), call) {
        None => Json::Object(Map::new()),
        Some(Json::String(text)) => match serde_json::from_str::<Json>(text) {
            Ok(object @ Json::Object(_)) => object,
            _ => Json::String(text.clone()),
        },
        Some(other) => other.clone(),
    };
    Ok(ToolCall::new(words(name), args))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn paths(tool_calls: Option<&str>) -> ResponsePaths {
        let path = |p: &str| JsonPath::parse(p).unwrap();
        ResponsePaths {
            text: path("$.reply"),
            tool_calls: tool_calls.map(path),
            tool_name: path("$.name"),
            tool_args: path("$.arguments"),
            transfer: Some(path("$.handoff.agent")),
            session: Some(path("$.sid")),
        }
    }

    #[test]
    fn reads_text_calls_transfer_and_session() {
        let reply = json!({
            "reply": "Shipped.",
            "tools": [{ "name": "lookup", "arguments": "{\"id\": 7}" }, { "name": "log" }],
            "handoff": { "agent": "billing" },
            "sid": 42,
        });
        let fragment = read(&paths(Some("$.tools[*]")), &reply).unwrap();
        assert_eq!(fragment.texts, Some(vec!["Shipped.".to_owned()]));
        assert_eq!(fragment.tool_calls[0].args, json!({ "id": 7 }));
        assert_eq!(fragment.tool_calls[1].args, json!({}));
        assert_eq!(fragment.transfer.unwrap().agent, "billing");
        assert_eq!(fragment.session, Some(json!(42)));
    }

    #[test]
    fn a_text_found_null_is_no_text_but_found_and_a_missing_name_is_an_error() {
        let fragment = read(&paths(None), &json!({ "reply": null, "handoff": null })).unwrap();
        assert_eq!(fragment.texts, Some(Vec::new()));
        assert_eq!(fragment.transfer, None);
        assert_eq!(read(&paths(None), &json!({})).unwrap().texts, None);
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
}
