//! `goldgate run` against a real HTTP agent on 127.0.0.1 whose behaviour is scripted per
//! conversation: each known good or bad behaviour must get its verdict, and the exit code must
//! follow (0 all passed, 1 a failure, 2 an error of the run).

use crate::common;
use std::collections::HashMap;
use std::fs;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The order status said in other words than the golden's (a paraphrase: it passes).
const SHIPPED: &str = "Your order ORD-12345 has shipped and should arrive by April 18th.";
/// The order status contradicted.
const CONTRADICTION: &str = "Your order ORD-12345 has not shipped yet.";

/// How often each conversation was asked, so that "503 then success" can change its answer.
type Calls = Arc<Mutex<HashMap<String, u32>>>;

async fn agent(State(calls): State<Calls>, Json(request): Json<Value>) -> Response {
    let conversation = request["conversation"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let call = {
        let mut calls = calls.lock().unwrap();
        let count = calls.entry(conversation.clone()).or_default();
        *count += 1;
        *count
    };
    let order = |id: &str| json!({"name": "lookup_order", "args": {"order_id": id}, "response": {"status": "shipped"}});
    let said =
        |text: &str, calls: &[Value]| json!({"messages": [{"text": text}], "tool_calls": calls});
    let reply = match conversation.as_str() {
        "paraphrase" => said(common::script::GOOD_TEXT, &[order("ORD-12345")]),
        "contradiction" => said(CONTRADICTION, &[order("ORD-12345")]),
        "wrong_argument" => said(SHIPPED, &[order("ORD-54321")]),
        "several_wrong_arguments" => said(SHIPPED, &[order("ORD-555")]),
        "extra_tool_call" => said(
            SHIPPED,
            &[
                order("ORD-12345"),
                json!({"name": "send_email", "args": {"to": "me"}}),
            ],
        ),
        "missing_tool_call" => said(SHIPPED, &[]),
        "transfer" => json!({"transfer": {"agent": "billing_agent"}}),
        "wrong_transfer" => json!({"transfer": {"agent": "sales_agent"}}),
        "handoff" => {
            json!({"messages": [{"text": "Connecting you to a person."}], "handoff": {"status": "requested"}})
        }
        "agent_error" => json!({"error": {"code": "INTERNAL", "message": "tool backend down"}}),
        "flaky_503" if call == 1 => {
            return (StatusCode::SERVICE_UNAVAILABLE, "warming up").into_response();
        }
        "flaky_503" => said(SHIPPED, &[order("ORD-12345")]),
        "hang" => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            json!({})
        }
        _ => return (StatusCode::NOT_FOUND, "unknown conversation").into_response(),
    };
    Json(reply).into_response()
}

/// Starts the agent on a free loopback port.
fn start_agent() -> SocketAddr {
    common::serve_turn(agent, Calls::default())
}

fn write_suite(dir: &Path, conversations: &[&str], with_scenarios: bool) {
    let mut golden = String::new();
    for name in conversations {
        match *name {
            "transfer" | "wrong_transfer" => golden.push_str(&format!(
                "  - conversation: {name}\n    turns:\n      - user: I want a refund\n        tool_calls:\n          - action: transfer_to_agent\n            args: {{ agent: billing_agent }}\n        agent: \"# silent — transfer\"\n"
            )),
            _ => golden.push_str(&common::order_conversation(name)),
        }
    }
    common::order_golden(dir, &golden);
    if with_scenarios {
        common::write(
            dir,
            "handoff.scenario.yaml",
            "id: handoff\nwhen:\n  - user: a person please\nthen:\n  - scorer: handoff-triggered\n",
        );
        common::write(
            dir,
            "agent-error.scenario.yaml",
            "id: agent_error\nwhen:\n  - user: hello\nthen:\n  - scorer: no-error\n",
        );
    }
}

