//! The template agent against replies and configs that once surprised it (defects #16 and #22
//! of docs' fault hunt): a path that would visit billions of nodes of a hostile reply, `${VAR}`
//! written in the body, and a stream config answered with one JSON object; and paths that do
//! not fit the reply, which a retry cannot mend, nor a tool call found beside them excuse.

use crate::{common, http_template_support};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Json;
use axum::response::Response;
use axum::routing::post;
use serde_json::{Value, json};

use http_template_support::{run_paths, streamed};

const GOLDEN: &str = "conversations:\n  - conversation: hello\n    turns:\n      - user: hi\n        agent: Hello!\n";

/// A project whose agent is `app` at `/chat`, with `keys` under `http:` after its `url`.
fn project(app: axum::Router, keys: &str) -> tempfile::TempDir {
    let addr = common::serve(app);
    let dir = tempfile::tempdir().unwrap();
    let config = format!("agent:\n  http:\n    url: http://{addr}/chat\n{keys}");
    common::write(dir.path(), "goldgate.yaml", config);
    common::write(dir.path(), "goldens/hello.yaml", GOLDEN);
    dir
}

/// Defect #16: `$..*..*..*` over 1000 arrays nested 100 deep took 17.8 s and 1.39 GB with
/// `--timeout 2s`. The turn is now an error naming the path, and nothing is evaluated.
#[test]
fn a_path_that_would_visit_billions_of_nodes_is_an_error_of_the_turn() {
    let app = axum::Router::new().route(
        "/chat",
        post(|| async {
            let mut nested = json!(1);
            for _ in 0..100 {
                nested = json!([nested]);
            }
            Json(json!({ "reply": "Hello!", "calls": vec![nested; 1000] }))
        }),
    );
    let dir = project(
        app,
        "    body: { q: '{{text}}' }\n    response: { text: $.reply, tool_calls: '$..*..*..*' }\n",
    );
    let (outcome, report) = run_paths(dir.path(), &[], &["--retries", "0"], &["goldens"]);
    let outcome = outcome.exits(2);
    outcome
        .says(&["the response path `$..*..*..*` would visit more than 5000000 nodes of the reply"]);
    assert_eq!(common::case_statuses(&report)["hello"], "error");
}

/// Defect #22: `${AGENT_TOKEN}` in the body was sent as those characters, silently.
#[test]
fn an_environment_variable_in_the_body_is_a_config_error() {
    let dir = project(
        axum::Router::new().route(
            "/chat",
            post(|| async { Json(json!({ "reply": "Hello!" })) }),
        ),
        "    body:\n      q: '{{text}}'\n      auth: { token: '${AGENT_TOKEN}' }\n    response: { text: $.reply }\n",
    );
    let outcome = common::goldgate(
        dir.path(),
        &["lint", "--config", "goldgate.yaml", "goldens"],
    );
    let said = format!("{}{}", outcome.stdout, outcome.stderr);
    assert_eq!(outcome.code, Some(1), "{said}");
    common::assert_contains(
        &said,
        &[
            "goldgate.yaml:6:",
            "error [G107]",
            "`${AGENT_TOKEN}` in the body would be sent as written",
            "read only in `url` and `headers`",
        ],
    );
}

/// Defect #22: `stream: sse` against a server answering one JSON object said `found nothing
/// in the stream: ` with an empty quote. It now names the content type and quotes the reply.
#[test]
fn a_stream_config_answered_with_json_says_what_came_instead() {
    let dir = project(
        axum::Router::new().route(
            "/chat",
            post(|| async { Json(json!({ "reply": "Hello!" })) }),
        ),
        "    body: { q: '{{text}}' }\n    stream: sse\n    response: { text: $.reply }\n",
    );
    let (outcome, _) = run_paths(dir.path(), &[], &["--retries", "0"], &["goldens"]);
    outcome.exits(2).says(&[
        "the reply is `application/json`, not `text/event-stream`: the response path `$.reply` \
         found nothing in the stream: {\"reply\":\"Hello!\"}",
    ]);
}

