//! `agent: { http: { body, response, stream, cookies } }`: the binary against real loopback
//! servers on 127.0.0.1 that speak their own JSON, not goldgate's protocol. Each server checks
//! what the template sent (the session it assigned, the cookie it set, a number where a number
//! belongs) and answers so that the golden passes only when it did.

use crate::{common, http_template_support};
use std::fs;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use axum::Json;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use http_template_support::streamed;
use serde_json::{Value, json};

/// Two conversations of the two-turn golden every server here answers: the second turn is
/// answered well only when the conversation's session (an id or a cookie) came back.
fn golden() -> String {
    let mut golden =
        "common_session_parameters:\n  order_status: shipped\nconversations:\n".to_owned();
    for name in ["first", "second"] {
        golden.push_str(&format!(
            "  - conversation: {name}
    turns:
      - user: Where is ORD-12345?
        tool_calls:
          - action: lookup_order
            args: {{ order_id: ORD-12345 }}
        agent: Your order ORD-12345 has shipped.
      - user: When will it arrive?
        agent: It should arrive by April 18th.
"
        ));
    }
    golden
}

/// The reply text of a turn: the order's status on the first, the date on a later one whose
/// `known` session matched, and something else entirely when it did not.
fn answer(turn: u64, known: bool, status: &str) -> String {
    match (turn, known) {
        (1, _) => format!("Your order ORD-12345 has {status}."),
        (_, true) => "It should arrive by April 18th.".to_owned(),
        (_, false) => "Sorry, which order do you mean?".to_owned(),
    }
}

fn write_project(dir: &Path, config: &str) {
    common::write(dir, "goldgate.yaml", config);
    common::write(dir, "goldens/orders.yaml", golden());
}

/// A project whose agent is `app` served on loopback at `/chat`, with `keys` (indented under
/// `http:`, placeholders written as they are) after its `url`.
fn project(app: axum::Router, keys: &str) -> tempfile::TempDir {
    let addr = common::serve(app);
    let dir = tempfile::tempdir().unwrap();
    let config = format!("agent:\n  http:\n    url: http://{addr}/chat\n{keys}");
    write_project(dir.path(), &config);
    dir
}

/// `goldgate run` of the goldens in `dir` with a JSON report; the outcome and the report.
fn run(dir: &Path, extra: &[&str]) -> (common::Outcome, Value) {
    http_template_support::run_paths(dir, &[], extra, &["goldens"])
}

fn assert_passed(outcome: &common::Outcome, report: &Value) {
    assert_eq!(
        outcome.code,
        Some(0),
        "{}\n{}\n{report:#}",
        outcome.stdout,
        outcome.stderr
    );
    let statuses = common::case_statuses(report);
    assert!(statuses.values().all(|s| s == "passed"), "{statuses:?}");
}

/// A JSON API that assigns a session id on the first turn (the template sends null until
/// then) and wants it back on the next; it also checks the shapes the template promised.
async fn json_api(Json(body): Json<Value>) -> Json<Value> {
    let turn = body["turn"].as_u64().expect("`{{turn}}` alone is a number");
    assert_eq!(body["vars"]["order_status"], "shipped", "{body}");
    let conversation = body["conv"].as_str().unwrap().to_owned();
    let session = match (turn, &body["session"]) {
        (1, Value::Null) => format!("srv-{conversation}"),
        (1, other) => panic!("a session before the server assigned one: {other}"),
        (_, Value::String(s)) => s.clone(),
        (_, other) => panic!("no session on a later turn: {other}"),
    };
    let known = session == format!("srv-{conversation}");
    let tools = if turn == 1 {
        json!([{ "function": { "name": "lookup_order", "arguments": "{\"order_id\": \"ORD-12345\"}" } }])
    } else {
        json!([])
    };
    Json(json!({
        "data": { "reply": answer(turn, known, "shipped") },
        "tools": tools,
        "meta": { "session_id": session, "label": body["label"] },
    }))
}

#[test]
fn a_json_reply_is_read_with_paths_and_the_assigned_session_is_carried() {
    let dir = project(
        axum::Router::new().route("/chat", post(json_api)),
        r#"    body:
      message: '{{text}}'
      session: '{{session}}'
      turn: '{{turn}}'
      vars: '{{variables}}'
      conv: '{{conversation}}'
      label: 'turn {{turn}}: "{{text}}"'
    response:
      text: $.data.reply
      tool_calls: $.tools[*]
      tool_name: $.function.name
      tool_args: $.function.arguments
      session: $.meta.session_id
"#,
    );
    let (outcome, report) = run(dir.path(), &[]);
    assert_passed(&outcome, &report);
    let turn = &report["cases"][0]["turns"][0]["reply"];
    assert_eq!(
        turn["tool_calls"][0]["args"],
        json!({ "order_id": "ORD-12345" })
    );
}

