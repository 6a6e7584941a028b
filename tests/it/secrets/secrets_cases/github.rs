//! The note saying why the PR comment was not posted quotes the network stack or GitHub: no
//! credential of `GITHUB_API_URL` (its URL is left out) and no form of the token.

use axum::Json;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;

use super::{answering_hello, run_writing_everything, workspace};
use crate::common;
use crate::secrets::github_support::{self, Server, TOKEN};

/// A passing run commenting from a pull request's step, with `api_url` as `GITHUB_API_URL`:
/// everything it wrote.
fn comment_to(api_url: &str) -> String {
    let agent =
        common::serve(axum::Router::new().route("/turn", axum::routing::post(answering_hello)));
    let config = format!("agent:\n  http: {{ url: \"http://{agent}/turn\" }}\n");
    let dir = workspace(&["one"], "hello", &config);
    github_support::write_pr_event(dir.path());
    let github = Server::start();
    let (outcome, everything) = run_writing_everything(dir.path(), &[], |command| {
        github_support::as_pr_step(command, dir.path(), &github, "step-summary.md");
        command.env("GITHUB_API_URL", api_url).arg("--comment");
    });
    outcome
        .exits(0)
        .warns(&["did not comment on the pull request"]);
    everything
}

#[test]
fn the_api_urls_credentials_are_not_in_the_note() {
    // Nothing listens on port 1: the connection is refused, and reqwest's error names the URL.
    let everything = comment_to("http://gh-proxy-user:ghPASS-SECRET-1@127.0.0.1:1/api");
    common::assert_contains(&everything, &["the GitHub API call failed"]);
    common::assert_lacks(
        &everything,
        &["ghPASS-SECRET-1", "gh-proxy-user", "for url"],
    );
}

#[test]
fn the_token_github_echoes_base64_encoded_is_masked() {
    let basic = STANDARD.encode(format!("x-access-token:{TOKEN}"));
    let echo = basic.clone();
    let github = common::serve(axum::Router::new().fallback(move || {
        let message = format!("Bad credentials: Basic {echo}");
        async move {
            let body = json!({"message": message, "documentation_url": "https://docs"});
            (StatusCode::INTERNAL_SERVER_ERROR, Json(body)).into_response()
        }
    }));
    let everything = comment_to(&format!("http://{github}/api/v3"));
    // `x-access-token:` is 15 bytes: the token's own base64 starts at character 20.
    let (prefix, token) = basic.split_at(20);
    common::assert_contains(
        &everything,
        &[&format!("Bad credentials: Basic {prefix}***")],
    );
    common::assert_lacks(&everything, &[TOKEN, token]);
}
