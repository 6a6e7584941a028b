//! `agent: { ces: { app, platform: true } }` or `platform: { run_method, channel, tool_calls,
//! evaluations }`: play the selected goldens as the app's own `Evaluation` resources, run and
//! scored by CX Agent Studio (`runEvaluation`), instead of turn by turn through `runSession`.
//!
//! `evaluations: { prefix, tags }` also runs evaluations that already live in the app, chosen
//! as `cxas run --display-name-prefix / --tags` chooses them, with no local file of their own.

use crate::diagnostic::{Code, Diagnostics, suggestion};
use crate::yaml::{Fields, Node, Value};

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

/// The words each setting takes, as `platform:` spells them (any case).
const RUN_METHODS: [(&str, RunMethod); 2] =
    [("stable", RunMethod::Stable), ("naive", RunMethod::Naive)];
const CHANNELS: [(&str, Channel); 2] = [("text", Channel::Text), ("audio", Channel::Audio)];
const TOOL_CALLS: [(&str, ToolCalls); 2] = [("real", ToolCalls::Real), ("fake", ToolCalls::Fake)];

/// Evaluations already in the app (not pushed by goldgate) to run as well: those whose display
/// name starts with `prefix` and, with `tags`, that carry one of them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Existing {
    pub prefix: Option<String>,
    pub tags: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlatformConfig {
    pub run_method: RunMethod,
    pub channel: Channel,
    pub tool_calls: ToolCalls,
    pub existing: Option<Existing>,
}

/// `platform:`: `true`, `false` (turn by turn, as without it) or a map of the settings.
pub(crate) fn parse(node: &Node, path: &str, diags: &mut Diagnostics) -> Option<PlatformConfig> {
    match &node.value {
        Value::Bool(true) => return Some(PlatformConfig::default()),
        Value::Bool(false) | Value::Null => return None,
        _ => {}
    }
    let mut fields = Fields::of(node, path, diags)?;
    let mut config = PlatformConfig {
        run_method: word(&mut fields, "run_method", &RUN_METHODS, diags)?,
        channel: word(&mut fields, "channel", &CHANNELS, diags)?,
        tool_calls: word(&mut fields, "tool_calls", &TOOL_CALLS, diags)?,
        existing: None,
    };
    if let Some(n) = fields.take("evaluations") {
        config.existing = Some(existing(n, &fields.path_of("evaluations"), diags)?);
    }
    fields.finish(diags);
    Some(config)
}

fn existing(node: &Node, path: &str, diags: &mut Diagnostics) -> Option<Existing> {
    let mut fields = Fields::of(node, path, diags)?;
    let prefix = fields.string("prefix", diags);
    let tags = fields.strings("tags", diags);
    fields.finish(diags);
    if prefix.is_none() && tags.is_empty() {
        diags
            .at(node)
            .error(
                Code::G102,
                "`evaluations` chooses nothing: give a `prefix` or `tags`",
            )
            .field(path)
            .hint("e.g. `evaluations: { prefix: \"smoke_\" }` or `evaluations: { tags: [p0] }`");
        return None;
    }
    Some(Existing { prefix, tags })
}

/// The value under `key`, one of `words` by its name; the default when the key is absent.
/// `None`: the word is unknown (reported).
fn word<T: Copy + Default>(
    fields: &mut Fields,
    key: &'static str,
    words: &[(&str, T)],
    diags: &mut Diagnostics,
) -> Option<T> {
    let Some(node) = fields.take(key) else {
        return Some(T::default());
    };
    let field = fields.path_of(key);
    let text = crate::yaml::expect_text(node, &field, diags)?;
    let found = words
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(&text));
    if found.is_none() {
        let names: Vec<&str> = words.iter().map(|(name, _)| *name).collect();
        diags
            .at(node)
            .error(Code::G101, format!("unknown value `{text}`"))
            .field(field)
            .hint(suggestion(&text, &names));
    }
    found.map(|(_, value)| *value)
}
