//! A loopback fake of CX Agent Studio's v1beta evaluation endpoints, built from the API
//! description (`google/cloud/ces/v1beta/evaluation*.proto`, `ces_v1beta.yaml`): evaluations
//! and evaluation expectations (list, create, patch with `updateMask`), `runEvaluation`
//! returning a long-running operation, evaluation runs with `progress`, results with golden
//! results, the operation's `:cancel`, and a token endpoint. It answers in Google's JSON (empty
//! lists left out, durations as `"1.250s"`, errors as `{"error":{"code","message","status"}}`)
//! and records every request and every rule a request broke.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

pub mod cli;
mod results;
mod runs;
mod scrapi;

use crate::common::{bearer_token, google_error};
#[allow(unused_imports)] // Only the reasons test reads what the app says unasked.
pub use results::UNASKED;
use runs::{cancel, operation, poll_run, run_evaluation};
#[allow(unused_imports)] // Only the push test compares with SCRAPI's mapping.
pub use scrapi::scrapi_turns;

pub const APP: &str = "projects/p/locations/us/apps/support";
const OPERATIONS: &str = "projects/p/locations/us/operations";

/// How the platform's runs end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Finish {
    #[default]
    Completed,
    /// The run ends in state ERROR with no result.
    Error,
    /// The run stays RUNNING.
    Never,
}

/// One request as the fake heard it.
#[derive(Clone, Debug)]
#[allow(dead_code)] // Not every test crate reads every field.
pub struct Heard {
    pub method: String,
    pub path: String,
    pub query: String,
    pub body: Value,
}

#[derive(Clone, Debug, Default)]
pub struct Run {
    pub name: String,
    pub operation: String,
    pub evaluations: Vec<String>,
    pub run_count: u64,
    pub polls: usize,
    pub cancelled: bool,
    pub results: Vec<String>,
    /// Its results are complete.
    pub done: bool,
}

#[derive(Default)]
pub struct Platform {
    /// Bearer tokens accepted.
    pub tokens: Vec<String>,
    pub heard: Vec<Heard>,
    pub violations: Vec<String>,
    pub evaluations: Vec<Value>,
    pub expectations: Vec<Value>,
    pub runs: Vec<Run>,
    pub results: BTreeMap<String, Value>,
    /// Polls of a run answered RUNNING before it ends.
    pub polls_to_finish: usize,
    pub finish: Finish,
    /// Display names of evaluations whose first agent response the app gets wrong.
    pub failing: Vec<String>,
    /// After this many polls of a run, the token in use expires (is refused from then on).
    pub expire_token_after: Option<usize>,
    /// Tokens the token endpoint issued.
    pub issued: usize,
    /// `runEvaluation` calls answered 429 with `Retry-After: 1` before one is served.
    pub throttled_runs: usize,
    /// Every poll of a run answered 500 INTERNAL.
    pub broken_polls: bool,
    /// Display names of evaluations whose app speaks in the turns that expect no agent
    /// response (SCRAPI's UNEXPECTED RESPONSE).
    pub speaking: Vec<String>,
    /// Display names of evaluations whose app calls `lookup_order` in its first turn that
    /// expects no tool call.
    pub extra_call: Vec<String>,
    /// The conversations each replayed turn recorded, by resource name.
    pub conversations: BTreeMap<String, Value>,
}

#[derive(Clone, Default)]
pub struct Fake(pub Arc<Mutex<Platform>>);

impl Fake {
    pub fn accepting(token: &str) -> Fake {
        let fake = Fake::default();
        fake.state().tokens.push(token.to_owned());
        fake
    }

    pub fn state(&self) -> MutexGuard<'_, Platform> {
        self.0.lock().unwrap()
    }

    /// The requests heard with this method whose path ends with `suffix`.
    pub fn heard(&self, method: &str, suffix: &str) -> Vec<Heard> {
        let state = self.state();
        let matching = state
            .heard
            .iter()
            .filter(|h| h.method == method && h.path.ends_with(suffix));
        matching.cloned().collect()
    }
}

/// The whole fake, as one handler (resource names hold `:` and any depth of `/`).
pub async fn handle(
    State(fake): State<Fake>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_owned();
    let query = uri.query().unwrap_or_default().to_owned();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let mut state = fake.state();
    if path == "/token" {
        state.issued += 1;
        let token = format!("ya29.issued-{}-secret", state.issued);
        state.tokens.push(token.clone());
        return Json(json!({"access_token": token, "expires_in": 3599, "token_type": "Bearer"}))
            .into_response();
    }
    state.heard.push(Heard {
        method: method.to_string(),
        path: path.clone(),
        query: query.clone(),
        body: body.clone(),
    });
    let token = bearer_token(&headers);
    if !state.tokens.iter().any(|t| t == token) {
        return google_error(
            StatusCode::UNAUTHORIZED,
            "UNAUTHENTICATED",
            "Request had invalid authentication credentials.",
        );
    }
    let Some(resource) = path.strip_prefix("/v1beta/") else {
        state
            .violations
            .push(format!("{method} {path}: evaluations exist only in v1beta"));
        return google_error(StatusCode::NOT_FOUND, "NOT_FOUND", "no such method");
    };
    route(&mut state, method.as_str(), resource, &query, &body, token)
}

