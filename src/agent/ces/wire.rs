//! CX Agent Studio's `RunSession` JSON: the inputs of a turn built from goldgate's request,
//! and a `RunSessionResponse` read into the transcript.
//!
//! Pure functions over JSON, so that the mapping is tested without a server. Field names are
//! the proto's JSON names (lowerCamelCase), as the REST API sends and accepts them.

use serde_json::{Map, Value, json};

use crate::transcript::{Message, ToolCall, Transfer, Usage};

/// The name goldgate gives a `SessionOutput.endSession`, the one SCRAPI gives the system tool
/// that ends a session: goldens expect either as a tool call.
pub const END_SESSION: &str = "end_session";

/// A client-function tool call the app asks goldgate to run (`outputs[].toolCalls`).
#[derive(Clone, Debug, PartialEq)]
pub struct ClientCall {
    /// `tool` or `toolsetTool`, echoed back as it came in the `ToolResponse`.
    pub target: Map<String, Value>,
    pub id: String,
    pub name: String,
    pub args: Value,
}

/// What one `RunSessionResponse` said.
#[derive(Debug, Default)]
pub struct Outputs {
    pub messages: Vec<Message>,
    /// Tools the app ran itself, with their responses when the diagnostics carry them.
    pub tool_calls: Vec<(Option<String>, ToolCall)>,
    pub client_calls: Vec<ClientCall>,
    pub transfer: Option<Transfer>,
    pub usage: Option<Usage>,
    /// The first model chunk, in milliseconds from the start of the turn (`rootSpan`).
    pub ttft_ms: Option<f64>,
}

/// The `inputs` of a turn: each a `SessionInput` with exactly one field set, in SCRAPI's order
/// (variables, event, image, text).
///
/// A golden's tool responses (CES `INPUT_TOOL_RESPONSE`) are not sent up front: CES takes a
/// `ToolResponse` only with the id of a call it asked for, so they answer the client calls of
/// the turn (see [`mocks_of`]), in the follow-up `toolResponses` input.
pub fn inputs(
    input: &Map<String, Value>,
    session_parameters: &Map<String, Value>,
) -> Result<Vec<Value>, String> {
    let mut variables = session_parameters.clone();
    if let Some(Value::Object(more)) = input.get("variables") {
        variables.extend(more.clone());
    }
    let mut inputs = Vec::new();
    if !variables.is_empty() {
        inputs.push(json!({ "variables": variables }));
    }
    for key in input.keys() {
        match key.as_str() {
            "text" | "event" | "variables" | "image" | "tool_responses" => {}
            "approve_tool_call" | "deny_tool_call" => {
                return Err(format!(
                    "CX Agent Studio has no input to approve or deny a tool call (`{key}`)"
                ));
            }
            other => return Err(format!("no CX Agent Studio input for `{other}`")),
        }
    }
    if let Some(event) = input.get("event") {
        inputs.push(json!({ "event": { "event": text_of(event) } }));
    }
    if let Some(image) = input.get("image") {
        inputs.push(json!({ "image": {
            "mimeType": image.get("mime_type").cloned().unwrap_or(Value::Null),
            "data": image.get("data").cloned().unwrap_or(Value::Null),
        }}));
    }
    if let Some(text) = input.get("text") {
        inputs.push(json!({ "text": text_of(text) }));
    }
    Ok(inputs)
}

/// The golden's tool responses of the turn as mocks, without arguments to match: each answers
/// the app's client call of that tool.
pub fn mocks_of(input: &Map<String, Value>) -> Vec<(String, Value)> {
    let responses = input.get("tool_responses").and_then(Value::as_array);
    responses
        .into_iter()
        .flatten()
        .map(|r| {
            let name = r.get("name").map(text_of).unwrap_or_default();
            (name, r.get("response").cloned().unwrap_or(Value::Null))
        })
        .collect()
}

/// A `ToolResponse`: the call's tool (or toolset tool), its id, and the response Struct.
pub fn tool_response(target: Map<String, Value>, id: &str, response: Value) -> Value {
    let mut object = target;
    object.insert("id".into(), json!(id));
    object.insert("response".into(), response);
    Value::Object(object)
}

/// `ToolResponse.response` is a Struct: an object stays as it is, anything else is put under
/// `output`, the key the platform reads.
pub fn response_struct(value: Value) -> Value {
    match value {
        Value::Object(_) => value,
        other => json!({ "output": other }),
    }
}

fn text_of(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned)
}

/// The last segment of a resource name: `.../tools/lookup_order` is `lookup_order`.
fn short(resource: &str) -> String {
    resource.rsplit('/').next().unwrap_or(resource).to_owned()
}

