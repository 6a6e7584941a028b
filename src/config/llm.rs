//! The `judge:` block of goldgate.yaml and the LLM kinds of `agent:`, read with the config's
//! spanned walker so that every mistake names its line and key.
//!
//! `system_prompt` is inline text, or the path (relative to the config) of a file holding it:
//! a one-line value naming an existing file is read from it, and a one-line value that looks
//! like a file name (no spaces and a `/`, or ending in `.md`, `.txt`, `.prompt`) but names
//! none is an error rather than a one-word prompt. `tools` is the path of a JSON file (see
//! [`super::tools`]).

use std::path::{Path, PathBuf};

use super::http::optional_url;
use super::tools;
use super::{
    DEFAULT_MAX_TOOL_ROUNDS, Endpoint, JudgeConfig, LlmAgentConfig, LlmAgentSettings,
    SimulatorConfig, positive_integer,
};
use crate::diagnostic::{Code, Diagnostics, suggestion};
use crate::model::Provider;
use crate::yaml::{self, Fields, Node};

/// The top of the similarity scale.
pub const SIMILARITY_MAX: f64 = 4.0;

/// The similarity at which a semantic match passes (the platform's pass mark).
pub const SIMILARITY_PASS: f64 = 3.0;

/// Extensions that make a one-line `system_prompt` a file name.
const PROMPT_EXTENSIONS: [&str; 4] = ["md", "txt", "prompt", "markdown"];

/// `agent: { <provider>: {...} }`; `path` is `agent.<provider>`, `base` the config's directory.
pub(crate) fn parse_agent(
    provider: Provider,
    node: &Node,
    path: &str,
    base: &Path,
    diags: &mut Diagnostics,
) -> Option<LlmAgentConfig> {
    let mut fields = Fields::of(node, path, diags)?;
    let endpoint = Endpoint {
        model: fields.string("model", diags),
        base_url: optional_url(&mut fields, "base_url", diags),
    };
    let mut files = Vec::new();
    let system_prompt = fields.take("system_prompt").and_then(|n| {
        let field = format!("{path}.system_prompt");
        let text = yaml::expect_text(n, &field, diags)?;
        let (prompt, file) = system_prompt(&text, n, &field, base, diags)?;
        files.extend(file);
        Some(prompt)
    });
    let tools = match fields.take("tools") {
        Some(n) => read_tools(n, &format!("{path}.tools"), base, diags).map(|(tools, file)| {
            files.push(file);
            tools
        }),
        None => Some(Vec::new()),
    };
    let temperature = fields
        .take("temperature")
        .and_then(|n| number_from_0_to(n, 2.0, &format!("{path}.temperature"), diags));
    let max_tool_rounds = fields
        .take("max_tool_rounds")
        .and_then(|n| positive_integer(n, &format!("{path}.max_tool_rounds"), diags))
        .map_or(DEFAULT_MAX_TOOL_ROUNDS, |n| {
            u32::try_from(n).unwrap_or(u32::MAX)
        });
    fields.finish(diags);
    Some(LlmAgentConfig {
        provider,
        endpoint,
        settings: LlmAgentSettings {
            system_prompt,
            tools: tools?,
            temperature,
            max_tool_rounds,
            files,
        },
    })
}

fn system_prompt(
    text: &str,
    node: &Node,
    field: &str,
    base: &Path,
    diags: &mut Diagnostics,
) -> Option<(String, Option<PathBuf>)> {
    let one_line = text.trim();
    if one_line.is_empty() || one_line.contains('\n') {
        return Some((text.to_owned(), None));
    }
    let file = base.join(one_line);
    if file.is_file() {
        let prompt = read_text(&file, file.display(), node, field, diags)?;
        return Some((prompt, Some(file)));
    }
    let named = Path::new(one_line);
    let looks_like_file = !one_line.contains(char::is_whitespace)
        && (one_line.contains('/')
            || named
                .extension()
                .is_some_and(|ext| PROMPT_EXTENSIONS.iter().any(|known| ext == *known)));
    if looks_like_file {
        diags
            .at(node)
            .error(Code::G112, format!("no file {}", file.display()))
            .field(field)
            .hint(
                "a path is relative to the config file; write a prompt with spaces as inline text",
            );
        return None;
    }
    Some((text.to_owned(), None))
}

fn read_tools(
    node: &Node,
    field: &str,
    base: &Path,
    diags: &mut Diagnostics,
) -> Option<(Vec<super::tools::ToolSpec>, PathBuf)> {
    let name = yaml::expect_text(node, field, diags)?;
    let file = base.join(name.trim());
    let what = format!("the tools file {}", file.display());
    let text = read_text(&file, what, node, field, diags)?;
    match tools::parse(&text) {
        Ok(tools) => Some((tools, file)),
        Err(why) => {
            diags
                .at(node)
                .error(Code::G101, format!("{}: {why}", file.display()))
                .field(field);
            None
        }
    }
}

/// The text of `file`, or a G112 at `node` that cannot read `what` (the file, as the user
/// knows it).
fn read_text(
    file: &Path,
    what: impl std::fmt::Display,
    node: &Node,
    field: &str,
    diags: &mut Diagnostics,
) -> Option<String> {
    match std::fs::read_to_string(file) {
        Ok(text) => Some(text),
        Err(e) => {
            diags
                .at(node)
                .error(Code::G112, format!("cannot read {what}: {e}"))
                .field(field);
            None
        }
    }
}

