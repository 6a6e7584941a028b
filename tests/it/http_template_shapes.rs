//! One agent behind five HTTP shapes: goldgate's own protocol, and four APIs of its own JSON
//! (a chat endpoint behind a Bearer token, a REST conversation API with a session cookie, a
//! stream of named server-sent events, an NDJSON stream whose lines say what they are). The
//! same suite (SCRAPI goldens, gecx scenarios and a Regtrace golden set with events, transfers,
//! handoffs, the agent's own errors, silent turns and tool calls alone) must reach the same
//! verdicts through every template config as through the protocol: a template that loses a
//! handoff, an error or a silence turns a verdict, and this test sees it.

use crate::{common, http_template_support};
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

use http_template_support::{run_paths, streamed};

/// SCRAPI goldens: a welcome event, a tool call with its text, a transfer, an expected
/// silence, a silence where text was expected (fails), and a tool call alone.
const GOLDENS: &str = r#"conversations:
  - conversation: welcome_then_order
    turns:
      - event: welcome
        agent: "Welcome to Acme Support! How can I help you today?"
      - user: "Where is ORD-12345?"
        tool_calls:
          - action: lookup_order
            args: { order_id: ORD-12345 }
        agent: "Your order ORD-12345 has shipped."
  - conversation: refund_goes_to_billing
    turns:
      - user: "I'd like a refund"
        tool_calls:
          - action: transfer_to_agent
            args: { agent: billing_agent }
        agent: "I'm transferring you to our billing team, who handle refunds."
  - conversation: silent_while_the_user_looks
    turns:
      - user: "Just a moment, let me look."
        agent: null
  - conversation: silence_where_an_answer_was_due
    turns:
      - user: "hmm"
        agent: "Could you tell me more?"
  - conversation: a_tool_call_alone
    turns:
      - user: "Refresh my profile"
        tool_calls:
          - action: refresh_profile
            args: { scope: all }
"#;

/// gecx scenarios: handoffs wanted and not, errors wanted and not.
const SCENARIOS: [(&str, &str); 5] = [
    (
        "handoff",
        "when: [{ user: I want to talk to a real person }]\nthen:\n  - { scorer: handoff-triggered }\n  - { scorer: message-contains, args: { pattern: connecting you } }\n",
    ),
    (
        "no-handoff",
        "when: [{ user: Where is ORD-12345? }]\nthen:\n  - { scorer: no-handoff }\n  - { scorer: no-error }\n",
    ),
    (
        "error-expected",
        "when: [{ user: Break please }]\nthen:\n  - { scorer: error-code, args: { code: INTERNAL } }\n",
    ),
    (
        "error-unexpected",
        "when: [{ user: Check ORD-0 }]\nthen:\n  - { scorer: no-error }\n",
    ),
    (
        "handoff-unwanted",
        "when: [{ user: Cancel my order }]\nthen:\n  - { scorer: no-handoff }\n",
    ),
];

/// A Regtrace golden set (seed 003) whose answers the agent is asked for (`actual_output:
/// null`), scored by the deterministic metrics: an answer, a silence, the agent's own error and
/// a tool call alone, each against the answer expected.
const REGTRACE_SET: &str = r#"name: support-answers
version: "1.0.0"
description: The support agent's answers, asked of it
interaction_type: single_turn
tags: [support]
author: qa@example.org
created_at: "2026-11-01T09:00:00Z"
updated_at: "2026-11-01"
test_cases:
  - id: rt-order
    description: Says where the order is
    tags: []
    input: "Where is ORD-12345?"
    system_prompt: null
    expected_output: "Your order ORD-12345 has shipped."
    actual_output: null
    metrics: [factuality, format]
  - id: rt-refund
    description: Sends refunds to billing
    tags: []
    input: "I'd like a refund"
    system_prompt: null
    expected_output: "I'm transferring you to our billing team, who handle refunds."
    actual_output: null
    metrics: [factuality, format]
  - id: rt-silence
    description: Answers a vague message
    tags: []
    input: "hmm"
    system_prompt: null
    expected_output: "Could you tell me more?"
    actual_output: null
    metrics: [format]
  - id: rt-error
    description: Apologises when it breaks
    tags: []
    input: "Break please"
    system_prompt: null
    expected_output: "Sorry, something went wrong on our side."
    actual_output: null
    metrics: [format]
  - id: rt-tool-alone
    description: Confirms the refresh
    tags: []
    input: "Refresh my profile"
    system_prompt: null
    expected_output: "Your profile is refreshed."
    actual_output: null
    metrics: [factuality]
"#;

