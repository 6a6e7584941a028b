//! OpenAI Chat Completions: `POST {base}/chat/completions` with `Authorization: Bearer`. The
//! base includes the version (`https://api.openai.com/v1`), so any compatible server (vLLM,
//! Ollama, LiteLLM, gateways) works through `base_url`.
//!
//! Tool calls are the assistant message's `tool_calls` (arguments as a JSON string); each
//! result is a `tool` message with the call's `tool_call_id`. A forced answer is
//! `tool_choice: {type: function, function: {name}}`. No token limit is sent: the parameter
//! differs between OpenAI models and compatible servers, and the default fits.

use reqwest::Url;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::{Value, json};

use super::{ChatMessage, ChatRequest, ChatResponse, ToolChoice, ToolUse, output_text};
use crate::transcript::Usage;

pub(super) fn url(base: &Url) -> Url {
    super::join(base, "chat/completions")
}

pub(super) fn headers(key: &str) -> Result<HeaderMap, String> {
    let mut value = HeaderValue::from_str(&format!("Bearer {key}"))
        .map_err(|_| "the API key has characters a header cannot carry".to_owned())?;
    value.set_sensitive(true);
    let mut headers = HeaderMap::new();
    headers.insert(AUTHORIZATION, value);
    Ok(headers)
}

pub(super) fn body(model: &str, request: &ChatRequest<'_>) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = request.system {
        messages.push(json!({ "role": "system", "content": system }));
    }
    for message in request.messages {
        match message {
            ChatMessage::User(text) => messages.push(json!({ "role": "user", "content": text })),
            ChatMessage::Assistant { text, calls } => {
                let mut entry = json!({
                    "role": "assistant",
                    "content": if text.is_empty() { Value::Null } else { json!(text) },
                });
                if !calls.is_empty() {
                    let calls: Vec<Value> = calls
                        .iter()
                        .map(|call| {
                            json!({
                                "id": call.id,
                                "type": "function",
                                "function": { "name": call.name, "arguments": call.args.to_string() },
                            })
                        })
                        .collect();
                    entry["tool_calls"] = json!(calls);
                }
                messages.push(entry);
            }
            ChatMessage::ToolResults(results) => {
                for result in results {
                    let content = if result.is_error {
                        format!("ERROR: {}", output_text(&result.output))
                    } else {
                        output_text(&result.output)
                    };
                    messages.push(json!({
                        "role": "tool",
                        "tool_call_id": result.id,
                        "content": content,
                    }));
                }
            }
        }
    }
    let mut body = json!({ "model": model, "messages": messages });
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tool_declarations("parameters")
            .into_iter()
            .map(|function| json!({ "type": "function", "function": function }))
            .collect();
        body["tools"] = json!(tools);
        body["tool_choice"] = match &request.choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::Force(name) => json!({ "type": "function", "function": { "name": name } }),
        };
    }
    if let Some(temperature) = request.temperature {
        body["temperature"] = json!(temperature);
    }
    body
}

pub(super) fn parse(body: &Value) -> Result<ChatResponse, String> {
    let choice = body
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or("no `choices`")?;
    let message = choice.get("message").ok_or("no `choices[0].message`")?;
    let text = message
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let mut calls = Vec::new();
    for call in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let id = call.get("id").and_then(Value::as_str);
        let function = call.get("function");
        let name = function.and_then(|f| f.get("name")).and_then(Value::as_str);
        let (Some(id), Some(name)) = (id, name) else {
            return Err("a tool call without `id` or `function.name`".to_owned());
        };
        // Arguments arrive as a JSON string; one that does not parse is kept as the string, so
        // that the report shows what the model sent.
        let arguments = function.and_then(|f| f.get("arguments"));
        let args = match arguments {
            Some(Value::String(text)) => {
                serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
            }
            Some(other) => other.clone(),
            None => json!({}),
        };
        calls.push(ToolUse {
            id: id.to_owned(),
            name: name.to_owned(),
            args,
            signature: None,
        });
    }
    let refusal = message
        .get("refusal")
        .and_then(Value::as_str)
        .map(|why| format!("the model refused: {why}"))
        .or_else(|| {
            (choice.get("finish_reason").and_then(Value::as_str) == Some("content_filter"))
                .then(|| "the answer was filtered (finish_reason: content_filter)".to_owned())
        });
    let tokens = |key: &str| super::token_count(body, "usage", key);
    Ok(ChatResponse {
        text,
        calls,
        usage: Usage {
            input_tokens: tokens("prompt_tokens"),
            output_tokens: tokens("completion_tokens"),
            cached_input_tokens: body
                .pointer("/usage/prompt_tokens_details/cached_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            ..Usage::default()
        },
        refusal,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolOutcome;

    #[test]
    fn each_result_is_a_tool_message_with_its_call_id() {
        let calls = vec![
            ToolUse {
                id: "call_a".into(),
                name: "lookup".into(),
                args: json!({ "id": 1 }),
                signature: None,
            },
            ToolUse {
                id: "call_b".into(),
                name: "lookup".into(),
                args: json!({ "id": 2 }),
                signature: None,
            },
        ];
        let results = calls
            .iter()
            .map(|call| ToolOutcome {
                id: call.id.clone(),
                name: call.name.clone(),
                output: json!("ok"),
                is_error: call.id == "call_b",
            })
            .collect();
        let messages = [
            ChatMessage::User("hi".into()),
            ChatMessage::Assistant {
                text: String::new(),
                calls,
            },
            ChatMessage::ToolResults(results),
        ];
        let request = ChatRequest {
            system: Some("sys"),
            messages: &messages,
            tools: &[],
            choice: ToolChoice::Auto,
            temperature: None,
            max_tokens: 10,
        };
        let body = body("gpt-x", &request);
        let wire = body["messages"].as_array().unwrap();
        assert_eq!(wire[0]["role"], "system");
        assert_eq!(wire[2]["content"], Value::Null);
        assert_eq!(
            wire[2]["tool_calls"][1]["function"]["arguments"],
            r#"{"id":2}"#
        );
        assert_eq!(wire[3]["tool_call_id"], "call_a");
        assert_eq!(wire[4]["tool_call_id"], "call_b");
        assert_eq!(wire[4]["content"], "ERROR: ok");
        assert!(body.get("tools").is_none());
    }

    #[test]
    fn replies_give_calls_with_parsed_arguments_and_refusals() {
        let reply = json!({
            "choices": [{ "message": { "role": "assistant", "content": null, "tool_calls": [
                { "id": "c1", "type": "function", "function": { "name": "f", "arguments": "{\"x\":1}" } }
            ] }, "finish_reason": "tool_calls" }],
            "usage": { "prompt_tokens": 7, "completion_tokens": 2 }
        });
        let parsed = parse(&reply).unwrap();
        assert_eq!(parsed.calls[0].args, json!({ "x": 1 }));
        assert_eq!(parsed.usage.output_tokens, 2);
        let refused = json!({ "choices": [{ "message": { "content": null, "refusal": "no" } }] });
        assert!(parse(&refused).unwrap().refusal.is_some());
    }
}
