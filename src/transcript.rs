//! What an agent did in a turn: its reply (messages, tool calls, transfer, handoff, error,
//! tokens) and the time it took. The agents produce it, the scorers judge it, the results keep
//! it. The rules about a reply that more than one place needs (what counts as a handoff, how
//! tokens add up) are written here once.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What one turn produced, with its timings.
#[derive(Clone, Debug, PartialEq)]
pub struct Exchange {
    pub reply: Reply,
    /// From sending the request to the complete reply.
    pub latency: Duration,
    /// From sending the request to the first agent text, when the reply was streamed.
    pub ttft: Option<Duration>,
}

/// The agent's answer to one turn. Every field may be left out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    /// Echo of the request's id on multiplexed channels (command agents).
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
    /// The session variables after the turn, where the agent reports them (a directly executed
    /// tool's updated variables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<Map<String, Value>>,
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
        if let Some(variables) = fragment.variables {
            self.variables
                .get_or_insert_with(Map::new)
                .extend(variables);
        }
        if let Some(usage) = fragment.usage {
            let total = self.usage.get_or_insert_with(Usage::default);
            *total = total.plus(usage);
        }
    }

    /// Every agent this reply transferred to: its `transfer`, and the `agent` of each
    /// [`TRANSFER_TOOL`] call (how some agents, and SCRAPI goldens, express a transfer).
    pub fn transfer_targets(&self) -> Vec<&str> {
        let calls = self
            .tool_calls
            .iter()
            .filter(|call| call.is_transfer())
            .filter_map(|call| call.args.get("agent").and_then(Value::as_str));
        self.transfer
            .iter()
            .map(|t| t.agent.as_str())
            .chain(calls)
            .collect()
    }

    /// The handoff the agent reported, when it is one (see [`Handoff::is_handoff`]).
    pub fn handoff(&self) -> Option<&Handoff> {
        self.handoff.as_ref().filter(|h| h.is_handoff())
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Message {
    pub text: String,
    /// The (sub-)agent that spoke.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// The tool call through which some agents (and SCRAPI goldens) express a transfer.
pub const TRANSFER_TOOL: &str = "transfer_to_agent";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ToolCall {
    pub name: String,
    #[serde(default)]
    pub args: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
    /// The platform's name for the tool where it has one beside the display name that goldens
    /// match (a CX Agent Studio resource name), kept for the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
}

impl ToolCall {
    /// Whether this call is a transfer ([`TRANSFER_TOOL`]) rather than a tool of the agent.
    pub fn is_transfer(&self) -> bool {
        self.name == TRANSFER_TOOL
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Transfer {
    pub agent: String,
    /// The platform's name for the agent, beside the display name goldens match (a CX Agent
    /// Studio resource name), kept for the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Handoff {
    pub status: String,
}

impl Handoff {
    /// A handoff happened unless its status is empty or `none` (any case): agents that always
    /// send the field write one of those when they kept the conversation. The `no-handoff`
    /// scorer and the deflection rate both decide by this rule.
    pub fn is_handoff(&self) -> bool {
        let status = self.status.trim();
        !status.is_empty() && !status.eq_ignore_ascii_case("none")
    }
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

impl Usage {
    /// Both counts added. Agents report usage: saturate rather than overflow on absurd numbers.
    pub fn plus(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
        }
    }
}

impl std::iter::Sum for Usage {
    fn sum<I: Iterator<Item = Usage>>(usages: I) -> Usage {
        usages.fold(Usage::default(), Usage::plus)
    }
}
