//! What the app did in a replayed turn, from the conversation the platform recorded for it
//! (`GetConversation`, `GET /v1beta/{name=projects/*/locations/*/apps/*/conversations/*}`).
//!
//! An expectation outcome carries what was observed for that expectation only. When the
//! platform fails a turn on a metric alone (a turn-level semantic similarity FAIL where no agent
//! response was expected, SCRAPI's UNEXPECTED RESPONSE; an overall tool invocation FAIL for a
//! call no step expected), what the agent said or called is only in the conversation. So the
//! conversations of the turns of failed results are read, and each such turn's reply is made
//! from them.

use std::collections::BTreeMap;

use reqwest::Method;
use serde_json::Value;

use super::results::{Labels, tool_name, transfer_of};
use crate::agent::ces::CesAgent;
use crate::transcript::{Message, Reply, ToolCall};

/// Conversations by resource name.
pub(super) type Conversations = BTreeMap<String, Value>;

impl CesAgent {
    /// The conversations of the turns of every result the platform failed, by name; one that
    /// cannot be read is left out (its turns keep what the expectation outcomes observed).
    pub(super) async fn conversations(&self, results: &[Value]) -> Conversations {
        let mut found = Conversations::new();
        let failed = results.iter().filter(|r| r["evaluationStatus"] == "FAIL");
        for result in failed {
            for name in turn_conversations(result) {
                if found.contains_key(name) {
                    continue;
                }
                if let Ok(conversation) = self.api(Method::GET, name, None).await {
                    found.insert(name.to_owned(), conversation);
                }
            }
        }
        found
    }
}

/// The conversation named by each replayed turn of `result`, in order.
fn turn_conversations(result: &Value) -> impl Iterator<Item = &str> {
    let replays = result["goldenResult"]["turnReplayResults"].as_array();
    replays
        .into_iter()
        .flatten()
        .filter_map(|replay| replay["conversation"].as_str())
        .filter(|name| !name.is_empty())
}

/// What the app did in replayed turn `index` (0-based) of `result`, when its conversation was
/// read. Run NAIVE, every turn shares one conversation and the turn is its `index`th; run
/// STABLE, each turn is a session of its own, the earlier turns injected as history, and the
/// turn is its conversation's last.
pub(super) fn reply_of(
    result: &Value,
    index: usize,
    conversations: &Conversations,
    labels: &Labels,
) -> Option<Reply> {
    let name = result["goldenResult"]["turnReplayResults"][index]["conversation"].as_str()?;
    let conversation = conversations.get(name)?;
    let turns = conversation["turns"].as_array()?;
    let shared = turn_conversations(result).filter(|n| *n == name).count() > 1;
    let turn = if shared {
        turns.get(index)
    } else {
        turns.last()
    }?;
    Some(reply_of_turn(turn, labels))
}

/// The agent's text, tool calls (with their responses) and transfer in one conversation turn.
fn reply_of_turn(turn: &Value, labels: &Labels) -> Reply {
    let mut reply = Reply::default();
    let messages = turn["messages"].as_array().into_iter().flatten();
    for message in messages.filter(|m| m["role"] != "user") {
        for chunk in message["chunks"].as_array().into_iter().flatten() {
            if let Some(text) = chunk["text"].as_str().filter(|t| !t.trim().is_empty()) {
                let text = text.to_owned();
                reply.messages.push(Message { text, agent: None });
            } else if !chunk["toolCall"].is_null() {
                let call = &chunk["toolCall"];
                reply.tool_calls.push(ToolCall {
                    name: tool_name(call, labels),
                    args: call["args"].clone(),
                    response: None,
                    resource: call["tool"].as_str().map(str::to_owned),
                });
            } else if !chunk["toolResponse"].is_null() {
                let response = &chunk["toolResponse"];
                let name = tool_name(response, labels);
                let answered = reply
                    .tool_calls
                    .iter_mut()
                    .rev()
                    .find(|c| c.name == name && c.response.is_none());
                if let Some(call) = answered {
                    call.response = Some(response["response"].clone());
                }
            } else if !chunk["agentTransfer"].is_null() {
                reply.transfer = Some(transfer_of(&chunk["agentTransfer"], labels));
            }
        }
    }
    reply
}
