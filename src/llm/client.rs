//! One provider endpoint: its URL, key, model, timeout and retries.
//!
//! The base URL comes from the config's `base_url`, else the provider's environment variable
//! (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`, `GOOGLE_GEMINI_BASE_URL`), else the public
//! endpoint. A 429, a 5xx (Anthropic's 529 "overloaded" included) or a broken connection is
//! retried with exponential backoff, honouring `retry-after`; any other error status is
//! returned with the provider's own message (`error.message` in all three APIs), so that a
//! wrong model name reads as the provider put it.
//!
//! Errors are [`EndpointError`]s, the crate's HTTP error type, so that an LLM agent passes them
//! through unchanged. The key is sent in a sensitive header only and masked out of any
//! message, with the run's other secrets when the client shares its set
//! ([`LlmClient::masking`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use reqwest::Url;
use reqwest::header::HeaderMap;
use serde_json::Value;

use super::{ChatRequest, ChatResponse, anthropic, gemini, info, openai};
use crate::config::Endpoint;
use crate::limit::Limiter;
use crate::model::Provider;
use crate::net::{EndpointError, EndpointErrorKind};
use crate::net::{read_body, read_start, retry_after, transport_error};
use crate::secrets::Secrets;

/// How much of an error answer is read, and how much of a non-JSON one is quoted.
const ERROR_BODY_BYTES: usize = 64 * 1024;
const ERROR_QUOTE_CHARS: usize = 300;

/// How hard a client tries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Patience {
    /// Per request.
    pub timeout: Duration,
    /// Extra attempts after a retryable error.
    pub retries: u32,
    /// The first backoff delay, doubled on each attempt (with jitter).
    pub backoff: Duration,
}

/// Why a client could not be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SetupError {
    /// The key's variable is not set (or empty): checks needing this provider are skipped.
    #[error("{var} is not set")]
    MissingKey { var: &'static str },
    #[error("{0}")]
    Invalid(String),
}

/// A provider endpoint with its key. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct LlmClient {
    provider: Provider,
    model: String,
    base: Url,
    url: Url,
    headers: HeaderMap,
    /// The key, with the run's other secrets once shared: masked out of every error.
    secrets: Secrets,
    http: reqwest::Client,
    patience: Patience,
    /// Requests sent, retries included.
    requests: AtomicU64,
    /// Adaptive concurrency and pacing for this provider, shared by every judge using it.
    limiter: Option<Arc<Limiter>>,
}

/// The model `endpoint` asks `provider` for: its own, else the provider's default.
pub fn model_name(provider: Provider, endpoint: &Endpoint) -> String {
    let model = endpoint
        .model
        .clone()
        .unwrap_or_else(|| info(provider).default_model.to_owned());
    // Gemini names models `models/NAME` in its listings; the path adds `models/` itself.
    match provider {
        Provider::Gemini => model.trim_start_matches("models/").to_owned(),
        _ => model,
    }
}

impl LlmClient {
    /// Reads the key and base URL from the process environment.
    pub fn from_env(
        provider: Provider,
        endpoint: &Endpoint,
        http: reqwest::Client,
        patience: Patience,
    ) -> Result<Self, SetupError> {
        Self::new(
            provider,
            endpoint,
            &|name| std::env::var(name).ok(),
            http,
            patience,
        )
    }

    /// As [`LlmClient::from_env`], with the environment given.
    pub fn new(
        provider: Provider,
        endpoint: &Endpoint,
        env: &dyn Fn(&str) -> Option<String>,
        http: reqwest::Client,
        patience: Patience,
    ) -> Result<Self, SetupError> {
        let facts = info(provider);
        let key = env(facts.key_var)
            .filter(|key| !key.trim().is_empty())
            .ok_or(SetupError::MissingKey { var: facts.key_var })?;
        let (base, origin) = match (&endpoint.base_url, env(facts.base_url_var)) {
            (Some(url), _) => (url.clone(), "base_url"),
            (None, Some(url)) if !url.trim().is_empty() => (url, facts.base_url_var),
            _ => (facts.public_base_url.to_owned(), "the public endpoint"),
        };
        let base = Url::parse(base.trim())
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https"))
            .ok_or_else(|| SetupError::Invalid(format!("{origin}: not an http(s) URL")))?;
        let model = model_name(provider, endpoint);
        let (url, headers) = match provider {
            Provider::Anthropic => (anthropic::url(&base), anthropic::headers(&key)),
            Provider::OpenAi => (openai::url(&base), openai::headers(&key)),
            Provider::Gemini => (gemini::url(&base, &model), gemini::headers(&key)),
        };
        let headers =
            headers.map_err(|e| SetupError::Invalid(format!("{}: {e}", facts.key_var)))?;
        let secrets = Secrets::new();
        secrets.add(&key);
        secrets.add_url(base.as_str());
        Ok(Self {
            provider,
            model,
            base,
            url,
            headers,
            secrets,
            http,
            patience,
            requests: AtomicU64::new(0),
            limiter: None,
        })
    }