fn run(dir: &Path, addr: SocketAddr, extra: &[&str]) -> (Option<i32>, Value, String) {
    let (out, report) = common::run_with_report(
        common::command_in(dir)
            .args(["run", "--agent-url", &format!("http://{addr}/turn")])
            .args(["--timeout", "1s"])
            .args(extra)
            .arg("."),
        &dir.join("report.json"),
    );
    (out.code, report, out.stdout + &out.stderr)
}

#[test]
fn each_behaviour_gets_its_verdict_and_an_error_of_the_run_exits_2() {
    let addr = start_agent();
    let dir = tempfile::tempdir().unwrap();
    let conversations = [
        "paraphrase",
        "contradiction",
        "wrong_argument",
        "extra_tool_call",
        "missing_tool_call",
        "transfer",
        "wrong_transfer",
        "flaky_503",
        "hang",
    ];
    write_suite(dir.path(), &conversations, true);
    let junit = dir.path().join("junit.xml");
    let (code, report, stdout) = run(
        dir.path(),
        addr,
        &["--retries", "2", "--junit", junit.to_str().unwrap()],
    );
    let got = common::case_statuses(&report);
    let want: std::collections::BTreeMap<String, String> = [
        ("paraphrase", "passed"),
        ("contradiction", "failed"),
        ("wrong_argument", "failed"),
        ("extra_tool_call", "failed"),
        ("missing_tool_call", "failed"),
        ("transfer", "passed"),
        ("wrong_transfer", "failed"),
        ("flaky_503", "passed"),
        ("hang", "error"),
        ("handoff", "passed"),
        ("agent_error", "failed"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    assert_eq!(got, want, "{stdout}");
    assert_eq!(code, Some(2), "an error of the run exits 2\n{stdout}");

    // The 503 was retried: two attempts on its one turn.
    let flaky = common::case(&report, "flaky_503");
    assert_eq!(flaky["turns"][0]["attempts"], 2);
    // The table names each conversation and the totals line counts every turn.
    common::assert_contains(&stdout, &["Conversation"]);
    common::assert_contains(&stdout, &["Total: 11 conversations, 11 turns"]);

    // The JUnit file reads back with a real XML parser and keeps names and failures.
    let xml = fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let case = |name: &str| {
        doc.descendants()
            .find(|n| n.has_tag_name("testcase") && n.attribute("name") == Some(name))
            .unwrap_or_else(|| panic!("no testcase {name} in\n{xml}"))
    };
    assert!(
        case("contradiction")
            .children()
            .any(|n| n.has_tag_name("failure"))
    );
    assert!(case("hang").children().any(|n| n.has_tag_name("error")));
    assert!(
        !case("paraphrase")
            .children()
            .any(|n| n.has_tag_name("failure") || n.has_tag_name("error"))
    );
}

#[test]
fn failures_without_errors_exit_1_and_a_clean_run_exits_0() {
    let addr = start_agent();
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path(), &["paraphrase", "contradiction"], false);
    let (code, report, _) = run(dir.path(), addr, &[]);
    assert_eq!(code, Some(1));
    assert_eq!(common::case_statuses(&report)["contradiction"], "failed");

    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path(), &["paraphrase", "transfer"], false);
    let (code, report, stdout) = run(dir.path(), addr, &[]);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(report["cases"].as_array().unwrap().len(), 2);
}

#[test]
fn filter_and_name_select_cases() {
    let addr = start_agent();
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path(), &["paraphrase", "contradiction"], false);
    let (code, report, _) = run(dir.path(), addr, &["--name", "para*"]);
    assert_eq!(code, Some(0));
    assert_eq!(common::case_statuses(&report).len(), 1);
    // Every SCRAPI conversation carries its file stem as a tag.
    let (code, report, _) = run(dir.path(), addr, &["--filter", "orders"]);
    assert_eq!(code, Some(1));
    assert_eq!(common::case_statuses(&report).len(), 2);
}

#[test]
fn an_unreachable_agent_is_exit_2_not_a_test_failure() {
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path(), &["paraphrase"], false);
    // Bind then drop: nothing listens on this port any more.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let (code, report, out) = run(dir.path(), addr, &["--retries", "0"]);
    assert_eq!(code, Some(2), "{out}");
    assert_eq!(common::case_statuses(&report)["paraphrase"], "error");
}

