//! `agent: { http: { preset: NAME, url, model, headers } }`: the template of a common agent API,
//! so that a team writes a URL, a model and a key rather than paths. A preset is a template
//! underneath: its keys are merged under the user's, who may override any of them (`body`,
//! `method`, `stream`, `cookies` whole; `headers` and `response` key by key). With
//! `stream: sse` a preset reads the API's own streaming events.

use crate::diagnostic::{Code, Diagnostics, suggestion};
use crate::yaml::{self, Key, Node, Value};

/// The presets, each with its template as YAML (`MODEL` stands for the model's JSON string).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Preset {
    /// OpenAI Chat Completions and the servers compatible with it.
    OpenAiChat,
    /// Anthropic Messages.
    AnthropicMessages,
    /// The OpenAI Responses API.
    OpenAiResponses,
    /// Rasa's REST channel.
    RasaRest,
    /// LangGraph Server's stateless runs, the assistant id (or graph name) as the model.
    LangGraph,
}

impl Preset {
    const NAMES: [&str; 5] = [
        "openai-chat",
        "anthropic-messages",
        "openai-responses",
        "rasa-rest",
        "langgraph",
    ];

    fn parse(name: &str) -> Option<Self> {
        match name {
            "openai-chat" => Some(Preset::OpenAiChat),
            "anthropic-messages" => Some(Preset::AnthropicMessages),
            "openai-responses" => Some(Preset::OpenAiResponses),
            "rasa-rest" => Some(Preset::RasaRest),
            "langgraph" => Some(Preset::LangGraph),
            _ => None,
        }
    }

    /// Whether the API is asked for a model by name.
    fn needs_model(self) -> bool {
        self != Preset::RasaRest
    }

    /// The template, for one JSON reply or for the API's event stream.
    fn template(self, streamed: bool) -> &'static str {
        match (self, streamed) {
            // https://platform.openai.com/docs/api-reference/chat/object
            (Preset::OpenAiChat, false) => {
                r#"body: { model: MODEL, messages: "{{messages}}" }
response:
  text: $.choices[0].message.content
  tool_calls: $.choices[0].message.tool_calls[*]
  tool_name: $.function.name
  tool_args: $.function.arguments
"#
            }
            // https://platform.openai.com/docs/api-reference/chat-streaming
            (Preset::OpenAiChat, true) => {
                r#"body: { model: MODEL, messages: "{{messages}}", stream: true }
response:
  text: $.choices[0].delta.content
  tool_calls: $.choices[0].delta.tool_calls[*]
  tool_index: $.index
  tool_name: $.function.name
  tool_args: $.function.arguments
"#
            }
            // https://docs.anthropic.com/en/api/messages
            (Preset::AnthropicMessages, false) => {
                r#"headers: { anthropic-version: "2023-06-01" }
body: { model: MODEL, max_tokens: 1024, messages: "{{messages}}" }
response:
  text: "$.content[?@.type == 'text'].text"
  tool_calls: "$.content[?@.type == 'tool_use']"
  tool_args: $.input
"#
            }
            // https://docs.anthropic.com/en/docs/build-with-claude/streaming
            (Preset::AnthropicMessages, true) => {
                r#"headers: { anthropic-version: "2023-06-01" }
body: { model: MODEL, max_tokens: 1024, messages: "{{messages}}", stream: true }
response:
  events:
    - event: content_block_delta
      match: "@.delta.type == 'text_delta'"
      text: $.delta.text
    - event: content_block_start
      match: "@.content_block.type == 'tool_use'"
      tool_calls: $
      tool_index: $.index
      tool_name: $.content_block.name
      tool_args: $.content_block.input
    - event: content_block_delta
      match: "@.delta.type == 'input_json_delta'"
      tool_calls: $
      tool_index: $.index
      tool_args: $.delta.partial_json
    - { event: error, error: $.error, error_code: $.type }
    - { event: message_stop, end: true }
"#
            }
            // https://rasa.com/docs/rasa/connectors/your-own-website/#rest-channels: the bot's
            // messages as a list, one conversation per `sender`; it does not stream. The
            // channel takes text only: an event is sent as `/NAME`, the message Rasa reads as
            // that intent with no NLU (https://rasa.com/docs/rasa/reference/rasa/nlu/
            // classifiers/regex_message_handler).
            (Preset::RasaRest, _) => {
                r#"body: { sender: "{{session}}", message: "{{text_or_intent}}" }
response:
  text: $[*].text
"#
            }
            // https://platform.openai.com/docs/api-reference/responses/object
            (Preset::OpenAiResponses, false) => {
                r#"body: { model: MODEL, input: "{{messages}}" }
response:
  text: "$.output[?@.type == 'message'].content[?@.type == 'output_text'].text"
  tool_calls: "$.output[?@.type == 'function_call']"
  error: $.error
"#
            }
            // https://platform.openai.com/docs/api-reference/responses-streaming
            (Preset::OpenAiResponses, true) => {
                r#"body: { model: MODEL, input: "{{messages}}", stream: true }
response:
  events:
    - { event: response.output_text.delta, text: $.delta }
    - event: response.output_item.done
      match: "@.item.type == 'function_call'"
      tool_calls: $.item
    - { event: response.failed, error: $.response.error, end: true }
    - { event: error, error: $, end: true }
    - { event: response.completed, end: true }
    - { event: response.incomplete, end: true }
"#
            }
            // https://langchain-ai.github.io/langgraph/cloud/reference/api/api_ref.html
            // (`POST /runs/wait`, a stateless run answered by the final state): the state's
            // messages are LangChain's (`type: human|ai|tool`), the input echoed first; the last
            // is the reply, and only this turn's AI messages carry `tool_calls`, since the
            // history sent holds text alone.
            (Preset::LangGraph, false) => {
                r#"body: { assistant_id: MODEL, input: { messages: "{{messages}}" } }
response:
  text: $.messages[-1].content
  tool_calls: "$.messages[?@.type == 'ai'].tool_calls[*]"
  tool_args: $.args
"#
            }
            // https://langchain-ai.github.io/langgraph/cloud/concepts/streaming (`POST
            // /runs/stream`): in `updates` mode each event holds the messages a node added,
            // keyed by the node's name; an `error` event ends the run.
            (Preset::LangGraph, true) => {
                r#"body: { assistant_id: MODEL, input: { messages: "{{messages}}" }, stream_mode: updates }
response:
  events:
    - event: updates
      text: "$.*.messages[?@.type == 'ai'].content"
      tool_calls: "$.*.messages[?@.type == 'ai'].tool_calls[*]"
      tool_args: $.args
    - { event: error, error: $, error_code: $.error, end: true }
"#
            }
        }
    }
}