    /// Masks errors with the run's whole set (a judge's 429 may echo the agent's token or
    /// GitHub's), to which this client's key is added.
    pub fn masking(mut self, secrets: Secrets) -> Self {
        let own = std::mem::replace(&mut self.secrets, secrets);
        self.secrets.absorb(&own);
        self
    }

    /// Sends every request through `limiter`: 429s are waited out (not counted as retries),
    /// and the provider's in-flight requests adapt to its limit.
    pub fn limited_by(mut self, limiter: Arc<Limiter>) -> Self {
        self.limiter = Some(limiter);
        self
    }

    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// Where requests go, without query or credentials: part of a judgement's identity, since
    /// the same model name on another server (a gateway, a local vLLM) is another judge.
    pub fn endpoint(&self) -> String {
        let mut shown = self.url.clone();
        let _ = shown.set_username("");
        let _ = shown.set_password(None);
        shown.set_query(None);
        shown.to_string()
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// `provider/model at URL`, the URL without credentials or query (never a secret).
    pub fn describe(&self) -> String {
        let mut shown = self.base.clone();
        let _ = shown.set_username("");
        let _ = shown.set_password(None);
        shown.set_query(None);
        format!("{}/{} at {shown}", self.provider.name(), self.model)
    }

    /// Requests sent so far, retries included.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// The request in the provider's wire format: what is sent, and what the judge cache keys.
    pub fn body(&self, request: &ChatRequest<'_>) -> Value {
        match self.provider {
            Provider::Anthropic => anthropic::body(&self.model, request),
            Provider::OpenAi => openai::body(&self.model, request),
            Provider::Gemini => gemini::body(request),
        }
    }

    /// Sends `body` (from [`LlmClient::body`]), retrying what may pass on a second try.
    pub async fn send(&self, body: &Value) -> Result<ChatResponse, EndpointError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let sent = match &self.limiter {
                Some(limiter) => {
                    let tokens = |r: &ChatResponse| {
                        r.usage.input_tokens.saturating_add(r.usage.output_tokens)
                    };
                    limiter.call(|| self.send_once(body), tokens).await
                }
                None => self.send_once(body).await,
            };
            match sent {
                Ok(response) => return Ok(response),
                Err(err) if err.is_retryable() && attempt <= self.patience.retries => {
                    // Through a limiter, a 503's wait is its pause (timed, within the budget).
                    if self.limiter.is_none() || !crate::limit::is_limit(&err) {
                        let wait =
                            crate::net::backoff(self.patience.backoff, attempt, err.retry_after);
                        tokio::time::sleep(wait).await;
                    }
                }
                Err(err) => return Err(err),
            }
        }
    }

    async fn send_once(&self, body: &Value) -> Result<ChatResponse, EndpointError> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let response = self
            .http
            .post(self.url.clone())
            .headers(self.headers.clone())
            .timeout(self.patience.timeout)
            .json(body)
            .send()
            .await
            .map_err(|e| self.redacted(transport_error(e)))?;
        if !response.status().is_success() {
            return Err(self.status_error(response).await);
        }
        // Capped, as an agent's reply is: a provider (or a proxy) sending without end cannot
        // fill memory.
        let bytes = read_body(response).await.map_err(|e| self.redacted(e))?;
        let name = self.provider.name();
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
            EndpointError::new(
                EndpointErrorKind::Protocol,
                format!("{name} answered with something that is not JSON: {e}"),
            )
        })?;
        let parsed = match self.provider {
            Provider::Anthropic => anthropic::parse(&value),
            Provider::OpenAi => openai::parse(&value),
            Provider::Gemini => gemini::parse(&value),
        };
        parsed.map_err(|e| {
            self.redacted(EndpointError::new(
                EndpointErrorKind::Protocol,
                format!("{name} answered in an unexpected shape: {e}"),
            ))
        })
    }

    /// A non-2xx answer as an error carrying the provider's message.
    async fn status_error(&self, mut response: reqwest::Response) -> EndpointError {
        let status = response.status();
        let wait = retry_after(response.headers(), SystemTime::now());
        let body = read_start(&mut response, ERROR_BODY_BYTES).await;
        let said = serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|v| v.pointer("/error/message")?.as_str().map(str::to_owned))
            .unwrap_or_else(|| {
                // `read_start` may stop exactly at the cap of a longer body.
                let cut_short = body.len() >= ERROR_BODY_BYTES;
                let text = String::from_utf8_lossy(&body);
                self.secrets.excerpt(&text, cut_short, ERROR_QUOTE_CHARS)
            });
        let reason = status.canonical_reason().unwrap_or("");
        let message = if said.is_empty() {
            format!(
                "{} answered {} {reason}",
                self.provider.name(),
                status.as_u16()
            )
        } else {
            format!(
                "{} answered {} {reason}: {said}",
                self.provider.name(),
                status.as_u16()
            )
        };
        self.redacted(EndpointError {
            kind: EndpointErrorKind::Status(status.as_u16()),
            message,
            retry_after: wait,
        })
    }

    /// Masks the key and the run's secrets out of a message, in case a server or a proxy
    /// echoed them.
    fn redacted(&self, mut error: EndpointError) -> EndpointError {
        self.secrets.mask_string(&mut error.message);
        error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patience() -> Patience {
        Patience {
            timeout: Duration::from_secs(1),
            retries: 0,
            backoff: Duration::from_millis(1),
        }
    }

    fn client(provider: Provider, endpoint: &Endpoint, vars: &[(&str, &str)]) -> LlmClient {
        let env = |name: &str| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        };
        LlmClient::new(
            provider,
            endpoint,
            &env,
            crate::net::http_client().unwrap(),
            patience(),
        )
        .unwrap()
    }

    #[test]
    fn base_url_comes_from_config_then_environment_then_the_public_endpoint() {
        let key = [("OPENAI_API_KEY", "k")];
        let public = client(Provider::OpenAi, &Endpoint::default(), &key);
        assert_eq!(
            public.url.as_str(),
            "https://api.openai.com/v1/chat/completions"
        );
        let vars = [
            ("OPENAI_API_KEY", "k"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/"),
        ];
        let from_env = client(Provider::OpenAi, &Endpoint::default(), &vars);
        assert_eq!(
            from_env.url.as_str(),
            "http://127.0.0.1:9/v1/chat/completions"
        );
        let configured = Endpoint {
            model: Some("models/gemini-x".into()),
            base_url: Some("http://127.0.0.1:8/gw?api-version=1".into()),
        };
        let gemini = client(Provider::Gemini, &configured, &[("GEMINI_API_KEY", "k")]);
        assert_eq!(
            gemini.url.as_str(),
            "http://127.0.0.1:8/gw/v1beta/models/gemini-x:generateContent?api-version=1"
        );
        assert_eq!(gemini.model(), "gemini-x");
    }

    #[test]
    fn a_missing_key_names_its_variable_and_the_key_never_shows() {
        let env = |_: &str| None;
        let err = LlmClient::new(
            Provider::Anthropic,
            &Endpoint::default(),
            &env,
            crate::net::http_client().unwrap(),
            patience(),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "ANTHROPIC_API_KEY is not set");
        let client = client(
            Provider::Anthropic,
            &Endpoint::default(),
            &[("ANTHROPIC_API_KEY", "sk-secret")],
        );
        assert!(!format!("{client:?}").contains("sk-secret"));
        assert_eq!(client.model(), "claude-sonnet-4-6");
        let echoed = EndpointError::new(EndpointErrorKind::Status(401), "bad key sk-secret");
        assert_eq!(client.redacted(echoed).message, "bad key ***");
    }
}
