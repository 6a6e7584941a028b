//! Gemini API: `POST {base}/v1beta/models/{model}:generateContent` with `x-goog-api-key`.
//!
//! Tool calls are `functionCall` parts of a `model` content; their results go back as
//! `functionResponse` parts (name and an object `response`) in the next `user` content, in
//! the calls' order. Tools are declared with `parametersJsonSchema`, which takes a full JSON
//! Schema (`parameters` takes only an OpenAPI subset). A forced answer is
//! `functionCallingConfig: {mode: ANY, allowedFunctionNames: [name]}`.

use reqwest::Url;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use super::{ChatMessage, ChatRequest, ChatResponse, ToolChoice, ToolUse};
use crate::transcript::Usage;

pub(super) fn url(base: &Url, model: &str) -> Url {
    super::join(base, &format!("v1beta/models/{model}:generateContent"))
}

pub(super) fn headers(key: &str) -> Result<HeaderMap, String> {
    let mut value = HeaderValue::from_str(key)
        .map_err(|_| "the API key has characters a header cannot carry".to_owned())?;
    value.set_sensitive(true);
    let mut headers = HeaderMap::new();
    headers.insert(HeaderName::from_static("x-goog-api-key"), value);
    Ok(headers)
}

pub(super) fn body(request: &ChatRequest<'_>) -> Value {
    let contents: Vec<Value> = request.messages.iter().map(content).collect();
    let mut generation = json!({ "maxOutputTokens": request.max_tokens });
    if let Some(temperature) = request.temperature {
        generation["temperature"] = json!(temperature);
    }
    let mut body = json!({ "contents": contents, "generationConfig": generation });
    if let Some(system) = request.system {
        body["systemInstruction"] = json!({ "parts": [{ "text": system }] });
    }
    if !request.tools.is_empty() {
        let declarations = request.tool_declarations("parametersJsonSchema");
        body["tools"] = json!([{ "functionDeclarations": declarations }]);
        body["toolConfig"] = match &request.choice {
            ToolChoice::Auto => json!({ "functionCallingConfig": { "mode": "AUTO" } }),
            ToolChoice::Force(name) => json!({
                "functionCallingConfig": { "mode": "ANY", "allowedFunctionNames": [name] }
            }),
        };
    }
    body
}

fn content(message: &ChatMessage) -> Value {
    match message {
        ChatMessage::User(text) => json!({ "role": "user", "parts": [{ "text": text }] }),
        ChatMessage::Assistant { text, calls } => {
            let mut parts = Vec::new();
            if !text.is_empty() {
                parts.push(json!({ "text": text }));
            }
            for call in calls {
                let mut part = json!({ "functionCall": { "name": call.name, "args": call.args } });
                if let Some(signature) = &call.signature {
                    part["thoughtSignature"] = json!(signature);
                }
                parts.push(part);
            }
            json!({ "role": "model", "parts": parts })
        }
        ChatMessage::ToolResults(results) => {
            let parts: Vec<Value> = results
                .iter()
                .map(|result| {
                    // `response` must be an object: other outputs are wrapped.
                    let response = match (&result.output, result.is_error) {
                        (Value::Object(_), _) => result.output.clone(),
                        (output, false) => json!({ "output": output }),
                        (output, true) => json!({ "error": output }),
                    };
                    json!({ "functionResponse": { "name": result.name, "response": response } })
                })
                .collect();
            json!({ "role": "user", "parts": parts })
        }
    }
}

