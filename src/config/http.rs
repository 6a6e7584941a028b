//! `agent: { http: { url, headers, method, body, response, stream, cookies } }`: an endpoint
//! that speaks goldgate's turn protocol (only `url` and `headers`), or any endpoint with its
//! own JSON, described by a request template and response paths.
//!
//! Any of `method`, `body`, `response`, `stream` or `cookies` makes it a template agent, and
//! then `response.text` is required. Placeholders (`{{text}}`, ...) and JSONPaths are compiled
//! here, so that a typo is an error with its line and a "did you mean" before any request is
//! sent; the agent renders the compiled template each turn (`agent::http::template`).

mod preset;
mod response;
mod template;
mod url;

use super::AgentConfig;
use crate::diagnostic::{Code, Diagnostics, suggestion};
use crate::yaml::{self, Fields, Node, Value};

pub use response::{EventRule, Response, ResponsePaths};
use template::json_text;
pub use template::{JsonTemplate, Piece, Placeholder, TemplateError, TextTemplate};
pub use url::{
    UrlError, check_url, expanded_base_url, optional_url, parse_expanded, parse_url,
    report_unaskable, shown,
};

/// The request body of a template agent.
#[derive(Clone, Debug, PartialEq)]
pub enum BodyTemplate {
    /// Sent as `application/json`.
    Json(JsonTemplate),
    /// Sent as `text/plain` with the placeholders' text in place.
    Text(TextTemplate),
}

/// How a streamed reply is framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamFormat {
    /// Server-sent events (`text/event-stream`): each event's `data` is read.
    Sse,
    /// One JSON document a line.
    Ndjson,
}

impl StreamFormat {
    const NAMES: [&str; 2] = ["sse", "ndjson"];
}

/// The HTTP methods a template may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Method {
    /// Written in capitals or in lower case.
    const NAMES: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

    pub fn name(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        [
            Method::Get,
            Method::Post,
            Method::Put,
            Method::Patch,
            Method::Delete,
        ]
        .into_iter()
        .find(|m| m.name() == name || m.name().to_ascii_lowercase() == name)
    }
}

/// An endpoint with its own JSON: how each turn is asked and where the reply's parts are.
#[derive(Clone, Debug, PartialEq)]
pub struct HttpTemplate {
    pub method: Method,
    /// `None`: the request has no body.
    pub body: Option<BodyTemplate>,
    pub response: Response,
    /// `None`: one JSON reply.
    pub stream: Option<StreamFormat>,
    /// Cookies the server sets are sent back for the rest of the case.
    pub cookies: bool,
}

/// `agent: { http: ... }`.
/// The keys that make an HTTP agent a template (beside `url` and `headers`).
const TEMPLATE_KEYS: [&str; 5] = ["method", "body", "response", "stream", "cookies"];

pub(super) fn parse(value: &Node, path: &str, diags: &mut Diagnostics) -> Option<AgentConfig> {
    let with_preset;
    let value = if value.get("preset").is_some() {
        with_preset = preset::apply(value, path, diags)?;
        &with_preset
    } else {
        value
    };
    let mut fields = Fields::of(value, path, diags)?;
    let url_node = fields.require("url", "a string", diags);
    let url = url_node.and_then(|node| yaml::expect_text(node, &format!("{path}.url"), diags));
    if let (Some(node), Some(url)) = (url_node, &url) {
        report_unaskable(url, node, &format!("{path}.url"), diags);
    }
    let header_nodes = headers(&mut fields, path, diags);
    let is_template = TEMPLATE_KEYS
        .iter()
        .any(|key| fields.node().get(key).is_some());
    let template = if is_template {
        if let (Some(node), Some(url)) = (url_node, &url) {
            check_text(url, node, &format!("{path}.url"), diags);
        }
        for (name, text, node) in &header_nodes {
            check_text(text, node, &format!("{path}.headers.{name}"), diags);
        }
        template(&mut fields, path, diags).map(Box::new)
    } else {
        // Not asked for here, yet keys of this mapping: a misspelt one is suggested.
        TEMPLATE_KEYS.iter().for_each(|key| fields.know(key));
        fields.know("preset");
        None
    };
    fields.finish(diags);
    let headers = header_nodes
        .into_iter()
        .map(|(name, text, _)| (name, text))
        .collect();
    if is_template && template.is_none() {
        return None;
    }
    Some(AgentConfig::Http {
        url: url?,
        headers,
        template,
    })
}

/// `headers: { Name: value }`, each value with its node.
fn headers<'a>(
    fields: &mut Fields<'a>,
    path: &str,
    diags: &mut Diagnostics,
) -> Vec<(String, String, &'a Node)> {
    let Some(node) = fields.take("headers") else {
        return Vec::new();
    };
    let Some(map) =
        Fields::of(node, &format!("{path}.headers"), diags).and_then(|f| f.node().as_map())
    else {
        return Vec::new();
    };
    map.iter()
        .filter_map(|(k, v)| {
            let text = yaml::expect_text(v, &format!("{path}.headers.{}", k.name), diags)?;
            Some((k.name.clone(), text, v))
        })
        .collect()
}

/// Reports a text template that does not compile at its node.
fn check_text(text: &str, node: &Node, field: &str, diags: &mut Diagnostics) -> bool {
    match TextTemplate::compile(text) {
        Ok(_) => true,
        Err(error) => {
            report(&error, node, field, diags);
            false
        }
    }
}

