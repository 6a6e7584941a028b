//! The test's own port of SCRAPI's push mapping, from the raw YAML.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::APP;

/// The steps SCRAPI's `_process_dataset_turn` makes of one dataset conversation (the test's
/// own port, from the raw YAML), with each tool call id replaced by `ID`.
#[allow(dead_code)] // Only the push test compares with SCRAPI's mapping.
pub fn scrapi_turns(
    conversation: &Value,
    common: &Map<String, Value>,
    tools: &BTreeMap<&str, String>,
) -> Vec<Value> {
    let mut params = common.clone();
    if let Some(own) = conversation["session_parameters"].as_object() {
        params.extend(own.clone());
    }
    let mut injected = false;
    let mut turns = Vec::new();
    for turn in conversation["turns"].as_array().into_iter().flatten() {
        let mut steps = Vec::new();
        let mut variables = Map::new();
        if !injected && !params.is_empty() {
            variables.extend(params.clone());
            injected = true;
        }
        if let Some(own) = turn["variables"].as_object() {
            variables.extend(own.clone());
        }
        if !variables.is_empty() {
            steps.push(json!({"userInput": {"variables": variables}}));
        }
        steps.push(match &turn["user"] {
            Value::Null => json!({"userInput": {"event": {"event": "welcome"}}}),
            Value::String(text) => json!({"userInput": {"text": text}}),
            other => json!({"userInput": {"text": other.to_string()}}),
        });
        let agents = match &turn["agent"] {
            Value::String(s) => vec![s.clone()],
            Value::Array(items) => items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        };
        for text in agents.iter().filter(|t| !t.contains("# silent")) {
            steps.push(json!({"expectation": {"agentResponse": {"role": "agent", "chunks": [{"text": text}]}}}));
        }
        for call in turn["tool_calls"].as_array().into_iter().flatten() {
            let action = call["action"].as_str().unwrap_or_default();
            let args = call.get("args").cloned().unwrap_or(json!({}));
            let agent = args["agent"].as_str().or(call["agent"].as_str());
            if action == "transfer_to_agent" && agent.is_some() {
                let agent = agent.unwrap_or_default();
                let target = if agent == "Billing Agent" {
                    format!("{APP}/agents/b1")
                } else {
                    agent.to_owned()
                };
                steps.push(json!({"expectation": {"agentTransfer": {"targetAgent": target}}}));
                continue;
            }
            let tool = tools
                .get(action)
                .cloned()
                .unwrap_or_else(|| format!("{APP}/tools/{action}"));
            steps.push(
                json!({"expectation": {"toolCall": {"id": "ID", "tool": tool, "args": args}}}),
            );
            if let Some(output) = call.get("output").filter(|o| !o.is_null()) {
                steps.push(json!({"expectation": {"toolResponse": {"id": "ID", "tool": tool, "response": output}}}));
            }
        }
        turns.push(json!({"steps": steps}));
    }
    turns
}
