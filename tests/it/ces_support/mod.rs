//! Loopback servers for the CX Agent Studio tests: a CES `runSession` endpoint that checks each
//! request as the real API would and answers in its JSON shapes, an HTTP agent of goldgate's
//! protocol with the same behaviour, and Google token endpoints.
//!
//! The behaviour (a small support bot) is written once, in [`behave`], so that both agents
//! act alike and a golden must get the same verdicts from either.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

pub mod tools;

use crate::common::{bearer_token, google_error};

pub const APP: &str = "projects/p/locations/us/apps/support";

/// What the bot does with one user message.
#[derive(Default)]
pub struct Behaviour {
    pub text: Option<String>,
    /// A tool the app runs itself: name, args, response.
    pub server_tool: Option<(String, Value, Value)>,
    /// A client-function tool the app asks the client to run: name and args.
    pub client_tool: Option<(String, Value)>,
    pub transfer: Option<String>,
}

/// The bot: the order status comes from the session variable `order_12345_status`.
pub fn behave(text: &str, event: Option<&str>, variables: &Map<String, Value>) -> Behaviour {
    let lower = text.to_lowercase();
    if event == Some("welcome") {
        return Behaviour {
            text: Some("Hi! How can I help?".into()),
            ..Behaviour::default()
        };
    }
    if lower.contains("ord-12345") {
        let status = variables
            .get("order_12345_status")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_owned();
        let text = if status == "shipped" {
            "Your order ORD-12345 has shipped and should arrive by April 18th."
        } else {
            "I could not find that order."
        };
        return Behaviour {
            text: Some(text.into()),
            server_tool: Some((
                "lookup_order".into(),
                json!({"order_id": "ORD-12345"}),
                json!({"status": status}),
            )),
            ..Behaviour::default()
        };
    }
    if lower.contains("weather") {
        return Behaviour {
            client_tool: Some(("get_weather".into(), json!({"city": "Oslo"}))),
            ..Behaviour::default()
        };
    }
    if lower.contains("refund") {
        return Behaviour {
            text: Some("Let me get billing for you.".into()),
            transfer: Some("Billing Agent".into()),
            ..Behaviour::default()
        };
    }
    Behaviour {
        text: Some("Sorry, I did not understand.".into()),
        ..Behaviour::default()
    }
}