fn route(
    state: &mut Platform,
    method: &str,
    resource: &str,
    query: &str,
    body: &Value,
    token: &str,
) -> Response {
    let evaluations = format!("{APP}/evaluations");
    let expectations = format!("{APP}/evaluationExpectations");
    match (method, resource) {
        ("GET", r) if r == APP => {
            Json(json!({"name": APP, "displayName": "Support"})).into_response()
        }
        ("GET", r) if r == format!("{APP}/tools") => Json(json!({"tools": [
            {"name": format!("{APP}/tools/0c4f7a"), "displayName": "lookup_order"},
        ]}))
        .into_response(),
        ("GET", r) if r == format!("{APP}/toolsets") => Json(json!({})).into_response(),
        ("GET", r) if r == format!("{APP}/agents") => Json(json!({"agents": [
            {"name": format!("{APP}/agents/b1"), "displayName": "Billing Agent"},
        ]}))
        .into_response(),
        ("GET", r) if r == evaluations => listed("evaluations", &state.evaluations),
        ("POST", r) if r == evaluations => create_evaluation(state, body),
        ("GET", r) if r == expectations => listed("evaluationExpectations", &state.expectations),
        ("POST", r) if r == expectations => create_expectation(state, body),
        ("PATCH", r) if r.starts_with(&format!("{evaluations}/")) => {
            patch_evaluation(state, r, query, body)
        }
        ("POST", r) if r == format!("{APP}:runEvaluation") && state.throttled_runs > 0 => {
            state.throttled_runs -= 1;
            let mut refused = google_error(
                StatusCode::TOO_MANY_REQUESTS,
                "RESOURCE_EXHAUSTED",
                "Quota exceeded for quota metric 'Evaluation runs'.",
            );
            refused
                .headers_mut()
                .insert("retry-after", "1".parse().unwrap());
            refused
        }
        ("POST", r) if r == format!("{APP}:runEvaluation") => run_evaluation(state, body),
        ("GET", r) if r.starts_with(&format!("{APP}/evaluationRuns/")) && state.broken_polls => {
            google_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "INTERNAL",
                "Internal error encountered.",
            )
        }
        ("GET", r) if r.starts_with(&format!("{APP}/evaluationRuns/")) => poll_run(state, r, token),
        ("GET", r) if r.starts_with(OPERATIONS) => operation(state, r),
        ("POST", r) if r.starts_with(OPERATIONS) && r.ends_with(":cancel") => cancel(state, r),
        ("GET", r) if r.starts_with(&format!("{APP}/conversations/")) => {
            match state.conversations.get(r) {
                Some(conversation) => Json(conversation.clone()).into_response(),
                None => google_error(
                    StatusCode::NOT_FOUND,
                    "NOT_FOUND",
                    &format!("{r} not found"),
                ),
            }
        }
        ("GET", r) if r.starts_with(&evaluations) && r.ends_with("/results") => {
            let prefix = format!("{r}/");
            let mine: Vec<Value> = state
                .results
                .iter()
                .filter(|(name, _)| name.starts_with(&prefix))
                .map(|(_, result)| result.clone())
                .collect();
            listed("evaluationResults", &mine)
        }
        ("GET", r) if r.contains("/results/") => match state.results.get(r) {
            Some(result) => Json(result.clone()).into_response(),
            None => google_error(
                StatusCode::NOT_FOUND,
                "NOT_FOUND",
                &format!("{r} not found"),
            ),
        },
        _ => {
            state
                .violations
                .push(format!("{method} {resource}: no such method"));
            google_error(StatusCode::NOT_FOUND, "NOT_FOUND", "Method not found.")
        }
    }
}

/// A list as Google writes one: the key left out when empty.
fn listed(key: &str, items: &[Value]) -> Response {
    if items.is_empty() {
        return Json(json!({})).into_response();
    }
    Json(json!({ key: items })).into_response()
}

const EVALUATION_FIELDS: [&str; 5] = ["displayName", "description", "tags", "golden", "scenario"];
const STEP_FIELDS: [&str; 3] = ["userInput", "agentTransfer", "expectation"];
const INPUT_FIELDS: [&str; 9] = [
    "text",
    "dtmf",
    "audio",
    "toolResponses",
    "image",
    "blob",
    "variables",
    "event",
    "willContinue",
];
const EXPECTATION_FIELDS: [&str; 6] = [
    "toolCall",
    "toolResponse",
    "agentResponse",
    "agentTransfer",
    "updatedVariables",
    "mockToolResponse",
];