#[test]
fn a_golden_that_does_not_load_stops_the_run_before_any_agent_call() {
    let dir = tempfile::tempdir().unwrap();
    common::write(
        dir.path(),
        "goldens/bad.yaml",
        "conversations:\n  - conversation: x\n    turns: 5\n",
    );
    // No agent listens here: a call would be an error of the run, but none must be made.
    let output = common::command_in(dir.path())
        .args(["run", "--agent-url", "http://127.0.0.1:9/turn", "."])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    common::assert_contains(&stderr, &["bad.yaml:3: error"]);
    common::assert_contains(&stderr, &["nothing was run"]);
}

/// goldgate reads host names in ASCII only (built without Unicode host names, for its size):
/// an international one is refused before any call, saying how to write it.
#[test]
fn an_international_host_name_is_refused_with_its_ascii_form_named() {
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path(), &["paraphrase"], false);
    let outcome = common::goldgate(
        dir.path(),
        &[
            "run",
            "--agent-url",
            "http://bücher.invalid/turn",
            "goldens",
        ],
    );
    assert_eq!(outcome.code, Some(2), "{}", outcome.stderr);
    common::assert_contains(
        &outcome.stderr,
        &[
            "--agent-url `http://bücher.invalid/turn` is not a URL",
            "write an international one in its `xn--` form",
        ],
    );
}

/// A user's report: `url: "localhost:8080/turn"` passed `lint`, then every case of `run` erred
/// with "URL scheme is not allowed", naming no line. goldgate.yaml is refused as it loads, by
/// both, at the line and field, with the URL it was likely meant to be.
#[test]
fn a_url_without_a_scheme_in_goldgate_yaml_is_refused_by_lint_and_run_at_its_line() {
    for (url, keys) in [
        ("localhost:8080/turn", ""),
        (
            "127.0.0.1:8080/turn",
            "    body: { q: '{{text}}' }\n    response: { text: $.reply }\n",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        write_suite(dir.path(), &["paraphrase"], false);
        let config = format!("agent:\n  http:\n    url: \"{url}\"\n{keys}");
        common::write(dir.path(), "goldgate.yaml", config);
        let said = [
            "goldgate.yaml:3:".to_owned(),
            format!("agent.http.url: `{url}` has no scheme: a URL needs `http://` or `https://`"),
            format!("did you mean `http://{url}`?"),
        ];
        let said: Vec<&str> = said.iter().map(String::as_str).collect();
        // A lint error exits 1 (docs/reference.md); a run that cannot be judged, 2.
        for (args, code) in [
            (&["lint", "--config", "goldgate.yaml", "goldens"][..], 1),
            (&["run", "goldens"], 2),
        ] {
            let outcome = common::goldgate(dir.path(), args);
            let all = format!("{}{}", outcome.stdout, outcome.stderr);
            assert_eq!(outcome.code, Some(code), "{args:?}: {all}");
            common::assert_contains(&all, &said);
            common::assert_lacks(&all, &["URL scheme is not allowed", "did not start"]);
        }
    }
}

/// An LLM agent's, a judge's and a CX Agent Studio app's `base_url` are checked as the HTTP
/// agent's URL is, each at its line.
#[test]
fn a_base_url_without_a_scheme_is_a_lint_error_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path(), &["paraphrase"], false);
    let config = "agent:\n  openai: { model: gpt-4o-mini, base_url: \"localhost:11434/v1\" }\n\
                  judge:\n  provider: anthropic\n  model: claude-haiku-4-5\n  base_url: \"ws://127.0.0.1:9/x\"\n";
    common::write(dir.path(), "goldgate.yaml", config);
    let linted = common::goldgate(dir.path(), &["lint", "goldens"]).exits(1);
    linted.says(&[
        "goldgate.yaml:2: error [G101] agent.openai.base_url: `localhost:11434/v1` has no scheme",
        "did you mean `http://localhost:11434/v1`?",
        "goldgate.yaml:6: error [G101] judge.base_url: `ws://127.0.0.1:9/x` has the scheme `ws://`",
    ]);
    let config =
        "agent:\n  ces:\n    app: projects/p/locations/us/apps/a\n    base_url: \"127.0.0.1:9\"\n";
    common::write(dir.path(), "goldgate.yaml", config);
    common::goldgate(dir.path(), &["lint", "goldens"])
        .exits(1)
        .says(&["goldgate.yaml:4: error [G101] agent.ces.base_url: `127.0.0.1:9` has no scheme"]);
    // From a variable, it is checked once expanded, and what the variable held is not quoted.
    let config = "agent:\n  openai: { model: gpt-4o-mini, base_url: \"${LLM_BASE}\" }\n";
    common::write(dir.path(), "goldgate.yaml", config);
    let ran = common::Outcome::of(
        common::command_in(dir.path())
            .env("OPENAI_API_KEY", "sk-test")
            .env("LLM_BASE", "localhost:11434/v1")
            .args(["run", "goldens"]),
    )
    .exits(2);
    ran.warns(&["agent.openai.base_url, its `${VAR}`s expanded, has no scheme"]);
    common::assert_lacks(&format!("{}{}", ran.stdout, ran.stderr), &["11434"]);
}

