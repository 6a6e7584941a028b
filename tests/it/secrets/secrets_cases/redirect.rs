//! A redirect to another origin is not followed: it would carry the request (its body, the
//! token in its URL, a key header) to a server nobody configured. A redirect within the
//! origin is followed, without a `Referer`.

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{hello, run_writing_everything, workspace};
use crate::common;
use crate::secrets::AGENT_KEY;

#[test]
fn a_redirect_to_another_origin_is_refused_and_one_within_it_followed() {
    // Another port of the loopback address is another origin.
    let reached = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = reached.clone();
    let elsewhere = common::serve(axum::Router::new().fallback(move |headers: HeaderMap| {
        seen.lock().unwrap().push(format!("{headers:?}"));
        async { hello() }
    }));
    let agent = common::serve(
        axum::Router::new()
            .route(
                "/turn",
                axum::routing::post(move |Json(request): Json<Value>| async move {
                    let to = match request["conversation"].as_str() {
                        Some("cross_origin") => format!("http://{elsewhere}/turn"),
                        _ => "/final".to_owned(),
                    };
                    (StatusCode::TEMPORARY_REDIRECT, [("location", to)]).into_response()
                }),
            )
            .route("/final", axum::routing::post(no_referer)),
    );
    let config = format!(
        "agent:\n  http:\n    url: \"http://{agent}/turn\"\n    headers: {{ X-Api-Key: \"${{AGENT_KEY}}\" }}\n"
    );
    let dir = workspace(&["cross_origin", "same_origin"], "hello", &config);
    let (outcome, _) = run_writing_everything(dir.path(), &[("AGENT_KEY", AGENT_KEY)], |_| {});
    assert_eq!(reached.lock().unwrap().clone(), Vec::<String>::new());
    let report = common::read_json(&dir.path().join("report.json"));
    let statuses = common::case_statuses(&report);
    let outcome = outcome.exits(2);
    assert_eq!(
        statuses.values().cloned().collect::<Vec<_>>(),
        ["error", "passed"],
        "{statuses:?}\n{}",
        outcome.stdout
    );
    outcome.says(&[
        "refused: answered with a redirect to another origin",
        "not followed",
    ]);
}

/// The end of the redirect within the origin: a `Referer` would tell where the request came
/// from (the URL before, with its token), so its reply then fails the golden.
async fn no_referer(headers: HeaderMap) -> Response {
    match headers.get("referer") {
        None => hello(),
        Some(referer) => {
            Json(json!({"messages": [{"text": format!("referer {referer:?}")}]})).into_response()
        }
    }
}
