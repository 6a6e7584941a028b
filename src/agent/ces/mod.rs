//! A CX Agent Studio app (`ces.googleapis.com`) as the agent under test.
//!
//! Each case and repeat is one session, named after goldgate's session id; each turn is one
//! `POST {base}/{version}/{app}/sessions/{id}:runSession` with `config.session` and the turn's
//! inputs (see [`wire`]). When the app asks goldgate to run client-function tools
//! (`outputs[].toolCalls`), each call is answered with the golden's mocked output for that tool
//! and those arguments, in a follow-up `toolResponses` input of the same turn, and recorded as
//! a tool call; a call with no mock is answered with an error and reported as the turn's error.
//!
//! 401 and 403 are errors of the run saying the credentials were refused, with Google's
//! message; 429 and 503 are left to the runner's limiter and backoff, like any agent's.
//!
//! With `platform` configured the app is not played turn by turn: [`platform`] pushes the cases
//! as its evaluations, runs them there and reads the platform's scores back.

pub mod auth;
mod platform;
mod tools;
pub mod wire;

use std::time::{Duration, Instant};

use async_trait::async_trait;
use reqwest::Client;
use serde_json::{Value, json};

use super::protocol::EXECUTE_TOOL;
use super::{Agent, TurnRequest};
use crate::config::ces::{CesConfig, DEFAULT_BASE_URL};
use crate::model::ToolMock;
use crate::net::{EndpointError, EndpointErrorKind};
use crate::net::{read_body, retry_after, transport_error};
use crate::transcript::{Exchange, Reply, ReplyError, ToolCall};
use auth::{Credentials, google_message};

/// Follow-up requests answering client tools within one turn, before goldgate gives up on an
/// app that keeps asking.
const MAX_CLIENT_ROUNDS: usize = 10;
/// CES session ids: letters, digits, `-` and `_`, kept short.
const MAX_SESSION_ID: usize = 63;

pub struct CesAgent {
    client: Client,
    config: CesConfig,
    /// `{base}/{version}/`, with the base URL's `${VAR}` expanded.
    prefix: String,
    credentials: Credentials,
    /// The app's tools by display name, listed once, when the first tool test runs.
    tools: tokio::sync::OnceCell<tools::Catalog>,
    /// The evaluation runs platform mode started, for the report.
    runs: std::sync::Mutex<Vec<String>>,
}

impl CesAgent {
    pub fn new(
        client: Client,
        config: CesConfig,
        base_url: Option<String>,
        credentials: Credentials,
    ) -> Self {
        let base = base_url.unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        let prefix = format!("{}/{}/", base.trim_end_matches('/'), config.api_version);
        Self {
            client,
            config,
            prefix,
            credentials,
            tools: tokio::sync::OnceCell::new(),
            runs: std::sync::Mutex::default(),
        }
    }

    /// The session's resource name: goldgate's session id with what CES does not accept
    /// replaced, its random tail kept when it must be shortened.
    fn session_name(&self, session: &str) -> String {
        let id: String = session
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let skip = id.len().saturating_sub(MAX_SESSION_ID);
        format!("{}/sessions/{}", self.config.app, &id[skip..])
    }

    fn session_config(&self, session: &str) -> Value {
        let mut config = json!({ "session": session });
        if let Some(deployment) = &self.config.deployment {
            config["deployment"] = json!(deployment);
        }
        if let Some(agent) = &self.config.entry_agent {
            config["entryAgent"] = json!(agent);
        }
        config
    }

    /// One `runSession` call, and how long its HTTP round trip took (not the token's fetch).
    async fn run_session(
        &self,
        session: &str,
        inputs: Vec<Value>,
    ) -> Result<(Value, Duration), EndpointError> {
        let body = json!({ "config": self.session_config(session), "inputs": inputs });
        let quota = self.config.quota_project.as_deref();
        self.call(&format!("{session}:runSession"), Some(body), quota)
            .await
    }

    /// One call of the API at `path` (under the version's prefix): a POST of `body`, or a GET
    /// without one. Returns the JSON answer and how long the HTTP round trip took.
    async fn call(
        &self,
        path: &str,
        body: Option<Value>,
        quota_project: Option<&str>,
    ) -> Result<(Value, Duration), EndpointError> {
        let method = match body {
            Some(_) => reqwest::Method::POST,
            None => reqwest::Method::GET,
        };
        self.send_as(method, path, body, quota_project).await
    }

    /// [`CesAgent::call`] with any method (platform mode PATCHes evaluations).
    async fn send_as(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
        quota_project: Option<&str>,
    ) -> Result<(Value, Duration), EndpointError> {
        let token = self.credentials.token().await?;
        let started = Instant::now();
        let url = format!("{}{path}", self.prefix);
        let mut request = self.client.request(method, url);
        if let Some(body) = &body {
            request = request.json(body);
        }
        let mut request = request.bearer_auth(token);
        if let Some(project) = quota_project {
            request = request.header("x-goog-user-project", project);
        }
        let response = request.send().await.map_err(transport_error)?;
        let status = response.status();
        if !status.is_success() {
            let wait = retry_after(response.headers(), std::time::SystemTime::now());
            let body = read_body(response).await.unwrap_or_default();
            // Google's own words when the body is its JSON error, else the status's name.
            let google = google_message(&body, self.credentials.secrets())
                .unwrap_or_else(|| status.canonical_reason().unwrap_or_default().to_owned());
            let code = status.as_u16();
            let message = if matches!(code, 401 | 403) {
                self.credentials.forget().await;
                format!(
                    "CX Agent Studio refused the credentials of {} (HTTP {code}): {google}",
                    self.credentials.describe()
                )
            } else {
                format!("CX Agent Studio answered HTTP {code}: {google}")
            };
            return Err(EndpointError {
                retry_after: wait,
                ..EndpointError::new(EndpointErrorKind::Status(code), message)
            });
        }
        let body = read_body(response).await?;
        let round_trip = started.elapsed();
        let value = serde_json::from_slice(&body).map_err(|e| {
            EndpointError::new(
                EndpointErrorKind::Protocol,
                format!("the answer to {} is not JSON: {e}", method_of(path)),
            )
        })?;
        Ok((value, round_trip))
    }

