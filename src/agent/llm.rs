//! A bare model as the agent under test: the team's system prompt and tools, one provider
//! (`agent: { anthropic | openai | gemini: {...} }`), before any server exists.
//!
//! Each turn runs the real tool loop: the model gets the session's history and the tools;
//! every tool call it makes (several at once included) is recorded as the turn's tool call and
//! answered with the golden's mock for that tool whose arguments match (a mock without
//! arguments serves any call to its tool, after the ones with arguments); a call with no mock
//! gets a tool error saying so, and shows in the report with that error as its response. The
//! loop ends when the model answers without calling a tool, or fails the turn after
//! `max_tool_rounds` rounds of calls. Text the model writes between calls is part of the reply.
//! Tokens of every round are summed into the reply's usage.
//!
//! The system prompt of a session is fixed at its first turn: the case's own (Regtrace
//! `system_prompt`) or else the configured one, then two documented blocks when present:
//!
//! ```text
//! Session parameters:
//! {"order_12345_status": "shipped"}
//!
//! Context documents:
//! [1] refund-policy.md
//! Refunds are issued within 14 days.
//! ```
//!
//! Errors of the provider are errors of the run: a 429 or 5xx is retried by the runner (the
//! turn starts over, with `retry-after` honoured), any other status ends the case with the
//! provider's message.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Instant;

use async_trait::async_trait;
use serde_json::{Map, Value, json};

use super::{Agent, TurnRequest};
use crate::config::LlmAgentSettings;
use crate::llm::{ChatMessage, ChatRequest, LlmClient, ToolChoice, ToolOutcome, ToolUse};
use crate::model::ToolMock;
use crate::net::{EndpointError, EndpointErrorKind};
use crate::score::args_match;
use crate::transcript::{Exchange, Reply};
use crate::transcript::{Message, ToolCall, Usage};

/// The answer's length limit per model call.
const MAX_ANSWER_TOKENS: u32 = 4096;

/// What the model has seen in one session.
struct Session {
    system: Option<String>,
    history: Vec<ChatMessage>,
}

pub struct LlmAgent {
    client: LlmClient,
    settings: LlmAgentSettings,
    sessions: Mutex<HashMap<String, Session>>,
}

impl LlmAgent {
    pub fn new(client: LlmClient, settings: LlmAgentSettings) -> Self {
        Self {
            client,
            settings,
            sessions: Mutex::default(),
        }
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        // A panic elsewhere cannot leave a history half-written: entries are replaced whole.
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn system_prompt(&self, request: &TurnRequest) -> Option<String> {
        let mut system = request
            .system_prompt
            .clone()
            .or_else(|| self.settings.system_prompt.clone())
            .unwrap_or_default();
        let mut block = |text: &str| {
            if !system.is_empty() {
                system.push_str("\n\n");
            }
            system.push_str(text);
        };
        if !request.session_parameters.is_empty() {
            let parameters = Value::Object(request.session_parameters.clone());
            block(&format!("Session parameters:\n{parameters}"));
        }
        if !request.context.is_empty() {
            let mut documents = "Context documents:".to_owned();
            for (index, document) in request.context.iter().enumerate() {
                let _ = write!(
                    documents,
                    "\n[{}] {}\n{}",
                    index + 1,
                    document.source,
                    document.content.trim_end()
                );
            }
            block(&documents);
        }
        (!system.is_empty()).then_some(system)
    }

    /// Answers one call with its mock, or with an error when the golden has none.
    async fn answer(&self, call: &ToolUse, mocks: &[ToolMock]) -> ToolOutcome {
        let (output, is_error) = match mock_for(&call.name, &call.args, mocks).await {
            Some(mock) => (mock.output.clone(), false),
            None => (
                json!({ "error": format!(
                    "goldgate: the golden has no mock for `{}` with these arguments",
                    call.name
                ) }),
                true,
            ),
        };
        ToolOutcome {
            id: call.id.clone(),
            name: call.name.clone(),
            output,
            is_error,
        }
    }
}

/// The first mock of the tool whose arguments match the call, else the tool's mock without
/// arguments.
pub(crate) async fn mock_for<'m>(
    name: &str,
    args: &Value,
    mocks: &'m [ToolMock],
) -> Option<&'m ToolMock> {
    let of_tool = || mocks.iter().filter(|mock| mock.tool == name);
    for mock in of_tool() {
        if let Some(matcher) = &mock.args
            && args_match(matcher, args).await
        {
            return Some(mock);
        }
    }
    of_tool().find(|mock| mock.args.is_none())
}

