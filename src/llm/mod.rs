//! LLM providers over their public REST APIs (no SDK): Anthropic Messages, OpenAI Chat
//! Completions (and every compatible server), Gemini `generateContent`.
//!
//! Judges ([`judge`]) and LLM agents ([`crate::agent::llm`]) speak to models through one
//! neutral conversation ([`ChatRequest`] in, [`ChatResponse`] out); each provider module only
//! translates it to and from its wire format, so that the tool loop, retries and the judge
//! prompts exist once. [`client::LlmClient`] owns the endpoint, the key and the retries.
//!
//! Keys come from `ANTHROPIC_API_KEY`, `OPENAI_API_KEY` and `GEMINI_API_KEY`; they travel in
//! headers only and are never part of a request body, a message, a cache entry or a report.

pub mod anthropic;
pub mod cache;
pub mod client;
mod forced;
pub mod gemini;
pub mod judge;
mod ledger;
pub mod openai;
pub mod simulator;

use serde_json::{Value, json};

use reqwest::Url;

use crate::config::tools::ToolSpec;
use crate::model::Provider;
use crate::transcript::Usage;

pub use client::LlmClient;

/// What goldgate needs to know about a provider before it talks to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProviderInfo {
    /// The environment variable holding the API key.
    pub key_var: &'static str,
    /// The environment variable that overrides the endpoint (after `base_url` in the config).
    pub base_url_var: &'static str,
    /// The public endpoint, used when neither is set.
    pub public_base_url: &'static str,
    /// The model used when the config names none (gecx's defaults).
    pub default_model: &'static str,
}

/// The facts of `provider`.
pub fn info(provider: Provider) -> ProviderInfo {
    match provider {
        Provider::Anthropic => ProviderInfo {
            key_var: "ANTHROPIC_API_KEY",
            base_url_var: "ANTHROPIC_BASE_URL",
            public_base_url: "https://api.anthropic.com",
            default_model: "claude-sonnet-4-6",
        },
        Provider::OpenAi => ProviderInfo {
            key_var: "OPENAI_API_KEY",
            base_url_var: "OPENAI_BASE_URL",
            // OpenAI's base includes the version; compatible servers give theirs the same way.
            public_base_url: "https://api.openai.com/v1",
            default_model: "gpt-4o-mini",
        },
        Provider::Gemini => ProviderInfo {
            key_var: "GEMINI_API_KEY",
            base_url_var: "GOOGLE_GEMINI_BASE_URL",
            public_base_url: "https://generativelanguage.googleapis.com",
            default_model: "gemini-2.5-flash",
        },
    }
}

/// A tool call the model made.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolUse {
    /// The provider's id for the call, echoed with its result (Anthropic, OpenAI). Gemini pairs
    /// results by name and order; goldgate numbers its calls so that every call has an id.
    pub id: String,
    pub name: String,
    pub args: Value,
    /// Gemini's `thoughtSignature`, handed back with the call as the API asks.
    pub signature: Option<String>,
}

/// The answer to one tool call, sent back to the model.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutcome {
    pub id: String,
    pub name: String,
    pub output: Value,
    /// The call could not be answered (no mock): the model is told it failed.
    pub is_error: bool,
}

/// One message of a conversation, provider-neutral.
#[derive(Clone, Debug, PartialEq)]
pub enum ChatMessage {
    User(String),
    /// What the model said: text, tool calls, or both.
    Assistant {
        text: String,
        calls: Vec<ToolUse>,
    },
    /// The results of every call of the preceding assistant message, in its order.
    ToolResults(Vec<ToolOutcome>),
}

/// Which tool the model must call.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolChoice {
    /// The model decides (the agent's tool loop).
    Auto,
    /// The model must call this tool (a judge's structured answer).
    Force(String),
}

/// One request to a model.
#[derive(Clone, Debug)]
pub struct ChatRequest<'a> {
    pub system: Option<&'a str>,
    pub messages: &'a [ChatMessage],
    pub tools: &'a [ToolSpec],
    pub choice: ToolChoice,
    pub temperature: Option<f64>,
    /// The answer's length limit (required by Anthropic, sent where the API takes it).
    pub max_tokens: u32,
}

impl ChatRequest<'_> {
    /// Each tool as the providers declare one: name, description and the JSON Schema of its
    /// arguments under `schema_key`, the one word they each spell differently.
    fn tool_declarations(&self, schema_key: &str) -> Vec<Value> {
        self.tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    (schema_key): tool.parameters,
                })
            })
            .collect()
    }
}

/// The count a response states at `body[section][key]`; 0 when it states none.
fn token_count(body: &Value, section: &str, key: &str) -> u64 {
    body.get(section)
        .and_then(|u| u.get(key))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

/// What the model answered.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChatResponse {
    /// Every text part, in order, joined by newlines.
    pub text: String,
    pub calls: Vec<ToolUse>,
    pub usage: Usage,
    /// The provider says the model declined or was stopped (a refusal, a safety block).
    pub refusal: Option<String>,
}

/// A tool result as text for the providers that take text (Anthropic, OpenAI): a string as
/// is, anything else as JSON.
fn output_text(output: &Value) -> String {
    match output {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// `base` with `path` appended to its path (a query, as some gateways need, is kept).
pub(crate) fn join(base: &Url, path: &str) -> Url {
    let mut url = base.clone();
    if let Ok(mut segments) = url.path_segments_mut() {
        segments.pop_if_empty().extend(path.split('/'));
    }
    url
}