/// A `ToolCall` or `ToolResponse` names its tool by `displayName` when the server fills it,
/// else by the tool's (or toolset tool's) resource name.
fn tool_name(call: &Value) -> String {
    if let Some(name) = call.get("displayName").and_then(Value::as_str) {
        return name.to_owned();
    }
    if let Some(tool) = call.get("tool").and_then(Value::as_str) {
        return short(tool);
    }
    if let Some(id) = call.pointer("/toolsetTool/toolId").and_then(Value::as_str) {
        return id.to_owned();
    }
    String::new()
}

/// The resource name of a call's tool: `tool`, or a toolset's tool as
/// `{toolset}/tools/{toolId}`.
pub fn resource_of(call: &Value) -> Option<String> {
    if let Some(tool) = call.get("tool").and_then(Value::as_str) {
        return Some(tool.to_owned());
    }
    let toolset = call
        .pointer("/toolsetTool/toolset")
        .and_then(Value::as_str)?;
    let id = call
        .pointer("/toolsetTool/toolId")
        .and_then(Value::as_str)?;
    Some(format!("{toolset}/tools/{id}"))
}

/// Reads a `RunSessionResponse`.
pub fn read(response: &Value) -> Result<Outputs, String> {
    let outputs = match response.get("outputs") {
        None | Some(Value::Null) => &Vec::new(),
        Some(Value::Array(outputs)) => outputs,
        Some(_) => return Err("`outputs` is not a list".to_owned()),
    };
    let mut read = Outputs::default();
    for output in outputs {
        if let Some(text) = output.get("text").and_then(Value::as_str) {
            read.messages.push(Message {
                text: text.to_owned(),
                agent: None,
            });
        }
        if let Some(calls) = output
            .pointer("/toolCalls/toolCalls")
            .and_then(Value::as_array)
        {
            for call in calls {
                let mut target = Map::new();
                for key in ["tool", "toolsetTool"] {
                    if let Some(value) = call.get(key) {
                        target.insert(key.into(), value.clone());
                    }
                }
                let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
                read.client_calls.push(ClientCall {
                    target,
                    id: id.to_owned(),
                    name: tool_name(call),
                    args: call.get("args").cloned().unwrap_or_else(|| json!({})),
                });
            }
        }
        if let Some(end) = output.get("endSession") {
            let args = end.get("metadata").cloned().unwrap_or_else(|| json!({}));
            read.tool_calls
                .push((None, ToolCall::new(END_SESSION, args)));
        }
        if let Some(info) = output.get("diagnosticInfo") {
            diagnostics(info, &mut read);
        }
    }
    // An app that ended the session through its system tool reports it twice: keep the call.
    let by_tool =
        |(id, call): &(Option<String>, ToolCall)| id.is_some() && call.name.contains(END_SESSION);
    if read.tool_calls.iter().any(by_tool) {
        read.tool_calls
            .retain(|(id, call)| id.is_some() || call.name != END_SESSION);
    }
    Ok(read)
}

/// Tool calls, their responses and transfers from `diagnosticInfo.messages[].chunks[]`;
/// tokens and time to first chunk from `rootSpan`.
fn diagnostics(info: &Value, read: &mut Outputs) {
    let messages = info.get("messages").and_then(Value::as_array);
    for chunk in messages
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("chunks").and_then(Value::as_array))
        .flatten()
    {
        if let Some(call) = chunk.get("toolCall") {
            let id = call.get("id").and_then(Value::as_str).map(str::to_owned);
            read.tool_calls.push((
                id,
                ToolCall {
                    name: tool_name(call),
                    args: call.get("args").cloned().unwrap_or_else(|| json!({})),
                    response: None,
                    resource: resource_of(call),
                },
            ));
        } else if let Some(response) = chunk.get("toolResponse") {
            let id = response.get("id").and_then(Value::as_str);
            let name = tool_name(response);
            let value = response.get("response").cloned().unwrap_or(Value::Null);
            let call = read.tool_calls.iter_mut().rev().find(|(call_id, call)| {
                call.response.is_none()
                    && match (id, call_id) {
                        (Some(id), Some(call_id)) => id == call_id,
                        _ => call.name == name,
                    }
            });
            if let Some((_, call)) = call {
                call.response = Some(value);
            }
        } else if let Some(transfer) = chunk.get("agentTransfer") {
            let resource = transfer.get("targetAgent").and_then(Value::as_str);
            let agent = transfer
                .get("displayName")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or_else(|| resource.map(short));
            if let Some(agent) = agent {
                read.transfer = Some(Transfer {
                    agent,
                    resource: resource.map(str::to_owned),
                });
            }
        }
    }
    if let Some(span) = info.get("rootSpan") {
        let mut usage = Usage::default();
        let mut seen = false;
        walk_spans(span, &mut |span| {
            if span.get("name").and_then(Value::as_str) != Some("LLM") {
                return;
            }
            let attribute = |key: &str| span.pointer(&format!("/attributes/{key}"));
            let count = |key: &str| {
                attribute(key).and_then(|v| v.as_u64().or_else(|| v.as_f64().map(|f| f as u64)))
            };
            if let Some(n) = count("input token count") {
                usage.input_tokens += n;
                seen = true;
            }
            if let Some(n) = count("output token count") {
                usage.output_tokens += n;
                seen = true;
            }
            if read.ttft_ms.is_none() {
                read.ttft_ms = attribute("time to first chunk (ms)").and_then(|v| {
                    v.as_f64()
                        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
                });
            }
        });
        if seen {
            read.usage = Some(usage);
        }
    }
}

