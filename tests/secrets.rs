//! No credential goldgate knows reaches anything it writes, even from an agent that echoes its
//! whole request (headers, URL) back in an error and in an ordinary reply.

mod common;

use std::fs;
use std::path::Path;

use axum::extract::Path as UrlPath;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde_json::{Value, json};

const TOKEN: &str = "path-token-8d41f";
const KEY: &str = "header-key-77c2a";
const GITHUB: &str = "ghs_0123456789abcdef";
const PASSWORD: &str = "hunter2-secret";

/// Echoes what it received: in a 500 for `c01`, in its reply text for the others.
async fn echo(
    UrlPath(token): UrlPath<String>,
    headers: HeaderMap,
    Json(request): Json<Value>,
) -> Response {
    let echoed = format!("token={token} headers={headers:?} request={request}",);
    if request["conversation"] == "c01" {
        return (StatusCode::INTERNAL_SERVER_ERROR, echoed).into_response();
    }
    Json(json!({"messages": [{"text": echoed}]})).into_response()
}

/// Every file under `dir`, as text.
fn every_file(dir: &Path, found: &mut Vec<(String, String)>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            every_file(&path, found);
        } else {
            let text = String::from_utf8_lossy(&fs::read(&path).unwrap()).into_owned();
            found.push((path.display().to_string(), text));
        }
    }
}

#[test]
fn echoed_credentials_are_masked_in_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let conversations: String = ["c01", "c02"]
        .iter()
        .map(|c| common::order_conversation(c))
        .collect();
    common::order_golden(dir.path(), &conversations);
    let addr = common::serve(Router::new().route("/turn/{token}", axum::routing::post(echo)));
    fs::write(
        dir.path().join("goldgate.yaml"),
        format!(
            "agent:\n  http:\n    url: \"http://bob:{PASSWORD}@{addr}/turn/${{AGENT_TOKEN}}\"\n    headers: {{ X-Api-Key: \"${{AGENT_KEY}}\" }}\n"
        ),
    )
    .unwrap();
    fs::create_dir(dir.path().join("out")).unwrap();
    let out = common::Outcome::of(
        common::command_in(dir.path())
            .env("AGENT_TOKEN", TOKEN)
            .env("AGENT_KEY", KEY)
            .env("GITHUB_TOKEN", GITHUB)
            .args([
                "run",
                "goldens",
                "--retries",
                "0",
                "--max-errors",
                "1",
                "--output",
                "out/r.json",
                "--junit",
                "out/j.xml",
                "--html",
                "out/p.html",
                "--markdown",
                "out/m.md",
                "--record",
                "out/rec",
                "--update-baseline",
                "out/b.json",
                "--force",
            ]),
    );
    assert!(
        matches!(out.code, Some(1 | 2)),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    let report = fs::read_to_string(dir.path().join("out/r.json")).unwrap();
    // The echo reached the report, masked.
    assert!(report.contains("***"), "{report}");
    let basic = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(format!("bob:{PASSWORD}"))
    };
    let mut files = Vec::new();
    every_file(&dir.path().join("out"), &mut files);
    assert!(files.len() >= 6, "{files:?}");
    files.push(("stdout".into(), out.stdout));
    files.push(("stderr".into(), out.stderr));
    for (name, text) in &files {
        for secret in [TOKEN, KEY, GITHUB, PASSWORD, basic.as_str()] {
            assert!(!text.contains(secret), "{secret} in {name}:\n{text}");
        }
    }
}