    async fn turn(&self, request: &TurnRequest) -> Result<Exchange, EndpointError> {
        // The turn's HTTP round trips, added up: the time the app took, without token fetches.
        let mut latency = Duration::ZERO;
        let session = self.session_name(&request.session);
        let mut inputs = wire::inputs(&request.input, &request.session_parameters)
            .map_err(|e| EndpointError::new(EndpointErrorKind::Protocol, e))?;
        let given = wire::mocks_of(&request.input);
        let mut heard = Heard::default();
        let mut ttft = None;
        for round in 0..=MAX_CLIENT_ROUNDS {
            let (response, round_trip) = self.run_session(&session, inputs).await?;
            let round_started = latency;
            latency += round_trip;
            let mut read = wire::read(&response)
                .map_err(|e| EndpointError::new(EndpointErrorKind::Protocol, e))?;
            if ttft.is_none() {
                ttft = read
                    .ttft_ms
                    .map(|ms| round_started + Duration::from_secs_f64(ms.max(0.0) / 1000.0));
            }
            let client_calls = std::mem::take(&mut read.client_calls);
            heard.add(read);
            if client_calls.is_empty() {
                break;
            }
            if round == MAX_CLIENT_ROUNDS {
                return Err(EndpointError::new(
                    EndpointErrorKind::Protocol,
                    format!(
                        "the app still asked for client tools after {MAX_CLIENT_ROUNDS} answers in one turn"
                    ),
                ));
            }
            let mut answers = Vec::new();
            for call in client_calls {
                answers.push(heard.answer(call, &request.mocks, &given).await);
            }
            inputs = vec![json!({ "toolResponses": { "toolResponses": answers } })];
        }
        Ok(Exchange {
            reply: heard.reply,
            latency,
            ttft,
        })
    }
}

/// What the app said so far in one turn, over its rounds of client tool calls.
#[derive(Default)]
struct Heard {
    reply: Reply,
    /// The ids of the tool calls recorded, which a later round's diagnostics may repeat.
    seen_ids: Vec<String>,
}

impl Heard {
    /// One round's messages, tool calls the app ran, transfer and usage.
    fn add(&mut self, read: wire::Outputs) {
        let reply = &mut self.reply;
        reply.messages.extend(read.messages);
        for (id, call) in read.tool_calls {
            if let Some(id) = &id {
                if self.seen_ids.contains(id) {
                    continue;
                }
                self.seen_ids.push(id.clone());
            }
            reply.tool_calls.push(call);
        }
        reply.transfer = read.transfer.or(reply.transfer.take());
        if let Some(usage) = read.usage {
            let total = reply.usage.get_or_insert_with(Default::default);
            *total = total.plus(usage);
        }
    }

    /// Runs a client tool call on the golden's mock (a request mock, else one given with the
    /// input), records it, and returns the `ToolResponse` to send back. Without a mock the
    /// app gets an error and the reply says why.
    async fn answer(
        &mut self,
        call: wire::ClientCall,
        mocks: &[ToolMock],
        given: &[(String, Value)],
    ) -> Value {
        self.seen_ids.push(call.id.clone());
        let mock = super::llm::mock_for(&call.name, &call.args, mocks)
            .await
            .map(|mock| mock.output.clone())
            .or_else(|| {
                given
                    .iter()
                    .find(|(name, _)| *name == call.name)
                    .map(|(_, v)| v.clone())
            });
        // The transcript keeps the golden's value; the wire needs a Struct.
        let output = match mock {
            Some(output) => output,
            None => {
                let message = format!(
                    "goldgate: the golden has no mock for client tool `{}` with these arguments",
                    call.name
                );
                self.reply.error.get_or_insert(ReplyError {
                    code: "no_mock".to_owned(),
                    message: message.clone(),
                });
                json!({ "error": message })
            }
        };
        self.reply.tool_calls.push(ToolCall {
            name: call.name.clone(),
            args: call.args.clone(),
            response: Some(output.clone()),
            resource: wire::resource_of(&Value::Object(call.target.clone())),
        });
        let response = wire::response_struct(output);
        wire::tool_response(call.target, &call.id, response)
    }
}

/// The method a path calls, for errors: `runSession`, `executeTool`, `tools`.
fn method_of(path: &str) -> &str {
    path.rsplit([':', '/']).next().unwrap_or(path)
}

#[async_trait]
impl Agent for CesAgent {
    async fn send(&self, request: &TurnRequest) -> Result<Exchange, EndpointError> {
        let played = match request.input.get(EXECUTE_TOOL) {
            Some(execution) => self.execute_tool(execution).await,
            None => self.turn(request).await,
        };
        played.map_err(|mut error| {
            self.credentials.secrets().mask_string(&mut error.message);
            error
        })
    }

    fn executes_tools(&self) -> bool {
        self.config.platform.is_none()
    }

    fn evaluations(&self) -> Option<&dyn super::evaluations::Evaluations> {
        self.config.platform.as_ref().map(|_| self as _)
    }

    fn describe(&self) -> String {
        if self.config.platform.is_some() {
            return self.describe_platform();
        }
        format!(
            "CX Agent Studio {} ({})",
            self.config.app, self.config.api_version
        )
    }
}
