//! Credentials never reach what goldgate writes, whatever the agent echoes: a loopback agent
//! that quotes its whole request (URL path, headers with the `Basic` credentials of the URL's
//! userinfo and the configured API key, body) in an HTTP 500 and in an ordinary reply, with
//! the GitHub token and a provider key from the environment it shares with goldgate, plain,
//! base64 and percent-encoded. Every file of the run, stdout, stderr and the PR comment are
//! searched for every form of every secret. `secrets_cases/` holds one module per way a secret
//! slipped out before.

use crate::{common, github_support};
#[allow(dead_code)] // Only the fake GitHub is used here, not its seeding or inspection.
mod secrets_cases;

use std::fs;
use std::path::Path;

use axum::Json;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use serde_json::{Value, json};

use github_support::{Server, TOKEN};

const AGENT_TOKEN: &str = "path-T0ken-7f3a9c";
const AGENT_KEY: &str = "hdr-K3y-55e1b0";
const USER: &str = "svc-robot";
const PASSWORD: &str = "p@ss W0rd/9921";
/// [`PASSWORD`] as the URL carries it.
const PASSWORD_IN_URL: &str = "p%40ss%20W0rd%2F9921";
const PROVIDER_KEY: &str = "sk-ant-echo-0123456789";

const GOLDEN: &str = "\
conversations:
  - conversation: echo_reply
    turns:
      - user: What did I send you?
        agent: Nothing secret.
  - conversation: echo_error
    turns:
      - user: Fail, quoting my request.
        agent: Nothing secret.
";

/// The request as an indiscreet server dumps it, with what it shares of goldgate's
/// environment in the forms a server may log it in.
fn dump(uri: &Uri, headers: &HeaderMap, body: &Value) -> String {
    let mut dump = format!("POST {uri}\n");
    for (name, value) in headers {
        dump.push_str(&format!("{name}: {}\n", value.to_str().unwrap_or("?")));
    }
    dump.push_str(&format!("{body}\n"));
    for secret in [TOKEN, PROVIDER_KEY, AGENT_KEY] {
        dump.push_str(&format!(
            "env {secret} b64={} pct={}\n",
            STANDARD.encode(secret),
            percent(secret)
        ));
    }
    dump
}

fn percent(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

async fn echo(uri: Uri, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    let dump = dump(&uri, &headers, &body);
    if body["conversation"] == "echo_error" {
        // The whole dump first would push the Authorization header past the quoted start.
        let auth = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("none");
        let error = format!("internal error; Authorization: {auth}; request: {dump}");
        return (StatusCode::INTERNAL_SERVER_ERROR, error).into_response();
    }
    Json(json!({
        "messages": [{"text": format!("You sent:\n{dump}")}],
        "tool_calls": [{"name": "log_request", "args": {"dump": dump, "key": AGENT_KEY},
                        "response": {"echo": TOKEN}}],
        "error": {"code": "ECHO", "message": format!("token {AGENT_TOKEN}")},
    }))
    .into_response()
}

/// Every form of every secret that must not be written anywhere.
fn forbidden() -> Vec<String> {
    let basic = format!("{USER}:{PASSWORD}");
    let mut forms = Vec::new();
    for secret in [
        AGENT_TOKEN,
        AGENT_KEY,
        PASSWORD,
        &basic,
        TOKEN,
        PROVIDER_KEY,
    ] {
        forms.push(secret.to_owned());
        forms.push(percent(secret));
        for engine in [STANDARD, URL_SAFE, STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
            forms.push(engine.encode(secret));
        }
    }
    forms.push(PASSWORD_IN_URL.to_owned());
    forms
}

/// Every file under `dir` but the inputs, as text.
fn written(dir: &Path, inputs: &[&str], into: &mut String) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if inputs.contains(&name.as_str()) {
            continue;
        }
        if path.is_dir() {
            written(&path, inputs, into);
        } else {
            into.push_str(&format!("\n== {name}\n"));
            into.push_str(&String::from_utf8_lossy(&fs::read(&path).unwrap()));
        }
    }
}