/// A template has no path for a handoff, so no reply can show one: the deflection rate is
/// not measured, and every output says why instead of reading 100%, unchanged.
#[test]
fn a_template_agent_cannot_show_a_handoff_so_deflection_is_not_measured() {
    let dir = project(
        axum::Router::new().route("/chat", post(json_api)),
        r#"    body: { message: '{{text}}', session: '{{session}}', turn: '{{turn}}', vars: '{{variables}}', conv: '{{conversation}}' }
    response: { text: $.data.reply, session: $.meta.session_id, tool_calls: '$.tools[*]', tool_name: $.function.name, tool_args: $.function.arguments }
"#,
    );
    let (outcome, _) = run(dir.path(), &["--update-baseline", "baseline.json"]);
    outcome.exits(0);
    let gate = [
        "--baseline",
        "baseline.json",
        "--fail-on-regress",
        "--markdown",
        "summary.md",
    ];
    let (outcome, report) = run(dir.path(), &gate);
    let why = "the HTTP template's `response:` has no path for a handoff, so no reply can show one";
    outcome.exits(0).says(&[&format!(
        "deflection rate     not measured: {why}; not compared, it cannot trip"
    )]);
    assert_eq!(report["aggregates"]["deflection_rate"], Value::Null);
    assert_eq!(report["unmeasured"][0]["metric"], "deflectionDropPp");
    let delta = report["gate"]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["threshold"] == "deflectionDropPp")
        .unwrap();
    assert_eq!(delta["unmeasured"], why);
    let markdown = fs::read_to_string(dir.path().join("summary.md")).unwrap();
    common::assert_contains(&markdown, &["has no path for a handoff"]);
}

/// Sets a cookie per conversation on the first turn and wants it back on the next.
async fn cookie_api(headers: HeaderMap, Json(body): Json<Value>) -> Response {
    let conversation = body["conv"].as_str().unwrap();
    let turn = body["turn"].as_u64().unwrap();
    let expected = format!("sid=jar-{conversation}");
    let cookie = headers
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let known = cookie.split("; ").any(|c| c == expected);
    let reply = json!({
        "text": answer(turn, known, "shipped"),
        "calls": if turn == 1 { json!([{ "name": "lookup_order", "arguments": { "order_id": "ORD-12345" } }]) } else { json!([]) },
    });
    let mut response = Json(reply).into_response();
    if turn == 1 {
        let headers = response.headers_mut();
        headers.append(
            header::SET_COOKIE,
            format!("{expected}; Path=/; HttpOnly").parse().unwrap(),
        );
        headers.append(header::SET_COOKIE, "tracking=1; Max-Age=0".parse().unwrap());
    }
    response
}

#[test]
fn cookies_are_kept_per_conversation() {
    let addr = common::serve(axum::Router::new().route("/chat", post(cookie_api)));
    let dir = tempfile::tempdir().unwrap();
    let config = |cookies: bool| {
        format!(
            "agent:
  http:
    url: http://{addr}/chat
    body: '{{\"q\": \"{{{{text}}}}\", \"conv\": \"{{{{conversation}}}}\", \"turn\": {{{{turn}}}}}}'
    cookies: {cookies}
    response: {{ text: $.text, tool_calls: '$.calls[*]' }}
"
        )
    };
    write_project(dir.path(), &config(true));
    let (outcome, report) = run(dir.path(), &["--concurrency", "2"]);
    assert_passed(&outcome, &report);
    // Without the jar, the second turns are answered as a stranger's.
    write_project(dir.path(), &config(false));
    let (outcome, _) = run(dir.path(), &[]);
    assert_eq!(outcome.code, Some(1), "{}", outcome.stdout);
}

/// Server-sent events: a tool call, the text in two deltas 300 ms apart, and `[DONE]`.
async fn sse_api(Json(body): Json<Value>) -> Response {
    let turn = body["turn"].as_u64().unwrap();
    let text = answer(turn, true, "shipped");
    let (head, tail) = text.split_at(10);
    let mut chunks = vec![(0, ": comment\nevent: start\ndata: {}\n\n".to_owned())];
    if turn == 1 {
        chunks.push((0, "data: {\"tool\": {\"name\": \"lookup_order\",\ndata: \"arguments\": {\"order_id\": \"ORD-12345\"}}}\n\n".to_owned()));
    }
    chunks.push((0, format!("data: {}\r\n\r\n", json!({ "delta": head }))));
    chunks.push((300, format!("data: {}\n\n", json!({ "delta": tail }))));
    chunks.push((0, "data: [DONE]\n\n".to_owned()));
    streamed("text/event-stream", chunks)
}