/// The user side of a turn as the text of a user message.
fn user_text(input: &Map<String, Value>) -> String {
    let mut lines = Vec::new();
    for (key, value) in input {
        let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
        match key.as_str() {
            "text" => lines.push(text(value)),
            "event" => lines.push(format!("[event: {}]", text(value))),
            "variables" => lines.push(format!("[variables: {value}]")),
            "image" => {
                let mime = value.get("mime_type").map(text).unwrap_or_default();
                lines.push(format!(
                    "[an image ({mime}) that goldgate does not send to models]"
                ));
            }
            "approve_tool_call" => lines.push(format!("[the user approves {}]", text(value))),
            "deny_tool_call" => lines.push(format!("[the user denies {}]", text(value))),
            // Tool responses are mocks: the model receives them as the results of its calls.
            _ => {}
        }
    }
    if lines.is_empty() {
        "(the user sends nothing)".to_owned()
    } else {
        lines.join("\n")
    }
}

#[async_trait]
impl Agent for LlmAgent {
    async fn send(&self, request: &TurnRequest) -> Result<Exchange, EndpointError> {
        let start = Instant::now();
        let (system, mut history) = match self.sessions().get(&request.session) {
            Some(session) => (session.system.clone(), session.history.clone()),
            None => (self.system_prompt(request), Vec::new()),
        };
        history.push(ChatMessage::User(user_text(&request.input)));
        let mut reply = Reply::default();
        let mut usage = Usage::default();
        let mut rounds = 0;
        loop {
            let chat = ChatRequest {
                system: system.as_deref(),
                messages: &history,
                tools: &self.settings.tools,
                choice: ToolChoice::Auto,
                temperature: self.settings.temperature,
                max_tokens: MAX_ANSWER_TOKENS,
            };
            let response = self.client.send(&self.client.body(&chat)).await?;
            usage = usage.plus(response.usage);
            if !response.text.trim().is_empty() {
                reply.messages.push(Message {
                    text: response.text.clone(),
                    agent: None,
                });
            }
            let calls = response.calls;
            if !response.text.is_empty() || !calls.is_empty() {
                history.push(ChatMessage::Assistant {
                    text: response.text,
                    calls: calls.clone(),
                });
            }
            if calls.is_empty() {
                break;
            }
            if rounds == self.settings.max_tool_rounds {
                return Err(EndpointError::new(
                    EndpointErrorKind::Protocol,
                    format!(
                        "the model was still calling tools after {rounds} rounds (max_tool_rounds)"
                    ),
                ));
            }
            rounds += 1;
            let mut outcomes = Vec::with_capacity(calls.len());
            for call in &calls {
                let outcome = self.answer(call, &request.mocks).await;
                reply.tool_calls.push(ToolCall {
                    name: call.name.clone(),
                    args: call.args.clone(),
                    response: Some(outcome.output.clone()),
                    resource: None,
                });
                outcomes.push(outcome);
            }
            history.push(ChatMessage::ToolResults(outcomes));
        }
        reply.usage = Some(usage);
        self.sessions()
            .insert(request.session.clone(), Session { system, history });
        Ok(Exchange {
            reply,
            latency: start.elapsed(),
            ttft: None,
        })
    }

    async fn end_session(&self, session: &str) {
        self.sessions().remove(session);
    }

    fn describe(&self) -> String {
        format!("llm {}", self.client.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_become_one_user_message() {
        let input = json!({ "text": "hi", "event": "welcome", "tool_responses": [] });
        let Value::Object(input) = input else {
            unreachable!()
        };
        assert_eq!(user_text(&input), "hi\n[event: welcome]");
        assert_eq!(user_text(&Map::new()), "(the user sends nothing)");
    }
}