/// `--agent-url 127.0.0.1:8080/turn` said "agent.http.url: not a URL" in every case, naming
/// a key of goldgate.yaml the value did not come from. The flag, or its variable, is named.
#[test]
fn a_url_without_a_scheme_from_the_flag_or_its_variable_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path(), &["paraphrase"], false);
    let url = "127.0.0.1:8080/turn";
    let flag = common::goldgate(dir.path(), &["run", "--agent-url", url, "goldens"]);
    let variable = common::Outcome::of(
        common::command_in(dir.path())
            .env("GOLDGATE_AGENT_URL", url)
            .args(["run", "goldens"]),
    );
    for (outcome, given) in [(flag, "--agent-url"), (variable, "GOLDGATE_AGENT_URL")] {
        let outcome = outcome.exits(2);
        outcome.warns(&[
            &format!(
                "goldgate: {given} `{url}` has no scheme: a URL needs `http://` or `https://`"
            ),
            &format!("hint: did you mean `http://{url}`?"),
        ]);
        common::assert_lacks(&outcome.stderr, &["agent.http.url", "did not start"]);
    }
    // A password, `#` and `?` in it included, is never quoted.
    let secret = "user:s3cr#t?x@127.0.0.1:8080/turn";
    let refused = common::goldgate(dir.path(), &["run", "--agent-url", secret, "goldens"]).exits(2);
    refused.warns(&["--agent-url `…@127.0.0.1:8080/turn` has no scheme"]);
    common::assert_lacks(&refused.stderr, &["s3cr", "user:"]);
}

/// A call of the expected tool with other arguments is the expected call gone wrong: one
/// failure naming every argument that differs, not also an unexpected call, which read as a
/// second call the agent never made.
#[test]
fn a_call_with_other_arguments_is_one_failure_naming_each_difference() {
    let addr = start_agent();
    let dir = tempfile::tempdir().unwrap();
    common::order_golden(
        dir.path(),
        "  - conversation: several_wrong_arguments\n    turns:\n      - user: Where is ORD-556?\n        \
         tool_calls:\n          - action: lookup_order\n            args: { order_id: ORD-556, \
         customer: { id: 7 } }\n        agent: Your order ORD-12345 has shipped and should arrive \
         by April 18th.\n",
    );
    let (code, report, output) = run(dir.path(), addr, &[]);
    assert_eq!(code, Some(1), "{output}");
    let reason = r#"lookup_order called with other arguments: order_id: expected "ORD-556", got "ORD-555"; customer: missing"#;
    common::assert_contains(&output, &[reason]);
    common::assert_lacks(&output, &["unexpected tool call"]);
    let checks = common::case(&report, "several_wrong_arguments")["turns"][0]["checks"]
        .as_array()
        .unwrap()
        .clone();
    let failed: Vec<&Value> = checks.iter().filter(|c| c["status"] == "failed").collect();
    assert_eq!(failed.len(), 1, "{checks:#?}");
    assert_eq!(failed[0]["label"], "tool call lookup_order");
    assert_eq!(failed[0]["reason"], reason);
}