/// A response path that finds nothing, or would visit too much, fails the same way on the same
/// reply: it is an error of the config's shape, not a passing fault, and `--retries` does not
/// ask the agent again.
#[test]
fn a_path_that_does_not_fit_the_reply_is_not_retried() {
    for (paths, says) in [
        (
            "{ text: $.answer.text }",
            "the response path `$.answer.text` found nothing in the reply",
        ),
        (
            "{ text: $.reply, tool_calls: '$..*..*..*' }",
            "would visit more than 5000000 nodes of the reply",
        ),
    ] {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&calls);
        let app = axum::Router::new().route(
            "/chat",
            post(move || async move {
                counted.fetch_add(1, Ordering::SeqCst);
                let mut nested = json!(1);
                for _ in 0..100 {
                    nested = json!([nested]);
                }
                Json(json!({ "reply": "Hello!", "calls": vec![nested; 1000] }))
            }),
        );
        let keys = format!("    body: {{ q: '{{{{text}}}}' }}\n    response: {paths}\n");
        let dir = project(app, &keys);
        let (outcome, report) = run_paths(dir.path(), &[], &["--retries", "2"], &["goldens"]);
        outcome.exits(2).says(&[says]);
        assert_eq!(common::case_statuses(&report)["hello"], "error");
        assert_eq!(calls.load(Ordering::SeqCst), 1, "{paths}: asked again");
    }
}

/// A turn that expects a tool call and the text beside it.
const ORDER_GOLDEN: &str = "conversations:
  - conversation: order
    turns:
      - user: Where is ORD-1?
        tool_calls:
          - action: lookup_order
            args: { order_id: ORD-1 }
        agent: Your order ORD-1 has shipped.
";

/// The reply of examples/python-agent: its text, its session and its actions.
async fn order_reply() -> Json<Value> {
    Json(json!({
        "reply": "Your order ORD-1 has shipped.",
        "session_id": "s-1",
        "actions": [{ "tool": "lookup_order", "input": { "order_id": "ORD-1" } }],
    }))
}

/// The same as server-sent events, as examples/typescript-agent sends them: the call, the text.
async fn order_events() -> Response {
    let call = json!({ "call": { "name": "lookup_order", "arguments": { "order_id": "ORD-1" } } });
    let text = json!({ "text": "Your order ORD-1 has shipped." });
    let events = [call.to_string(), text.to_string(), "[DONE]".to_owned()];
    streamed(
        "text/event-stream",
        events.map(|data| (0, format!("data: {data}\n\n"))).into(),
    )
}

/// A user's report: `text: $.replay` (for `$.reply`) beside a tool call found read as "the
/// agent said nothing", a test failure (exit 1). docs/agents.md, "Replies": a path that fits
/// nothing is an error naming it, so that a typo never reads as an agent that said nothing.
#[test]
fn a_misspelt_text_path_is_an_error_even_when_a_tool_call_was_found() {
    let json_keys = "    body: { message: '{{text}}' }\n    response: { text: TEXT, session: $.session_id, tool_calls: '$.actions[*]', tool_name: $.tool, tool_args: $.input }\n";
    let sse_keys = "    body: { message: '{{text}}' }\n    stream: sse\n    response: { text: TEXT, tool_calls: $.call }\n";
    for (route, keys, right, typo, within) in [
        (
            post(order_reply),
            json_keys,
            "$.reply",
            "$.replay",
            "the reply",
        ),
        (
            post(order_events),
            sse_keys,
            "$.text",
            "$.txt",
            "the stream",
        ),
    ] {
        let dir = project(
            axum::Router::new().route("/chat", route),
            &keys.replace("TEXT", right),
        );
        common::write(dir.path(), "goldens/hello.yaml", ORDER_GOLDEN);
        let (outcome, _) = run_paths(dir.path(), &[], &["--retries", "0"], &["goldens"]);
        outcome.exits(0);

        common::write(dir.path(), "goldgate.yaml", {
            let config = std::fs::read_to_string(dir.path().join("goldgate.yaml")).unwrap();
            config.replace(&format!("text: {right},"), &format!("text: {typo},"))
        });
        let (outcome, report) = run_paths(dir.path(), &[], &["--retries", "0"], &["goldens"]);
        let outcome = outcome.exits(2);
        outcome.says(&[
            &format!("the response path `{typo}` found nothing in {within}"),
            "a tool call, transfer or handoff found does not excuse it",
        ]);
        common::assert_lacks(&outcome.stdout, &["the agent said nothing"]);
        assert_eq!(common::case_statuses(&report)["order"], "error");
    }
}

/// The one reply a text path may find nothing in and no part of: the agent's own error, often
/// an error object alone. It reads as that error (a failure of the turn), not as a bad path.
#[test]
fn an_error_reply_alone_is_the_agents_error_not_a_path_that_fits_nothing() {
    let app = axum::Router::new().route(
        "/chat",
        post(|| async { Json(json!({ "error": { "code": "INTERNAL", "message": "down" } })) }),
    );
    let keys = "    body: { q: '{{text}}' }\n    response: { text: $.reply, error: $.error }\n";
    let dir = project(app, keys);
    let (outcome, report) = run_paths(dir.path(), &[], &["--retries", "0"], &["goldens"]);
    outcome.exits(1);
    assert_eq!(common::case_statuses(&report)["hello"], "failed");
}