/// What the suite must come to, through every shape.
const VERDICTS: [(&str, &str); 15] = [
    ("welcome_then_order", "passed"),
    ("refund_goes_to_billing", "passed"),
    ("silent_while_the_user_looks", "passed"),
    ("silence_where_an_answer_was_due", "failed"),
    ("a_tool_call_alone", "passed"),
    ("handoff", "passed"),
    ("no-handoff", "passed"),
    ("error-expected", "passed"),
    ("error-unexpected", "failed"),
    ("handoff-unwanted", "failed"),
    ("rt-order", "passed"),
    ("rt-refund", "passed"),
    ("rt-silence", "failed"),
    ("rt-error", "failed"),
    ("rt-tool-alone", "failed"),
];

/// The agent's answer to a turn, in goldgate's protocol: every shape below says the same.
fn brain(text: &str, event: Option<&str>) -> Value {
    let say = |text: &str| json!([{ "text": text }]);
    if event == Some("welcome") {
        return json!({ "messages": say("Welcome to Acme Support! How can I help you today?") });
    }
    let call = |name: &str, args: Value| json!([{ "name": name, "args": args }]);
    match text {
        t if t.contains("ORD-12345") => json!({
            "messages": say("Your order ORD-12345 has shipped."),
            "tool_calls": call("lookup_order", json!({ "order_id": "ORD-12345" })),
            "handoff": { "status": "none" },
        }),
        t if t.contains("refund") => json!({
            "messages": say("I'm transferring you to our billing team, who handle refunds."),
            "transfer": { "agent": "billing_agent" },
        }),
        t if t.contains("profile") => {
            json!({ "tool_calls": call("refresh_profile", json!({ "scope": "all" })) })
        }
        t if t.contains("real person") => json!({
            "messages": say("Connecting you to a person now."),
            "handoff": { "status": "requested" },
        }),
        t if t.contains("Cancel") => json!({
            "messages": say("Let me get someone to help with that."),
            "handoff": { "status": "requested" },
        }),
        t if t.contains("Break") => {
            json!({ "error": { "code": "INTERNAL", "message": "backend down" } })
        }
        t if t.contains("ORD-0") => {
            json!({ "error": { "code": "UNAVAILABLE", "message": "try later" } })
        }
        // "Just a moment" and "hmm": the agent waits, silent.
        _ => json!({}),
    }
}

/// The sessions each server has seen: a later turn of a session it does not know is answered
/// as a stranger's, so a template that loses the session (or the cookie) fails its goldens.
type Seen = Arc<Mutex<HashSet<String>>>;

fn answer(seen: &Seen, session: &str, turn: u64, text: &str, event: Option<&str>) -> Value {
    let known = !seen.lock().unwrap().insert(session.to_owned());
    match (turn, known) {
        (1, _) | (_, true) => brain(text, event),
        _ => json!({ "messages": [{ "text": "Sorry, who are you?" }] }),
    }
}

async fn protocol(State(seen): State<Seen>, Json(request): Json<Value>) -> Json<Value> {
    let input = &request["input"];
    let (text, event) = (
        input["text"].as_str().unwrap_or(""),
        input["event"].as_str(),
    );
    let turn = request["turn"].as_u64().unwrap();
    Json(answer(
        &seen,
        request["session"].as_str().unwrap(),
        turn,
        text,
        event,
    ))
}

/// A chat endpoint: Bearer token, OpenAI-like choices, a conversation id it assigns.
async fn chat(State(seen): State<Seen>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    if headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        != Some("Bearer tok-42")
    {
        return (StatusCode::UNAUTHORIZED, "no token").into_response();
    }
    let turn = body["turn"].as_u64().unwrap();
    let id = match (&body["conversation_id"], turn) {
        (Value::Null, 1) => format!("conv-{}", body["nonce"]),
        (Value::String(id), _) => id.clone(),
        (other, _) => panic!("turn {turn} sent conversation_id {other}"),
    };
    let text = body["messages"][0]["content"].as_str().unwrap();
    let reply = answer(&seen, &id, turn, text, body["event"].as_str());
    let tool_calls: Vec<Value> = (reply["tool_calls"].as_array().into_iter().flatten())
        .map(|c| json!({ "type": "function", "function": { "name": c["name"], "arguments": c["args"].to_string() } }))
        .collect();
    let content = reply["messages"][0]["text"].clone();
    Json(json!({
        "conversation_id": id,
        "choices": [{ "message": { "role": "assistant", "content": content, "tool_calls": tool_calls } }],
        "handoff": reply["handoff"], "transfer": reply["transfer"], "error": reply["error"],
    }))
    .into_response()
}

