//! Anthropic Messages API: `POST {base}/v1/messages` with `x-api-key` and
//! `anthropic-version`.
//!
//! Tool calls are `tool_use` content blocks of the assistant message; their results go back
//! as `tool_result` blocks, one per call with its `tool_use_id`, in the next user message.
//! A forced answer is `tool_choice: {type: tool, name}`.

use reqwest::Url;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};

use super::{ChatMessage, ChatRequest, ChatResponse, ToolChoice, ToolUse, output_text};
use crate::transcript::Usage;

/// The API version goldgate speaks.
pub const API_VERSION: &str = "2023-06-01";

pub(super) fn url(base: &Url) -> Url {
    super::join(base, "v1/messages")
}

pub(super) fn headers(key: &str) -> Result<HeaderMap, String> {
    let mut headers = HeaderMap::new();
    let mut value = HeaderValue::from_str(key)
        .map_err(|_| "the API key has characters a header cannot carry".to_owned())?;
    value.set_sensitive(true);
    headers.insert(HeaderName::from_static("x-api-key"), value);
    headers.insert(
        HeaderName::from_static("anthropic-version"),
        HeaderValue::from_static(API_VERSION),
    );
    Ok(headers)
}

pub(super) fn body(model: &str, request: &ChatRequest<'_>) -> Value {
    let messages: Vec<Value> = request.messages.iter().map(message).collect();
    let mut body = json!({
        "model": model,
        "max_tokens": request.max_tokens,
        "messages": messages,
    });
    if let Some(system) = request.system {
        body["system"] = json!(system);
    }
    if !request.tools.is_empty() {
        body["tools"] = json!(request.tool_declarations("input_schema"));
        body["tool_choice"] = match &request.choice {
            ToolChoice::Auto => json!({ "type": "auto" }),
            ToolChoice::Force(name) => json!({ "type": "tool", "name": name }),
        };
    }
    if let Some(temperature) = request.temperature {
        body["temperature"] = json!(temperature);
    }
    body
}

fn message(message: &ChatMessage) -> Value {
    match message {
        ChatMessage::User(text) => json!({
            "role": "user",
            "content": [{ "type": "text", "text": text }],
        }),
        ChatMessage::Assistant { text, calls } => {
            let mut content = Vec::new();
            if !text.is_empty() {
                content.push(json!({ "type": "text", "text": text }));
            }
            for call in calls {
                content.push(json!({
                    "type": "tool_use",
                    "id": call.id,
                    "name": call.name,
                    "input": call.args,
                }));
            }
            json!({ "role": "assistant", "content": content })
        }
        ChatMessage::ToolResults(results) => {
            let content: Vec<Value> = results
                .iter()
                .map(|result| {
                    let mut block = json!({
                        "type": "tool_result",
                        "tool_use_id": result.id,
                        "content": output_text(&result.output),
                    });
                    if result.is_error {
                        block["is_error"] = json!(true);
                    }
                    block
                })
                .collect();
            json!({ "role": "user", "content": content })
        }
    }
}

pub(super) fn parse(body: &Value) -> Result<ChatResponse, String> {
    let content = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or("no `content` list")?;
    let mut texts = Vec::new();
    let mut calls = Vec::new();
    for block in content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                if !text.is_empty() {
                    texts.push(text.to_owned());
                }
            }
            Some("tool_use") => {
                let id = block.get("id").and_then(Value::as_str);
                let name = block.get("name").and_then(Value::as_str);
                let (Some(id), Some(name)) = (id, name) else {
                    return Err("a `tool_use` block without `id` or `name`".to_owned());
                };
                calls.push(ToolUse {
                    id: id.to_owned(),
                    name: name.to_owned(),
                    args: block.get("input").cloned().unwrap_or(json!({})),
                    signature: None,
                });
            }
            // Thinking and other blocks carry nothing goldgate scores.
            _ => {}
        }
    }
    let tokens = |key: &str| super::token_count(body, "usage", key);
    let refusal = (body.get("stop_reason").and_then(Value::as_str) == Some("refusal"))
        .then(|| "the model refused (stop_reason: refusal)".to_owned());
    Ok(ChatResponse {
        text: texts.join("\n"),
        calls,
        usage: Usage {
            input_tokens: tokens("input_tokens")
                + tokens("cache_read_input_tokens")
                + tokens("cache_creation_input_tokens"),
            output_tokens: tokens("output_tokens"),
            // Cache writes are billed above input: priced as input, a slight underestimate.
            cached_input_tokens: tokens("cache_read_input_tokens"),
            ..Usage::default()
        },
        refusal,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tools::ToolSpec;
    use crate::llm::ToolOutcome;

    #[test]
    fn tool_results_follow_their_calls_in_a_user_message() {
        let messages = [
            ChatMessage::User("where are my orders?".into()),
            ChatMessage::Assistant {
                text: String::new(),
                calls: vec![ToolUse {
                    id: "toolu_1".into(),
                    name: "lookup".into(),
                    args: json!({ "id": 1 }),
                    signature: None,
                }],
            },
            ChatMessage::ToolResults(vec![ToolOutcome {
                id: "toolu_1".into(),
                name: "lookup".into(),
                output: json!({ "status": "shipped" }),
                is_error: false,
            }]),
        ];
        let tools = [ToolSpec {
            name: "lookup".into(),
            description: "Looks up".into(),
            parameters: json!({ "type": "object" }),
        }];
        let request = ChatRequest {
            system: Some("Be brief."),
            messages: &messages,
            tools: &tools,
            choice: ToolChoice::Auto,
            temperature: Some(0.0),
            max_tokens: 100,
        };
        let body = body("claude-x", &request);
        assert_eq!(body["system"], "Be brief.");
        assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
        assert_eq!(body["messages"][1]["content"][0]["type"], "tool_use");
        assert_eq!(body["messages"][2]["role"], "user");
        assert_eq!(body["messages"][2]["content"][0]["tool_use_id"], "toolu_1");
        assert_eq!(
            body["messages"][2]["content"][0]["content"],
            r#"{"status":"shipped"}"#
        );
    }

    #[test]
    fn replies_give_text_calls_usage_and_refusals() {
        let reply = json!({
            "content": [
                { "type": "text", "text": "Looking." },
                { "type": "tool_use", "id": "t1", "name": "lookup", "input": { "id": 2 } }
            ],
            "stop_reason": "tool_use",
            "usage": { "input_tokens": 10, "output_tokens": 3 }
        });
        let parsed = parse(&reply).unwrap();
        assert_eq!(parsed.text, "Looking.");
        assert_eq!(parsed.calls[0].args, json!({ "id": 2 }));
        assert_eq!(parsed.usage.input_tokens, 10);
        assert!(parsed.refusal.is_none());
        let refused = json!({ "content": [], "stop_reason": "refusal" });
        assert!(parse(&refused).unwrap().refusal.is_some());
        assert!(parse(&json!({})).is_err());
    }
}
