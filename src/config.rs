//! `goldgate.yaml`: which agent to test and how to run, merged with flags into one [`Config`].
//!
//! The file is read with the same spanned YAML walker as the goldens, so a typo in a key is
//! an error with its line and a "did you mean". `${VAR}` in the agent's URL and headers (and
//! in an LLM's `base_url`) reads the environment; the expanded values are secrets and are never
//! printed or reported. The `judge:` block and the LLM agent kinds are read by
//! [`crate::config::llm`].

pub mod affects;
pub mod ces;
pub mod eval_config;
pub mod floors;
pub mod http;
pub mod lint;
pub mod llm;
pub mod prices;
pub mod quarantine;
pub mod thresholds;
pub mod tools;

pub use http::expanded_base_url;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::diagnostic::{Code, Diagnostic, Diagnostics, Position};
use crate::model::Provider;
use crate::results::Threshold;
use crate::yaml::{self, Fields, Node, Value};

/// The file looked for in the current directory when `--config` is not given.
pub const DEFAULT_FILE: &str = "goldgate.yaml";

/// Everything a run needs, after file and flags are merged.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// The file it came from, if any: relative paths in it are relative to its directory.
    pub path: Option<PathBuf>,
    pub agent: Option<AgentConfig>,
    /// The agent's known quota (`agent.rate_limit`), whatever its kind.
    pub agent_rate_limit: RateLimit,
    /// The model behind the agent (`agent.model`), whose price turns the tokens it reports
    /// into cost; an LLM agent's is its own model.
    pub agent_model: Option<String>,
    /// `prices:`, over the built-in table.
    pub prices: prices::Prices,
    pub judge: Option<JudgeConfig>,
    /// The simulated user of SCRAPI simulations (`simulator:`); `None`: the judge's provider
    /// and model.
    pub simulator: Option<SimulatorConfig>,
    pub run: RunSettings,
    /// Regression thresholds set in the file (`passRateDropPp`, ...), over the defaults.
    pub thresholds: Vec<(Threshold, f64)>,
    /// Cases that must not block until a date (`quarantine:`).
    pub quarantine: Vec<quarantine::Entry>,
    /// Bars the whole run must clear whatever the baseline says (`floors:`).
    pub floors: Vec<crate::model::Floor>,
    /// gecx's `eval.config.json` in the current directory, read once beside the config.
    pub eval_config: eval_config::EvalConfig,
    /// Globs (relative to the config's directory) of files every golden depends on
    /// (`affects:`): `run --changed-since` runs the whole suite when one changed.
    pub affects: Vec<String>,
    /// Globs (relative to the config's directory) of files whose change affects no golden
    /// (`affects_nothing:`, such as `docs/**`): the only files besides goldens that
    /// `run --changed-since` may see changed and still play part of the suite.
    pub affects_nothing: Vec<String>,
    /// Warnings not printed (`lint.allow`).
    pub lint_allow: Vec<Code>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AgentConfig {
    Http {
        url: String,
        /// Header name and value with `${VAR}` still unexpanded: expanded when the agent is built.
        headers: Vec<(String, String)>,
        /// How to ask an endpoint with its own JSON; `None`: it speaks the turn protocol.
        template: Option<Box<http::HttpTemplate>>,
    },
    Command {
        argv: Vec<String>,
        processes: usize,
        /// Where the command runs: the config file's directory.
        working_dir: Option<PathBuf>,
        /// How long a process may take to answer its start-up ping (building it included).
        startup_timeout: Duration,
    },
    Replay {
        dir: PathBuf,
    },
    /// A model plays the agent (`anthropic`, `openai`, `gemini`).
    Llm(LlmAgentConfig),
    /// A CX Agent Studio app, one session per case.
    Ces(ces::CesConfig),
}