/// A REST conversation API: a session cookie set on the first turn, parts and actions.
async fn rest(State(seen): State<Seen>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    let cookie = headers.get(header::COOKIE).and_then(|v| v.to_str().ok());
    let sid = cookie
        .and_then(|c| c.strip_prefix("sid="))
        .map(str::to_owned);
    let turn = body["turn"].as_u64().unwrap();
    let session = sid
        .clone()
        .unwrap_or_else(|| format!("s-{}", body["nonce"]));
    let input = &body["input"];
    let reply = answer(
        &seen,
        &session,
        turn,
        input["text"].as_str().unwrap(),
        input["event"].as_str(),
    );
    let parts: Vec<Value> = reply["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| json!({ "text": m["text"] }))
        .collect();
    let actions: Vec<Value> = reply["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| json!({ "tool": { "name": c["name"], "args": c["args"] } }))
        .collect();
    let mut out = json!({ "reply": { "parts": parts }, "actions": actions });
    if let Some(status) = reply["handoff"]["status"].as_str() {
        out["escalation"] = json!(status);
    }
    if let Some(agent) = reply["transfer"]["agent"].as_str() {
        out["route"] = json!({ "agent": agent });
    }
    if let Some(code) = reply["error"]["code"].as_str() {
        out["failure"] = json!(code);
    }
    let mut response = Json(out).into_response();
    if sid.is_none() {
        let set = format!("sid={session}; Path=/; HttpOnly");
        response
            .headers_mut()
            .insert(header::SET_COOKIE, set.parse().unwrap());
    }
    response
}

/// Named server-sent events, the text in two deltas; after `done` the stream stays open, so a
/// config that does not end the turn there times out.
async fn sse(State(seen): State<Seen>, Json(body): Json<Value>) -> Response {
    let turn = body["turn"].as_u64().unwrap();
    let reply = answer(
        &seen,
        body["session"].as_str().unwrap(),
        turn,
        body["text"].as_str().unwrap(),
        body["event"].as_str(),
    );
    let event = |name: &str, data: Value| (0, format!("event: {name}\ndata: {data}\n\n"));
    let mut chunks = vec![(0, ": open\n\n".to_owned())];
    if let Some(text) = reply["messages"][0]["text"].as_str() {
        let (head, tail) = text.split_at(text.len() / 2);
        chunks.push(event("text", json!({ "delta": head })));
        chunks.push(event("text", json!({ "delta": tail })));
    }
    for call in reply["tool_calls"].as_array().into_iter().flatten() {
        chunks.push(event(
            "tool",
            json!({ "name": call["name"], "arguments": call["args"] }),
        ));
    }
    for (name, key) in [
        ("transfer", "transfer"),
        ("handoff", "handoff"),
        ("error", "error"),
    ] {
        if !reply[key].is_null() {
            chunks.push(event(name, reply[key].clone()));
        }
    }
    chunks.push(event("done", json!({})));
    chunks.push((
        30_000,
        "event: text\ndata: {\"delta\": \" and more\"}\n\n".to_owned(),
    ));
    streamed("text/event-stream", chunks)
}

/// NDJSON whose lines say what they are (`type`); a tool call's arguments come in pieces.
async fn ndjson(State(seen): State<Seen>, Json(body): Json<Value>) -> Response {
    let turn = body["turn"].as_u64().unwrap();
    let reply = answer(
        &seen,
        body["sid"].as_str().unwrap(),
        turn,
        body["q"].as_str().unwrap(),
        body["ev"].as_str(),
    );
    let mut lines = Vec::new();
    for message in reply["messages"].as_array().into_iter().flatten() {
        lines.push(json!({ "type": "text", "text": message["text"] }));
    }
    for (index, call) in reply["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let args = call["args"].to_string();
        let (head, tail) = args.split_at(args.len() / 2);
        lines.push(
            json!({ "type": "tool_call", "index": index, "name": call["name"], "arguments": "" }),
        );
        lines.push(json!({ "type": "tool_call", "index": index, "arguments": head }));
        lines.push(json!({ "type": "tool_call", "index": index, "arguments": tail }));
    }
    if let Some(status) = reply["handoff"]["status"].as_str() {
        lines.push(json!({ "type": "handoff", "status": status }));
    }
    if let Some(agent) = reply["transfer"]["agent"].as_str() {
        lines.push(json!({ "type": "transfer", "to": agent }));
    }
    if !reply["error"].is_null() {
        lines.push(json!({ "type": "error", "error": reply["error"] }));
    }
    lines.push(json!({ "type": "end" }));
    streamed(
        "application/x-ndjson",
        lines.iter().map(|l| (10, format!("{l}\n"))).collect(),
    )
}

/// Each template shape: its route, handler and the keys of its `agent.http` config.
fn shapes() -> Vec<(
    &'static str,
    axum::routing::MethodRouter<Seen>,
    &'static str,
)> {
    vec![
        (
            "chat",
            post(chat),
            r#"    headers: { Authorization: "Bearer ${SHAPES_TOKEN}" }
    body:
      conversation_id: "{{session}}"
      messages: [{ role: user, content: "{{text}}" }]
      event: "{{event}}"
      turn: "{{turn}}"
      nonce: "{{conversation}}"
    response:
      text: $.choices[0].message.content
      tool_calls: $.choices[0].message.tool_calls[*]
      tool_name: $.function.name
      tool_args: $.function.arguments
      transfer: $.transfer.agent
      handoff: $.handoff.status
      error: $.error
      session: $.conversation_id
"#,
        ),
        (
            "rest",
            post(rest),
            r#"    cookies: true
    body: { input: { text: "{{text}}", event: "{{event}}" }, turn: "{{turn}}", nonce: "{{conversation}}" }
    response:
      text: $.reply.parts[*].text
      tool_calls: $.actions[*].tool
      tool_args: $.args
      transfer: $.route.agent
      handoff: $.escalation
      error: $.failure
"#,
        ),
        (
            "sse",
            post(sse),
            r#"    body: { session: "{{session}}", text: "{{text}}", event: "{{event}}", turn: "{{turn}}" }
    stream: sse
    response:
      events:
        - { event: text, text: $.delta }
        - { event: tool, tool_calls: $ }
        - { event: transfer, transfer: $.agent }
        - { event: handoff, handoff: $.status }
        - { event: error, error: $ }
        - { event: done, end: true }
"#,
        ),
        (
            "ndjson",
            post(ndjson),
            r#"    body: { sid: "{{session}}", q: "{{text}}", ev: "{{event}}", turn: "{{turn}}" }
    stream: ndjson
    response:
      events:
        - { match: "@.type == 'text'", text: $.text }
        - { match: "@.type == 'tool_call'", tool_calls: $, tool_index: $.index }
        - { match: "@.type == 'handoff'", handoff: $.status }
        - { match: "@.type == 'transfer'", transfer: $.to }
        - { match: "@.type == 'error'", error: $.error }
        - { match: "@.type == 'end'", end: true }
"#,
        ),
    ]
}

fn write_suite(dir: &Path) {
    common::write(dir, "goldens/support.yaml", GOLDENS);
    for (id, body) in SCENARIOS {
        let scenario = format!("id: {id}\n{body}");
        common::write(dir, &format!("scenarios/{id}.scenario.yaml"), scenario);
    }
    common::write(dir, "regtrace/support-answers.yaml", REGTRACE_SET);
}

/// Plays the suite with `config`; the verdict of each case and the deflection rate.
fn play(config: &str) -> (BTreeMap<String, String>, Value, common::Outcome) {
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    common::write(dir.path(), "goldgate.yaml", config);
    let env = [("SHAPES_TOKEN", "tok-42")];
    let extra = ["--concurrency", "4"];
    let (outcome, report) = run_paths(
        dir.path(),
        &env,
        &extra,
        &["goldens", "scenarios", "regtrace/support-answers.yaml"],
    );
    let verdicts = common::case_statuses(&report);
    (
        verdicts,
        report["aggregates"]["deflection_rate"].clone(),
        outcome,
    )
}

#[test]
fn every_shape_reaches_the_verdicts_of_the_protocol() {
    let expected: BTreeMap<String, String> = VERDICTS
        .iter()
        .map(|(id, status)| (id.to_string(), status.to_string()))
        .collect();
    let seen = Seen::default();
    let addr = common::serve(
        axum::Router::new()
            .route("/turn", post(protocol))
            .with_state(seen),
    );
    let (reference, deflection, outcome) = play(&format!(
        "agent: {{ http: {{ url: 'http://{addr}/turn' }} }}\n"
    ));
    assert_eq!(reference, expected, "{}", outcome.stdout);
    assert!(deflection.is_number(), "{deflection}");
    for (name, route, keys) in shapes() {
        let app = axum::Router::new()
            .route("/", route)
            .with_state(Seen::default());
        let addr = common::serve(app);
        let config = format!("agent:\n  http:\n    url: http://{addr}/\n{keys}");
        let (verdicts, rate, outcome) = play(&config);
        assert_eq!(
            verdicts, reference,
            "{name}:\n{}{}",
            outcome.stdout, outcome.stderr
        );
        assert_eq!(rate, deflection, "{name}: the deflection rate");
        outcome.exits(1);
    }
}
