//! A template agent: an endpoint with its own JSON, asked with the configured request
//! template and read with the configured response paths ([`crate::config::http`]).
//!
//! What a conversation carries from turn to turn is kept per session (one per case) and
//! dropped when the case ends: the session id the server assigned, the cookies it set (with
//! `cookies: true`: a jar per conversation, so that concurrent cases never share one), and the
//! variables sent so far.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use reqwest::header::{CONTENT_TYPE, COOKIE, HeaderMap, HeaderName, HeaderValue, SET_COOKIE};
use reqwest::{Method as HttpMethod, Response, Url};
use serde_json::{Map, Value as Json};

use super::mapping::{self, NothingFound};
use super::template::TurnValues;
use super::{HttpAgent, each_line, sse};
use crate::agent::TurnRequest;
use crate::config::http::{HttpTemplate, Method, ResponsePaths, StreamFormat, TextTemplate};
use crate::net::{
    EndpointError, EndpointErrorKind, parse_imf_fixdate, quote, read_body, status_error,
    transport_error,
};
use crate::secrets::Secrets;
use crate::transcript::{Exchange, Message, Reply, ToolCall};

/// How the turns of a template agent are asked and read.
pub struct Templated {
    template: HttpTemplate,
    /// The URL with `${VAR}` expanded.
    url: TextTemplate,
    /// The header values that hold placeholders; the others are sent as they are.
    headers: Vec<(HeaderName, TextTemplate)>,
    conversations: Mutex<HashMap<String, Conversation>>,
}

/// What one conversation carries between its turns.
#[derive(Clone, Default)]
struct Conversation {
    server_session: Option<Json>,
    cookies: Vec<(String, String)>,
    variables: Map<String, Json>,
}

impl Templated {
    pub fn new(
        template: HttpTemplate,
        url: TextTemplate,
        headers: Vec<(HeaderName, TextTemplate)>,
    ) -> Self {
        Self {
            template,
            url,
            headers,
            conversations: Mutex::new(HashMap::new()),
        }
    }

    /// The `Accept` header the template's replies call for.
    pub fn accept(&self) -> &'static str {
        match self.template.stream {
            Some(StreamFormat::Sse) => "text/event-stream",
            Some(StreamFormat::Ndjson) => "application/x-ndjson",
            None => "application/json",
        }
    }

    fn conversations(&self) -> MutexGuard<'_, HashMap<String, Conversation>> {
        self.conversations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The conversation as this turn starts, with the turn's variables added.
    fn begin(&self, request: &TurnRequest) -> Conversation {
        let mut all = self.conversations();
        let conversation = all.entry(request.session.clone()).or_default();
        conversation
            .variables
            .extend(request.session_parameters.clone());
        if let Some(Json::Object(variables)) = request.input.get("variables") {
            conversation.variables.extend(variables.clone());
        }
        conversation.clone()
    }

    /// Keeps what the turn's reply set for the turns after it.
    fn carry(&self, session: &str, server_session: Option<Json>, cookies: Vec<SetCookie>) {
        let mut all = self.conversations();
        let conversation = all.entry(session.to_owned()).or_default();
        if server_session.is_some() {
            conversation.server_session = server_session;
        }
        for cookie in cookies {
            conversation
                .cookies
                .retain(|(name, _)| *name != cookie.name);
            if let Some(value) = cookie.value {
                conversation.cookies.push((cookie.name, value));
            }
        }
    }

    pub fn end_session(&self, session: &str) {
        self.conversations().remove(session);
    }
}

impl HttpAgent {
    /// Plays one turn of a template agent.
    pub(super) async fn exchange_templated(
        &self,
        templated: &Templated,
        request: &TurnRequest,
    ) -> Result<Exchange, EndpointError> {
        let conversation = templated.begin(request);
        let start = Instant::now();
        let response = self
            .templated_request(templated, &conversation, request)?
            .send()
            .await
            .map_err(transport_error)?;
        if !response.status().is_success() {
            return Err(status_error(response, &self.secrets).await);
        }
        let cookies = if templated.template.cookies {
            set_cookies(response.headers(), SystemTime::now())
        } else {
            Vec::new()
        };
        let paths = &templated.template.response;
        let streamed = templated.template.stream.is_some();
        let mut gathered = Gathered::new(paths, &self.secrets, start, streamed);
        match templated.template.stream {
            None => gathered.absorb(&read_body(response).await?).map(drop)?,
            Some(format) => read_stream(response, format, &mut gathered).await?,
        }
        let (reply, server_session) = gathered.finish()?;
        templated.carry(&request.session, server_session, cookies);
        Ok(Exchange {
            reply,
            latency: start.elapsed(),
            ttft: gathered.ttft.filter(|_| streamed),
        })
    }