/// `agent: { anthropic | openai | gemini: { model, system_prompt, tools, base_url,
/// temperature, max_tool_rounds } }`, with the prompt and tools files already read.
#[derive(Clone, Debug, PartialEq)]
pub struct LlmAgentConfig {
    pub provider: Provider,
    /// `base_url` with `${VAR}` still unexpanded: expanded when the agent is built.
    pub endpoint: Endpoint,
    pub settings: LlmAgentSettings,
}

/// `judge: { provider, model, base_url, votes, similarity_pass }`.
#[derive(Clone, Debug, PartialEq)]
pub struct JudgeConfig {
    pub provider: Provider,
    /// `base_url` with `${VAR}` still unexpanded.
    pub endpoint: Endpoint,
    /// Each judgement is asked this many times (odd) and the majority kept.
    pub votes: u32,
    /// Pass mark of the 0-4 similarity of `semantic` matches.
    pub similarity_pass: f64,
    /// The judge provider's known quota (`judge.rate_limit`).
    pub rate_limit: RateLimit,
}

/// `simulator: { provider, model, base_url }`: the LLM that plays the user of SCRAPI
/// simulations.
#[derive(Clone, Debug, PartialEq)]
pub struct SimulatorConfig {
    pub provider: Provider,
    /// `base_url` with `${VAR}` still unexpanded.
    pub endpoint: Endpoint,
}

impl SimulatorConfig {
    /// The simulator a config implies: its own, else the judge's provider and model.
    pub fn of(config: &Config) -> Option<SimulatorConfig> {
        config.simulator.clone().or_else(|| {
            config.judge.as_ref().map(|judge| SimulatorConfig {
                provider: judge.provider,
                endpoint: judge.endpoint.clone(),
            })
        })
    }
}

/// `rate_limit: { requests_per_minute, tokens_per_minute }`: a quota goldgate paces itself to,
/// so that it is not hit in the first place (a limit hit anyway is waited out).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateLimit {
    pub requests_per_minute: Option<f64>,
    pub tokens_per_minute: Option<f64>,
}

/// Reads a `rate_limit:` block at `path`.
pub(crate) fn parse_rate_limit(node: &Node, path: &str, diags: &mut Diagnostics) -> RateLimit {
    let Some(mut fields) = Fields::of(node, path, diags) else {
        return RateLimit::default();
    };
    let mut per_minute = |key: &'static str, diags: &mut Diagnostics| {
        let node = fields.take(key)?;
        match node.as_f64() {
            Some(value) if value > 0.0 && value.is_finite() => Some(value),
            _ => {
                node.wrong_type("a number above 0", diags)
                    .field(format!("{path}.{key}"));
                None
            }
        }
    };
    let limit = RateLimit {
        requests_per_minute: per_minute("requests_per_minute", diags),
        tokens_per_minute: per_minute("tokens_per_minute", diags),
    };
    fields.finish(diags);
    limit
}

/// Where a client points, as configured (before the environment is read).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Endpoint {
    /// `None`: the provider's default model.
    pub model: Option<String>,
    /// `None`: the environment variable, else the public endpoint.
    pub base_url: Option<String>,
}

/// How the model plays the agent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LlmAgentSettings {
    pub system_prompt: Option<String>,
    pub tools: Vec<tools::ToolSpec>,
    /// `None`: the provider's default.
    pub temperature: Option<f64>,
    /// Rounds of tool calls allowed in one turn.
    pub max_tool_rounds: u32,
    /// The files the prompt and tools were read from (`run --changed-since` runs the whole
    /// suite when one changed).
    pub files: Vec<PathBuf>,
}

/// Tool rounds an LLM agent may take in one turn when the config does not say.
pub const DEFAULT_MAX_TOOL_ROUNDS: u32 = 10;

/// `run:` settings, each overridable by a flag.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSettings {
    pub concurrency: usize,
    pub timeout: Duration,
    pub retries: u32,
    /// An agent may call tools the golden does not list without failing the turn.
    pub allow_extra_tool_calls: bool,
    /// US dollars the run may spend (agent, judges, simulated users) before it stops
    /// scheduling cases.
    pub budget: Option<f64>,
}

