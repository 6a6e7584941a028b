//! The JSON protocol spoken by HTTP and command agents: one request per turn, one reply (or a
//! stream of newline-delimited reply fragments). Documented for agent authors in the README.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::model::{ContextDocument, Input, ToolMock};

/// One turn sent to the agent.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TurnRequest {
    /// Identifies the request on a multiplexed channel (command agents); echoed in the reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    /// The agent keeps a conversation's state under this id.
    pub session: String,
    /// The case id.
    pub conversation: String,
    /// The case's key (`file#id`), which tells apart cases of different files that share an
    /// id; recordings are kept under it. Not on the wire.
    #[serde(skip)]
    pub case: String,
    /// 1-based turn number.
    pub turn: usize,
    /// What the user side sends: one key per input kind (`text`, `event`, `tool_responses`,
    /// `variables`, `image`, `approve_tool_call`, `deny_tool_call`).
    pub input: Map<String, Value>,
    /// Sent with the first turn only.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub session_parameters: Map<String, Value>,
    /// Tool name to mocked output, for agents that mock their tools.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub tool_mocks: Map<String, Value>,
    /// Every mock of the turn with the arguments it applies to, for in-process agents (LLM
    /// agents answer each tool call with the mock whose arguments match). Not on the wire:
    /// the protocol's `tool_mocks` keeps one output per tool.
    #[serde(skip)]
    pub mocks: Vec<ToolMock>,
    /// The case's system instruction (Regtrace `system_prompt`), for LLM agents. Not on the
    /// wire, like `mocks`.
    #[serde(skip)]
    pub system_prompt: Option<String>,
    /// The case's retrieved documents (Regtrace `rag`), for LLM agents. Not on the wire.
    #[serde(skip)]
    pub context: Vec<ContextDocument>,
}

/// Builds the `input` object of a request from a turn's inputs.
pub fn input_object(inputs: &[Input]) -> Map<String, Value> {
    let mut object = Map::new();
    for input in inputs {
        match input {
            Input::Text(text) => {
                object.insert("text".into(), Value::String(text.clone()));
            }
            Input::Event(name) => {
                object.insert("event".into(), Value::String(name.clone()));
            }
            Input::ToolResponse { name, response } => {
                let entry = object
                    .entry("tool_responses")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(items) = entry {
                    items.push(serde_json::json!({ "name": name, "response": response }));
                }
            }
            Input::Variables(vars) => {
                let entry = object
                    .entry("variables")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(all) = entry {
                    all.extend(vars.clone());
                }
            }
            Input::Image { mime_type, data } => {
                object.insert(
                    "image".into(),
                    serde_json::json!({ "mime_type": mime_type, "data": data }),
                );
            }
            Input::ApproveToolCall(tag) => {
                object.insert("approve_tool_call".into(), Value::String(tag.clone()));
            }
            Input::DenyToolCall(tag) => {
                object.insert("deny_tool_call".into(), Value::String(tag.clone()));
            }
        }
    }
    object
}

/// The agent's answer to one turn. Every field may be left out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    /// Echo of [`TurnRequest::id`] on multiplexed channels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer: Option<Transfer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff: Option<Handoff>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ReplyError>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

impl Reply {
    /// All agent text of the turn, chunks joined by a newline.
    pub fn text(&self) -> String {
        self.messages
            .iter()
            .map(|m| m.text.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Merges a streamed fragment into the reply built so far.
    pub fn absorb(&mut self, fragment: Reply) {
        self.messages.extend(fragment.messages);
        self.tool_calls.extend(fragment.tool_calls);
        self.transfer = fragment.transfer.or(self.transfer.take());
        self.handoff = fragment.handoff.or(self.handoff.take());
        self.error = fragment.error.or(self.error.take());
        if let Some(usage) = fragment.usage {
            let total = self.usage.get_or_insert_with(Usage::default);
            total.input_tokens += usage.input_tokens;
            total.output_tokens += usage.output_tokens;
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Message {
    pub text: String,
    /// The (sub-)agent that spoke.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ToolCall {
    pub name: String,
    #[serde(default)]
    pub args: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Transfer {
    pub agent: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Handoff {
    pub status: String,
}

/// An error the agent reports as part of its behaviour (scored by `error-code`, `no-error`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReplyError {
    pub code: String,
    #[serde(default)]
    pub message: String,
}

#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Usage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
}
