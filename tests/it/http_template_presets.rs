//! `agent: { http: { preset: ... } }` against loopback fakes of each API's documented wire
//! format, as one JSON reply and as the API's own event stream. The fakes keep no state, as the
//! APIs do not: the second turn is answered well only when `{{messages}}` carried the first.
//!
//! - OpenAI Chat Completions: https://platform.openai.com/docs/api-reference/chat/create (the
//!   chat completion object, `choices[].message.tool_calls` with `arguments` a JSON string) and
//!   https://platform.openai.com/docs/api-reference/chat-streaming (chunks of `delta`s, tool
//!   calls streamed by `index`, `data: [DONE]`).
//! - Anthropic Messages: https://docs.anthropic.com/en/api/messages (`content` blocks of
//!   `text` and `tool_use`, `x-api-key` and `anthropic-version` headers) and
//!   https://docs.anthropic.com/en/docs/build-with-claude/streaming (`message_start`,
//!   `content_block_start`/`_delta`/`_stop` with `text_delta` and `input_json_delta`, `ping`,
//!   `message_delta`, `message_stop`).
//! - OpenAI Responses: https://platform.openai.com/docs/api-reference/responses/object (`output`
//!   items of type `message`, with `output_text` parts, and `function_call`) and
//!   https://platform.openai.com/docs/api-reference/responses-streaming (typed events with a
//!   `sequence_number`, `response.output_text.delta`, `response.output_item.done`,
//!   `response.completed`; no `[DONE]`).
//! - Rasa's REST channel: https://rasa.com/docs/rasa/connectors/your-own-website/#rest-channels
//!   (`POST /webhooks/rest/webhook` with `{sender, message}`, answered by a list of the bot's
//!   messages, `{recipient_id, text}` or `{recipient_id, image}`; the tracker kept per sender).
//! - LangGraph Server's stateless runs:
//!   https://langchain-ai.github.io/langgraph/cloud/reference/api/api_ref.html (`POST /runs/wait`
//!   and `POST /runs/stream` with `{assistant_id, input}`, no thread, the `x-api-key` header;
//!   the final state answered, its `messages` LangChain's, `type: human|ai|tool`, an AI
//!   message's `tool_calls` as `{name, args, id, type: tool_call}`) and
//!   https://langchain-ai.github.io/langgraph/cloud/concepts/streaming (`stream_mode: updates`:
//!   a `metadata` event, then an `updates` event per node, `{node: {messages: [...]}}`), and
//!   https://langchain-ai.github.io/langgraphjs/reference/types/langgraph-sdk.ErrorStreamEvent.html
//!   (`event: error`, `{error, message}`).

use crate::{common, http_template_support};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

use http_template_support::{run_paths, streamed};

const GOLDEN: &str = r#"conversations:
  - conversation: order
    turns:
      - user: Where is ORD-12345?
        tool_calls:
          - action: lookup_order
            args: { order_id: ORD-12345 }
        agent: Your order ORD-12345 has shipped.
      - user: When will it arrive?
        agent: It should arrive by April 18th.
  - conversation: welcome
    turns:
      - event: welcome
        agent: Welcome to Acme Support! How can I help you today?
"#;

/// What the agent behind every fake answers to a conversation: its text, and its tool calls
/// (name and arguments).
fn brain(messages: &[Value]) -> (String, Vec<(&'static str, Value)>) {
    let last = messages.last().expect("at least one message");
    assert_eq!(last["role"], "user", "{messages:?}");
    let said = last["content"].as_str().unwrap();
    let earlier = |word: &str| {
        messages.iter().any(|m| {
            m["role"] == "assistant" && m["content"].as_str().is_some_and(|c| c.contains(word))
        })
    };
    match said {
        "<event>welcome</event>" => (
            "Welcome to Acme Support! How can I help you today?".into(),
            vec![],
        ),
        s if s.contains("ORD-12345") => (
            "Your order ORD-12345 has shipped.".into(),
            vec![("lookup_order", json!({ "order_id": "ORD-12345" }))],
        ),
        _ if earlier("shipped") => ("It should arrive by April 18th.".into(), vec![]),
        _ => ("Which order do you mean?".into(), vec![]),
    }
}

/// Runs the golden against a project with `config`; it must pass.
fn assert_passes(config: &str, env: &[(&str, &str)]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "goldgate.yaml", config);
    common::write(dir.path(), "goldens/orders.yaml", GOLDEN);
    let (outcome, report) = run_paths(dir.path(), env, &[], &["goldens"]);
    let outcome = outcome.exits(0);
    let statuses = common::case_statuses(&report);
    assert!(
        statuses.values().all(|s| s == "passed"),
        "{statuses:?}\n{}",
        outcome.stdout
    );
    report
}