pub(super) fn parse(body: &Value) -> Result<ChatResponse, String> {
    let usage = usage_of(body);
    if let Some(reason) = body
        .get("promptFeedback")
        .and_then(|f| f.get("blockReason"))
        .and_then(Value::as_str)
    {
        return Ok(ChatResponse {
            usage,
            refusal: Some(format!("the prompt was blocked ({reason})")),
            ..ChatResponse::default()
        });
    }
    let candidate = body
        .get("candidates")
        .and_then(|c| c.get(0))
        .ok_or("no `candidates`")?;
    let parts = candidate
        .get("content")
        .and_then(|c| c.get("parts"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut texts = Vec::new();
    let mut calls = Vec::new();
    for part in parts {
        // Thought summaries are not the answer.
        if part.get("thought").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        if let Some(text) = part.get("text").and_then(Value::as_str) {
            if !text.is_empty() {
                texts.push(text.to_owned());
            }
        } else if let Some(call) = part.get("functionCall") {
            calls.push(function_call(part, call, calls.len() + 1)?);
        }
    }
    let finish = candidate.get("finishReason").and_then(Value::as_str);
    let refusal = match finish {
        Some(reason @ ("SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII")) => {
            Some(format!("the answer was blocked (finishReason: {reason})"))
        }
        _ => None,
    };
    Ok(ChatResponse {
        text: texts.join("\n"),
        calls,
        usage,
        refusal,
    })
}

/// The tokens `usageMetadata` counts; thoughts are output.
fn usage_of(body: &Value) -> Usage {
    let tokens = |key: &str| super::token_count(body, "usageMetadata", key);
    Usage {
        input_tokens: tokens("promptTokenCount"),
        output_tokens: tokens("candidatesTokenCount") + tokens("thoughtsTokenCount"),
        cached_input_tokens: tokens("cachedContentTokenCount"),
        ..Usage::default()
    }
}

/// The `functionCall` of `part`, the `number`th call of the answer (its id when it has none).
fn function_call(part: &Value, call: &Value, number: usize) -> Result<ToolUse, String> {
    let name = call["name"]
        .as_str()
        .ok_or("a `functionCall` without `name`")?;
    let id = call["id"]
        .as_str()
        .map_or_else(|| format!("call-{number}"), str::to_owned);
    Ok(ToolUse {
        id,
        name: name.to_owned(),
        args: call
            .get("args")
            .cloned()
            .unwrap_or(Value::Object(Map::new())),
        signature: part["thoughtSignature"].as_str().map(str::to_owned),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolOutcome;

    #[test]
    fn function_responses_answer_calls_in_order_with_object_responses() {
        let messages = [
            ChatMessage::Assistant {
                text: String::new(),
                calls: vec![ToolUse {
                    id: "call-1".into(),
                    name: "lookup".into(),
                    args: json!({ "id": 1 }),
                    signature: Some("sig".into()),
                }],
            },
            ChatMessage::ToolResults(vec![ToolOutcome {
                id: "call-1".into(),
                name: "lookup".into(),
                output: json!("shipped"),
                is_error: false,
            }]),
        ];
        let request = ChatRequest {
            system: None,
            messages: &messages,
            tools: &[],
            choice: ToolChoice::Auto,
            temperature: Some(0.0),
            max_tokens: 10,
        };
        let body = body(&request);
        assert_eq!(body["contents"][0]["role"], "model");
        assert_eq!(body["contents"][0]["parts"][0]["thoughtSignature"], "sig");
        assert_eq!(
            body["contents"][1]["parts"][0]["functionResponse"]["response"],
            json!({ "output": "shipped" })
        );
        assert_eq!(body["generationConfig"]["temperature"], 0.0);
    }

    #[test]
    fn replies_number_calls_without_ids_and_report_blocks() {
        let reply = json!({
            "candidates": [{ "content": { "role": "model", "parts": [
                { "functionCall": { "name": "f", "args": { "a": 1 } } },
                { "functionCall": { "name": "f", "args": { "a": 2 } } }
            ] }, "finishReason": "STOP" }],
            "usageMetadata": { "promptTokenCount": 5, "candidatesTokenCount": 2, "thoughtsTokenCount": 1 }
        });
        let parsed = parse(&reply).unwrap();
        assert_eq!(parsed.calls[1].id, "call-2");
        assert_eq!(parsed.usage.output_tokens, 3);
        let blocked = json!({ "promptFeedback": { "blockReason": "SAFETY" } });
        assert!(parse(&blocked).unwrap().refusal.is_some());
    }
}