impl Default for RunSettings {
    fn default() -> Self {
        Self {
            concurrency: 8,
            timeout: Duration::from_secs(60),
            retries: 2,
            allow_extra_tool_calls: false,
            budget: None,
        }
    }
}

/// The config could not be used: every problem, each with its place.
#[derive(Debug, thiserror::Error)]
#[error("{}", .diagnostics.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
pub struct ConfigError {
    pub diagnostics: Vec<Diagnostic>,
}

const AGENT_KINDS: [&str; 7] = [
    "http",
    "command",
    "replay",
    "openai",
    "anthropic",
    "gemini",
    "ces",
];

impl Config {
    /// Reads `path`. Missing keys take their defaults.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let file: Arc<Path> = Arc::from(path);
        let mut diags = Diagnostics::new(&file);
        let text = std::fs::read_to_string(path).map_err(|e| {
            diags
                .at(Position::START)
                .error(Code::G112, format!("cannot read config: {e}"));
            ConfigError {
                diagnostics: std::mem::take(&mut diags.items),
            }
        })?;
        let config = match yaml::parse(&text) {
            Ok(root) => parse(&root, path, &mut diags),
            Err(err) => {
                yaml::report_parse_error(&err, &mut diags);
                Config::default()
            }
        };
        if diags.has_errors() {
            return Err(ConfigError {
                diagnostics: diags.items,
            });
        }
        Ok(config)
    }
}

fn parse(root: &Node, path: &Path, diags: &mut Diagnostics) -> Config {
    let mut config = Config {
        path: Some(path.to_path_buf()),
        ..Config::default()
    };
    if root.is_null() {
        return config;
    }
    let Some(mut fields) = Fields::of(root, "", diags) else {
        return config;
    };
    // `goldgate.yaml` has the parent "", which no process can start in: that is ".".
    let base = path
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    if let Some(agent) = fields.take("agent") {
        if let Some(limit) = agent.get("rate_limit") {
            config.agent_rate_limit = parse_rate_limit(limit, "agent.rate_limit", diags);
        }
        if let Some(model) = agent.get("model") {
            config.agent_model = yaml::expect_text(model, "agent.model", diags);
        }
        config.agent = parse_agent(agent, &base, diags);
    }
    if let Some(judge) = fields.take("judge") {
        config.judge = crate::config::llm::parse_judge(judge, diags);
    }
    if let Some(simulator) = fields.take("simulator") {
        config.simulator = crate::config::llm::parse_simulator(simulator, diags);
    }
    if let Some(prices) = fields.take("prices") {
        config.prices = prices::parse(prices, diags);
    }
    if let Some(run) = fields.take("run") {
        parse_run(run, &mut config.run, diags);
    }
    if let Some(thresholds) = fields.take("thresholds") {
        config.thresholds =
            crate::config::thresholds::parse_limits(thresholds, "thresholds", &[], diags);
    }
    if let Some(floors) = fields.take("floors") {
        config.floors = floors::parse(floors, path, diags);
    }
    if let Some(entries) = fields.take("quarantine") {
        config.quarantine = quarantine::parse(entries, diags);
    }
    if let Some(globs) = fields.take("affects") {
        config.affects = affects::parse(globs, "affects", diags);
    }
    if let Some(globs) = fields.take("affects_nothing") {
        config.affects_nothing = affects::parse(globs, "affects_nothing", diags);
    }
    if let Some(lint) = fields.take("lint") {
        config.lint_allow = lint::parse(lint, diags);
    }
    fields.take("version");
    fields.finish(diags);
    config
}