#[test]
fn server_sent_events_are_joined_and_time_to_first_text_is_measured() {
    let dir = project(
        axum::Router::new().route("/chat", post(sse_api)),
        r#"    body: { q: '{{text}}', turn: '{{turn}}' }
    stream: sse
    response: { text: $.delta, tool_calls: $.tool }
"#,
    );
    let (outcome, report) = run(dir.path(), &[]);
    assert_passed(&outcome, &report);
    for turn in report["cases"][0]["turns"].as_array().unwrap() {
        let ttft = turn["ttft_ms"].as_u64().expect("a TTFT for a stream");
        let latency = turn["latency_ms"].as_u64().unwrap();
        assert!(
            ttft < 250 && latency >= 300,
            "ttft {ttft} ms, latency {latency} ms"
        );
    }
}

/// NDJSON: the text in pieces and a tool call, each line its own JSON.
async fn ndjson_api(Json(body): Json<Value>) -> Response {
    let turn = body["turn"].as_u64().unwrap();
    let text = answer(turn, true, "shipped");
    let (head, tail) = text.split_at(5);
    let mut lines = vec![json!({ "out": { "text": head } })];
    if turn == 1 {
        lines.push(
            json!({ "call": { "fn": "lookup_order", "params": { "order_id": "ORD-12345" } } }),
        );
    }
    lines.push(json!({ "out": { "text": tail } }));
    let chunks = lines
        .iter()
        .enumerate()
        .map(|(i, line)| (if i == 0 { 0 } else { 100 }, format!("{line}\n\n")))
        .collect();
    streamed("application/x-ndjson", chunks)
}

#[test]
fn an_ndjson_stream_is_read_with_its_own_paths() {
    let dir = project(
        axum::Router::new().route("/chat", post(ndjson_api)),
        r#"    method: post
    body: { q: '{{text}}', turn: '{{turn}}' }
    stream: ndjson
    response:
      text: $.out.text
      tool_calls: $.call
      tool_name: $.fn
      tool_args: $.params
"#,
    );
    let (outcome, report) = run(dir.path(), &[]);
    assert_passed(&outcome, &report);
    let ttft = report["cases"][0]["turns"][0]["ttft_ms"].as_u64().unwrap();
    assert!(ttft < 100, "{ttft} ms");
}

/// Echoes the request's credentials back in a shape the config's path does not match.
async fn echo_api(headers: HeaderMap, uri: axum::http::Uri) -> Json<Value> {
    let auth = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    Json(json!({ "reply": format!("you sent {auth} to {uri}") }))
}

#[test]
fn a_path_that_finds_nothing_is_an_error_naming_it_with_the_secrets_masked() {
    let addr = common::serve(axum::Router::new().route("/chat", post(echo_api)));
    let dir = tempfile::tempdir().unwrap();
    write_project(
        dir.path(),
        &format!(
            "agent:
  http:
    url: http://{addr}/chat?key=${{TEMPLATE_URL_KEY}}
    headers: {{ Authorization: 'Bearer ${{TEMPLATE_TOKEN}}' }}
    body: {{ q: '{{{{text}}}}' }}
    response: {{ text: $.answer }}
"
        ),
    );
    let outcome = common::Outcome::of(
        common::command_in(dir.path())
            .env("TEMPLATE_TOKEN", "tok-sekret-4242")
            .env("TEMPLATE_URL_KEY", "url-sekret-1717")
            .args([
                "run",
                "--output",
                "report.json",
                "--junit",
                "junit.xml",
                "goldens",
            ]),
    );
    assert_eq!(
        outcome.code,
        Some(2),
        "{}{}",
        outcome.stdout,
        outcome.stderr
    );
    let report = fs::read_to_string(dir.path().join("report.json")).unwrap();
    let junit = fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    let all = [&outcome.stdout, &outcome.stderr, &report, &junit];
    assert!(
        outcome.stdout.contains(
            "the response path `$.answer` found nothing in the reply: {\"reply\":\"you sent ***"
        ),
        "{}",
        outcome.stdout
    );
    for text in all {
        assert!(!text.contains("sekret"), "a secret was printed:\n{text}");
    }
}

