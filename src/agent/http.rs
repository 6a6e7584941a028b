//! An agent behind an HTTP endpoint: one POST per turn, the [`TurnRequest`] as the JSON body.
//!
//! The reply is either one [`Reply`] object or, when the server answers with
//! `application/x-ndjson` (or `application/jsonl`), a stream of reply fragments, one per line,
//! merged with [`Reply::absorb`]. Streaming is what makes time to first token measurable, so
//! the body is read chunk by chunk as it arrives rather than buffered whole.
//!
//! With a request template and response paths (`agent: { http: { body, response, ... } }`)
//! it asks an endpoint with its own JSON instead ([`templated`]).
//!
//! Headers come from the config with `${VAR}` already expanded, so they may hold secrets:
//! they are marked sensitive (hidden from `Debug`) and never appear in errors or in
//! [`Agent::describe`].

use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures_util::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use reqwest::{Client, Response, Url};

mod gather;
mod mapping;
mod sse;
mod template;
pub mod templated;

use super::{Agent, TurnRequest};
use crate::net::{
    EndpointError, EndpointErrorKind, ReplyMemory, append, quote, read_parsed, status_error,
    transport_error,
};
use crate::results::{Threshold, Unmeasured};
use crate::secrets::Secrets;
use crate::transcript::{Exchange, Message, Reply, ToolCall};
use gather::Flow;

/// Posts each turn to one URL. Cheap to share: the [`Client`] holds the connection pool.
pub struct HttpAgent {
    client: Client,
    url: Url,
    headers: HeaderMap,
    /// Configured values an agent may echo back in an error (header values and their words,
    /// the URL's user, password and query values), with the run's others when it shares its
    /// set ([`HttpAgent::masking`]): masked out of every error message.
    secrets: Secrets,
    /// How to ask an endpoint with its own JSON; `None`: the turn protocol.
    templated: Option<templated::Templated>,
}

/// What a protocol agent accepts.
const PROTOCOL_ACCEPT: &str = "application/json, application/x-ndjson";

impl HttpAgent {
    pub fn new(client: Client, url: Url, mut headers: HeaderMap) -> Self {
        let secrets = Secrets::new();
        for value in headers.values_mut() {
            value.set_sensitive(true);
            if let Ok(text) = value.to_str() {
                secrets.add_value(text);
            }
        }
        secrets.add_url(url.as_str());
        // Tells servers that can stream that a stream is welcome.
        headers
            .entry(ACCEPT)
            .or_insert(HeaderValue::from_static(PROTOCOL_ACCEPT));
        Self {
            client,
            url,
            headers,
            secrets,
            templated: None,
        }
    }

    /// Asks with a request template and reads with response paths instead of the protocol.
    pub fn templated(mut self, templated: templated::Templated) -> Self {
        // The protocol's `Accept` gives way to what the template's replies are, unless the
        // config set its own.
        if self.headers.get(ACCEPT) == Some(&HeaderValue::from_static(PROTOCOL_ACCEPT)) {
            self.headers
                .insert(ACCEPT, HeaderValue::from_static(templated.accept()));
        }
        self.templated = Some(templated);
        self
    }

    /// Masks errors with the run's whole set (a token expanded into the URL's path), to which
    /// this agent's own secrets are added.
    pub fn masking(mut self, secrets: Secrets) -> Self {
        let own = std::mem::replace(&mut self.secrets, secrets);
        self.secrets.absorb(&own);
        self
    }

    fn redacted(&self, mut error: EndpointError) -> EndpointError {
        self.secrets.mask_string(&mut error.message);
        error
    }

    async fn exchange(&self, request: &TurnRequest) -> Result<Exchange, EndpointError> {
        if let Some(templated) = &self.templated {
            return self.exchange_templated(templated, request).await;
        }
        let start = Instant::now();
        let response = self
            .client
            .post(self.url.clone())
            .headers(self.headers.clone())
            .json(request)
            .send()
            .await
            .map_err(transport_error)?;
        if !response.status().is_success() {
            return Err(status_error(response, &self.secrets).await);
        }
        if is_stream(response.headers()) {
            read_stream(response, start).await
        } else {
            let declared = content_type(response.headers());
            let reply = read_parsed(response, |body| {
                serde_json::from_slice::<Reply>(&body)
                    .map_err(|e| not_protocol_json(&e, &declared, &quote(&body, &self.secrets)))
            })
            .await?;
            Ok(Exchange {
                reply,
                latency: start.elapsed(),
                ttft: None,
            })
        }
    }
}

#[async_trait]
impl Agent for HttpAgent {
    async fn send(&self, request: &TurnRequest) -> Result<Exchange, EndpointError> {
        self.exchange(request).await.map_err(|e| self.redacted(e))
    }

    async fn end_session(&self, session: &str) {
        if let Some(templated) = &self.templated {
            templated.end_session(session);
        }
    }

    fn unmeasured(&self) -> Vec<Unmeasured> {
        // A template whose `response:` has no path for a handoff: every case would read as
        // deflected, whatever the agent did.
        match &self.templated {
            Some(templated) if !templated.reads_handoffs() => vec![Unmeasured {
                metric: Threshold::DeflectionDropPp,
                why: "the HTTP template's `response:` has no path for a handoff, so no reply \
                      can show one"
                    .to_owned(),
            }],
            _ => Vec::new(),
        }
    }