fn parse_agent(node: &Node, base: &Path, diags: &mut Diagnostics) -> Option<AgentConfig> {
    // `rate_limit` and `model` sit beside the kind (read by the caller); the kind is the one
    // other key.
    let beside = |name: &str| matches!(name, "rate_limit" | "model");
    let kinds: Option<Vec<&(yaml::Key, Node)>> = node
        .as_map()
        .map(|m| m.iter().filter(|(k, _)| !beside(&k.name)).collect());
    let Some([(kind, value)]) = kinds.as_deref() else {
        diags.at(node).error(Code::G101, "expected exactly one agent kind")
            .field("agent")
            .hint("e.g. `agent: { http: { url: \"http://127.0.0.1:8080/turn\" } }`; kinds: http, command, replay, anthropic, openai, gemini, ces");
        return None;
    };
    let path = format!("agent.{}", kind.name);
    match kind.name.as_str() {
        "http" => http::parse(value, &path, diags),
        "command" => parse_command(value, &path, base, diags),
        "replay" => {
            let dir = yaml::expect_text(value, &path, diags)?;
            Some(AgentConfig::Replay {
                dir: base.join(dir),
            })
        }
        "openai" | "anthropic" | "gemini" => {
            let provider = Provider::parse(&kind.name)?;
            crate::config::llm::parse_agent(provider, value, &path, base, diags)
                .map(AgentConfig::Llm)
        }
        "ces" => crate::config::ces::parse_agent(value, &path, diags).map(AgentConfig::Ces),
        other => {
            let message = format!("unknown agent kind `{other}`");
            diags
                .at(kind)
                .error(Code::G107, message)
                .field("agent")
                .hint(crate::diagnostic::suggestion(other, &AGENT_KINDS));
            None
        }
    }
}

/// `agent: { command: [argv...] }` or `{ command: { argv: [...], processes: N } }`, run in
/// the config file's directory.
fn parse_command(
    value: &Node,
    path: &str,
    base: &Path,
    diags: &mut Diagnostics,
) -> Option<AgentConfig> {
    let mut startup_timeout = DEFAULT_STARTUP_TIMEOUT;
    let (argv_node, processes) = match &value.value {
        Value::Map(_) => {
            let mut fields = Fields::of(value, path, diags)?;
            let argv = fields.require("argv", "a list: program and arguments", diags);
            let processes = fields
                .take("processes")
                .and_then(|n| positive_integer(n, &format!("{path}.processes"), diags))
                .unwrap_or(1);
            if let Some(n) = fields.take("startup_timeout") {
                let field = format!("{path}.startup_timeout");
                startup_timeout = duration_field(n, &field, diags).unwrap_or(startup_timeout);
            }
            fields.finish(diags);
            (argv?, processes)
        }
        _ => (value, 1),
    };
    let argv: Vec<String> = match &argv_node.value {
        Value::Seq(items) => items
            .iter()
            .filter_map(|i| yaml::expect_text(i, path, diags))
            .collect(),
        Value::Str(line) => line.split_whitespace().map(str::to_owned).collect(),
        _ => {
            argv_node.wrong_type("a list of strings", diags).field(path);
            return None;
        }
    };
    if argv.is_empty() {
        diags
            .at(argv_node)
            .error(Code::G102, "the command is empty")
            .field(path);
        return None;
    }
    Some(AgentConfig::Command {
        argv,
        processes,
        working_dir: Some(base.to_path_buf()),
        startup_timeout,
    })
}

/// How long a command agent may take to start by default: long enough for `cargo run` to build
/// it on a fresh clone, since start-up is timed apart from the turns.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(600);

/// A duration such as `30s`; an error at the node otherwise.
fn duration_field(node: &Node, field: &str, diags: &mut Diagnostics) -> Option<Duration> {
    let parsed = node
        .scalar_text()
        .ok_or_else(|| format!("expected a duration such as `30s`, found {}", node.kind()))
        .and_then(|text| parse_duration(&text));
    match parsed {
        Ok(duration) => Some(duration),
        Err(message) => {
            diags.at(node).error(Code::G101, message).field(field);
            None
        }
    }
}