/// `agent.http` with its preset's keys merged under the user's; `None` (reported) for an
/// unknown preset or a missing model. `preset` and `model` are consumed here.
pub(super) fn apply(http: &Node, path: &str, diags: &mut Diagnostics) -> Option<Node> {
    let entries = http.as_map()?;
    let preset_node = http.get("preset")?;
    let field = format!("{path}.preset");
    let name = yaml::expect_text(preset_node, &field, diags)?;
    let Some(preset) = Preset::parse(&name) else {
        diags
            .at(preset_node)
            .error(Code::G107, format!("unknown preset `{name}`"))
            .field(field)
            .hint(suggestion(&name, &Preset::NAMES));
        return None;
    };
    let model = match (http.get("model"), preset.needs_model()) {
        (Some(node), true) => yaml::expect_text(node, &format!("{path}.model"), diags)?,
        (None, true) => {
            diags
                .at(http)
                .error(Code::G102, format!("the preset `{name}` needs `model`"))
                .field(format!("{path}.model"))
                .hint("the model (or agent) name the API is asked for, e.g. `model: gpt-4o-mini`");
            return None;
        }
        (Some(node), false) => {
            diags
                .at(node)
                .error(Code::G101, format!("the preset `{name}` asks for no model"))
                .field(format!("{path}.model"))
                .hint("remove `model`");
            return None;
        }
        (None, false) => String::new(),
    };
    let streamed = http.get("stream").and_then(Node::as_str) == Some("sse");
    let quoted = serde_json::Value::String(model).to_string();
    let text = preset.template(streamed).replace("MODEL", &quoted);
    let mut template = yaml::parse(&text).expect("a preset's template parses");
    // What the preset brings is placed at the `preset:` line, where an error in it is the
    // user's to look for.
    relocate(&mut template, preset_node.line, preset_node.column);
    let own: Vec<(Key, Node)> = entries
        .iter()
        .filter(|(key, _)| key.name != "preset" && key.name != "model")
        .cloned()
        .collect();
    Some(Node {
        value: Value::Map(merge(template, own)),
        ..http.clone()
    })
}

/// The preset's entries with the user's over them: `headers` and `response` merged key by
/// key (the user's own rules in `response.events` replace the preset's), any other key
/// replaced whole.
fn merge(template: Node, own: Vec<(Key, Node)>) -> Vec<(Key, Node)> {
    let Value::Map(mut merged) = template.value else {
        return own;
    };
    for (key, node) in own {
        match merged.iter_mut().find(|(k, _)| k.name == key.name) {
            Some((_, base)) if matches!(key.name.as_str(), "headers" | "response") => {
                let inner = match &node.value {
                    Value::Map(entries) => entries.clone(),
                    _ => {
                        *base = node;
                        continue;
                    }
                };
                let line = node.line;
                let column = node.column;
                *base = Node {
                    value: Value::Map(merge(base.clone(), inner)),
                    line,
                    column,
                };
            }
            Some((base_key, base)) => {
                *base_key = key;
                *base = node;
            }
            None => merged.push((key, node)),
        }
    }
    merged
}

/// Every node and key of `node` at `line`:`column`.
fn relocate(node: &mut Node, line: u32, column: u32) {
    node.line = line;
    node.column = column;
    match &mut node.value {
        Value::Seq(items) => items.iter_mut().for_each(|n| relocate(n, line, column)),
        Value::Map(entries) => {
            for (key, value) in entries {
                key.line = line;
                key.column = column;
                relocate(value, line, column);
            }
        }
        _ => {}
    }
}
