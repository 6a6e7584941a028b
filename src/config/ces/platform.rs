//! `agent: { ces: { app, platform: true } }` or `platform: { run_method, channel, tool_calls }`:
//! play the selected goldens as the app's own `Evaluation` resources, run and scored by CX Agent
//! Studio (`runEvaluation`), instead of turn by turn through `runSession`.

use crate::diagnostic::{Code, Diagnostics, suggestion};
use crate::yaml::{Fields, Node, Value};

const KEYS: [&str; 3] = ["run_method", "channel", "tool_calls"];

/// How the platform replays a golden (`goldenRunMethod`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RunMethod {
    /// Each turn in a new session, the earlier expected turns injected (the platform's default).
    #[default]
    Stable,
    /// The whole golden in one session.
    Naive,
}

/// The channel the platform evaluates on (`config.evaluationChannel`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Channel {
    #[default]
    Text,
    Audio,
}

/// Whether tools really run during the evaluation (`config.toolCallBehaviour`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ToolCalls {
    #[default]
    Real,
    /// The app's tool fakes answer.
    Fake,
}

impl RunMethod {
    pub fn wire(self) -> &'static str {
        match self {
            RunMethod::Stable => "STABLE",
            RunMethod::Naive => "NAIVE",
        }
    }
}

impl Channel {
    pub fn wire(self) -> &'static str {
        match self {
            Channel::Text => "TEXT",
            Channel::Audio => "AUDIO",
        }
    }
}

impl ToolCalls {
    pub fn wire(self) -> &'static str {
        match self {
            ToolCalls::Real => "REAL",
            ToolCalls::Fake => "FAKE",
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlatformConfig {
    pub run_method: RunMethod,
    pub channel: Channel,
    pub tool_calls: ToolCalls,
}

/// `platform:`: `true`, `false` (turn by turn, as without it) or a map of the settings.
pub(crate) fn parse(node: &Node, path: &str, diags: &mut Diagnostics) -> Option<PlatformConfig> {
    match &node.value {
        Value::Bool(true) => return Some(PlatformConfig::default()),
        Value::Bool(false) | Value::Null => return None,
        _ => {}
    }
    let mut fields = Fields::of(node, path, diags)?;
    let mut config = PlatformConfig::default();
    if let Some(n) = fields.take("run_method") {
        let field = format!("{path}.run_method");
        config.run_method = word(
            n,
            &field,
            &[("stable", RunMethod::Stable), ("naive", RunMethod::Naive)],
            diags,
        )?;
    }
    if let Some(n) = fields.take("channel") {
        let field = format!("{path}.channel");
        config.channel = word(
            n,
            &field,
            &[("text", Channel::Text), ("audio", Channel::Audio)],
            diags,
        )?;
    }
    if let Some(n) = fields.take("tool_calls") {
        let field = format!("{path}.tool_calls");
        config.tool_calls = word(
            n,
            &field,
            &[("real", ToolCalls::Real), ("fake", ToolCalls::Fake)],
            diags,
        )?;
    }
    fields.finish(&KEYS, diags);
    Some(config)
}

/// One of `words`, by its name.
fn word<T: Copy>(
    node: &Node,
    field: &str,
    words: &[(&str, T)],
    diags: &mut Diagnostics,
) -> Option<T> {
    let text = crate::yaml::expect_text(node, field, diags)?;
    let found = words
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(&text));
    if found.is_none() {
        let names: Vec<&str> = words.iter().map(|(name, _)| *name).collect();
        diags
            .error(
                Code::G101,
                node.line,
                node.column,
                format!("unknown value `{text}`"),
            )
            .field(field)
            .hint(suggestion(&text, &names));
    }
    found.map(|(_, value)| *value)
}