fn report(error: &TemplateError, node: &Node, field: &str, diags: &mut Diagnostics) {
    let (message, hint) = error.explain();
    let code = match error {
        TemplateError::Unknown(_) => Code::G107,
        TemplateError::Unterminated => Code::G101,
    };
    diags.at(node).error(code, message).field(field).hint(hint);
}

/// The template keys beside `url` and `headers`.
fn template(fields: &mut Fields, path: &str, diags: &mut Diagnostics) -> Option<HttpTemplate> {
    let errors = diags.error_count();
    let method = match fields.take("method") {
        Some(node) => method(node, &format!("{path}.method"), diags),
        None => Some(Method::Post),
    };
    let body = fields
        .take("body")
        .and_then(|node| body(node, &format!("{path}.body"), diags));
    if let (Some(Method::Get), Some(_), Some(node)) = (method, &body, fields.node().get("body")) {
        diags
            .at(node)
            .error(Code::G101, "a GET request has no body")
            .field(format!("{path}.body"))
            .hint("put what the server reads in the URL (`?q={{text}}`), or use `method: POST`");
    }
    let response = match fields.require("response", "where the reply's text is", diags) {
        Some(node) => response::parse(node, &format!("{path}.response"), diags),
        None => None,
    };
    let stream = fields.take("stream").and_then(|node| {
        let field = format!("{path}.stream");
        let text = yaml::expect_text(node, &field, diags)?;
        match text.as_str() {
            "sse" => Some(StreamFormat::Sse),
            "ndjson" => Some(StreamFormat::Ndjson),
            other => {
                unknown(node, &field, other, &StreamFormat::NAMES, diags);
                None
            }
        }
    });
    let cookies = match fields.take("cookies") {
        Some(Node {
            value: Value::Bool(b),
            ..
        }) => *b,
        Some(node) => {
            node.wrong_type("true or false", diags)
                .field(format!("{path}.cookies"));
            false
        }
        None => false,
    };
    if let (Some(response), None, Some(node)) = (&response, stream, fields.node().get("response"))
        && !response.events.is_empty()
    {
        diags
            .at(node)
            .error(Code::G101, "`events` tells apart the events of a stream, and the reply is not one")
            .field(format!("{path}.response.events"))
            .hint("add `stream: sse` or `stream: ndjson`, or read the reply with `response`'s own paths");
    }
    if diags.error_count() > errors {
        return None;
    }
    Some(HttpTemplate {
        method: method?,
        body,
        response: response?,
        stream,
        cookies,
    })
}

fn unknown(node: &Node, field: &str, given: &str, known: &[&str], diags: &mut Diagnostics) {
    diags
        .at(node)
        .error(Code::G107, format!("unknown value `{given}`"))
        .field(field)
        .hint(suggestion(given, known));
}

fn method(node: &Node, field: &str, diags: &mut Diagnostics) -> Option<Method> {
    let text = yaml::expect_text(node, field, diags)?;
    let method = Method::parse(&text);
    if method.is_none() {
        unknown(node, field, &text, &Method::NAMES, diags);
    }
    method
}

/// `body:` a mapping or list (JSON with placeholders in its strings), or a string: JSON when
/// it starts with `{` or `[` (placeholders in its strings or as whole values), else text.
fn body(node: &Node, field: &str, diags: &mut Diagnostics) -> Option<BodyTemplate> {
    if let Some((at, reference)) = env_reference(node) {
        diags
            .at(at)
            .error(
                Code::G107,
                format!("`{reference}` in the body would be sent as written: `${{VAR}}` is read only in `url` and `headers`"),
            )
            .field(field)
            .hint("send the value in a header (`headers: { Authorization: \"Bearer ${AGENT_TOKEN}\" }`), where it is expanded and masked");
        return None;
    }
    let compiled = match &node.value {
        Value::Str(text) if looks_like_json(text) => match json_text(text) {
            Ok(json) => JsonTemplate::of_json(&json).map(BodyTemplate::Json),
            Err(why) => {
                diags
                    .at(node)
                    .error(
                        Code::G105,
                        format!("the body starts like JSON but is not JSON: {why}"),
                    )
                    .field(field)
                    .hint("write the body as a YAML mapping, or fix the JSON");
                return None;
            }
        },
        Value::Str(text) => TextTemplate::compile(text).map(BodyTemplate::Text),
        _ => JsonTemplate::of_json(&node.to_json()).map(BodyTemplate::Json),
    };
    match compiled {
        Ok(body) => Some(body),
        Err(error) => {
            report(&error, node, field, diags);
            None
        }
    }
}

/// The first `${NAME}` written in a string of the body, with the node that holds it.
fn env_reference(node: &Node) -> Option<(&Node, String)> {
    match &node.value {
        Value::Str(text) => text.match_indices("${").find_map(|(start, _)| {
            let name_len = text[start + 2..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|&len| len > 0 && text[start + 2 + len..].starts_with('}'))?;
            Some((node, text[start..start + 3 + name_len].to_owned()))
        }),
        Value::Seq(items) => items.iter().find_map(env_reference),
        Value::Map(entries) => entries.iter().find_map(|(_, value)| env_reference(value)),
        _ => None,
    }
}

fn looks_like_json(text: &str) -> bool {
    text.trim_start().starts_with(['{', '['])
}
