//! The fake's evaluation runs: `runEvaluation` returning a long-running operation, the
//! operation and its `:cancel`, and each poll of a run (RUNNING with its results RUNNING, then
//! COMPLETED with them produced, or ERROR, or CANCELLED once cancelled).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::results::produce_results;
use super::{APP, Finish, OPERATIONS, Platform, Run, invalid};
use crate::common::google_error;

const RUN_FIELDS: [&str; 12] = [
    "app",
    "evaluations",
    "evaluationDataset",
    "displayName",
    "appVersion",
    "config",
    "runCount",
    "personaRunConfigs",
    "optimizationConfig",
    "goldenRunMethod",
    "generateLatencyReport",
    "evaluationRunCachingSettings",
];

pub(super) fn run_evaluation(state: &mut Platform, body: &Value) -> Response {
    let mut broken: Vec<String> = body
        .as_object()
        .map(|m| {
            m.keys()
                .filter(|k| !RUN_FIELDS.contains(&k.as_str()))
                .map(|k| format!("unknown field `{k}` in RunEvaluationRequest"))
                .collect()
        })
        .unwrap_or_default();
    if body["app"] != APP {
        broken.push(format!("runEvaluation names app {}", body["app"]));
    }
    let evaluations: Vec<String> = body["evaluations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e.as_str().map(str::to_owned))
        .collect();
    for name in &evaluations {
        if !state.evaluations.iter().any(|e| e["name"] == name.as_str()) {
            broken.push(format!("runEvaluation names {name}, which does not exist"));
        }
    }
    let run_count = body["runCount"].as_u64().unwrap_or(1);
    // The enums of `runEvaluation`, each optional.
    let config = &body["config"];
    for (field, value, allowed) in [
        (
            "goldenRunMethod",
            &body["goldenRunMethod"],
            ["STABLE", "NAIVE"],
        ),
        (
            "evaluationChannel",
            &config["evaluationChannel"],
            ["TEXT", "AUDIO"],
        ),
        (
            "toolCallBehaviour",
            &config["toolCallBehaviour"],
            ["REAL", "FAKE"],
        ),
    ] {
        if value.as_str().is_some_and(|v| !allowed.contains(&v)) {
            broken.push(format!("{field} {value}"));
        }
    }
    if let Some(refused) = invalid(state, broken) {
        return refused;
    }
    let n = state.runs.len() + 1;
    let run = Run {
        name: format!("{APP}/evaluationRuns/run{n}"),
        operation: format!("{OPERATIONS}/op{n}"),
        evaluations,
        run_count,
        ..Run::default()
    };
    let answer = operation_of(&run, false);
    state.runs.push(run);
    Json(answer).into_response()
}

fn operation_of(run: &Run, done: bool) -> Value {
    let mut operation = json!({
        "name": run.operation,
        "metadata": {
            "@type": "type.googleapis.com/google.cloud.ces.v1beta.RunEvaluationOperationMetadata",
            "evaluations": run.evaluations,
            "evaluationRun": run.name,
            "createTime": "2026-11-27T02:00:00Z",
        },
    });
    if done {
        operation["done"] = json!(true);
        operation["response"] = json!({
            "@type": "type.googleapis.com/google.cloud.ces.v1beta.RunEvaluationResponse",
            "evaluationRun": run.name,
        });
    }
    operation
}

pub(super) fn operation(state: &mut Platform, name: &str) -> Response {
    match state.runs.iter().find(|r| r.operation == name) {
        Some(run) => Json(operation_of(run, run.done)).into_response(),
        None => google_error(StatusCode::NOT_FOUND, "NOT_FOUND", "operation not found"),
    }
}

pub(super) fn cancel(state: &mut Platform, path: &str) -> Response {
    let name = path.trim_end_matches(":cancel");
    match state.runs.iter_mut().find(|r| r.operation == name) {
        Some(run) => {
            run.cancelled = true;
            Json(json!({})).into_response()
        }
        None => google_error(StatusCode::NOT_FOUND, "NOT_FOUND", "operation not found"),
    }
}

pub(super) fn poll_run(state: &mut Platform, name: &str, token: &str) -> Response {
    let Some(at) = state.runs.iter().position(|r| r.name == name) else {
        return google_error(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            &format!("{name} not found"),
        );
    };
    state.runs[at].polls += 1;
    let polls = state.runs[at].polls;
    if state.expire_token_after == Some(polls) {
        state.tokens.retain(|t| t != token);
    }
    let total = state.runs[at].evaluations.len() as u64 * state.runs[at].run_count;
    let mut run = json!({
        "name": name,
        "displayName": "goldgate",
        "evaluations": state.runs[at].evaluations,
        "evaluationType": "GOLDEN",
        "createTime": "2026-11-27T02:00:00Z",
    });
    let running = polls <= state.polls_to_finish || state.finish == Finish::Never;
    if state.runs[at].cancelled {
        run["state"] = json!("CANCELLED");
    } else if running {
        // Results exist from the start, RUNNING, with no outcome yet.
        if state.runs[at].results.is_empty() {
            produce_results(state, at);
            for name in state.runs[at].results.clone() {
                let result = &state.results[&name];
                let running = json!({"name": name, "displayName": result["displayName"], "evaluationRun": result["evaluationRun"], "executionState": "RUNNING"});
                state.results.insert(name, running);
            }
        }
        run["state"] = json!("RUNNING");
        run["evaluationResults"] = json!(state.runs[at].results);
        run["progress"] = json!({"totalCount": total, "completedCount": 0});
    } else if state.finish == Finish::Error {
        run["state"] = json!("ERROR");
        run["progress"] = json!({"totalCount": total, "errorCount": total});
        run["errorInfo"] = json!({"errorType": "RUN_FAILED", "errorMessage": "The app's agent could not be loaded."});
    } else {
        if !state.runs[at].done {
            produce_results(state, at);
            state.runs[at].done = true;
        }
        let run_state = &state.runs[at];
        let passed = run_state
            .results
            .iter()
            .filter(|r| state.results[*r]["evaluationStatus"] == "PASS")
            .count();
        run["state"] = json!("COMPLETED");
        run["evaluationResults"] = json!(run_state.results);
        run["progress"] = json!({"totalCount": total, "completedCount": total, "passedCount": passed, "failedCount": total as usize - passed});
    }
    Json(run).into_response()
}
