//! What the template agent's tests share: replies streamed in timed chunks, and a run of the
//! binary in a project with its JSON report.

use std::convert::Infallible;
use std::path::Path;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde_json::Value;

use crate::common;

/// A stream of `(delay in ms, chunk)` as the body of a reply with `content_type`.
#[allow(dead_code)] // Not every test crate streams.
pub fn streamed(content_type: &'static str, chunks: Vec<(u64, String)>) -> Response {
    let stream = futures_util::stream::iter(chunks).then(|(delay, chunk)| async move {
        tokio::time::sleep(Duration::from_millis(delay)).await;
        Ok::<_, Infallible>(Bytes::from(chunk))
    });
    (
        [(header::CONTENT_TYPE, content_type)],
        Body::from_stream(stream),
    )
        .into_response()
}

/// `goldgate run --timeout 5s` in `dir` with `env`, `extra` flags and `paths`, and a JSON
/// report: the outcome and the report (null when none was written).
pub fn run_paths(
    dir: &Path,
    env: &[(&str, &str)],
    extra: &[&str],
    paths: &[&str],
) -> (common::Outcome, Value) {
    let mut command = common::command_in(dir);
    command.envs(env.iter().copied());
    command
        .args(["run", "--timeout", "5s"])
        .args(extra)
        .args(paths);
    common::run_with_report(&mut command, &dir.join("report.json"))
}