    fn describe(&self) -> String {
        let mut shown = self.url.clone();
        // Credentials and query strings are where tokens hide.
        let _ = shown.set_username("");
        let _ = shown.set_password(None);
        shown.set_query(None);
        shown.set_fragment(None);
        shown.to_string()
    }
}

/// The reply's declared content type, without its parameters; empty when it declares none.
fn content_type(headers: &HeaderMap) -> String {
    let value = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok());
    let essence = value
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default();
    essence.trim().to_owned()
}

/// A reply the protocol cannot read, with what the server said it was and the start of what
/// it sent: a proxy's HTML page or a framework's own error shape is then plain at a glance.
fn not_protocol_json(error: &serde_json::Error, declared: &str, quoted: &str) -> EndpointError {
    let declared = if declared.is_empty() {
        "no content type".to_owned()
    } else {
        format!("`{declared}`")
    };
    let sent = if quoted.is_empty() {
        "an empty body".to_owned()
    } else {
        format!("`{quoted}`")
    };
    EndpointError::new(
        EndpointErrorKind::Protocol,
        format!("reply is not protocol JSON ({error}); it is {declared}: {sent}"),
    )
}

fn is_stream(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or_default().trim();
    ["application/x-ndjson", "application/jsonl"]
        .iter()
        .any(|kind| essence.eq_ignore_ascii_case(kind))
}

/// Reads newline-delimited reply fragments as they arrive.
async fn read_stream(response: Response, start: Instant) -> Result<Exchange, EndpointError> {
    let mut stream = Stream::new(start);
    each_line(response, |line| stream.absorb(line).map(Flow::Continue)).await?;
    Ok(Exchange {
        reply: stream.reply,
        latency: start.elapsed(),
        ttft: stream.ttft,
    })
}

/// Hands each line of a streamed body to `line` as it arrives (without its `\n`; the last
/// line need not end with one), within the reply memory bound: `line` returns what parsing it
/// holds beyond the line's bytes, counted too, and `Break` when the reply ended there (the rest
/// is not read). Returns whether it did.
async fn each_line(
    response: Response,
    mut line: impl FnMut(&[u8]) -> Result<Flow, EndpointError>,
) -> Result<bool, EndpointError> {
    let mut pending = Vec::new();
    let mut memory = ReplyMemory::default();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(transport_error)?;
        // Counted before it is parsed, and what parsing holds after: a stream of tiny
        // fragments (each several times its size once parsed) is bounded too.
        memory.grow(chunk.len()).await?;
        // Linear in the reply: only the new bytes are searched for a newline (a line spread
        // over many chunks was searched again from its start for each), and the lines found
        // are taken off the front once per chunk, not once per line.
        let mut searched = pending.len();
        append(&mut pending, &chunk);
        let (mut from, mut held) = (0, 0);
        while let Some(offset) = pending[searched..].iter().position(|&b| b == b'\n') {
            let end = searched + offset;
            match line(&pending[from..end])? {
                Flow::Continue(more) => held += more,
                Flow::Break(_) => return Ok(true),
            }
            (from, searched) = (end + 1, end + 1);
        }
        pending.drain(..from);
        memory.grow(held).await?;
    }
    Ok(line(&pending)?.is_break())
}

/// A streamed reply as its lines come in.
struct Stream {
    reply: Reply,
    ttft: Option<Duration>,
    start: Instant,
    lines: usize,
}

impl Stream {
    fn new(start: Instant) -> Self {
        Self {
            reply: Reply::default(),
            ttft: None,
            start,
            lines: 0,
        }
    }

    /// Merges one line's fragment; what it holds in memory beyond the line's own bytes
    /// (counted as they were read): each message's and call's struct, twice over for the
    /// vector's growth, and the smallest heap block its text takes.
    fn absorb(&mut self, line: &[u8]) -> Result<usize, EndpointError> {
        const HEAP_BLOCK: usize = 32;
        self.lines += 1;
        if line.trim_ascii().is_empty() {
            return Ok(0);
        }
        let fragment = serde_json::from_slice::<Reply>(line).map_err(|e| {
            EndpointError::new(
                EndpointErrorKind::Protocol,
                format!(
                    "streamed line {} is not a protocol fragment: {e}",
                    self.lines
                ),
            )
        })?;
        if self.ttft.is_none() && fragment.messages.iter().any(|m| !m.text.is_empty()) {
            self.ttft = Some(self.start.elapsed());
        }
        let held = fragment.messages.len() * (2 * size_of::<Message>() + HEAP_BLOCK)
            + fragment.tool_calls.len() * (2 * size_of::<ToolCall>() + HEAP_BLOCK);
        self.reply.absorb(fragment);
        Ok(held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_content_types() {
        let mut headers = HeaderMap::new();
        for (value, expected) in [
            ("application/x-ndjson", true),
            ("Application/JSONL; charset=utf-8", true),
            ("application/json", false),
        ] {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static(value));
            assert_eq!(is_stream(&headers), expected, "{value}");
        }
    }
}