#[test]
fn a_bad_template_or_path_is_a_config_error_with_its_line_and_a_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    write_project(
        dir.path(),
        "agent:
  http:
    url: http://127.0.0.1:9/chat/{{sesion}}
    body:
      message: 'hi {{txt}}'
    stream: websocket
    response:
      text: $.reply[
      tool_cals: $.tools
",
    );
    // A run cannot be judged (2); lint found errors (1), as for any other lint error.
    for (args, code) in [
        (&["run", "goldens"][..], 2),
        (&["lint", "--config", "goldgate.yaml", "goldens"], 1),
    ] {
        let outcome = common::goldgate(dir.path(), args);
        let said = format!("{}{}", outcome.stdout, outcome.stderr);
        assert_eq!(outcome.code, Some(code), "{args:?}: {said}");
        for expected in [
            "goldgate.yaml:3:",
            "unknown placeholder `{{sesion}}`",
            "did you mean `session`?",
            "goldgate.yaml:5:",
            "unknown placeholder `{{txt}}`",
            "did you mean `text`?",
            "goldgate.yaml:6:",
            "unknown value `websocket`",
            "goldgate.yaml:8:",
            "`$.reply[` is not a JSONPath",
            "goldgate.yaml:9:",
            "did you mean `tool_calls`?",
        ] {
            assert!(
                said.contains(expected),
                "{args:?}: no {expected:?} in\n{said}"
            );
        }
    }
}

#[test]
fn a_misspelt_key_is_suggested_whether_or_not_the_agent_is_a_template() {
    // Plain: `mehtod` would have made it a template; and a response whose `text` is misspelt.
    for (config, line, suggestion) in [
        (
            "    url: http://127.0.0.1:9/turn\n    mehtod: GET\n",
            4,
            "method",
        ),
        (
            "    url: http://127.0.0.1:9/turn\n    response:\n      txet: $.reply\n",
            5,
            "text",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        write_project(dir.path(), &format!("agent:\n  http:\n{config}"));
        let outcome = common::goldgate(
            dir.path(),
            &["lint", "--config", "goldgate.yaml", "goldens"],
        );
        let said = format!("{}{}", outcome.stdout, outcome.stderr);
        assert_eq!(outcome.code, Some(1), "{said}");
        let expected = format!("goldgate.yaml:{line}: error [G100]");
        common::assert_contains(
            &said,
            &[&expected, &format!("did you mean `{suggestion}`?")],
        );
    }
}

/// Starts an example agent with `PORT=0` and returns it with the address it printed.
fn start_example(program: &str, script: &str) -> (Child, SocketAddr) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new(program)
        .arg(root.join(script))
        .env("PORT", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("{program} does not start: {e}"));
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("{script} printed {line:?}"))
        .parse()
        .unwrap();
    (child, addr)
}

/// Starts `examples/NAME`'s agent with `program`, and runs goldgate with the example's own
/// config and golden pointed at it: it must pass.
fn assert_example_passes(name: &str, program: &str, script: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = root.join("examples").join(name);
    let (mut agent, addr) = start_example(program, &format!("examples/{name}/{script}"));
    let outcome = common::goldgate(
        root,
        &[
            "run",
            "--config",
            example.join("goldgate.yaml").to_str().unwrap(),
            "--agent-url",
            &format!("http://{addr}/chat"),
            example.join("goldens").to_str().unwrap(),
        ],
    );
    agent.kill().ok();
    agent.wait().ok();
    assert_eq!(
        outcome.code,
        Some(0),
        "{}{}",
        outcome.stdout,
        outcome.stderr
    );
}

#[test]
fn the_python_example_agent_passes_its_golden() {
    assert_example_passes("python-agent", "python3", "agent.py");
}

#[test]
#[ignore = "needs node: Node.js 18 or later runs examples/typescript-agent/agent.mjs (.ci/run installs it)"]
fn the_typescript_example_agent_passes_its_golden() {
    common::require_tool("node", "--version", "install Node.js 18 or later");
    assert_example_passes("typescript-agent", "node", "agent.mjs");
}

/// The HTTP status of a server that refuses keeps its meaning: the template changes only how a
/// 2xx reply is read.
#[test]
fn a_refusal_is_still_an_http_error() {
    let addr = common::serve(axum::Router::new().route(
        "/chat",
        post(|| async { (StatusCode::UNAUTHORIZED, "no token") }),
    ));
    let dir = tempfile::tempdir().unwrap();
    write_project(
        dir.path(),
        &format!(
            "agent: {{ http: {{ url: 'http://{addr}/chat', response: {{ text: $.reply }} }} }}\n"
        ),
    );
    let (outcome, _) = run(dir.path(), &[]);
    assert_eq!(outcome.code, Some(2));
    outcome.says(&["HTTP 401"]);
}
