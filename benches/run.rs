//! Runner overhead: plays in-memory cases against a loopback HTTP agent and prints how close
//! the run comes to the agent's own latency, and how many turns per second it can drive.
//!
//! - Latency: 1,000 one-turn cases against an agent that sleeps 20 ms per turn. The ideal wall
//!   time is cases × 20 ms / concurrency; goal: within 5% of it (ratio <= 1.05).
//! - Throughput: 5,000 one-turn cases against an agent that answers at once; goal: more than
//!   5,000 turns per second.
//!
//! The agent runs on its own thread and runtime, as a separate process would, and listens on
//! 127.0.0.1 only. Every case must pass, so a broken setup cannot be timed as a fast one.
//! Run with `cargo bench --bench run`.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use goldgate::agent::connect::http_client;
use goldgate::agent::http::HttpAgent;
use goldgate::agent::protocol::{Message, Reply, ToolCall, TurnRequest};
use goldgate::model::{
    ArgsMatcher, Case, Expectation, ExpectationKind, ExpectedToolCall, Format, Input, Location,
    MatchType, Matcher, Turn, ValueMatcher,
};
use goldgate::outcome::{RunResult, Status};
use goldgate::run::{self, RunOptions, Stop};
use goldgate::score::Grader;
use reqwest::Url;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

const LATENCY_CASES: usize = 1_000;
const AGENT_LATENCY: Duration = Duration::from_millis(20);
const THROUGHPUT_CASES: usize = 5_000;
const CONCURRENCIES: [usize; 2] = [8, 32];

/// The one reply the agent gives: one message, one tool call, both expected by every case.
fn reply() -> Reply {
    Reply {
        messages: vec![Message {
            text: "Your order ORD-12345 has shipped and should arrive by April 18th.".to_owned(),
            agent: None,
        }],
        tool_calls: vec![ToolCall {
            name: "lookup_order".to_owned(),
            args: json!({ "order_id": "ORD-12345" }),
            response: Some(json!({ "status": "shipped" })),
        }],
        ..Reply::default()
    }
}

/// The reply's bytes and the sleep before sending them.
#[derive(Clone)]
struct Agent {
    body: axum::body::Bytes,
    latency: Duration,
}

async fn answer(State(agent): State<Agent>, Json(_): Json<TurnRequest>) -> impl IntoResponse {
    if !agent.latency.is_zero() {
        tokio::time::sleep(agent.latency).await;
    }
    ([(CONTENT_TYPE, "application/json")], agent.body)
}

/// Starts an agent that answers every turn after `latency`, on its own thread and runtime.
fn start_agent(latency: Duration) -> SocketAddr {
    let body = serde_json::to_vec(&reply()).expect("the reply serializes");
    let state = Agent {
        body: body.into(),
        latency,
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().expect("agent runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind 127.0.0.1");
            tx.send(listener.local_addr().expect("local address"))
                .expect("report the address");
            let app = axum::Router::new()
                .route("/turn", axum::routing::post(answer))
                .with_state(state);
            axum::serve(listener, app).await.expect("serve");
        });
    });
    rx.recv().expect("the agent started")
}

/// `count` one-turn cases whose expectations the agent's reply meets: a `contains` text match
/// and the tool call, so that scoring stays cheap and nothing counts as an unexpected call.
fn cases(count: usize) -> Vec<Arc<Case>> {
    let file: Arc<Path> = Arc::from(Path::new("bench.yaml"));
    let at = |line| Location::new(&file, line, 1);
    (0..count)
        .map(|i| {
            let line = u32::try_from(i).unwrap_or(u32::MAX);
            let text = ExpectationKind::AgentText {
                matcher: Matcher::new(MatchType::Contains, Value::from("has shipped")),
                agent: None,
            };
            let call = ExpectationKind::ToolCall(ExpectedToolCall {
                name: "lookup_order".to_owned(),
                args: ArgsMatcher {
                    fields: vec![(
                        "order_id".to_owned(),
                        ValueMatcher::Leaf(Matcher::new(
                            MatchType::Contains,
                            Value::from("ORD-12345"),
                        )),
                    )],
                },
                agent: None,
            });
            let expectations = [text, call]
                .into_iter()
                .map(|kind| Expectation {
                    location: at(line),
                    kind,
                    note: None,
                })
                .collect();
            Arc::new(Case {
                id: format!("case-{i}"),
                name: format!("case {i}"),
                description: None,
                format: Format::ScrapiGolden,
                location: at(line),
                tags: Vec::new(),
                session_parameters: serde_json::Map::new(),
                system_prompt: None,
                context: Vec::new(),
                turns: vec![Turn {
                    index: 1,
                    location: at(line),
                    inputs: vec![Input::Text(format!("Where is ORD-12345? ({i})"))],
                    expectations,
                    tool_mocks: Vec::new(),
                    recorded_reply: None,
                }],
                checks: Vec::new(),
                weight: 1.0,
            })
        })
        .collect()
}