    /// The turn's request: the URL, headers and body rendered with its values.
    fn templated_request(
        &self,
        templated: &Templated,
        conversation: &Conversation,
        request: &TurnRequest,
    ) -> Result<reqwest::RequestBuilder, EndpointError> {
        let own_session = Json::String(request.session.clone());
        let session = match (
            &templated.template.response.session,
            &conversation.server_session,
        ) {
            (None, _) => &own_session,
            (Some(_), Some(assigned)) => assigned,
            (Some(_), None) => &Json::Null,
        };
        let values = TurnValues {
            text: request
                .input
                .get("text")
                .and_then(Json::as_str)
                .unwrap_or(""),
            session,
            variables: &conversation.variables,
            turn: request.turn,
            conversation: &request.conversation,
            input: &request.input,
        };
        let setup = |what: String| EndpointError::new(EndpointErrorKind::NotStarted, what);
        let url = Url::parse(&values.url(&templated.url))
            .map_err(|e| setup(format!("agent.http.url with the turn's values: {e}")))?;
        let mut headers = self.headers.clone();
        for (name, template) in &templated.headers {
            let value = HeaderValue::from_str(&values.text(template)).map_err(|_| {
                setup(format!(
                    "agent.http.headers.{name} with the turn's values has characters a header cannot carry"
                ))
            })?;
            headers.insert(name.clone(), value);
        }
        if !conversation.cookies.is_empty() {
            let jar: Vec<String> = conversation
                .cookies
                .iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect();
            if let Ok(value) = HeaderValue::from_str(&jar.join("; ")) {
                headers.insert(COOKIE, value);
            }
        }
        let mut builder = self.client.request(method(templated.template.method), url);
        if let Some(template) = &templated.template.body {
            let body = values.body(template);
            if !headers.contains_key(CONTENT_TYPE) {
                headers.insert(CONTENT_TYPE, HeaderValue::from_static(body.content_type));
            }
            builder = builder.body(body.bytes);
        }
        Ok(builder.headers(headers))
    }
}

fn method(method: Method) -> HttpMethod {
    match method {
        Method::Get => HttpMethod::GET,
        Method::Post => HttpMethod::POST,
        Method::Put => HttpMethod::PUT,
        Method::Patch => HttpMethod::PATCH,
        Method::Delete => HttpMethod::DELETE,
    }
}

/// Reads a streamed reply event by event as it arrives.
async fn read_stream(
    response: Response,
    format: StreamFormat,
    gathered: &mut Gathered<'_>,
) -> Result<(), EndpointError> {
    match format {
        StreamFormat::Ndjson => each_line(response, |line| gathered.absorb(line)).await,
        StreamFormat::Sse => {
            let mut events = sse::Events::default();
            each_line(response, |line| match events.line(line) {
                Some(data) => gathered.absorb(&data),
                None => Ok(0),
            })
            .await?;
            match events.finish() {
                Some(data) => gathered.absorb(&data).map(drop),
                None => Ok(()),
            }
        }
    }
}

/// How much of a reply is kept to quote when a path finds nothing in it.
const HEAD: usize = 4096;

/// A reply's parts as its events come in (a whole reply is one event).
struct Gathered<'a> {
    paths: &'a ResponsePaths,
    secrets: &'a Secrets,
    start: Instant,
    /// A stream's texts are joined into one message; a whole reply's are one message each.
    streamed: bool,
    texts: Option<Vec<String>>,
    tool_calls: Vec<ToolCall>,
    transfer: Option<crate::transcript::Transfer>,
    session: Option<Json>,
    ttft: Option<Duration>,
    /// The start of the reply, for the error of a path that found nothing.
    head: Vec<u8>,
}

impl<'a> Gathered<'a> {
    fn new(paths: &'a ResponsePaths, secrets: &'a Secrets, start: Instant, streamed: bool) -> Self {
        Self {
            paths,
            secrets,
            start,
            streamed,
            texts: None,
            tool_calls: Vec::new(),
            transfer: None,
            session: None,
            ttft: None,
            head: Vec::new(),
        }
    }

