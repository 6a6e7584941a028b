//! The ways a secret slipped out before, one module each: an answer quoted after a cut inside
//! a secret, escaped forms of a secret, the rate-limit notice, the PR comment's failure note
//! and a redirect to another origin. Each run writes every report, and everything it wrote is
//! searched (see [`run_writing_everything`]).

mod cut;
mod escaped;
mod github;
mod redirect;

use std::path::Path;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::common;

/// What every agent of these cases answers when it answers: the reply each golden expects.
pub fn hello() -> Response {
    axum::Json(json!({"messages": [{"text": "hello"}]})).into_response()
}

/// An agent that answers every turn as each golden expects.
pub async fn answering_hello() -> Response {
    hello()
}

/// An error answer of `status` with `body` as plain text.
pub fn failing(status: StatusCode, body: String) -> Response {
    (status, [("content-type", "text/plain")], body).into_response()
}

/// A workspace whose goldens hold one conversation per name of `conversations`, each one
/// turn expecting `expected`, and whose goldgate.yaml is `config` (no retries, so that each
/// failure is met once).
pub fn workspace(conversations: &[&str], expected: &str, config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut golden = String::from("conversations:\n");
    for name in conversations {
        golden.push_str(&format!(
            "  - conversation: {name}\n    turns:\n      - user: hi\n        agent: {expected}\n"
        ));
    }
    common::write(dir.path(), "goldens/cases.yaml", golden);
    common::write(
        dir.path(),
        "goldgate.yaml",
        format!("{config}run: {{ retries: 0, timeout: 20s }}\n"),
    );
    dir
}

/// `goldgate run goldens` in `dir` with every report and `env`, then what `prepare` adds: how it ended, and everything it wrote (both streams, every file but the
/// inputs) to search for secrets.
pub fn run_writing_everything(
    dir: &Path,
    env: &[(&str, &str)],
    prepare: impl FnOnce(&mut assert_cmd::Command),
) -> (common::Outcome, String) {
    let mut command = common::command_in(dir);
    command
        .args(["run", "goldens"])
        .args(common::EVERY_REPORT)
        .envs(env.iter().copied());
    prepare(&mut command);
    let outcome = common::Outcome::of(&mut command);
    let mut everything = format!(
        "== stdout\n{}\n== stderr\n{}",
        outcome.stdout, outcome.stderr
    );
    crate::secrets::written(
        dir,
        &["goldens", "goldgate.yaml", "event.json"],
        &mut everything,
    );
    (outcome, everything)
}