/// Runs `count` cases at `concurrency` against the agent at `addr`, with the CLI's runtime
/// flavour, and checks that every case passed.
fn run_cases(addr: SocketAddr, count: usize, concurrency: usize) -> RunResult {
    let url = Url::parse(&format!("http://{addr}/turn")).expect("loopback URL");
    let options = RunOptions {
        concurrency,
        timeout: Duration::from_secs(30),
        retries: 0,
        backoff: Duration::from_millis(100),
        record: None,
    };
    let cases = cases(count);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runner runtime");
    let result = runtime.block_on(async {
        let client = http_client().expect("HTTP client");
        let agent = Arc::new(HttpAgent::new(client, url, HeaderMap::new()));
        run::run(
            cases,
            agent,
            Arc::new(Grader::default()),
            &options,
            &Stop::default(),
            &|_| {},
        )
        .await
    });
    assert_eq!(result.cases.len(), count, "every case ran");
    if let Some(bad) = result.cases.iter().find(|c| c.status != Status::Passed) {
        let why = bad
            .error
            .clone()
            .or_else(|| bad.all_checks().find_map(|c| c.reason.clone()))
            .unwrap_or_default();
        panic!("case {} is {}: {why}", bad.case.id, bad.status.name());
    }
    result
}

/// Mean latency of the turns as the client saw them (agent sleep included).
fn mean_turn_latency(result: &RunResult) -> Duration {
    let latencies: Vec<Duration> = result
        .cases
        .iter()
        .flat_map(|c| &c.turns)
        .filter_map(|t| t.exchange.as_ref().map(|e| e.latency))
        .collect();
    let count = u32::try_from(latencies.len().max(1)).unwrap_or(u32::MAX);
    latencies.iter().sum::<Duration>() / count
}

fn main() {
    let slow = start_agent(AGENT_LATENCY);
    let fast = start_agent(Duration::ZERO);

    println!(
        "latency: {LATENCY_CASES} cases, agent sleeps {} ms per turn",
        AGENT_LATENCY.as_millis()
    );
    for concurrency in CONCURRENCIES {
        let result = run_cases(slow, LATENCY_CASES, concurrency);
        let ideal = AGENT_LATENCY * u32::try_from(LATENCY_CASES).expect("few cases")
            / u32::try_from(concurrency).expect("small concurrency");
        let ratio = result.duration.as_secs_f64() / ideal.as_secs_f64();
        println!("  concurrency {concurrency}:");
        println!("    wall:          {:.3} s", result.duration.as_secs_f64());
        println!("    ideal:         {:.3} s", ideal.as_secs_f64());
        println!(
            "    mean turn:     {:.2} ms",
            mean_turn_latency(&result).as_secs_f64() * 1e3
        );
        println!(
            "    ratio:         {ratio:.3}  goal <= 1.05  {}",
            verdict(ratio <= 1.05)
        );
    }

    println!("throughput: {THROUGHPUT_CASES} cases, agent answers at once");
    for concurrency in CONCURRENCIES {
        let result = run_cases(fast, THROUGHPUT_CASES, concurrency);
        let turns: usize = result.cases.iter().map(|c| c.turns.len()).sum();
        let per_second = turns as f64 / result.duration.as_secs_f64();
        println!("  concurrency {concurrency}:");
        println!("    wall:          {:.3} s", result.duration.as_secs_f64());
        println!(
            "    mean turn:     {:.3} ms",
            mean_turn_latency(&result).as_secs_f64() * 1e3
        );
        println!(
            "    turns/second:  {per_second:.0}  goal > 5000  {}",
            verdict(per_second > 5_000.0)
        );
    }
}

fn verdict(met: bool) -> &'static str {
    if met { "(met)" } else { "(MISSED)" }
}