    /// Reads one event (or the whole reply); returns what it holds in memory beyond its bytes.
    fn absorb(&mut self, data: &[u8]) -> Result<usize, EndpointError> {
        let trimmed = data.trim_ascii();
        // Blank lines between NDJSON documents, and the `[DONE]` OpenAI-style streams end with.
        if trimmed.is_empty() || trimmed == b"[DONE]" {
            return Ok(0);
        }
        if self.head.len() < HEAD {
            if !self.head.is_empty() {
                self.head.push(b'\n');
            }
            self.head
                .extend_from_slice(&trimmed[..trimmed.len().min(HEAD)]);
        }
        let fragment = mapping::read(self.paths, &mapping::parse(trimmed))
            .map_err(|missing| self.nothing_found(&missing, trimmed))?;
        // Each message's and call's struct, twice over for the vector's growth, and the
        // smallest heap block its text takes (as the protocol's stream counts them).
        const HEAP_BLOCK: usize = 32;
        let held = fragment.texts.as_ref().map_or(0, Vec::len)
            * (2 * size_of::<String>() + HEAP_BLOCK)
            + fragment.tool_calls.len() * (2 * size_of::<ToolCall>() + HEAP_BLOCK);
        if let Some(texts) = fragment.texts {
            if self.ttft.is_none() && texts.iter().any(|t| !t.is_empty()) {
                self.ttft = Some(self.start.elapsed());
            }
            self.texts.get_or_insert_with(Vec::new).extend(texts);
        }
        self.tool_calls.extend(fragment.tool_calls);
        self.transfer = fragment.transfer.or(self.transfer.take());
        self.session = fragment.session.or(self.session.take());
        Ok(held)
    }

    /// The error of a path that found nothing in `data` (an event, or the reply's start).
    fn nothing_found(&self, missing: &NothingFound, data: &[u8]) -> EndpointError {
        let what = match (self.streamed, missing.tool_call) {
            (false, _) => "the reply",
            (true, Some(_)) => "an event of the stream",
            (true, None) => "the stream",
        };
        EndpointError::new(
            EndpointErrorKind::Protocol,
            missing.message(what, &quote(data, self.secrets)),
        )
    }

    /// The reply: each text found a message, or a stream's texts joined into one; and the
    /// session id the server assigned, if it did.
    fn finish(&mut self) -> Result<(Reply, Option<Json>), EndpointError> {
        let Some(texts) = self.texts.take() else {
            let missing = NothingFound {
                path: self.paths.text.source.clone(),
                tool_call: None,
                hint: None,
            };
            return Err(self.nothing_found(&missing, &self.head));
        };
        let texts = if self.streamed {
            vec![texts.concat()]
        } else {
            texts
        };
        let reply = Reply {
            messages: texts
                .into_iter()
                .filter(|t| !t.is_empty())
                .map(|text| Message { text, agent: None })
                .collect(),
            tool_calls: std::mem::take(&mut self.tool_calls),
            transfer: self.transfer.take(),
            ..Reply::default()
        };
        Ok((reply, self.session.take()))
    }
}

/// A cookie the server set (`value`), or removed (`None`).
struct SetCookie {
    name: String,
    value: Option<String>,
}

/// The cookies a reply sets. Domain and path are not checked: every request goes to the one
/// configured endpoint. A cookie already expired, or of `Max-Age` zero or less, is removed.
fn set_cookies(headers: &HeaderMap, now: SystemTime) -> Vec<SetCookie> {
    headers
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .filter_map(|header| {
            let mut parts = header.split(';');
            let (name, value) = parts.next()?.split_once('=')?;
            let name = name.trim();
            if name.is_empty() {
                return None;
            }
            let expired = parts.any(|attribute| {
                let (key, value) = attribute.split_once('=').unwrap_or((attribute, ""));
                match key.trim().to_ascii_lowercase().as_str() {
                    "max-age" => value.trim().parse::<i64>().is_ok_and(|age| age <= 0),
                    "expires" => parse_imf_fixdate(value.trim()).is_some_and(|at| at <= now),
                    _ => false,
                }
            });
            Some(SetCookie {
                name: name.to_owned(),
                value: (!expired).then(|| value.trim().to_owned()),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_set_and_removed() {
        let mut headers = HeaderMap::new();
        for value in [
            "sid=abc; Path=/; HttpOnly",
            "old=1; Max-Age=0",
            "gone=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
            "junk",
        ] {
            headers.append(SET_COOKIE, HeaderValue::from_static(value));
        }
        let cookies = set_cookies(&headers, SystemTime::now());
        let got: Vec<(&str, Option<&str>)> = cookies
            .iter()
            .map(|c| (c.name.as_str(), c.value.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![("sid", Some("abc")), ("old", None), ("gone", None)]
        );
    }
}
