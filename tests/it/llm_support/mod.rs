//! Fakes of the three LLM providers on 127.0.0.1 for the judge and LLM-agent tests.
//!
//! Each fake checks every request as the real API would (path, auth headers, required fields,
//! the pairing of tool calls with their results) and answers in the provider's real reply and
//! error shapes. A request the real API would refuse gets the provider's 400 and is logged as
//! a problem, so a test can assert that goldgate sent none. What the fake model answers is up
//! to the test: a [`Brain`] sees a provider-neutral view of the request ([`Seen`]).

// Each test binary uses its own part of these helpers.
#![allow(dead_code)]

mod checks;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

use assert_cmd::Command;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The only key the fakes accept; distinctive, so that tests can look for it in every output.
pub const KEY: &str = "sk-test-GOLDGATE-SECRET-7f3a9c";

/// Tokens each fake reply reports.
pub const INPUT_TOKENS: u64 = 100;
pub const OUTPUT_TOKENS: u64 = 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    Anthropic,
    OpenAi,
    Gemini,
}

impl Provider {
    pub const ALL: [Provider; 3] = [Provider::Anthropic, Provider::OpenAi, Provider::Gemini];

    /// The same provider as goldgate's model names it.
    pub fn model(self) -> goldgate::model::Provider {
        match self {
            Provider::Anthropic => goldgate::model::Provider::Anthropic,
            Provider::OpenAi => goldgate::model::Provider::OpenAi,
            Provider::Gemini => goldgate::model::Provider::Gemini,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::OpenAi => "openai",
            Provider::Gemini => "gemini",
        }
    }

    pub fn key_var(self) -> &'static str {
        match self {
            Provider::Anthropic => "ANTHROPIC_API_KEY",
            Provider::OpenAi => "OPENAI_API_KEY",
            Provider::Gemini => "GEMINI_API_KEY",
        }
    }

    pub fn base_url_var(self) -> &'static str {
        match self {
            Provider::Anthropic => "ANTHROPIC_BASE_URL",
            Provider::OpenAi => "OPENAI_BASE_URL",
            Provider::Gemini => "GOOGLE_GEMINI_BASE_URL",
        }
    }
}

/// What the fake model sees of a request.
#[derive(Clone, Debug, Default)]
pub struct Seen {
    pub system: String,
    /// The text of the latest user message (tool results aside).
    pub user: String,
    /// The results in the latest message, as (tool name, output), in the calls' order.
    pub tool_results: Vec<(String, Value)>,
    /// The tool the request forces, if any.
    pub forced: Option<String>,
    /// The 1-based number of this request to this fake.
    pub number: u32,
}

/// What the fake model answers.
#[derive(Clone, Debug)]
pub enum Answer {
    Text(String),
    /// Tool calls, several at once when more than one.
    Calls(Vec<(String, Value)>),
    /// The model declines, as each provider says it.
    Refusal,
    /// An error status in the provider's shape, with `retry-after` when given.
    Error {
        status: u16,
        retry_after: Option<&'static str>,
        message: String,
    },
}

pub type Brain = Arc<dyn Fn(&Seen) -> Answer + Send + Sync>;

/// A judge that answers its forced tool with `args(prompt)`.
pub fn judge(args: impl Fn(&str) -> Value + Send + Sync + 'static) -> Brain {
    Arc::new(move |seen: &Seen| {
        let tool = seen.forced.clone().unwrap_or_default();
        Answer::Calls(vec![(tool, args(&seen.user))])
    })
}

#[derive(Default)]
struct Log {
    bodies: Vec<Value>,
    problems: Vec<String>,
}

struct Fake {
    provider: Provider,
    brain: Brain,
    log: Mutex<Log>,
}

/// A running fake provider.
pub struct FakeProvider {
    pub provider: Provider,
    pub addr: SocketAddr,
    fake: Arc<Fake>,
}

impl FakeProvider {
    pub fn start(provider: Provider, brain: Brain) -> Self {
        let fake = Arc::new(Fake {
            provider,
            brain,
            log: Mutex::default(),
        });
        let state = Arc::clone(&fake);
        let app = axum::Router::new().fallback(handle).with_state(state);
        Self {
            provider,
            addr: crate::common::serve(app),
            fake,
        }
    }

    /// The base URL as a user configures it (OpenAI's includes the version).
    pub fn base_url(&self) -> String {
        match self.provider {
            Provider::OpenAi => format!("http://{}/v1", self.addr),
            _ => format!("http://{}", self.addr),
        }
    }

    /// Requests received so far.
    pub fn requests(&self) -> usize {
        self.fake.log.lock().unwrap().bodies.len()
    }

    pub fn bodies(&self) -> Vec<Value> {
        self.fake.log.lock().unwrap().bodies.clone()
    }

    /// Fails when any request was one the real API would have refused.
    pub fn assert_valid(&self) {
        let log = self.fake.log.lock().unwrap();
        assert!(
            log.problems.is_empty(),
            "{} refused: {:?}",
            self.provider.name(),
            log.problems
        );
    }
}