fn parse_run(node: &Node, run: &mut RunSettings, diags: &mut Diagnostics) {
    let Some(mut fields) = Fields::of(node, "run", diags) else {
        return;
    };
    if let Some(n) = fields
        .take("concurrency")
        .and_then(|n| positive_integer(n, "run.concurrency", diags))
    {
        run.concurrency = n;
    }
    if let Some(timeout) = fields
        .take("timeout")
        .and_then(|n| duration_field(n, "run.timeout", diags))
    {
        run.timeout = timeout;
    }
    if let Some(n) = fields.take("retries") {
        match n.value {
            Value::Int(i) if (0..=20).contains(&i) => run.retries = i as u32,
            _ => {
                diags
                    .at(n)
                    .error(
                        Code::G101,
                        "expected a whole number of retries between 0 and 20",
                    )
                    .field("run.retries");
            }
        }
    }
    if let Some(n) = fields.take("budget") {
        run.budget = prices::read_dollars(n, "run.budget", diags);
        // As `--budget 0` is refused: no case could start.
        if run.budget == Some(0.0) {
            diags
                .at(n)
                .error(
                    Code::G101,
                    "expected an amount of US dollars above 0, such as 5 or 0.50: a budget of 0 \
                     would run nothing",
                )
                .field("run.budget");
            run.budget = None;
        }
    }
    if let Some(n) = fields.take("allow_extra_tool_calls") {
        match n.value {
            Value::Bool(b) => run.allow_extra_tool_calls = b,
            _ => {
                n.wrong_type("true or false", diags)
                    .field("run.allow_extra_tool_calls");
            }
        }
    }
    fields.finish(diags);
}

pub(crate) fn positive_integer(node: &Node, field: &str, diags: &mut Diagnostics) -> Option<usize> {
    match node.value {
        Value::Int(i) if i >= 1 => usize::try_from(i).ok(),
        _ => {
            node.wrong_type("a whole number of at least 1", diags)
                .field(field);
            None
        }
    }
}

/// `500ms`, `30s`, `2m`, or a bare number of seconds; more than zero.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
        Some(i) => text.split_at(i),
        None => (text, "s"),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration; write e.g. `500ms`, `30s` or `2m`"))?;
    let seconds = match unit.trim() {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        other => {
            return Err(format!(
                "unknown unit `{other}` in `{text}`; use ms, s, m or h"
            ));
        }
    };
    match Duration::try_from_secs_f64(seconds) {
        // Every duration goldgate reads is a time allowed for something: zero allows nothing.
        Ok(Duration::ZERO) => Err(format!("`{text}` is zero; give a time such as `30s`")),
        Ok(duration) => Ok(duration),
        Err(_) => Err(format!("`{text}` is out of range")),
    }
}

/// Expands `${VAR}` from the environment. A variable that is not set is an error naming it
/// (never its would-be value, and never the rest of the string, which may hold a secret).
pub fn expand_env(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| "unterminated `${` (expected `${NAME}`)".to_owned())?;
        let name = &after[..end];
        let value =
            std::env::var(name).map_err(|_| format!("environment variable `{name}` is not set"))?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_common_units() {
        for (text, want) in [
            ("500ms", Duration::from_millis(500)),
            ("30s", Duration::from_secs(30)),
            ("2m", Duration::from_secs(120)),
            ("5", Duration::from_secs(5)),
        ] {
            assert_eq!(parse_duration(text), Ok(want), "{text:?}");
        }
        for (text, complaint) in [("5 parsecs", "unknown unit"), ("0s", "is zero")] {
            let err = parse_duration(text).unwrap_err();
            assert!(err.contains(complaint), "{text:?}: {err}");
        }
    }

    #[test]
    fn env_expansion_names_a_missing_variable_only() {
        assert_eq!(expand_env("plain"), Ok("plain".into()));
        let err = expand_env("Bearer ${GOLDGATE_TEST_SURELY_UNSET}").unwrap_err();
        assert_eq!(
            err,
            "environment variable `GOLDGATE_TEST_SURELY_UNSET` is not set"
        );
    }
}
