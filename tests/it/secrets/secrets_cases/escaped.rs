//! A secret echoed as other encoders escape it, or as `Basic` credentials decode, is masked:
//! Go's `encoding/json` (`\u0026 \u003c \u003e \u0027`), PHP's `json_encode` (`\/`), HTML
//! entities, and the `user:password` of a `Basic ${VAR}` header.

use axum::Json;
use axum::http::StatusCode;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use super::{failing, run_writing_everything, workspace};
use crate::common;

/// A key with every character those encoders escape.
const ODD_KEY: &str = "k3y/with&<odd>'chars";
const USER_AND_PASSWORD: &str = "robot-user:hunter2-pw!";

/// How each conversation's agent echoes the key in its HTTP 500.
fn echoes() -> [(&'static str, String); 5] {
    let go = r"k3y/with\u0026\u003codd\u003e\u0027chars";
    [
        ("go_json", format!(r#"{{"error":"bad key {go}"}}"#)),
        (
            "go_json_upper",
            format!(
                r#"{{"error":"bad key {}"}}"#,
                go.replace("3c", "3C").replace("3e", "3E")
            ),
        ),
        (
            "php_json",
            r#"{"error":"bad key k3y\/with&<odd>'chars"}"#.to_owned(),
        ),
        (
            "html",
            "<p>bad key k3y/with&amp;&lt;odd&gt;&#39;chars</p>".to_owned(),
        ),
        (
            "basic_decoded",
            format!("bad credentials {USER_AND_PASSWORD}"),
        ),
    ]
}

async fn agent(Json(request): Json<Value>) -> axum::response::Response {
    let conversation = request["conversation"].as_str().unwrap_or_default();
    let (_, echo) = echoes()
        .into_iter()
        .find(|(name, _)| *name == conversation)
        .expect("a conversation of the suite");
    failing(StatusCode::INTERNAL_SERVER_ERROR, echo)
}

#[test]
fn escaped_and_decoded_forms_of_a_secret_are_masked() {
    let agent = common::serve(axum::Router::new().route("/turn", axum::routing::post(agent)));
    let config = format!(
        "agent:\n  http:\n    url: \"http://{agent}/turn\"\n    headers:\n      X-Api-Key: \"${{ODD_KEY}}\"\n      \
         Authorization: \"Basic ${{CREDS}}\"\n"
    );
    let names = echoes().map(|(name, _)| name);
    let dir = workspace(&names, "hello", &config);
    let creds = STANDARD.encode(USER_AND_PASSWORD);
    let env = [("ODD_KEY", ODD_KEY), ("CREDS", creds.as_str())];
    let (outcome, everything) = run_writing_everything(dir.path(), &env, |_| {});
    let outcome = outcome.exits(2);
    // Each echo reached the output, masked: else this would pass vacuously.
    outcome.says(&[
        r#"{"error":"bad key ***"}"#,
        "<p>bad key ***</p>",
        "bad credentials ***",
    ]);
    // Every echo starts with the key or holds the password.
    common::assert_lacks(&everything, &["k3y", "hunter2"]);
}