/// The bot's answer once the client ran `get_weather`.
pub fn weather_text(response: &Value) -> String {
    let forecast = match response.get("output").unwrap_or(response) {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    format!("It is {forecast} in Oslo.")
}

/// The loopback HTTP agent of goldgate's protocol with the same behaviour.
#[allow(dead_code)] // Only the verdict comparison plays it.
pub async fn http_turn(Json(request): Json<Value>) -> Json<Value> {
    let input = &request["input"];
    let text = input["text"].as_str().unwrap_or_default();
    let event = input["event"].as_str();
    let mut variables = request["session_parameters"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    if let Some(more) = input["variables"].as_object() {
        variables.extend(more.clone());
    }
    // The HTTP agent keeps no state: the golden sends the parameters with the first turn.
    let behaviour = behave(text, event, &variables);
    let mut reply = json!({});
    let mut messages = Vec::new();
    let mut calls = Vec::new();
    if let Some((name, args, response)) = behaviour.server_tool {
        calls.push(json!({"name": name, "args": args, "response": response}));
    }
    if let Some((name, args)) = behaviour.client_tool {
        let mock = request["tool_mocks"].get(&name).cloned();
        match mock {
            Some(output) => {
                messages.push(json!({"text": weather_text(&output)}));
                calls.push(json!({"name": name, "args": args, "response": output}));
            }
            None => reply["error"] = json!({"code": "no_mock", "message": "no mock"}),
        }
    }
    if let Some(text) = behaviour.text {
        messages.push(json!({"text": text}));
    }
    if let Some(agent) = behaviour.transfer {
        reply["transfer"] = json!({"agent": agent});
    }
    reply["messages"] = json!(messages);
    reply["tool_calls"] = json!(calls);
    Json(reply)
}

/// The CES server's memory: sessions, the tokens it accepts, and every rule a request broke.
#[derive(Clone, Default)]
pub struct Ces {
    pub tokens: Arc<Mutex<Vec<String>>>,
    pub sessions: Arc<Mutex<HashMap<String, Session>>>,
    pub violations: Arc<Mutex<Vec<String>>>,
    pub requests: Arc<Mutex<usize>>,
    /// Answers this many requests with 429 (or 503 for every other one) before serving.
    pub throttle: Arc<Mutex<usize>>,
    /// The `config` of the last request.
    pub last_config: Arc<Mutex<Value>>,
}

#[derive(Clone, Default)]
pub struct Session {
    pub variables: Map<String, Value>,
    /// The client call awaiting a response: id, tool resource.
    pub pending: Option<(String, String)>,
    pub turn: u64,
    pub calls: u64,
}

impl Ces {
    pub fn accepting(token: &str) -> Ces {
        let ces = Ces::default();
        ces.tokens.lock().unwrap().push(token.to_owned());
        ces
    }

    pub fn violations(&self) -> Vec<String> {
        self.violations.lock().unwrap().clone()
    }

    pub fn violation(&self, text: String) -> Response {
        self.violations.lock().unwrap().push(text.clone());
        google_error(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", &text)
    }
}

/// Google's 401 unless the bearer token is one the server accepts.
pub fn refused_token(ces: &Ces, headers: &HeaderMap) -> Option<Response> {
    let token = bearer_token(headers).to_owned();
    if ces.tokens.lock().unwrap().contains(&token) {
        return None;
    }
    Some(google_error(
        StatusCode::UNAUTHORIZED,
        "UNAUTHENTICATED",
        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
    ))
}

const INPUT_FIELDS: [&str; 9] = [
    "text",
    "dtmf",
    "audio",
    "image",
    "blob",
    "variables",
    "event",
    "toolResponses",
    "willContinue",
];

/// `POST /v1/{app}/sessions/{id}:runSession`, checked as the real API would check it.
pub async fn run_session(
    State(ces): State<Ces>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    *ces.requests.lock().unwrap() += 1;
    if let Some(throttled) = throttled(&ces) {
        return throttled;
    }
    if let Some(refused) = refused_token(&ces, &headers) {
        return refused;
    }
    let (session, request) = match checked_request(&uri, &body) {
        Ok(checked) => checked,
        Err(violation) => return ces.violation(violation),
    };
    let Some(inputs) = request["inputs"].as_array().filter(|i| !i.is_empty()) else {
        return ces.violation("no inputs".into());
    };
    *ces.last_config.lock().unwrap() = request["config"].clone();
    let mut sessions = ces.sessions.lock().unwrap();
    let state = sessions.entry(session.clone()).or_default();
    let read = match read_inputs(state, inputs) {
        Ok(read) => read,
        Err(violation) => {
            drop(sessions);
            return ces.violation(violation);
        }
    };
    answer(state, read)
}

/// While the test's throttle count lasts, every other refusal a 429 and the rest 503, each
/// asking to retry at once.
fn throttled(ces: &Ces) -> Option<Response> {
    let mut throttle = ces.throttle.lock().unwrap();
    if *throttle == 0 {
        return None;
    }
    *throttle -= 1;
    let (status, name) = if throttle.is_multiple_of(2) {
        (StatusCode::TOO_MANY_REQUESTS, "RESOURCE_EXHAUSTED")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "UNAVAILABLE")
    };
    let mut response = google_error(status, name, "Quota exceeded for quota metric 'Sessions'.");
    response
        .headers_mut()
        .insert("retry-after", "0".parse().unwrap());
    Some(response)
}

/// The session named by the path and the JSON body naming the same session, or the rule the
/// request broke.
fn checked_request(uri: &Uri, body: &[u8]) -> Result<(String, Value), String> {
    let path = uri.path();
    let Some(session) = path
        .strip_prefix("/v1/")
        .and_then(|p| p.strip_suffix(":runSession"))
        .filter(|s| s.starts_with(&format!("{APP}/sessions/")))
        .map(str::to_owned)
    else {
        return Err(format!("unexpected path {path}"));
    };
    let id = &session[APP.len() + "/sessions/".len()..];
    if id.is_empty()
        || id.len() > 63
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(format!("bad session id {id}"));
    }
    let Ok(request) = serde_json::from_slice::<Value>(body) else {
        return Err("the body is not JSON".into());
    };
    if request["config"]["session"] != json!(session) {
        return Err(format!(
            "config.session {} is not the path's {session}",
            request["config"]["session"]
        ));
    }
    Ok((session, request))
}

/// What a turn's inputs said: the user's text, an event, the response to the pending tool
/// call.
#[derive(Default)]
struct Inputs {
    text: String,
    event: Option<String>,
    answered: Option<Value>,
}

/// Reads `inputs` into the session `state` (variables, the pending call answered), or the rule
/// an input broke.
fn read_inputs(state: &mut Session, inputs: &[Value]) -> Result<Inputs, String> {
    let mut read = Inputs::default();
    for input in inputs {
        let fields: Vec<&String> = input
            .as_object()
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        if fields.len() != 1 || !INPUT_FIELDS.contains(&fields[0].as_str()) {
            return Err(format!("an input must set exactly one field: {input}"));
        }
        match fields[0].as_str() {
            "text" => read.text = input["text"].as_str().unwrap_or_default().to_owned(),
            "event" => read.event = input["event"]["event"].as_str().map(str::to_owned),
            "variables" => {
                let vars = input["variables"].as_object().cloned().unwrap_or_default();
                state.variables.extend(vars);
            }
            "toolResponses" => {
                let responses = input["toolResponses"]["toolResponses"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let pending = state.pending.take();
                let [response] = responses.as_slice() else {
                    return Err("expected one tool response".into());
                };
                match pending {
                    Some((id, tool))
                        if response["id"] == json!(id) && response["tool"] == json!(tool) =>
                    {
                        read.answered = Some(response["response"].clone());
                    }
                    _ => return Err(format!("a tool response for no pending call: {response}")),
                }
            }
            other => return Err(format!("the bot takes no `{other}` input")),
        }
    }
    Ok(read)
}

/// The bot's answer to one turn, in runSession's JSON: a client tool call to wait on, or the
/// outputs with their diagnostic info.
fn answer(state: &mut Session, read: Inputs) -> Response {
    state.turn += 1;
    let turn = state.turn;
    let mut outputs = Vec::new();
    let mut chunks = Vec::new();
    if let Some(response) = read.answered {
        outputs.push(json!({"text": weather_text(&response), "turnIndex": turn}));
    } else {
        let behaviour = behave(&read.text, read.event.as_deref(), &state.variables);
        if let Some((name, args)) = behaviour.client_tool {
            state.calls += 1;
            let id = format!("client-{}", state.calls);
            let tool = format!("{APP}/tools/{name}");
            state.pending = Some((id.clone(), tool.clone()));
            let call = json!({"tool": tool, "id": id, "displayName": name, "args": args});
            return Json(
                json!({"outputs": [{"toolCalls": {"toolCalls": [call]}, "turnIndex": turn}]}),
            )
            .into_response();
        }
        if let Some((name, args, response)) = behaviour.server_tool {
            state.calls += 1;
            let id = format!("adk-{}", state.calls);
            let tool = format!("{APP}/tools/{}", "0c4f7a");
            chunks.push(
                json!({"toolCall": {"tool": tool, "id": id, "displayName": name, "args": args}}),
            );
            chunks.push(json!({"toolResponse": {"tool": tool, "id": id, "displayName": name, "response": response}}));
        }
        if let Some(agent) = behaviour.transfer {
            chunks.push(json!({"agentTransfer": {"targetAgent": format!("{APP}/agents/7b1e"), "displayName": agent}}));
        }
        if let Some(text) = behaviour.text {
            outputs.push(json!({"text": text, "turnIndex": turn}));
        }
    }
    let diagnostic = json!({
        "messages": [
            {"role": "user", "chunks": [{"text": read.text}]},
            {"role": "agent", "chunks": chunks},
        ],
        "rootSpan": {"name": "root", "childSpans": [
            {"name": "LLM", "attributes": {"model": "gemini", "input token count": 40, "output token count": 12, "time to first chunk (ms)": 5}}
        ]}
    });
    match outputs.last_mut() {
        Some(last) => {
            last["turnCompleted"] = json!(true);
            last["diagnosticInfo"] = diagnostic;
        }
        None => outputs
            .push(json!({"turnIndex": turn, "turnCompleted": true, "diagnosticInfo": diagnostic})),
    }
    Json(json!({"outputs": outputs})).into_response()
}
