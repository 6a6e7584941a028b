//! A loopback agent whose behaviour a test changes between runs: wrong answers, errors,
//! delays, hand-offs, a streamed reply with an early or late first token.
#![allow(dead_code)] // Not every test crate uses every behaviour.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt as _;
use serde_json::{Value, json};

/// How the agent behaves now; tests change it between runs.
#[derive(Clone, Default)]
pub struct Script {
    /// Conversations answered with a contradiction (a test failure).
    pub wrong: HashSet<String>,
    /// Conversations answered with a contradiction but every `n`th time they are asked (by
    /// conversation: `n`): one run in `n` passes.
    pub flaky: HashMap<String, u32>,
    /// How often each conversation was asked so far.
    pub asked: HashMap<String, u32>,
    /// Conversations answered with a 500 (an error of the run, with `--retries 0`).
    pub broken: HashSet<String>,
    /// Wait before answering.
    pub delay: Duration,
    /// Every reply requests a hand-off to a person.
    pub handoff: bool,
    /// Stream NDJSON: `Some(true)` sends the text only after [`STREAM_WAIT`], `Some(false)`
    /// sends it at once and the rest after the wait (same total time, earlier first token).
    pub late_first_token: Option<bool>,
}

pub type Shared = Arc<Mutex<Script>>;

pub const STREAM_WAIT: Duration = Duration::from_millis(300);
pub const GOOD_TEXT: &str = "Good news: ORD-12345 was shipped and will arrive April 18.";

pub async fn agent(State(script): State<Shared>, Json(request): Json<Value>) -> Response {
    let conversation = request["conversation"].as_str().unwrap_or_default();
    let (script, asked) = {
        let mut shared = script.lock().unwrap();
        let asked = shared.asked.entry(conversation.to_owned()).or_default();
        *asked += 1;
        let asked = *asked;
        (shared.clone(), asked)
    };
    if script.broken.contains(conversation) {
        return (StatusCode::INTERNAL_SERVER_ERROR, "backend down").into_response();
    }
    tokio::time::sleep(script.delay).await;
    let flaked = script
        .flaky
        .get(conversation)
        .is_some_and(|n| asked % n != 0);
    let text = if script.wrong.contains(conversation) || flaked {
        "Your order ORD-12345 has not shipped yet."
    } else {
        GOOD_TEXT
    };
    let text_part = json!({"messages": [{"text": text}]});
    let mut rest = json!({"tool_calls": [{"name": "lookup_order", "args": {"order_id": "ORD-12345"}, "response": {"status": "shipped"}}]});
    if script.handoff {
        rest["handoff"] = json!({"status": "requested"});
    }
    let Some(late) = script.late_first_token else {
        let mut reply = rest;
        reply["messages"] = text_part["messages"].clone();
        return Json(reply).into_response();
    };
    let lines = if late {
        vec![(STREAM_WAIT, text_part), (Duration::ZERO, rest)]
    } else {
        vec![(Duration::ZERO, text_part), (STREAM_WAIT, rest)]
    };
    let body = futures_util::stream::iter(lines).then(|(wait, fragment)| async move {
        tokio::time::sleep(wait).await;
        Ok::<_, std::convert::Infallible>(format!("{fragment}\n"))
    });
    (
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(body),
    )
        .into_response()
}

pub fn start_agent() -> (SocketAddr, Shared) {
    let script = Shared::default();
    (super::serve_turn(agent, Arc::clone(&script)), script)
}

/// A suite of `cases` one-turn conversations `c01`.. in a new directory, and its agent.
pub fn order_suite(cases: usize) -> (tempfile::TempDir, SocketAddr, Shared) {
    let dir = tempfile::tempdir().unwrap();
    let conversations: String = (1..=cases)
        .map(|i| super::order_conversation(&format!("c{i:02}")))
        .collect();
    super::order_golden(dir.path(), &conversations);
    let (addr, script) = start_agent();
    (dir, addr, script)
}

/// A gated run's flags against `baseline.json`, writing every file output: the JSON report,
/// the Markdown summary, the page and JUnit.
pub const GATED_WITH_OUTPUTS: &[&str] = &[
    "--baseline",
    "baseline.json",
    "--fail-on-regress",
    "--output",
    "report.json",
    "--markdown",
    "summary.md",
    "--html",
    "report.html",
    "--junit",
    "junit.xml",
];

/// `goldgate run` of the suite in `dir` against the agent, with `extra` flags.
pub fn run_suite(dir: &std::path::Path, addr: SocketAddr, extra: &[&str]) -> super::Outcome {
    let url = format!("http://{addr}/turn");
    let mut args = vec!["run", "--agent-url", &url, "--retries", "0"];
    args.extend_from_slice(extra);
    args.push(".");
    super::goldgate(dir, &args)
}