/// The model each fake expects to be asked for.
type Model = &'static str;

async fn openai_chat(
    State(model): State<Model>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some("Bearer sk-test-1") {
        return (StatusCode::UNAUTHORIZED, Json(json!({ "error": { "message": "Incorrect API key provided", "type": "invalid_request_error" } }))).into_response();
    }
    assert_eq!(body["model"], model, "{body}");
    let (text, calls) = brain(body["messages"].as_array().unwrap());
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| json!({ "id": format!("call_{i}"), "type": "function", "function": { "name": name, "arguments": args.to_string() } }))
        .collect();
    let chunk = |delta: Value, finish: Value| {
        let chunk = json!({ "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model, "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }] });
        (5, format!("data: {chunk}\n\n"))
    };
    if body["stream"] == true {
        let mut chunks = vec![chunk(
            json!({ "role": "assistant", "content": "" }),
            Value::Null,
        )];
        let (head, tail) = text.split_at(text.len() / 2);
        chunks.push(chunk(json!({ "content": head }), Value::Null));
        chunks.push(chunk(json!({ "content": tail }), Value::Null));
        for (i, call) in tool_calls.iter().enumerate() {
            let arguments = call["function"]["arguments"].as_str().unwrap();
            let (a, b) = arguments.split_at(arguments.len() / 2);
            let start = json!({ "index": i, "id": call["id"], "type": "function", "function": { "name": call["function"]["name"], "arguments": "" } });
            chunks.push(chunk(json!({ "tool_calls": [start] }), Value::Null));
            for piece in [a, b] {
                chunks.push(chunk(
                    json!({ "tool_calls": [{ "index": i, "function": { "arguments": piece } }] }),
                    Value::Null,
                ));
            }
        }
        chunks.push(chunk(
            json!({}),
            json!(if tool_calls.is_empty() {
                "stop"
            } else {
                "tool_calls"
            }),
        ));
        chunks.push((0, "data: [DONE]\n\n".to_owned()));
        return streamed("text/event-stream", chunks);
    }
    let message =
        json!({ "role": "assistant", "content": text, "tool_calls": tool_calls, "refusal": null });
    Json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1_700_000_000, "model": model,
        "choices": [{ "index": 0, "message": message, "logprobs": null, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30 },
    }))
    .into_response()
}

