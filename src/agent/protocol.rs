//! The JSON protocol spoken by HTTP and command agents: one request per turn, one reply (or a
//! stream of newline-delimited reply fragments). Documented for agent authors in docs/agents.md.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::model::{ContextDocument, Input, ToolMock, ToolState};

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

/// The input key of a direct tool execution (`{tool, args, variables | context}`): only agents
/// that can run their tools directly receive it (see [`crate::agent::Agent::executes_tools`]).
pub const EXECUTE_TOOL: &str = "execute_tool";

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
            Input::ExecuteTool(execution) => {
                let (key, state) = match &execution.state {
                    ToolState::Variables(vars) => ("variables", vars),
                    ToolState::Context(context) => ("context", context),
                };
                object.insert(
                    EXECUTE_TOOL.into(),
                    serde_json::json!({
                        "tool": execution.tool,
                        "args": execution.args,
                        key: state,
                    }),
                );
            }
        }
    }
    object
}