/// A `response.tool_calls` path without `[*]` finds the list of calls as one call: the error
/// names that path and its fix, not only the `$.name` that then finds nothing.
#[test]
fn a_tool_calls_path_without_a_star_is_named_with_its_fix() {
    let addr = common::serve(axum::Router::new().route(
        "/chat",
        axum::routing::post(|| async {
            Json(json!({"reply": "Shipped.", "tools": [{"name": "lookup_order", "arguments": {}}]}))
        }),
    ));
    let dir = tempfile::tempdir().unwrap();
    common::write(
        dir.path(),
        "goldgate.yaml",
        format!(
            "agent:\n  http:\n    url: http://{addr}/chat\n    body: {{ q: '{{{{text}}}}' }}\n    \
             response: {{ text: $.reply, tool_calls: $.tools }}\nrun: {{ retries: 0 }}\n"
        ),
    );
    common::order_golden(dir.path(), &common::order_conversation("lookup"));
    common::goldgate(dir.path(), &["run", "goldens"])
        .exits(2)
        .says(&[
            "`response.tool_calls: $.tools` found a list, not the calls in it: write \
                 `$.tools[*]` to read each item as a tool call",
        ]);
}

/// An agent over HTTPS whose certificate the system trusts is played. The system's roots are
/// read when the first certificate is verified; `SSL_CERT_FILE` names them here, as it does
/// for OpenSSL, so that the test's own CA is the one trusted.
#[test]
fn an_https_agent_with_a_trusted_certificate_is_played() {
    let tls = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tls");
    let addr = serve_tls(
        &tls.join("trusted-server.pem"),
        &tls.join("trusted-server.key"),
    );
    let outcome = play_with_roots(&format!("https://{addr}/turn"), &tls.join("trusted-ca.pem"));
    assert_eq!(outcome.code, Some(0), "{outcome:?}");
    common::assert_contains(&outcome.stdout, &["Cases: 1 passed, 0 failed, 0 errors"]);
}

/// A machine without root certificates (a slim container) plays a plain-HTTP agent: only an
/// HTTPS one needs them, and its case then says they could not be read.
#[test]
fn without_root_certificates_only_an_https_agent_errs() {
    let tls = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tls");
    let none = tls.join("no-such-file.pem");
    let addr = common::serve_turn(
        || async {
            Json(json!({
                "messages": [{"text": SHIPPED}],
                "tool_calls": [{"name": "lookup_order", "args": {"order_id": "ORD-12345"}, "response": {"status": "shipped"}}],
            }))
        },
        (),
    );
    let outcome = play_with_roots(&format!("http://{addr}/turn"), &none);
    assert_eq!(outcome.code, Some(0), "{outcome:?}");

    let addr = serve_tls(
        &tls.join("trusted-server.pem"),
        &tls.join("trusted-server.key"),
    );
    let outcome = play_with_roots(&format!("https://{addr}/turn"), &none);
    assert_eq!(outcome.code, Some(2), "{outcome:?}");
    common::assert_contains(
        &outcome.stdout,
        &["cannot read the system's root certificates"],
    );
}

/// `goldgate run` of one shipped-order case against the agent at `url`, with the system's
/// root certificates read from `roots` alone.
fn play_with_roots(url: &str, roots: &Path) -> common::Outcome {
    let dir = tempfile::tempdir().unwrap();
    common::write(
        dir.path(),
        "goldgate.yaml",
        format!("agent:\n  http: {{ url: \"{url}\" }}\nrun: {{ retries: 0 }}\n"),
    );
    common::order_golden(dir.path(), &common::order_conversation("over_tls"));
    common::Outcome::of(
        common::command_in(dir.path())
            .env("SSL_CERT_FILE", roots)
            .env("SSL_CERT_DIR", dir.path())
            .args(["run", "goldens"]),
    )
}