async fn anthropic(
    State(model): State<Model>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    if header("x-api-key").as_deref() != Some("sk-ant-test")
        || header("anthropic-version").as_deref() != Some("2023-06-01")
    {
        return (StatusCode::UNAUTHORIZED, Json(json!({ "type": "error", "error": { "type": "authentication_error", "message": "invalid x-api-key" } }))).into_response();
    }
    assert_eq!(body["model"], model, "{body}");
    assert!(body["max_tokens"].is_u64(), "{body}");
    let (text, calls) = brain(body["messages"].as_array().unwrap());
    if body["stream"] != true {
        let mut content = vec![json!({ "type": "text", "text": text })];
        for (i, (name, args)) in calls.iter().enumerate() {
            content.push(json!({ "type": "tool_use", "id": format!("toolu_{i}"), "name": name, "input": args }));
        }
        return Json(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": if calls.is_empty() { "end_turn" } else { "tool_use" }, "stop_sequence": null,
            "usage": { "input_tokens": 20, "output_tokens": 10 },
        }))
        .into_response();
    }
    let event = |name: &str, data: Value| (5, format!("event: {name}\ndata: {data}\n\n"));
    let start = json!({ "type": "message_start", "message": { "id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": model, "stop_reason": null, "stop_sequence": null, "usage": { "input_tokens": 20, "output_tokens": 1 } } });
    let mut chunks = vec![event("message_start", start)];
    chunks.push(event("content_block_start", json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text", "text": "" } })));
    chunks.push(event("ping", json!({ "type": "ping" })));
    let (head, tail) = text.split_at(text.len() / 2);
    for piece in [head, tail] {
        chunks.push(event("content_block_delta", json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": piece } })));
    }
    chunks.push(event(
        "content_block_stop",
        json!({ "type": "content_block_stop", "index": 0 }),
    ));
    for (i, (name, args)) in calls.iter().enumerate() {
        let index = i + 1;
        chunks.push(event("content_block_start", json!({ "type": "content_block_start", "index": index, "content_block": { "type": "tool_use", "id": format!("toolu_{i}"), "name": name, "input": {} } })));
        let json = args.to_string();
        let (a, b) = json.split_at(json.len() / 2);
        for piece in [a, b] {
            chunks.push(event("content_block_delta", json!({ "type": "content_block_delta", "index": index, "delta": { "type": "input_json_delta", "partial_json": piece } })));
        }
        chunks.push(event(
            "content_block_stop",
            json!({ "type": "content_block_stop", "index": index }),
        ));
    }
    chunks.push(event("message_delta", json!({ "type": "message_delta", "delta": { "stop_reason": "end_turn", "stop_sequence": null }, "usage": { "output_tokens": 10 } })));
    chunks.push(event("message_stop", json!({ "type": "message_stop" })));
    streamed("text/event-stream", chunks)
}

async fn openai_responses(
    State(model): State<Model>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some("Bearer sk-test-1") {
        return (StatusCode::UNAUTHORIZED, Json(json!({ "error": { "message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key" } }))).into_response();
    }
    assert_eq!(body["model"], model, "{body}");
    let (text, calls) = brain(body["input"].as_array().unwrap());
    let message = json!({ "type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": [{ "type": "output_text", "text": text, "annotations": [] }] });
    let mut output = vec![message.clone()];
    for (i, (name, args)) in calls.iter().enumerate() {
        output.push(json!({ "type": "function_call", "id": format!("fc_{i}"), "call_id": format!("call_{i}"), "name": name, "arguments": args.to_string(), "status": "completed" }));
    }
    let response = |status: &str, output: &[Value]| json!({ "id": "resp_1", "object": "response", "created_at": 1_741_476_542, "status": status, "error": null, "model": model, "output": output });
    if body["stream"] != true {
        return Json(response("completed", &output)).into_response();
    }
    let mut sequence = 0;
    let mut event = |name: &str, mut data: Value| {
        data["type"] = json!(name);
        data["sequence_number"] = json!(sequence);
        sequence += 1;
        (5, format!("event: {name}\ndata: {data}\n\n"))
    };
    let mut chunks = vec![event(
        "response.created",
        json!({ "response": response("in_progress", &[]) }),
    )];
    chunks.push(event("response.output_item.added", json!({ "output_index": 0, "item": { "type": "message", "id": "msg_1", "status": "in_progress", "role": "assistant", "content": [] } })));
    let (head, tail) = text.split_at(text.len() / 2);
    for delta in [head, tail] {
        chunks.push(event(
            "response.output_text.delta",
            json!({ "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": delta }),
        ));
    }
    chunks.push(event(
        "response.output_text.done",
        json!({ "item_id": "msg_1", "output_index": 0, "content_index": 0, "text": text }),
    ));
    chunks.push(event(
        "response.output_item.done",
        json!({ "output_index": 0, "item": message }),
    ));
    for (i, item) in output.iter().enumerate().skip(1) {
        let arguments = item["arguments"].as_str().unwrap();
        let (a, b) = arguments.split_at(arguments.len() / 2);
        let mut added = item.clone();
        added["arguments"] = json!("");
        chunks.push(event(
            "response.output_item.added",
            json!({ "output_index": i, "item": added }),
        ));
        for delta in [a, b] {
            chunks.push(event(
                "response.function_call_arguments.delta",
                json!({ "item_id": item["id"], "output_index": i, "delta": delta }),
            ));
        }
        chunks.push(event(
            "response.function_call_arguments.done",
            json!({ "item_id": item["id"], "output_index": i, "arguments": arguments }),
        ));
        chunks.push(event(
            "response.output_item.done",
            json!({ "output_index": i, "item": item }),
        ));
    }
    chunks.push(event(
        "response.completed",
        json!({ "response": response("completed", &output) }),
    ));
    streamed("text/event-stream", chunks)
}

/// Rasa keeps each sender's tracker: the second question is understood only from the same
/// sender, and the bot says nothing (`[]`) while the user looks. A message `/NAME` is the
/// intent NAME, told without NLU (https://rasa.com/docs/rasa/reference/rasa/nlu/classifiers/
/// regex_message_handler); an empty message gets Rasa's fallback.
async fn rasa(
    State(trackers): State<Arc<Mutex<HashSet<String>>>>,
    Json(body): Json<Value>,
) -> Json<Value> {
    let sender = body["sender"].as_str().expect("a sender").to_owned();
    let message = body["message"].as_str().unwrap();
    let to = |text: &str| json!({ "recipient_id": sender, "text": text });
    let known = trackers.lock().unwrap().contains(&sender);
    Json(match message {
        m if m.contains("ORD-12345") => {
            trackers.lock().unwrap().insert(sender.clone());
            json!([to("Your order ORD-12345 has shipped."), { "recipient_id": sender, "image": "https://example.invalid/parcel.png" }])
        }
        "Just a moment." => json!([]),
        "/welcome" => json!([to("Welcome to Acme Support! How can I help you today?")]),
        "" => json!([to("Sorry, I didn't get that.")]),
        _ if known => json!([to("It should arrive by April 18th.")]),
        _ => json!([to("Which order do you mean?")]),
    })
}

/// A stateless LangGraph ReAct agent: the input messages, coerced to LangChain's, then what its
/// `agent` and `tools` nodes add. `/runs/stream` sends each node's update as it runs.
async fn langgraph(headers: HeaderMap, Json(body): Json<Value>) -> Response {
    if headers.get("x-api-key").and_then(|v| v.to_str().ok()) != Some("lsv2-test") {
        return (
            StatusCode::FORBIDDEN,
            Json(json!({ "detail": "Invalid API key" })),
        )
            .into_response();
    }
    assert_eq!(body["assistant_id"], "support-agent", "{body}");
    let input = body["input"]["messages"].as_array().unwrap();
    let (text, calls) = brain(input);
    let ai = |content: &str, tool_calls: Vec<Value>| json!({ "type": "ai", "content": content, "additional_kwargs": {}, "response_metadata": {}, "name": null, "id": "run-1", "example": false, "tool_calls": tool_calls, "invalid_tool_calls": [], "usage_metadata": null });
    let mut updates = vec![];
    for (i, (name, args)) in calls.iter().enumerate() {
        let id = format!("call_{i}");
        let call = json!({ "name": name, "args": args, "id": id, "type": "tool_call" });
        updates.push(("agent", ai("", vec![call])));
        let result = json!({ "type": "tool", "content": "{\"status\": \"shipped\"}", "name": name, "id": format!("tool-{i}"), "tool_call_id": id, "artifact": null, "status": "success" });
        updates.push(("tools", result));
    }
    updates.push(("agent", ai(&text, vec![])));
    if body["stream_mode"] == "updates" {
        let mut chunks = vec![(
            0,
            "event: metadata\ndata: {\"run_id\": \"1ef4a9b8\", \"attempt\": 1}\n\n".to_owned(),
        )];
        // A run that raised: the SDK's `ErrorStreamEvent`, `{error, message}`.
        if input.last().unwrap()["content"] == "Crash." {
            let data = json!({ "error": "ValueError", "message": "the order service is down" });
            chunks.push((5, format!("event: error\ndata: {data}\n\n")));
            return streamed("text/event-stream", chunks);
        }
        for (node, message) in updates {
            let data = json!({ node: { "messages": [message] } });
            chunks.push((5, format!("event: updates\ndata: {data}\n\n")));
        }
        return streamed("text/event-stream", chunks);
    }
    let mut messages: Vec<Value> = input
        .iter()
        .map(|m| {
            let kind = if m["role"] == "user" { "human" } else { "ai" };
            json!({ "type": kind, "content": m["content"], "id": "msg-in" })
        })
        .collect();
    messages.extend(updates.into_iter().map(|(_, message)| message));
    Json(json!({ "messages": messages })).into_response()
}

fn serve(path: &str, handler: axum::routing::MethodRouter<Model>, model: Model) -> String {
    let addr = common::serve(axum::Router::new().route(path, handler).with_state(model));
    format!("http://{addr}{path}")
}

#[test]
fn openai_chat_completions_in_three_lines_whole_and_streamed() {
    let url = serve("/v1/chat/completions", post(openai_chat), "support-bot");
    let env = [("OPENAI_API_KEY", "sk-test-1")];
    for stream in ["", ", stream: sse"] {
        let config = format!(
            "agent:\n  http: {{ preset: openai-chat, url: \"{url}\", model: support-bot{stream},\n          headers: {{ Authorization: \"Bearer ${{OPENAI_API_KEY}}\" }} }}\n"
        );
        let report = assert_passes(&config, &env);
        let call = &report["cases"][0]["turns"][0]["reply"]["tool_calls"][0];
        assert_eq!(call["args"], json!({ "order_id": "ORD-12345" }), "{stream}");
    }
}

#[test]
fn anthropic_messages_in_three_lines_whole_and_streamed() {
    let url = serve("/v1/messages", post(anthropic), "claude-sonnet-4-5");
    let env = [("ANTHROPIC_API_KEY", "sk-ant-test")];
    for stream in ["", ", stream: sse"] {
        let config = format!(
            "agent:\n  http: {{ preset: anthropic-messages, url: \"{url}\", model: claude-sonnet-4-5{stream},\n          headers: {{ x-api-key: \"${{ANTHROPIC_API_KEY}}\" }} }}\n"
        );
        let report = assert_passes(&config, &env);
        let turn = &report["cases"][0]["turns"][0];
        assert_eq!(
            turn["reply"]["tool_calls"][0]["args"],
            json!({ "order_id": "ORD-12345" }),
            "{stream}"
        );
        assert_eq!(
            turn["ttft_ms"].is_u64(),
            !stream.is_empty(),
            "{stream}: {turn}"
        );
    }
}

#[test]
fn openai_responses_in_three_lines_whole_and_streamed() {
    let url = serve("/v1/responses", post(openai_responses), "gpt-4o-mini");
    let env = [("OPENAI_API_KEY", "sk-test-1")];
    for stream in ["", ", stream: sse"] {
        let config = format!(
            "agent:\n  http: {{ preset: openai-responses, url: \"{url}\", model: gpt-4o-mini{stream},\n          headers: {{ Authorization: \"Bearer ${{OPENAI_API_KEY}}\" }} }}\n"
        );
        let report = assert_passes(&config, &env);
        let calls = &report["cases"][0]["turns"][0]["reply"]["tool_calls"];
        assert_eq!(
            calls,
            &json!([{ "name": "lookup_order", "args": { "order_id": "ORD-12345" } }]),
            "{stream}"
        );
    }
}

#[test]
fn langgraph_stateless_runs_in_three_lines_whole_and_streamed_and_its_errors() {
    let app = axum::Router::new()
        .route("/runs/wait", post(langgraph))
        .route("/runs/stream", post(langgraph));
    let addr = common::serve(app);
    let env = [("LANGSMITH_API_KEY", "lsv2-test")];
    for (endpoint, stream) in [("wait", ""), ("stream", ", stream: sse")] {
        let config = format!(
            "agent:\n  http: {{ preset: langgraph, url: \"http://{addr}/runs/{endpoint}\", model: support-agent{stream},\n          headers: {{ x-api-key: \"${{LANGSMITH_API_KEY}}\" }} }}\n"
        );
        let report = assert_passes(&config, &env);
        let turn = &report["cases"][0]["turns"][0];
        let calls = &turn["reply"]["tool_calls"];
        assert_eq!(
            calls,
            &json!([{ "name": "lookup_order", "args": { "order_id": "ORD-12345" } }]),
            "{stream}"
        );
        assert_eq!(turn["ttft_ms"].is_u64(), !stream.is_empty(), "{turn}");
        // The reply is the agent's last word alone: neither the tool's output nor the history.
        let second = &report["cases"][0]["turns"][1]["reply"]["text"];
        assert_eq!(
            (&turn["reply"]["text"], second),
            (
                &json!("Your order ORD-12345 has shipped."),
                &json!("It should arrive by April 18th.")
            ),
            "{stream}"
        );
    }
    // A streamed run that raised is the agent's error, with LangGraph's exception and message.
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "agent:\n  http: {{ preset: langgraph, url: \"http://{addr}/runs/stream\", model: support-agent, stream: sse,\n          headers: {{ x-api-key: lsv2-test }} }}\n"
    );
    common::write(dir.path(), "goldgate.yaml", config);
    let golden = "conversations:\n  - conversation: crash\n    turns:\n      - user: Crash.\n        agent: null\n";
    common::write(dir.path(), "goldens/crash.yaml", golden);
    let (outcome, report) = run_paths(dir.path(), &[], &[], &["goldens"]);
    outcome.exits(0);
    assert_eq!(
        report["cases"][0]["turns"][0]["reply"]["error"],
        json!({ "code": "ValueError", "message": "the order service is down" })
    );
}

#[test]
fn rasas_rest_channel_in_two_lines_with_an_event_and_a_silent_turn() {
    let app = axum::Router::new()
        .route("/webhooks/rest/webhook", post(rasa))
        .with_state(Arc::default());
    let addr = common::serve(app);
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "agent:\n  http: {{ preset: rasa-rest, url: \"http://{addr}/webhooks/rest/webhook\" }}\n"
    );
    common::write(dir.path(), "goldgate.yaml", config);
    let golden = "conversations:\n  - conversation: order\n    turns:\n      - event: welcome\n        agent: Welcome to Acme Support! How can I help you today?\n      - user: Where is ORD-12345?\n        agent: Your order ORD-12345 has shipped.\n      - user: When will it arrive?\n        agent: It should arrive by April 18th.\n      - user: Just a moment.\n        agent: null\n";
    common::write(dir.path(), "goldens/orders.yaml", golden);
    let (outcome, report) = run_paths(dir.path(), &[], &[], &["goldens"]);
    outcome.exits(0);
    assert_eq!(common::case_statuses(&report)["order"], "passed");
}

/// A preset is a template underneath: any key overrides the preset's (the body whole, a header
/// or a response path by name), the rest stays the preset's.
#[test]
fn a_presets_keys_can_be_overridden() {
    let url = serve("/v1/chat/completions", post(openai_chat), "override-bot");
    let config = format!(
        r#"agent:
  http:
    preset: openai-chat
    url: "{url}"
    model: support-bot
    headers: {{ Authorization: "Bearer sk-test-1" }}
    body: {{ model: override-bot, messages: "{{{{messages}}}}", temperature: 0 }}
    response: {{ tool_calls: "$.choices[0].message.tool_calls[?@.type == 'function']" }}
"#
    );
    assert_passes(&config, &[]);
    // An unknown preset, and one without its model, are errors of goldgate.yaml.
    let dir = tempfile::tempdir().unwrap();
    for (http, expected) in [
        (
            "{ preset: openai-chats, url: 'http://127.0.0.1:9/', model: m }",
            "did you mean `openai-chat`?",
        ),
        (
            "{ preset: anthropic-messages, url: 'http://127.0.0.1:9/' }",
            "the preset `anthropic-messages` needs `model`",
        ),
    ] {
        common::write(
            dir.path(),
            "goldgate.yaml",
            format!("agent:\n  http: {http}\n"),
        );
        common::write(dir.path(), "goldens/orders.yaml", GOLDEN);
        let outcome = common::goldgate(
            dir.path(),
            &["lint", "--config", "goldgate.yaml", "goldens"],
        );
        let said = format!("{}{}", outcome.stdout, outcome.stderr);
        assert_eq!(outcome.code, Some(1), "{said}");
        common::assert_contains(&said, &["goldgate.yaml:2:", expected]);
    }
}
