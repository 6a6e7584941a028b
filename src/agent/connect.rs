//! From the configured agent to a running one: expands `${VAR}` in the URL and headers,
//! builds the HTTP client, starts the subprocess, loads the transcripts or points an LLM
//! agent at its provider.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::Agent;
use super::ces::CesAgent;
use super::ces::auth::Credentials;
use super::command::CommandAgent;
use super::http::HttpAgent;
use super::http::templated::Templated;
use super::llm::LlmAgent;
use super::replay::ReplayAgent;
use crate::config::http::{HttpTemplate, TextTemplate, parse_expanded};
use crate::config::{AgentConfig, Endpoint, LlmAgentConfig, expand_env, expanded_base_url};
use crate::llm::LlmClient;
use crate::llm::client::Patience;
use crate::net::http_client;
use crate::secrets::Secrets;

/// An LLM agent's requests are bounded by the runner's per-turn timeout, and retried by the
/// runner (which starts the turn over): the client itself neither gives up early nor retries.
const LLM_AGENT_PATIENCE: Patience = Patience {
    timeout: Duration::from_secs(600),
    retries: 0,
    backoff: Duration::ZERO,
};

/// Every `${VAR}` the agent's config reads is set: checked once before anything plays, so that
/// a variable not set is one error of the config, not one per case.
pub fn check_variables(config: &AgentConfig) -> Result<(), String> {
    let fields: Vec<(String, &str)> =
        match config {
            AgentConfig::Http { url, headers, .. } => {
                std::iter::once(("agent.http.url".to_owned(), url.as_str()))
                    .chain(headers.iter().map(|(name, value)| {
                        (format!("agent.http.headers.{name}"), value.as_str())
                    }))
                    .collect()
            }
            AgentConfig::Llm(llm) => (llm.endpoint.base_url.as_deref())
                .map(|url| (format!("agent.{}.base_url", llm.provider.name()), url))
                .into_iter()
                .collect(),
            AgentConfig::Ces(ces) => (ces.base_url.as_deref())
                .map(|url| ("agent.ces.base_url".to_owned(), url))
                .into_iter()
                .collect(),
            AgentConfig::Command { .. } | AgentConfig::Replay { .. } => Vec::new(),
        };
    for (field, text) in fields {
        expand_env(text).map_err(|e| format!("{field}: {e}"))?;
    }
    Ok(())
}

/// Starts the agent. The error names what is wrong but never a secret value.
pub async fn connect(config: &AgentConfig) -> Result<Arc<dyn Agent>, String> {
    connect_masking(config, &Secrets::new()).await
}

/// As [`connect`], sharing the run's `secrets`: the agent masks them out of its errors, and
/// adds the tokens it obtains (Google access tokens) for the run to mask everywhere. The
/// error is masked too: a command's last words may quote its environment.
pub async fn connect_masking(
    config: &AgentConfig,
    secrets: &Secrets,
) -> Result<Arc<dyn Agent>, String> {
    start(config, secrets)
        .await
        .map_err(|why| secrets.mask(&why).into_owned())
}

async fn start(config: &AgentConfig, secrets: &Secrets) -> Result<Arc<dyn Agent>, String> {
    match config {
        AgentConfig::Http {
            url,
            headers,
            template,
        } => Ok(Arc::new(
            http_agent(url, headers, template.as_deref())?.masking(secrets.clone()),
        )),
        AgentConfig::Command {
            argv,
            processes,
            working_dir,
            startup_timeout,
        } => {
            let agent = CommandAgent::spawn(
                argv.clone(),
                *processes,
                working_dir.clone(),
                *startup_timeout,
                secrets.clone(),
            )
            .await
            .map_err(|e| e.to_string())?;
            Ok(Arc::new(agent))
        }
        AgentConfig::Replay { dir } => {
            let agent = ReplayAgent::load(dir).map_err(|e| e.to_string())?;
            Ok(Arc::new(agent))
        }
        AgentConfig::Llm(llm) => Ok(Arc::new(llm_agent(llm, secrets)?)),
        AgentConfig::Ces(ces) => {
            let base_url = expanded_base_url(ces.base_url.as_deref(), "agent.ces")?;
            let client = http_client()?;
            let credentials = Credentials::find(client.clone())
                .map_err(|e| format!("agent.ces: {e}"))?
                .masking(secrets.clone());
            Ok(Arc::new(CesAgent::new(
                client,
                ces.clone(),
                base_url,
                credentials,
            )))
        }
    }
}

