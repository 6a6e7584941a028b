//! From the configured agent to a running one: expands `${VAR}` in the URL and headers,
//! builds the HTTP client, starts the subprocess or loads the transcripts.

use std::sync::Arc;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::Agent;
use super::command::CommandAgent;
use super::http::HttpAgent;
use super::replay::ReplayAgent;
use crate::config::{AgentConfig, expand_env};

/// Starts the agent. The error names what is wrong but never a secret value.
pub async fn connect(config: &AgentConfig) -> Result<Arc<dyn Agent>, String> {
    match config {
        AgentConfig::Http { url, headers } => {
            let url = expand_env(url).map_err(|e| format!("agent.http.url: {e}"))?;
            let url = reqwest::Url::parse(&url)
                .map_err(|e| format!("agent.http.url: not a URL ({e})"))?;
            let mut map = HeaderMap::new();
            for (name, value) in headers {
                let field = format!("agent.http.headers.{name}");
                let header = HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| format!("{field}: not a valid header name"))?;
                let value = expand_env(value).map_err(|e| format!("{field}: {e}"))?;
                let value = HeaderValue::from_str(&value).map_err(|_| {
                    format!("{field}: the value has characters a header cannot carry")
                })?;
                map.insert(header, value);
            }
            Ok(Arc::new(HttpAgent::new(http_client()?, url, map)))
        }
        AgentConfig::Command {
            argv,
            processes,
            working_dir,
        } => {
            let agent = CommandAgent::spawn(argv.clone(), *processes, working_dir.clone())
                .await
                .map_err(|e| e.to_string())?;
            Ok(Arc::new(agent))
        }
        AgentConfig::Replay { dir } => {
            let agent = ReplayAgent::load(dir).map_err(|e| e.to_string())?;
            Ok(Arc::new(agent))
        }
    }
}

/// One client for the whole run: one connection pool, rustls with the ring provider.
pub fn http_client() -> Result<reqwest::Client, String> {
    // Installing twice is harmless: the first provider stays.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .user_agent(concat!("goldgate/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

/// Stands in when no agent is configured and every turn has a reply recorded in its golden
/// (Regtrace `actual_output`): the runner never asks it, and if it did the answer says why.
pub struct NoAgent;

#[async_trait::async_trait]
impl Agent for NoAgent {
    async fn send(
        &self,
        request: &super::TurnRequest,
    ) -> Result<super::Exchange, super::AgentError> {
        Err(super::AgentError::new(
            super::AgentErrorKind::NotRecorded,
            format!(
                "no agent configured, and turn {} of `{}` has no recorded reply",
                request.turn, request.conversation
            ),
        ))
    }

    fn describe(&self) -> String {
        "none (replies recorded in the goldens)".to_owned()
    }
}