fn assert_nothing_leaks(everything: &str) {
    for form in forbidden() {
        assert!(
            !everything.contains(&form),
            "`{form}` leaked:\n{everything}"
        );
    }
}

fn workspace(agent: std::net::SocketAddr) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "goldens/echo.yaml", GOLDEN);
    common::write(
        dir.path(),
        "goldgate.yaml",
        format!(
            "agent:\n  http:\n    url: \"http://{USER}:{PASSWORD_IN_URL}@{agent}/turn/${{AGENT_TOKEN}}\"\n    \
             headers: {{ X-Api-Key: \"${{AGENT_KEY}}\" }}\nrun: {{ retries: 0, timeout: 20s }}\n"
        ),
    );
    github_support::write_pr_event(dir.path());
    dir
}

#[test]
fn credentials_echoed_by_the_agent_reach_no_output() {
    let agent =
        common::serve(axum::Router::new().route("/turn/{token}", axum::routing::post(echo)));
    let github = Server::start();
    let dir = workspace(agent);
    let path = dir.path();
    let mut command = common::command_in(path);
    github_support::as_pr_step(&mut command, path, &github, "step-summary.md");
    command
        .args(["run", "goldens"])
        .args(common::EVERY_REPORT)
        .args([
            "--record",
            "recorded",
            "--update-baseline",
            "baseline.json",
            "--force",
            "--comment",
        ])
        .env("AGENT_TOKEN", AGENT_TOKEN)
        .env("AGENT_KEY", AGENT_KEY)
        .env("ANTHROPIC_API_KEY", PROVIDER_KEY);
    let common::Outcome { stdout, stderr, .. } = common::Outcome::of(&mut command).exits(2);
    let mut everything = format!("== stdout\n{stdout}\n== stderr\n{stderr}");
    written(
        path,
        &["goldens", "goldgate.yaml", "event.json"],
        &mut everything,
    );
    let comments = github.comments();
    assert_eq!(comments.len(), 1, "the comment is posted: {stderr}");
    for comment in comments {
        everything.push_str("\n== comment\n");
        everything.push_str(comment["body"].as_str().unwrap_or_default());
    }

    // The echoes did reach the outputs, masked: the test would pass vacuously otherwise.
    let report = fs::read_to_string(path.join("report.json")).unwrap();
    common::assert_contains(&report, &["Authorization: Basic ***"]);
    common::assert_contains(&report, &["x-api-key: ***"]);
    common::assert_contains(&report, &["POST /turn/***"]);
    common::assert_contains(&report, &["env *** b64=*** pct=***"]);
    assert!(fs::read_dir(path.join("recorded")).unwrap().count() > 0);
    assert!(
        stdout.contains("/turn/***"),
        "the agent is named, masked: {stdout}"
    );
    assert!(
        !stdout.contains(USER),
        "no userinfo in the agent's name: {stdout}"
    );
    assert_nothing_leaks(&everything);
}

#[test]
fn the_json_report_on_stdout_is_masked() {
    let agent =
        common::serve(axum::Router::new().route("/turn/{token}", axum::routing::post(echo)));
    let dir = workspace(agent);
    let common::Outcome { stdout, stderr, .. } = common::Outcome::of(
        common::command_in(dir.path())
            .args(["run", "goldens", "--json"])
            .env("AGENT_TOKEN", AGENT_TOKEN)
            .env("AGENT_KEY", AGENT_KEY)
            .env("ANTHROPIC_API_KEY", PROVIDER_KEY)
            .env("GITHUB_TOKEN", TOKEN),
    )
    .exits(2);
    let report: Value = serde_json::from_str(&stdout).expect("the JSON report");
    assert_eq!(report["cases"].as_array().map(Vec::len), Some(2));
    assert_nothing_leaks(&format!("{stdout}\n{stderr}"));
}