/// Every rule of an `Evaluation` body that the proto states.
fn check_evaluation(evaluation: &Value) -> Vec<String> {
    let mut broken = Vec::new();
    let Some(fields) = evaluation.as_object() else {
        return vec!["the evaluation is not an object".into()];
    };
    for key in fields
        .keys()
        .filter(|k| !EVALUATION_FIELDS.contains(&k.as_str()))
    {
        broken.push(format!(
            "unknown or output-only field `{key}` in an Evaluation"
        ));
    }
    if evaluation["displayName"].as_str().is_none_or(str::is_empty) {
        broken.push("displayName is required".into());
    }
    let turns = evaluation["golden"]["turns"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if turns.is_empty() {
        broken.push("golden.turns is required".into());
    }
    for (t, turn) in turns.iter().enumerate() {
        let steps = turn["steps"].as_array().cloned().unwrap_or_default();
        if steps.is_empty() {
            broken.push(format!("turn {t} has no steps"));
        }
        for step in &steps {
            broken.extend(one_of(step, &STEP_FIELDS, &[], "a Step"));
            if let Some(input) = step.get("userInput") {
                broken.extend(one_of(input, &INPUT_FIELDS, &[], "a SessionInput"));
            }
            if let Some(expectation) = step.get("expectation") {
                broken.extend(one_of(
                    expectation,
                    &EXPECTATION_FIELDS,
                    &["note"],
                    "a GoldenExpectation",
                ));
                if let Some(call) = expectation.get("toolCall") {
                    let tool = call["tool"].as_str().unwrap_or_default();
                    if !tool.starts_with(&format!("{APP}/")) {
                        broken.push(format!("toolCall.tool `{tool}` is not a tool of the app"));
                    }
                }
            }
        }
    }
    broken
}

/// Exactly one of `oneof` (a proto oneof), besides the `also` fields.
fn one_of(value: &Value, oneof: &[&str], also: &[&str], what: &str) -> Vec<String> {
    let Some(map) = value.as_object() else {
        return vec![format!("{what} is not an object")];
    };
    let mut broken = Vec::new();
    let set: Vec<&String> = map.keys().filter(|k| oneof.contains(&k.as_str())).collect();
    if set.len() != 1 {
        broken.push(format!(
            "{what} must set exactly one of {oneof:?}, found {:?}",
            map.keys().collect::<Vec<_>>()
        ));
    }
    for key in map
        .keys()
        .filter(|k| !oneof.contains(&k.as_str()) && !also.contains(&k.as_str()))
    {
        broken.push(format!("unknown field `{key}` in {what}"));
    }
    broken
}

pub(super) fn invalid(state: &mut Platform, broken: Vec<String>) -> Option<Response> {
    if broken.is_empty() {
        return None;
    }
    let message = broken.join("; ");
    state.violations.extend(broken);
    Some(google_error(
        StatusCode::BAD_REQUEST,
        "INVALID_ARGUMENT",
        &message,
    ))
}

fn create_evaluation(state: &mut Platform, body: &Value) -> Response {
    if let Some(refused) = invalid(state, check_evaluation(body)) {
        return refused;
    }
    let display = &body["displayName"];
    if state
        .evaluations
        .iter()
        .any(|e| e["displayName"] == *display)
    {
        return google_error(
            StatusCode::CONFLICT,
            "ALREADY_EXISTS",
            "An evaluation with this display name already exists.",
        );
    }
    let mut evaluation = body.clone();
    evaluation["name"] = json!(format!(
        "{APP}/evaluations/e{}",
        state.evaluations.len() + 1
    ));
    evaluation["createTime"] = json!("2026-11-27T02:00:00Z");
    evaluation["etag"] = json!("e1");
    state.evaluations.push(evaluation.clone());
    Json(evaluation).into_response()
}

fn patch_evaluation(state: &mut Platform, name: &str, query: &str, body: &Value) -> Response {
    let mask: Vec<String> = query
        .split('&')
        .filter_map(|pair| pair.strip_prefix("updateMask="))
        .flat_map(|paths| paths.split(',').map(str::to_owned).collect::<Vec<_>>())
        .collect();
    let mut broken = check_evaluation(body);
    if mask.is_empty() {
        broken.push("PATCH without updateMask".into());
    }
    for path in mask
        .iter()
        .filter(|p| !EVALUATION_FIELDS.contains(&p.as_str()))
    {
        broken.push(format!(
            "updateMask names `{path}`, not a field of Evaluation"
        ));
    }
    if let Some(refused) = invalid(state, broken) {
        return refused;
    }
    let Some(evaluation) = state.evaluations.iter_mut().find(|e| e["name"] == name) else {
        return google_error(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            &format!("{name} not found"),
        );
    };
    for path in mask {
        evaluation[path.as_str()] = body[path.as_str()].clone();
    }
    Json(evaluation.clone()).into_response()
}

fn create_expectation(state: &mut Platform, body: &Value) -> Response {
    let mut broken = Vec::new();
    if body["llmCriteria"]["prompt"].as_str().is_none() || body["displayName"].as_str().is_none() {
        broken.push(format!(
            "an EvaluationExpectation needs displayName and llmCriteria.prompt: {body}"
        ));
    }
    if let Some(refused) = invalid(state, broken) {
        return refused;
    }
    let mut expectation = body.clone();
    expectation["name"] = json!(format!(
        "{APP}/evaluationExpectations/x{}",
        state.expectations.len() + 1
    ));
    state.expectations.push(expectation.clone());
    Json(expectation).into_response()
}