fn walk_spans(span: &Value, visit: &mut dyn FnMut(&Value)) {
    visit(span);
    for child in span
        .get("childSpans")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        walk_spans(child, visit);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const APP: &str = "projects/p/locations/us/apps/a";

    #[test]
    fn each_input_sets_one_field_in_scrapis_order() {
        let input = json!({"text": "hi", "event": "welcome", "variables": {"b": 2}})
            .as_object()
            .cloned()
            .unwrap();
        let params = json!({"a": 1}).as_object().cloned().unwrap();
        let inputs = inputs(&input, &params).unwrap();
        assert_eq!(
            Value::Array(inputs),
            json!([
                {"variables": {"a": 1, "b": 2}},
                {"event": {"event": "welcome"}},
                {"text": "hi"}
            ])
        );
        let deny = json!({"deny_tool_call": "x"}).as_object().cloned().unwrap();
        assert!(inputs_err(&deny).contains("approve or deny"));
    }

    fn inputs_err(input: &Map<String, Value>) -> String {
        inputs(input, &Map::new()).unwrap_err()
    }

    #[test]
    fn a_response_becomes_text_tool_calls_transfer_and_usage() {
        let response = json!({"outputs": [
            {"text": "Let me check.", "turnIndex": 1},
            {"text": "Shipped.", "turnIndex": 1, "turnCompleted": true, "diagnosticInfo": {
                "messages": [
                    {"role": "user", "chunks": [{"text": "where is my order"}]},
                    {"role": "agent", "chunks": [
                        {"toolCall": {"tool": format!("{APP}/tools/t1"), "displayName": "lookup_order", "id": "c1", "args": {"id": "7"}}},
                        {"toolResponse": {"tool": format!("{APP}/tools/t1"), "id": "c1", "response": {"status": "shipped"}}},
                        {"agentTransfer": {"targetAgent": format!("{APP}/agents/billing_agent")}}
                    ]}
                ],
                "rootSpan": {"name": "root", "childSpans": [
                    {"name": "LLM", "attributes": {"input token count": 10, "output token count": 3, "time to first chunk (ms)": 120.5}},
                    {"name": "LLM", "attributes": {"input token count": 5, "output token count": 2}}
                ]}
            }},
            {"endSession": {"metadata": {"reason": "done"}}}
        ]});
        let read = read(&response).unwrap();
        assert_eq!(read.messages.len(), 2);
        let calls: Vec<&ToolCall> = read.tool_calls.iter().map(|(_, c)| c).collect();
        assert_eq!(calls[0].name, "lookup_order");
        assert_eq!(calls[0].response, Some(json!({"status": "shipped"})));
        assert_eq!(calls[1].name, END_SESSION);
        assert_eq!(read.transfer.unwrap().agent, "billing_agent");
        assert_eq!(
            read.usage,
            Some(Usage {
                input_tokens: 15,
                output_tokens: 5,
                ..Usage::default()
            })
        );
        assert_eq!(read.ttft_ms, Some(120.5));
    }

    #[test]
    fn client_calls_are_read_with_their_target() {
        let response = json!({"outputs": [{"toolCalls": {"toolCalls": [
            {"toolsetTool": {"toolset": "ts", "toolId": "get_weather"}, "id": "x1", "args": {"city": "Oslo"}}
        ]}}]});
        let read = read(&response).unwrap();
        assert_eq!(read.client_calls[0].name, "get_weather");
        assert_eq!(read.client_calls[0].id, "x1");
        let answer = tool_response(
            read.client_calls[0].target.clone(),
            "x1",
            response_struct(json!("sunny")),
        );
        assert_eq!(
            answer,
            json!({"toolsetTool": {"toolset": "ts", "toolId": "get_weather"}, "id": "x1", "response": {"output": "sunny"}})
        );
    }
}