async fn handle(
    State(fake): State<Arc<Fake>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let number = {
        let mut log = fake.log.lock().unwrap();
        log.bodies.push(body.clone());
        u32::try_from(log.bodies.len()).unwrap()
    };
    let checked = match fake.provider {
        Provider::Anthropic => checks::anthropic::check(uri.path(), &headers, &body),
        Provider::OpenAi => checks::openai::check(uri.path(), &headers, &body),
        Provider::Gemini => checks::gemini::check(uri.path(), &headers, &body),
    };
    let answer = match checked {
        Ok(mut seen) => {
            seen.number = number;
            (fake.brain)(&seen)
        }
        Err((status, message)) => {
            fake.log.lock().unwrap().problems.push(message.clone());
            Answer::Error {
                status,
                retry_after: None,
                message,
            }
        }
    };
    let (status, retry_after, reply) = match answer {
        Answer::Error {
            status,
            retry_after,
            message,
        } => (
            status,
            retry_after,
            error_body(fake.provider, status, &message),
        ),
        answer => (200, None, reply_body(fake.provider, &answer, number)),
    };
    let mut response = (StatusCode::from_u16(status).unwrap(), axum::Json(reply)).into_response();
    if let Some(wait) = retry_after {
        response
            .headers_mut()
            .insert("retry-after", wait.parse().unwrap());
    }
    response
}

fn error_body(provider: Provider, status: u16, message: &str) -> Value {
    match provider {
        Provider::Anthropic => {
            let kind = match status {
                401 => "authentication_error",
                404 => "not_found_error",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                500..=599 => "api_error",
                _ => "invalid_request_error",
            };
            json!({ "type": "error", "error": { "type": kind, "message": message } })
        }
        Provider::OpenAi => json!({ "error": {
            "message": message, "type": "invalid_request_error", "param": null, "code": null
        } }),
        Provider::Gemini => {
            let kind = match status {
                401 | 403 => "PERMISSION_DENIED",
                404 => "NOT_FOUND",
                429 => "RESOURCE_EXHAUSTED",
                500..=599 => "UNAVAILABLE",
                _ => "INVALID_ARGUMENT",
            };
            json!({ "error": { "code": status, "message": message, "status": kind } })
        }
    }
}

fn refusal_body(provider: Provider) -> Value {
    match provider {
        Provider::Anthropic => json!({
            "id": "msg_refused", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [], "stop_reason": "refusal", "stop_sequence": null,
            "usage": { "input_tokens": INPUT_TOKENS, "output_tokens": 0 }
        }),
        Provider::OpenAi => json!({
            "id": "chatcmpl-refused", "object": "chat.completion", "created": 1_700_000_000,
            "model": "gpt-test",
            "choices": [{ "index": 0, "logprobs": null, "finish_reason": "stop",
                "message": { "role": "assistant", "content": null,
                    "refusal": "I can't help with grading this." } }],
            "usage": { "prompt_tokens": INPUT_TOKENS, "completion_tokens": 0,
                "total_tokens": INPUT_TOKENS }
        }),
        Provider::Gemini => json!({
            "candidates": [{ "finishReason": "SAFETY", "index": 0, "safetyRatings": [] }],
            "usageMetadata": { "promptTokenCount": INPUT_TOKENS, "totalTokenCount": INPUT_TOKENS },
            "modelVersion": "gemini-test"
        }),
    }
}

fn reply_body(provider: Provider, answer: &Answer, number: u32) -> Value {
    let (text, calls) = match answer {
        Answer::Text(text) => (Some(text.as_str()), &[][..]),
        Answer::Calls(calls) => (None, calls.as_slice()),
        Answer::Refusal => return refusal_body(provider),
        Answer::Error { .. } => unreachable!("errors have their own body"),
    };
    match provider {
        Provider::Anthropic => {
            let mut content: Vec<Value> = text
                .map(|t| json!({ "type": "text", "text": t }))
                .into_iter()
                .collect();
            for (i, (name, args)) in calls.iter().enumerate() {
                content.push(json!({
                    "type": "tool_use", "id": format!("toolu_{number}_{i}"), "name": name, "input": args
                }));
            }
            json!({
                "id": format!("msg_{number}"), "type": "message", "role": "assistant",
                "model": "claude-test", "content": content,
                "stop_reason": if calls.is_empty() { "end_turn" } else { "tool_use" },
                "stop_sequence": null,
                "usage": { "input_tokens": INPUT_TOKENS, "output_tokens": OUTPUT_TOKENS }
            })
        }
        Provider::OpenAi => {
            let tool_calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(i, (name, args))| {
                    json!({ "id": format!("call_{number}_{i}"), "type": "function",
                        "function": { "name": name, "arguments": args.to_string() } })
                })
                .collect();
            let mut message = json!({ "role": "assistant", "content": text, "refusal": null });
            if !tool_calls.is_empty() {
                message["tool_calls"] = json!(tool_calls);
            }
            json!({
                "id": format!("chatcmpl-{number}"), "object": "chat.completion", "created": 1_700_000_000,
                "model": "gpt-test",
                "choices": [{ "index": 0, "message": message, "logprobs": null,
                    "finish_reason": if calls.is_empty() { "stop" } else { "tool_calls" } }],
                "usage": { "prompt_tokens": INPUT_TOKENS, "completion_tokens": OUTPUT_TOKENS,
                    "total_tokens": INPUT_TOKENS + OUTPUT_TOKENS }
            })
        }
        Provider::Gemini => {
            let mut parts: Vec<Value> = text.map(|t| json!({ "text": t })).into_iter().collect();
            for (name, args) in calls {
                parts.push(json!({ "functionCall": { "name": name, "args": args } }));
            }
            json!({
                "candidates": [{ "content": { "role": "model", "parts": parts },
                    "finishReason": "STOP", "index": 0 }],
                "usageMetadata": { "promptTokenCount": INPUT_TOKENS,
                    "candidatesTokenCount": OUTPUT_TOKENS,
                    "totalTokenCount": INPUT_TOKENS + OUTPUT_TOKENS },
                "modelVersion": "gemini-test"
            })
        }
    }
}

