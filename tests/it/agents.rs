//! The agent implementations against real peers: an axum server on 127.0.0.1 for the HTTP
//! agent, the example support agent and small shell scripts as subprocesses for the command
//! agent, transcript files in a temporary directory for replay.

use crate::common;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures_util::future::join_all;
use goldgate::agent::command::CommandAgent;
use goldgate::agent::http::HttpAgent;
use goldgate::agent::replay::{ReplayAgent, record_case};
use goldgate::agent::{Agent, TurnRequest};
use goldgate::net::{EndpointError, EndpointErrorKind};
use goldgate::secrets::Secrets;
use goldgate::transcript::{Exchange, Reply};
use goldgate::transcript::{Message, ToolCall, Usage};
use reqwest::Url;
use reqwest::header::{AUTHORIZATION, HeaderValue};
use serde_json::{Map, Value, json};

fn request(session: &str, turn: usize, text: &str) -> TurnRequest {
    TurnRequest {
        id: None,
        session: session.to_owned(),
        conversation: format!("conversation-{session}"),
        case: format!("cases.yaml#conversation-{session}"),
        turn,
        input: object(json!({ "text": text })),
        session_parameters: Map::new(),
        tool_mocks: Map::new(),
        mocks: Vec::new(),
        system_prompt: None,
        context: Vec::new(),
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn text_reply(text: &str) -> Reply {
    Reply {
        messages: vec![Message {
            text: text.to_owned(),
            agent: None,
        }],
        ..Reply::default()
    }
}

/// The agent's reply to turn `turn` of `session`, which must succeed.
async fn reply_to(agent: &dyn Agent, session: &str, turn: usize, text: &str) -> Reply {
    agent
        .send(&request(session, turn, text))
        .await
        .unwrap()
        .reply
}

/// The agent's text for one turn of session `s`, which must succeed.
async fn text_of(agent: &dyn Agent, text: &str) -> String {
    reply_to(agent, "s", 1, text).await.text()
}

#[track_caller]
fn assert_error(error: &EndpointError, kind: EndpointErrorKind, needle: &str) {
    assert_eq!(error.kind, kind, "{error}");
    assert!(error.message.contains(needle), "{needle:?} not in {error}");
}

// ---------------------------------------------------------------------------------------------
// HTTP

/// Serves `router` on a free loopback port; returns the URL of `/turn`.
async fn serve(router: Router) -> Url {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    Url::parse(&format!("http://127.0.0.1:{port}/turn")).unwrap()
}

fn http_agent(url: Url, headers: reqwest::header::HeaderMap) -> HttpAgent {
    // reqwest is built without a default TLS provider; goldgate installs ring at start.
    let _ = rustls::crypto::ring::default_provider().install_default();
    HttpAgent::new(reqwest::Client::new(), url, headers)
}

async fn http_error(router: Router) -> EndpointError {
    let agent = http_agent(serve(router).await, Default::default());
    agent.send(&request("s", 1, "hi")).await.unwrap_err()
}

#[tokio::test]
async fn http_json_reply_and_headers_reach_the_server() {
    let router = Router::new().route(
        "/turn",
        post(
            |headers: HeaderMap, axum::Json(body): axum::Json<Value>| async move {
                let auth = headers[header::AUTHORIZATION].to_str().unwrap().to_owned();
                axum::Json(json!({
                    "messages": [{ "text": format!("{auth} / {}", body["input"]["text"]) }],
                    "tool_calls": [{ "name": "lookup_order", "args": { "order_id": "ORD-1" } }],
                    "usage": { "input_tokens": 3, "output_tokens": 4 },
                }))
            },
        ),
    );
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer t0ken"));
    let agent = http_agent(serve(router).await, headers);

    let exchange = agent.send(&request("s", 1, "hello")).await.unwrap();

    assert_eq!(exchange.reply.text(), "Bearer t0ken / \"hello\"");
    assert_eq!(
        exchange.reply.tool_calls[0].args,
        json!({ "order_id": "ORD-1" })
    );
    assert_eq!(exchange.ttft, None);
}

#[tokio::test]
async fn http_streamed_reply_is_merged_and_timed() {
    // Fragments are split across chunks, one mid-line, and the rest comes after a pause.
    let chunks = [
        "{\"usage\":{\"input_tokens\":5}}\n{\"messages\":[{\"text\":\"Let me check.\"}]}\n",
        "{\"tool_calls\":[{\"name\":\"lookup_order\",\"args\":{\"order_id\":\"ORD-1\"}}]}\n{\"mess",
        "ages\":[{\"text\":\"It has shipped.\"}],\"usage\":{\"output_tokens\":7}}",
    ];
    let router = Router::new().route(
        "/turn",
        post(move || async move {
            let stream = futures_util::stream::unfold(0, move |step| async move {
                if step == 1 {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                }
                let chunk = chunks.get(step)?;
                Some((Ok::<_, std::io::Error>(*chunk), step + 1))
            });
            Response::builder()
                .header(header::CONTENT_TYPE, "application/x-ndjson")
                .body(Body::from_stream(stream))
                .unwrap()
        }),
    );
    let agent = http_agent(serve(router).await, Default::default());

    let exchange = agent.send(&request("s", 1, "where is it")).await.unwrap();

    assert_eq!(exchange.reply.text(), "Let me check.\nIt has shipped.");
    assert_eq!(
        exchange.reply.tool_calls,
        vec![ToolCall {
            name: "lookup_order".into(),
            args: json!({ "order_id": "ORD-1" }),
            response: None,
            resource: None,
        }]
    );
    assert_eq!(
        exchange.reply.usage,
        Some(Usage {
            input_tokens: 5,
            output_tokens: 7,
            ..Usage::default()
        })
    );
    let ttft = exchange
        .ttft
        .expect("a streamed reply has a time to first token");
    assert!(
        ttft < exchange.latency,
        "{ttft:?} vs {:?}",
        exchange.latency
    );
}

#[tokio::test]
async fn http_server_errors_are_retryable_status_errors() {
    let long_body = "overloaded ".repeat(100);
    let error = http_error(Router::new().route(
        "/turn",
        post(move || async move { (StatusCode::SERVICE_UNAVAILABLE, long_body) }),
    ))
    .await;

    assert_error(
        &error,
        EndpointErrorKind::Status(503),
        "503 Service Unavailable: overloaded",
    );
    assert!(error.is_retryable());
    assert!(
        error.message.len() < 260,
        "body quoted whole: {}",
        error.message
    );
    assert_eq!(error.retry_after, None);
}

#[tokio::test]
async fn http_429_carries_retry_after() {
    let error = http_error(Router::new().route(
        "/turn",
        post(|| async {
            (
                StatusCode::TOO_MANY_REQUESTS,
                [(header::RETRY_AFTER, "2")],
                "slow down",
            )
                .into_response()
        }),
    ))
    .await;

    assert_error(&error, EndpointErrorKind::Status(429), "slow down");
    assert!(error.is_retryable());
    assert_eq!(error.retry_after, Some(Duration::from_secs(2)));
}

#[tokio::test]
async fn http_bodies_outside_the_protocol_are_protocol_errors() {
    let error =
        http_error(Router::new().route("/turn", post(|| async { "<html>oops</html>" }))).await;
    assert_error(&error, EndpointErrorKind::Protocol, "expected value");
    assert!(!error.is_retryable());

    let error = http_error(Router::new().route(
        "/turn",
        post(|| async { axum::Json(json!({ "mesages": [] })) }),
    ))
    .await;
    assert_error(
        &error,
        EndpointErrorKind::Protocol,
        "unknown field `mesages`",
    );
}

#[tokio::test]
async fn http_closed_port_is_a_connect_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let url = Url::parse(&format!("http://127.0.0.1:{port}/turn")).unwrap();

    let error = http_agent(url, Default::default())
        .send(&request("s", 1, "hi"))
        .await
        .unwrap_err();

    assert_eq!(error.kind, EndpointErrorKind::Connect);
    assert!(error.is_retryable());
    assert!(
        !error.message.contains("127.0.0.1"),
        "URL in message: {}",
        error.message
    );
}

#[test]
fn http_describe_hides_credentials_and_query() {
    let url = Url::parse("http://user:secret@127.0.0.1:9/turn?key=abc#x").unwrap();
    assert_eq!(
        http_agent(url, Default::default()).describe(),
        "http://127.0.0.1:9/turn"
    );
}

// ---------------------------------------------------------------------------------------------
// Command

async fn example_agent(processes: usize) -> Arc<CommandAgent> {
    let argv = vec![common::support_agent().to_string_lossy().into_owned()];
    Arc::new(
        CommandAgent::spawn(argv, processes, None, STARTUP, Secrets::new())
            .await
            .unwrap(),
    )
}

#[cfg(unix)]
async fn script_agent(script: &str) -> CommandAgent {
    let argv = ["sh", "-c", script].map(String::from).to_vec();
    CommandAgent::spawn(argv, 1, None, STARTUP, Secrets::new())
        .await
        .unwrap()
}

/// How long a test agent may take to answer its start-up ping.
const STARTUP: Duration = Duration::from_secs(60);

/// Replies `{"id":N, ...rest}` to every request line: `reply_with_rest '"messages":[…]'`.
#[cfg(unix)]
use common::process::SH_REPLY;

/// Polls the diagnostics: the stderr copy runs on its own task.
async fn diagnostics_containing(agent: &dyn Agent, needle: &str) -> String {
    for _ in 0..200 {
        if let Some(text) = agent.diagnostics().filter(|t| t.contains(needle)) {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "diagnostics never contained {needle:?}: {:?}",
        agent.diagnostics()
    );
}

/// Twenty sessions at once, two turns each: the order id comes with the first turn's session
/// parameters and is asked about in the second, so a reply routed to the wrong request or a
/// session moved to another process shows as a wrong or unknown order.
async fn play_twenty_sessions(agent: Arc<CommandAgent>) {
    let sessions = (0..20).map(|n| {
        let agent = Arc::clone(&agent);
        async move {
            let session = format!("session-{n}");
            let mut first = request(&session, 1, "hello");
            first.session_parameters = object(json!({ format!("order_{n}_status"): "shipped" }));
            agent.send(&first).await.unwrap();
            let exchange = agent
                .send(&request(&session, 2, &format!("Where is ORD-{n}?")))
                .await
                .unwrap();
            (n, exchange)
        }
    });
    for (n, exchange) in join_all(sessions).await {
        assert_eq!(
            exchange.reply.text(),
            format!("Your order ORD-{n} has shipped.")
        );
        assert_eq!(
            exchange.reply.tool_calls[0].args,
            json!({ "order_id": format!("ORD-{n}") })
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_multiplexes_concurrent_sessions_over_one_process() {
    play_twenty_sessions(example_agent(1).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_keeps_each_session_on_one_of_several_processes() {
    let agent = example_agent(3).await;
    assert!(agent.describe().ends_with("support-agent (3 processes)"));
    play_twenty_sessions(agent).await;
}

#[tokio::test]
async fn command_example_agent_plays_the_readme_conversation() {
    let agent = example_agent(1).await;
    let mut welcome = request("s", 1, "");
    welcome.input = object(json!({ "event": "welcome" }));
    welcome.session_parameters =
        object(json!({ "order_12345_status": "shipped", "order_12345_eta": "2026-04-18" }));
    let turns = [
        (
            welcome,
            "Welcome to Acme Support! How can I help you today?",
        ),
        (
            request("s", 2, "I want to check my order status"),
            "Of course! Please share your order ID and I'll look that up for you.",
        ),
        (
            request("s", 3, "Order ID is ORD-12345"),
            "Your order ORD-12345 has shipped and should arrive by April 18th.",
        ),
    ];
    for (request, expected) in turns {
        assert_eq!(agent.send(&request).await.unwrap().reply.text(), expected);
    }

    let mut mocked = request("t", 1, "Check order ORD-99999");
    mocked.tool_mocks = object(json!({ "lookup_order": { "status": "not_found" } }));
    let reply = agent.send(&mocked).await.unwrap().reply;
    assert!(reply.text().starts_with("I wasn't able to find that order"));

    let reply = reply_to(agent.as_ref(), "t", 2, "I want a refund").await;
    assert_eq!(reply.transfer.unwrap().agent, "billing_agent");
    let reply = reply_to(agent.as_ref(), "t", 3, "Let me talk to a person").await;
    assert_eq!(reply.handoff.unwrap().status, "requested");

    diagnostics_containing(agent.as_ref(), "support_agent: ready").await;
}

#[cfg(unix)]
#[tokio::test]
async fn command_crash_fails_the_request_and_the_next_one_restarts_the_process() {
    let script = format!(
        r#"{SH_REPLY}
echo "agent started" >&2
while IFS= read -r line; do
  case "$line" in
    *CRASH*) echo "boom: asked to crash" >&2; exit 3 ;;
  esac
  reply_with_rest '"messages":[{{"text":"ok"}}]'
done"#
    );
    let agent = script_agent(&script).await;

    assert_eq!(text_of(&agent, "hi").await, "ok");
    let error = agent.send(&request("s", 2, "CRASH")).await.unwrap_err();
    assert!(error.is_retryable());
    assert_error(&error, EndpointErrorKind::Crashed, "exit status: 3");
    assert!(error.message.contains("boom: asked to crash"), "{error}");

    assert_eq!(text_of(&agent, "hi").await, "ok");
    let diagnostics = diagnostics_containing(&agent, "agent process exited").await;
    assert!(diagnostics.contains("boom: asked to crash"));
}

#[cfg(unix)]
#[tokio::test]
async fn command_exit_fails_every_request_in_flight() {
    // Answers the start-up ping, then reads two requests and exits without answering.
    let script = format!(
        r#"{SH_REPLY}
read -r line; reply_with_rest '"messages":[]'
read -r line; read -r line; exit 3"#
    );
    let agent = script_agent(&script).await;
    let (one, two) = (request("a", 1, "one"), request("b", 1, "two"));
    let (first, second) = tokio::join!(agent.send(&one), agent.send(&two));
    for result in [first, second] {
        assert_error(
            &result.unwrap_err(),
            EndpointErrorKind::Crashed,
            "exit status: 3",
        );
    }
}

#[cfg(unix)]
#[tokio::test]
async fn command_lines_nobody_can_take_are_kept_and_bad_replies_are_protocol_errors() {
    let script = format!(
        r#"{SH_REPLY}
while IFS= read -r line; do
  echo "debug: thinking"
  case "$line" in
    *bogus*) reply_with_rest '"mesages":[]' ;;
    *slow*) sleep 1; reply_with_rest '"messages":[{{"text":"late"}}]' ;;
    *) reply_with_rest '"messages":[{{"text":"fine"}}]' ;;
  esac
done"#
    );
    let agent = script_agent(&script).await;

    assert_eq!(text_of(&agent, "hi").await, "fine");
    let error = agent.send(&request("s", 2, "bogus")).await.unwrap_err();
    assert_error(
        &error,
        EndpointErrorKind::Protocol,
        "unknown field `mesages`",
    );
    diagnostics_containing(&agent, "unparseable stdout line: debug: thinking").await;

    // The runner gives up on a slow turn; its late reply must not reach the next request.
    let slow = request("s", 3, "slow");
    let gave_up = tokio::time::timeout(Duration::from_millis(100), agent.send(&slow)).await;
    assert!(gave_up.is_err());
    assert_eq!(text_of(&agent, "hi").await, "fine");
    diagnostics_containing(&agent, "came after its request was given up").await;
}

#[tokio::test]
async fn command_that_cannot_start_is_a_connect_error() {
    let argv = vec!["/nonexistent/goldgate-agent".to_owned()];
    let error = CommandAgent::spawn(argv, 1, None, STARTUP, Secrets::new())
        .await
        .err()
        .unwrap();
    assert_error(
        &error,
        EndpointErrorKind::Connect,
        "/nonexistent/goldgate-agent",
    );
}

// ---------------------------------------------------------------------------------------------
// Replay

fn exchange(text: &str, latency_ms: u64, ttft_ms: Option<u64>) -> Exchange {
    Exchange {
        reply: text_reply(text),
        latency: Duration::from_millis(latency_ms),
        ttft: ttft_ms.map(Duration::from_millis),
    }
}

/// A turn of the case `cases.yaml#<conversation>`.
fn case_turn(conversation: &str, turn: usize, text: &str) -> TurnRequest {
    TurnRequest {
        conversation: conversation.to_owned(),
        case: format!("cases.yaml#{conversation}"),
        ..request("recorded-session", turn, text)
    }
}

/// The error of `agent` for `turn`, which must fail.
async fn refusal(agent: &dyn Agent, turn: TurnRequest) -> EndpointError {
    agent.send(&turn).await.unwrap_err()
}

#[tokio::test]
async fn replay_answers_recorded_turns_only() {
    let dir = tempfile::tempdir().unwrap();
    let happy = [
        (
            case_turn("happy_path", 1, "hi"),
            exchange("Hello!", 120, Some(40)),
        ),
        (
            case_turn("happy_path", 2, "ORD-1"),
            exchange("Shipped.", 300, None),
        ),
    ];
    record_case(dir.path(), "cases.yaml#happy_path", "happy_path", &happy).unwrap();
    let refund = case_turn("billing/refund dispute", 1, "refund");
    let transferred = exchange("Transferring.", 80, None);
    record_case(
        dir.path(),
        "cases.yaml#billing/refund dispute",
        "billing/refund dispute",
        &[(refund.clone(), transferred)],
    )
    .unwrap();

    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 2);
    assert!(
        names[0].starts_with("billing%2Frefund%20dispute-"),
        "{names:?}"
    );
    assert!(names[1].starts_with("happy_path-"), "{names:?}");
    let written = std::fs::read_to_string(dir.path().join(&names[1])).unwrap();
    let written: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(written["conversation"], "happy_path");
    assert_eq!(written["turns"][1]["turn"], 2);
    assert_eq!(written["turns"][1]["request"]["input"]["text"], "ORD-1");
    assert_eq!(written["turns"][0]["latency_ms"], 120);
    assert_eq!(written["turns"][0]["ttft_ms"], 40);
    assert_eq!(written["turns"][1]["ttft_ms"], Value::Null);

    let agent = ReplayAgent::load(dir.path()).unwrap();
    // A later run sends the same turns under a new session id.
    let replayed = TurnRequest {
        session: "another-session".into(),
        ..happy[1].0.clone()
    };
    assert_eq!(agent.send(&replayed).await.unwrap(), happy[1].1);
    assert_eq!(agent.send(&happy[0].0).await.unwrap(), happy[0].1);
    assert_eq!(
        agent.send(&refund).await.unwrap().reply.text(),
        "Transferring."
    );

    let missing = refusal(&agent, case_turn("happy_path", 3, "bye")).await;
    let expected = "turn 3 of conversation \"happy_path\"";
    assert_error(&missing, EndpointErrorKind::NotRecorded, expected);
    let unknown = refusal(&agent, case_turn("never_run", 1, "hi")).await;
    assert_eq!(unknown.kind, EndpointErrorKind::NotRecorded);

    let changed = refusal(&agent, case_turn("happy_path", 2, "ORD-2")).await;
    assert_error(&changed, EndpointErrorKind::NotRecorded, "different input");
}

#[test]
fn replay_rejects_a_corrupt_file_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let good = [(case_turn("good", 1, "hi"), exchange("Hello!", 1, None))];
    record_case(dir.path(), "cases.yaml#good", "good", &good).unwrap();
    let broken = "{\"conversation\": \"x\", \"turns\": [";
    common::write(dir.path(), "broken.json", broken);

    let error = ReplayAgent::load(dir.path()).unwrap_err().to_string();
    common::assert_contains(&error, &["broken.json", "line 1"]);
}