/// An HTTP agent: `${VAR}` expanded in the URL and headers; with a template, the placeholders
/// of the expanded URL and header values compiled.
fn http_agent(
    url: &str,
    headers: &[(String, String)],
    template: Option<&HttpTemplate>,
) -> Result<HttpAgent, String> {
    let written = url;
    let url = expand_env(written).map_err(|e| format!("agent.http.url: {e}"))?;
    let url_template = template
        .map(|_| TextTemplate::compile(&url))
        .transpose()
        .map_err(|e| format!("agent.http.url: {e}"))?;
    let parsed = parse_expanded(written, &url, "agent.http.url")?;
    let mut map = HeaderMap::new();
    let mut templated_headers = Vec::new();
    for (name, value) in headers {
        let field = format!("agent.http.headers.{name}");
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("{field}: not a valid header name"))?;
        let value = expand_env(value).map_err(|e| format!("{field}: {e}"))?;
        if template.is_some() {
            let compiled = TextTemplate::compile(&value).map_err(|e| format!("{field}: {e}"))?;
            if compiled.has_placeholders() {
                templated_headers.push((header, compiled));
                continue;
            }
        }
        let value = HeaderValue::from_str(&value)
            .map_err(|_| format!("{field}: the value has characters a header cannot carry"))?;
        map.insert(header, value);
    }
    let agent = HttpAgent::new(http_client()?, parsed, map);
    Ok(match (template, url_template) {
        (Some(template), Some(url)) => {
            agent.templated(Templated::new(template.clone(), url, templated_headers))
        }
        _ => agent,
    })
}

fn llm_agent(config: &LlmAgentConfig, secrets: &Secrets) -> Result<LlmAgent, String> {
    let field = format!("agent.{}", config.provider.name());
    let endpoint = Endpoint {
        base_url: expanded_base_url(config.endpoint.base_url.as_deref(), &field)?,
        ..config.endpoint.clone()
    };
    let client = LlmClient::from_env(
        config.provider,
        &endpoint,
        http_client()?,
        LLM_AGENT_PATIENCE,
    )
    .map_err(|e| format!("{field}: {e}"))?
    .masking(secrets.clone());
    Ok(LlmAgent::new(client, config.settings.clone()))
}

/// Stands in for an agent that is not there to ask: every turn it is asked ends in an error
/// that says why.
pub enum StandIn {
    /// No agent is configured and every turn has a reply recorded in its golden (Regtrace
    /// `actual_output`): the runner never asks it.
    NoAgent,
    /// The agent could not be started or set up (a command that exits at once, a URL that
    /// does not parse), and why: every case ends in an error of the run carrying it, so the
    /// run still writes every report it was asked for, and exits 2.
    NotStarted(String),
    /// Its start-up was interrupted (Ctrl-C, SIGTERM): no case is scheduled after that, so
    /// it is never asked either.
    Interrupted,
}

#[async_trait::async_trait]
impl Agent for StandIn {
    async fn send(
        &self,
        request: &super::TurnRequest,
    ) -> Result<super::Exchange, crate::net::EndpointError> {
        use crate::net::{EndpointError, EndpointErrorKind};
        Err(match self {
            StandIn::NoAgent => EndpointError::new(
                EndpointErrorKind::NotRecorded,
                format!(
                    "no agent configured, and turn {} of `{}` has no recorded reply",
                    request.turn, request.conversation
                ),
            ),
            StandIn::NotStarted(why) => {
                EndpointError::new(EndpointErrorKind::NotStarted, why.clone())
            }
            StandIn::Interrupted => EndpointError::cancelled(),
        })
    }

    fn describe(&self) -> String {
        match self {
            StandIn::NoAgent => "none (replies recorded in the goldens)",
            StandIn::NotStarted(_) => "not started (it failed to start)",
            StandIn::Interrupted => "not started (interrupted during its start-up)",
        }
        .to_owned()
    }
}