/// A scripted HTTP agent (goldgate's protocol): each conversation's reply, by id.
pub fn start_agent(replies: HashMap<&'static str, Value>) -> String {
    let app = axum::Router::new()
        .route(
            "/turn",
            axum::routing::post(
                |State(replies): State<Arc<HashMap<&'static str, Value>>>,
                 axum::Json(request): axum::Json<Value>| async move {
                    let conversation = request["conversation"].as_str().unwrap_or_default();
                    match replies.get(conversation) {
                        Some(reply) => axum::Json(reply.clone()).into_response(),
                        None => StatusCode::NOT_FOUND.into_response(),
                    }
                },
            ),
        )
        .with_state(Arc::new(replies));
    format!("http://{}/turn", crate::common::serve(app))
}

/// `goldgate` in `dir`, with no provider key or endpoint inherited from the environment.
pub fn goldgate(dir: &Path) -> Command {
    let mut command = crate::common::command_in(dir);
    for provider in Provider::ALL {
        command
            .env_remove(provider.key_var())
            .env_remove(provider.base_url_var());
    }
    command.env_remove("GOLDGATE_CACHE_DIR");
    command
}

/// What a run left behind: how it ended (its exit code and streams, read through
/// [`crate::common::Outcome`]'s methods) and its report.
pub struct Ran {
    pub outcome: crate::common::Outcome,
    pub report: Value,
}

impl std::ops::Deref for Ran {
    type Target = crate::common::Outcome;

    fn deref(&self) -> &crate::common::Outcome {
        &self.outcome
    }
}

impl Ran {
    /// [`crate::common::Outcome::exits`], keeping the report.
    #[track_caller]
    pub fn exits(self, code: i32) -> Ran {
        Ran {
            outcome: self.outcome.exits(code),
            report: self.report,
        }
    }
}

/// Runs `command` with `--output report.json` (in `dir`) and reads the report back.
pub fn run(command: &mut Command, dir: &Path) -> Ran {
    let (outcome, report) = crate::common::run_with_report(command, &dir.join("report.json"));
    let ran = Ran { outcome, report };
    assert!(
        !ran.stdout.contains(KEY) && !ran.stderr.contains(KEY),
        "the key leaked into the output"
    );
    assert!(
        !ran.report.to_string().contains(KEY),
        "the key leaked into the report"
    );
    ran
}

/// Every check of the report (turn checks and case checks) of case `id`.
pub fn checks<'r>(report: &'r Value, id: &str) -> Vec<&'r Value> {
    let case = crate::common::case(report, id);
    case["turns"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| t["checks"].as_array().into_iter().flatten())
        .chain(case["checks"].as_array().into_iter().flatten())
        .collect()
}

/// Fails when any file under `dir` holds the key.
pub fn assert_no_key_under(dir: &Path) {
    for entry in crate::common::files_under(dir) {
        let text = std::fs::read(&entry).unwrap();
        assert!(
            !String::from_utf8_lossy(&text).contains(KEY),
            "the key leaked into {}",
            entry.display()
        );
    }
}

/// A simulated user played by `fake`, with its key, no retries and `cache`.
pub fn simulator(
    fake: &FakeProvider,
    cache: Option<goldgate::llm::cache::JudgeCache>,
) -> goldgate::llm::simulator::Simulator {
    use goldgate::llm::client::{LlmClient, Patience};
    let base = fake.base_url();
    let env = move |name: &str| (name == fake.provider.key_var()).then(|| KEY.to_owned());
    let client = LlmClient::new(
        fake.provider.model(),
        &goldgate::config::Endpoint {
            model: None,
            base_url: Some(base),
        },
        &env,
        goldgate::net::http_client().unwrap(),
        Patience {
            timeout: std::time::Duration::from_secs(10),
            retries: 0,
            backoff: std::time::Duration::from_millis(1),
        },
    )
    .unwrap();
    goldgate::llm::simulator::Simulator::new(client, cache)
}