/// `judge: { provider, model, base_url, votes, similarity_pass }`.
pub(crate) fn parse_judge(node: &Node, diags: &mut Diagnostics) -> Option<JudgeConfig> {
    let mut fields = Fields::of(node, "judge", diags)?;
    let (provider_node, endpoint) = provider_and_endpoint(&mut fields, diags);
    let votes = fields.take("votes").and_then(|n| {
        let votes = positive_integer(n, "judge.votes", diags)?;
        if votes % 2 == 0 {
            diags
                .at(n)
                .error(
                    Code::G111,
                    format!("{votes} votes can tie: use an odd number"),
                )
                .field("judge.votes");
            return None;
        }
        u32::try_from(votes).ok()
    });
    let similarity_pass = fields
        .take("similarity_pass")
        .and_then(|n| number_from_0_to(n, SIMILARITY_MAX, "judge.similarity_pass", diags));
    let rate_limit = fields
        .take("rate_limit")
        .map(|n| crate::config::parse_rate_limit(n, "judge.rate_limit", diags))
        .unwrap_or_default();
    fields.finish(diags);
    let provider = provider_of(provider_node?, "judge", diags)?;
    Some(JudgeConfig {
        provider,
        endpoint,
        votes: votes.unwrap_or(1),
        similarity_pass: similarity_pass.unwrap_or(SIMILARITY_PASS),
        rate_limit,
    })
}

/// `simulator: { provider, model, base_url }`.
pub(crate) fn parse_simulator(node: &Node, diags: &mut Diagnostics) -> Option<SimulatorConfig> {
    let mut fields = Fields::of(node, "simulator", diags)?;
    let (provider_node, endpoint) = provider_and_endpoint(&mut fields, diags);
    fields.finish(diags);
    let provider = provider_of(provider_node?, "simulator", diags)?;
    Some(SimulatorConfig { provider, endpoint })
}

/// The `provider`, `model` and `base_url` that `judge:` and `simulator:` both open with: the
/// provider's node (named by [`provider_of`] once the section's other keys are read) and the
/// endpoint.
fn provider_and_endpoint<'a>(
    fields: &mut Fields<'a>,
    diags: &mut Diagnostics,
) -> (Option<&'a Node>, Endpoint) {
    let provider = fields.require("provider", "anthropic, openai or gemini", diags);
    let endpoint = Endpoint {
        model: fields.string("model", diags),
        base_url: optional_url(fields, "base_url", diags),
    };
    (provider, endpoint)
}

/// The provider `node` names under `section` (`judge`, `simulator`), or a G107 with a "did you
/// mean".
fn provider_of(node: &Node, section: &str, diags: &mut Diagnostics) -> Option<Provider> {
    provider_at(node, &format!("{section}.provider"), section, diags)
}

/// The provider `node` names at `field` for `section`'s LLM, or a G107 with a "did you mean".
/// gecx's scorer `provider` reads through it too, so that both name providers alike.
pub(crate) fn provider_at(
    node: &Node,
    field: &str,
    section: &str,
    diags: &mut Diagnostics,
) -> Option<Provider> {
    let name = yaml::expect_text(node, field, diags)?;
    let provider = Provider::parse(&name);
    if provider.is_none() {
        diags
            .at(node)
            .error(Code::G107, format!("unknown {section} provider `{name}`"))
            .field(field)
            .hint(suggestion(&name, &Provider::NAMES));
    }
    provider
}

/// A number in `0..=max`, or a G111 naming `field`.
fn number_from_0_to(node: &Node, max: f64, field: &str, diags: &mut Diagnostics) -> Option<f64> {
    match node.as_f64() {
        Some(value) if (0.0..=max).contains(&value) => Some(value),
        _ => {
            diags
                .at(node)
                .error(Code::G111, format!("expected a number from 0 to {max}"))
                .field(field);
            None
        }
    }
}

/// The judge models of an `eval.config.json`'s `providers` (see [`super::eval_config`]).
pub(super) fn provider_models(
    providers: &Node,
    diags: &mut Diagnostics,
) -> Vec<(Provider, String)> {
    let Some(entries) = Fields::of(providers, "providers", diags)
        .map(|f| f.node())
        .and_then(Node::as_map)
    else {
        return Vec::new();
    };
    let mut models = Vec::new();
    for (key, entry) in entries {
        let field = format!("providers.{}", key.name);
        let Some(provider) = Provider::parse(&key.name) else {
            let message = format!("unknown provider `{}`", key.name);
            diags
                .at(key)
                .error(Code::G107, message)
                .field(field)
                .hint(suggestion(&key.name, &Provider::NAMES));
            continue;
        };
        if entry.as_map().is_none() {
            entry
                .wrong_type("a mapping such as `{ \"model\": \"...\" }`", diags)
                .field(field);
            continue;
        }
        if let Some(model) = entry
            .get("model")
            .and_then(|model| yaml::expect_text(model, &format!("{field}.model"), diags))
        {
            models.push((provider, model));
        }
    }
    models
}