/// A loopback HTTPS server answering every request with the shipped order, the connection
/// closed after each answer.
fn serve_tls(certificate: &Path, key: &Path) -> SocketAddr {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use std::io::{BufRead, BufReader, Read, Write};

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certificates: Vec<_> = CertificateDer::pem_file_iter(certificate)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let config = Arc::new(
        rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certificates, PrivateKeyDer::from_pem_file(key).unwrap())
            .unwrap(),
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let reply = json!({
        "messages": [{"text": SHIPPED}],
        "tool_calls": [{"name": "lookup_order", "args": {"order_id": "ORD-12345"}}],
    })
    .to_string();
    std::thread::spawn(move || {
        for tcp in listener.incoming().flatten() {
            let connection = rustls::ServerConnection::new(Arc::clone(&config)).unwrap();
            let mut reader = BufReader::new(rustls::StreamOwned::new(connection, tcp));
            let mut length = 0;
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|read| read > 2) {
                if let Some((name, value)) = line.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap_or(0);
                }
                line.clear();
            }
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_err() {
                continue;
            }
            let mut stream = reader.into_inner();
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                 connection: close\r\n\r\n{reply}",
                reply.len()
            );
            let _ = stream.write_all(answer.as_bytes());
            stream.conn.send_close_notify();
            let _ = stream.flush();
        }
    });
    addr
}

/// The golden docs/agents.md describes its requests with.
const DOCUMENTED_GOLDEN: &str = "common_session_parameters:
  order_12345_status: shipped
conversations:
  - conversation: happy_path_order_lookup
    turns:
      - user: Hi, I'd like to check on my order
        agent: Of course! Could you share your order ID?
      - user: It's ORD-12345
        tool_calls:
          - action: lookup_order
            args: { order_id: ORD-12345 }
            output: { status: shipped }
        agent: Your order ORD-12345 has shipped.
";

type Sent = Arc<Mutex<Vec<Value>>>;

/// Keeps every request and answers as the golden expects.
async fn recording(State(sent): State<Sent>, Json(request): Json<Value>) -> Json<Value> {
    sent.lock().unwrap().push(request.clone());
    Json(match request["turn"].as_u64() {
        Some(1) => json!({"messages": [{"text": "Of course! Could you share your order ID?"}]}),
        _ => json!({
            "messages": [{"text": "Your order ORD-12345 has shipped."}],
            "tool_calls": [{"name": "lookup_order", "args": {"order_id": "ORD-12345"}, "response": {"status": "shipped"}}],
        }),
    })
}

/// The requests docs/agents.md shows an HTTP agent are the ones it is sent, field for field but
/// the session id (new every run): no `id`, which only command agents' lines carry. An agent
/// written from the docs that read `id` crashed.
#[test]
fn an_http_agent_is_sent_the_requests_the_docs_show() {
    let docs = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/agents.md"));
    let docs = docs.unwrap();
    // The requests are the JSON examples with a turn; the reply has none.
    let shown: Vec<Value> = (docs.split("```json\n").skip(1))
        .filter_map(|block| block.split("```").next())
        .map(|text| serde_json::from_str::<Value>(text).unwrap())
        .filter(|example| example.get("turn").is_some())
        .collect();
    assert!(!shown.is_empty(), "docs/agents.md shows no request");
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "goldens/orders.yaml", DOCUMENTED_GOLDEN);
    let sent = Sent::default();
    let addr = common::serve_turn(recording, Arc::clone(&sent));
    let url = format!("http://{addr}/turn");
    common::goldgate(dir.path(), &["run", "--agent-url", &url, "goldens"]).exits(0);
    let sent = sent.lock().unwrap().clone();
    for mut shown in shown {
        let turn = (sent.iter().find(|sent| sent["turn"] == shown["turn"]))
            .unwrap_or_else(|| panic!("no request of turn {}: {sent:#?}", shown["turn"]));
        shown["session"] = turn["session"].clone();
        assert_eq!(&shown, turn);
    }
}
