//! What each fake accepts: the checks the real APIs make on a request, each returning the
//! provider-neutral [`Seen`] or the status and message the real API would answer with.

use axum::http::HeaderMap;
use serde_json::Value;

use super::{KEY, Seen};

/// The status and message the real API answers a request it refuses with.
pub type Refused = (u16, String);

pub type Checked = Result<Seen, Refused>;

fn bad(message: impl Into<String>) -> Refused {
    (400, message.into())
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The items of a JSON array, none when the value is absent or not an array.
fn items(value: &Value) -> impl Iterator<Item = &Value> {
    value.as_array().into_iter().flatten()
}

/// What the fake sees once the request's own checks pass: its system prompt and forced tool,
/// then what `read` makes of the conversation.
fn conversation(
    system: &str,
    forced: Option<String>,
    messages: &[Value],
    read: fn(&[Value], &mut Seen) -> Result<(), Refused>,
) -> Checked {
    let mut seen = Seen {
        system: system.to_owned(),
        forced,
        ..Seen::default()
    };
    read(messages, &mut seen)?;
    Ok(seen)
}

/// A JSON array with at least one item, or the 400 with `message`.
fn non_empty(value: &Value, message: impl FnOnce() -> String) -> Result<&[Value], Refused> {
    match value.as_array() {
        Some(items) if !items.is_empty() => Ok(items),
        _ => Err(bad(message())),
    }
}

/// Nothing left awaiting its result, or the 400 with `message`.
fn none_pending<T>(pending: &[T], message: impl FnOnce() -> String) -> Result<(), Refused> {
    if pending.is_empty() {
        Ok(())
    } else {
        Err(bad(message()))
    }
}

/// The user's text of a turn that has some; a turn of tool results alone keeps the last.
fn said(seen: &mut Seen, texts: &[&str]) {
    if !texts.is_empty() {
        seen.user = texts.join("\n");
    }
}

fn text_of(value: &Value) -> Value {
    match value {
        Value::String(text) => serde_json::from_str(text).unwrap_or_else(|_| value.clone()),
        other => other.clone(),
    }
}

pub mod anthropic {
    use super::*;

    pub fn check(path: &str, headers: &HeaderMap, body: &Value) -> Checked {
        if path != "/v1/messages" {
            return Err((404, format!("no route {path}")));
        }
        if header(headers, "x-api-key") != Some(KEY) {
            return Err((401, "invalid x-api-key".into()));
        }
        if header(headers, "anthropic-version") != Some("2023-06-01") {
            return Err(bad("anthropic-version: header is required"));
        }
        body["model"]
            .as_str()
            .ok_or_else(|| bad("model: Field required"))?;
        if body["max_tokens"].as_u64().is_none_or(|n| n == 0) {
            return Err(bad("max_tokens: Field required"));
        }
        let tools: Vec<&str> = items(&body["tools"])
            .map(|tool| {
                if !tool["input_schema"].is_object() {
                    return Err(bad("tools.input_schema: Field required"));
                }
                tool["name"]
                    .as_str()
                    .ok_or_else(|| bad("tools.name: Field required"))
            })
            .collect::<Result<_, _>>()?;
        let forced = match body.get("tool_choice") {
            None => None,
            Some(choice) => match choice["type"].as_str() {
                Some("auto" | "any") => None,
                Some("tool") => {
                    let name = choice["name"].as_str().unwrap_or_default();
                    if !tools.contains(&name) {
                        return Err(bad(format!("tool_choice: no tool named {name}")));
                    }
                    Some(name.to_owned())
                }
                _ => return Err(bad("tool_choice.type: invalid")),
            },
        };
        let messages = non_empty(&body["messages"], || {
            "messages: at least one message is required".into()
        })?;
        if messages[0]["role"] != "user" {
            return Err(bad("messages: first message must use the \"user\" role"));
        }
        let system = body["system"].as_str().unwrap_or_default();
        conversation(system, forced, messages, read_messages)
    }

    fn unanswered(i: usize) -> String {
        format!(
            "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after"
        )
    }

    /// Reads the conversation into `seen`: each `tool_result` must answer a `tool_use` of the message before.
    fn read_messages(messages: &[Value], seen: &mut Seen) -> Result<(), Refused> {
        // tool_use ids of the previous assistant message, awaiting their results.
        let mut pending: Vec<(String, String)> = Vec::new();
        for (i, message) in messages.iter().enumerate() {
            let blocks = non_empty(&message["content"], || {
                format!("messages.{i}: content must be a non-empty list")
            })?;
            match message["role"].as_str() {
                Some("assistant") => {
                    none_pending(&pending, || unanswered(i))?;
                    for block in blocks {
                        if block["type"] == "tool_use" {
                            let id = block["id"].as_str().unwrap_or_default().to_owned();
                            let name = block["name"].as_str().unwrap_or_default().to_owned();
                            pending.push((id, name));
                        }
                    }
                }
                Some("user") => {
                    let mut results = Vec::new();
                    let mut texts = Vec::new();
                    for block in blocks {
                        match block["type"].as_str() {
                            Some("tool_result") => {
                                let id = block["tool_use_id"].as_str().unwrap_or_default();
                                let Some(at) = pending.iter().position(|(p, _)| p == id) else {
                                    return Err(bad(format!(
                                        "messages.{i}: unexpected `tool_use_id` found in `tool_result` blocks: {id}"
                                    )));
                                };
                                let (_, name) = pending.remove(at);
                                results.push((name, text_of(&block["content"])));
                            }
                            Some("text") => texts.push(block["text"].as_str().unwrap_or_default()),
                            _ => return Err(bad(format!("messages.{i}: unknown block type"))),
                        }
                    }
                    none_pending(&pending, || unanswered(i))?;
                    seen.tool_results = results;
                    said(seen, &texts);
                }
                _ => return Err(bad(format!("messages.{i}.role: must be user or assistant"))),
            }
        }
        none_pending(&pending, || {
            "the last message has `tool_use` blocks without results".into()
        })
    }
}

pub mod openai {
    use super::*;

    pub fn check(path: &str, headers: &HeaderMap, body: &Value) -> Checked {
        if path != "/v1/chat/completions" {
            return Err((404, format!("Invalid URL (POST {path})")));
        }
        if header(headers, "authorization") != Some(&format!("Bearer {KEY}")) {
            return Err((401, "Incorrect API key provided".into()));
        }
        body["model"]
            .as_str()
            .ok_or_else(|| bad("you must provide a model parameter"))?;
        let tools: Vec<&str> = items(&body["tools"])
            .map(|tool| {
                if tool["type"] != "function" {
                    return Err(bad("tools[].type: expected function"));
                }
                tool["function"]["name"]
                    .as_str()
                    .ok_or_else(|| bad("tools[].function.name: missing"))
            })
            .collect::<Result<_, _>>()?;
        let forced = match body.get("tool_choice") {
            None => None,
            Some(Value::String(mode)) if ["auto", "none", "required"].contains(&mode.as_str()) => {
                None
            }
            Some(choice) if choice["type"] == "function" => {
                let name = choice["function"]["name"].as_str().unwrap_or_default();
                if !tools.contains(&name) {
                    return Err(bad(format!("tool_choice: no function named {name}")));
                }
                Some(name.to_owned())
            }
            Some(_) => return Err(bad("tool_choice: invalid")),
        };
        let messages = non_empty(&body["messages"], || {
            "messages: must be a non-empty array".into()
        })?;
        // The system prompt is a message of its own, read with the others.
        conversation("", forced, messages, read_messages)
    }

    /// Reads the conversation into `seen`: each assistant `tool_calls` must be answered by tool messages right after.
    fn read_messages(messages: &[Value], seen: &mut Seen) -> Result<(), Refused> {
        let mut pending: Vec<(String, String)> = Vec::new();
        for (i, message) in messages.iter().enumerate() {
            let role = message["role"].as_str().unwrap_or_default();
            if role != "tool" && !pending.is_empty() {
                return Err(bad(format!(
                    "messages.[{i}]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'"
                )));
            }
            match role {
                "system" | "developer" => {
                    seen.system = message["content"].as_str().unwrap_or_default().to_owned()
                }
                "user" => {
                    seen.user = message["content"]
                        .as_str()
                        .ok_or_else(|| bad(format!("messages.[{i}].content: expected a string")))?
                        .to_owned();
                    seen.tool_results.clear();
                }
                "assistant" => {
                    seen.tool_results.clear();
                    let calls = message["tool_calls"].as_array();
                    if message["content"].is_null() && calls.is_none_or(Vec::is_empty) {
                        return Err(bad(format!(
                            "messages.[{i}]: content is required unless tool_calls is given"
                        )));
                    }
                    for call in calls.into_iter().flatten() {
                        let arguments = call["function"]["arguments"].as_str().ok_or_else(|| {
                            bad(format!("messages.[{i}].tool_calls.function.arguments: expected a string"))
                        })?;
                        serde_json::from_str::<Value>(arguments)
                            .map_err(|_| bad("function.arguments: not JSON"))?;
                        pending.push((
                            call["id"].as_str().unwrap_or_default().to_owned(),
                            call["function"]["name"]
                                .as_str()
                                .unwrap_or_default()
                                .to_owned(),
                        ));
                    }
                }
                "tool" => {
                    let id = message["tool_call_id"].as_str().unwrap_or_default();
                    let Some(at) = pending.iter().position(|(p, _)| p == id) else {
                        return Err(bad(format!(
                            "messages.[{i}]: messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
                        )));
                    };
                    let (_, name) = pending.remove(at);
                    seen.tool_results.push((name, text_of(&message["content"])));
                }
                other => return Err(bad(format!("messages.[{i}].role: invalid `{other}`"))),
            }
        }
        none_pending(&pending, || "tool_calls without tool messages".into())?;
        Ok(())
    }
}

pub mod gemini {
    use super::*;

    pub fn check(path: &str, headers: &HeaderMap, body: &Value) -> Checked {
        let model = path
            .strip_prefix("/v1beta/models/")
            .and_then(|rest| rest.strip_suffix(":generateContent"))
            .ok_or_else(|| (404, format!("no route {path}")))?;
        if model.is_empty() || model.contains('/') {
            return Err((404, format!("models/{model} is not found")));
        }
        if header(headers, "x-goog-api-key") != Some(KEY) {
            return Err((
                400,
                "API key not valid. Please pass a valid API key.".into(),
            ));
        }
        let declared: Vec<&str> = items(&body["tools"])
            .flat_map(|tool| items(&tool["functionDeclarations"]))
            .map(|f| {
                if !(f["parametersJsonSchema"].is_object() || f["parameters"].is_object()) {
                    return Err(bad("function_declarations: parameters are missing"));
                }
                f["name"]
                    .as_str()
                    .ok_or_else(|| bad("function_declarations.name: required"))
            })
            .collect::<Result<_, _>>()?;
        let config = &body["toolConfig"]["functionCallingConfig"];
        let forced = match config["mode"].as_str() {
            None | Some("AUTO" | "NONE") => None,
            Some("ANY") => {
                let allowed: Vec<&str> = items(&config["allowedFunctionNames"])
                    .filter_map(Value::as_str)
                    .collect();
                if allowed.iter().any(|name| !declared.contains(name)) {
                    return Err(bad("allowed_function_names: not declared"));
                }
                allowed.first().map(|name| (*name).to_owned())
            }
            Some(other) => return Err(bad(format!("function_calling_config.mode: {other}"))),
        };
        let contents = non_empty(&body["contents"], || "contents is not specified".into())?;
        let system = body["systemInstruction"]["parts"][0]["text"].as_str();
        conversation(system.unwrap_or_default(), forced, contents, read_messages)
    }

    /// Reads the contents into `seen`: each function call turn must be followed by a turn with one response per call.
    fn read_messages(contents: &[Value], seen: &mut Seen) -> Result<(), Refused> {
        let mut pending: Vec<String> = Vec::new();
        for (i, content) in contents.iter().enumerate() {
            let parts = non_empty(&content["parts"], || {
                format!("contents[{i}].parts: must not be empty")
            })?;
            match content["role"].as_str() {
                Some("model") => {
                    none_pending(&pending, || {
                        format!(
                            "contents[{i}]: a function call turn must come right after a user turn or a function response turn"
                        )
                    })?;
                    pending = parts
                        .iter()
                        .filter_map(|p| p["functionCall"]["name"].as_str().map(str::to_owned))
                        .collect();
                }
                Some("user") => {
                    let responses: Vec<&Value> = parts
                        .iter()
                        .filter_map(|p| p.get("functionResponse"))
                        .collect();
                    let names: Vec<&str> = responses
                        .iter()
                        .map(|r| r["name"].as_str().unwrap_or_default())
                        .collect();
                    if names != pending.iter().map(String::as_str).collect::<Vec<_>>() {
                        return Err(bad(format!(
                            "contents[{i}]: please ensure that the number of function response parts is equal to the number of function call parts of the function call turn"
                        )));
                    }
                    pending.clear();
                    if responses.iter().any(|r| !r["response"].is_object()) {
                        return Err(bad("function_response.response: must be an object"));
                    }
                    seen.tool_results = responses
                        .iter()
                        .map(|r| {
                            (
                                r["name"].as_str().unwrap_or_default().to_owned(),
                                r["response"].clone(),
                            )
                        })
                        .collect();
                    let texts: Vec<&str> =
                        parts.iter().filter_map(|p| p["text"].as_str()).collect();
                    said(seen, &texts);
                }
                _ => return Err(bad(format!("contents[{i}].role: must be user or model"))),
            }
        }
        none_pending(&pending, || {
            "the function call turn has no function response turn".into()
        })
    }
}
