//! A template agent: an endpoint with its own JSON, asked with the configured request
//! template and read with the configured response paths ([`crate::config::http`]).
//!
//! What a conversation carries from turn to turn is kept per session (one per case) and
//! dropped when the case ends: the session id the server assigned, the cookies it set (with
//! `cookies: true`: a jar per conversation, so that concurrent cases never share one), the
//! variables sent so far, and the turns as chat messages (`{{messages}}`, for APIs that keep
//! no conversation).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Instant, SystemTime};

use reqwest::header::{CONTENT_TYPE, COOKIE, HeaderMap, HeaderName, HeaderValue, SET_COOKIE};
use reqwest::{Method as HttpMethod, Response, Url};
use serde_json::{Map, Value as Json, json};

use super::gather::{Flow, Gathered};
use super::template::TurnValues;
use super::{HttpAgent, each_line, sse};
use crate::agent::TurnRequest;
use crate::config::http::{HttpTemplate, Method, StreamFormat, TextTemplate};
use crate::net::{
    EndpointError, EndpointErrorKind, parse_imf_fixdate, read_parsed, status_error, transport_error,
};
use crate::transcript::{Exchange, Reply};

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
    /// The turns so far as chat messages, for `{{messages}}`.
    history: Vec<Json>,
}

/// A jar holds at most this many cookies, the newest, each of at most [`COOKIE_BYTES`] (name
/// and value; a larger one is ignored): browsers' limits per site. Without them a server
/// setting new cookies every turn grew the `Cookie` header and the memory held without bound.
const JAR_COOKIES: usize = 180;
const COOKIE_BYTES: usize = 4096;

impl Conversation {
    /// Sets or removes the cookies a reply set, within the jar's limits.
    fn keep(&mut self, cookies: Vec<SetCookie>) {
        for cookie in cookies {
            self.cookies.retain(|(name, _)| *name != cookie.name);
            if let Some(value) = cookie.value
                && cookie.name.len() + value.len() <= COOKIE_BYTES
            {
                self.cookies.push((cookie.name, value));
            }
        }
        let over = self.cookies.len().saturating_sub(JAR_COOKIES);
        self.cookies.drain(..over);
    }
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
        self.template
            .stream
            .map_or("application/json", content_type)
    }

    /// Whether a reply can show a handoff.
    pub fn reads_handoffs(&self) -> bool {
        self.template.response.reads_handoffs()
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
    fn carry(
        &self,
        request: &TurnRequest,
        server_session: Option<Json>,
        cookies: Vec<SetCookie>,
        reply: &Reply,
    ) {
        let mut all = self.conversations();
        let conversation = all.entry(request.session.clone()).or_default();
        conversation.history.extend(user_message(&request.input));
        let said = reply.text();
        if !said.is_empty() {
            conversation
                .history
                .push(json!({ "role": "assistant", "content": said }));
        }
        if server_session.is_some() {
            conversation.server_session = server_session;
        }
        conversation.keep(cookies);
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
        let stream = templated.template.stream.map(|format| {
            let declared = response.headers().get(CONTENT_TYPE);
            let declared = declared.and_then(|v| v.to_str().ok()).unwrap_or_default();
            (content_type(format), declared.to_owned())
        });
        let streamed = stream.is_some();
        let paths = &templated.template.response;
        let mut gathered = Gathered::new(paths, &self.secrets, start, stream);
        match templated.template.stream {
            // Parsed while the reply still counts against the large-reply slots: its bytes
            // and the JSON made of them are held at once.
            None => {
                read_parsed(response, |body| {
                    gathered.note(&body);
                    gathered.absorb(None, &body).map(drop)
                })
                .await?
            }
            Some(format) => read_stream(response, format, &mut gathered).await?,
        }
        let (reply, server_session) = gathered.finish()?;
        templated.carry(request, server_session, cookies, &reply);
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
            templated.template.response.reads_session(),
            &conversation.server_session,
        ) {
            (false, _) => &own_session,
            (true, Some(assigned)) => assigned,
            (true, None) => &Json::Null,
        };
        let mut messages = conversation.history.clone();
        messages.extend(user_message(&request.input));
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
            messages: &messages,
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

/// The turn's user message for `{{messages}}`: its text, or its event as SCRAPI writes one
/// in text (`<event>welcome</event>`); none for a turn that sends neither.
fn user_message(input: &Map<String, Json>) -> Option<Json> {
    let content = match (input.get("text"), input.get("event")) {
        (Some(Json::String(text)), _) => text.clone(),
        (_, Some(Json::String(event))) => format!("<event>{event}</event>"),
        _ => return None,
    };
    Some(json!({ "role": "user", "content": content }))
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

/// The content type of a stream of `format`.
fn content_type(format: StreamFormat) -> &'static str {
    match format {
        StreamFormat::Sse => "text/event-stream",
        StreamFormat::Ndjson => "application/x-ndjson",
    }
}

/// Reads a streamed reply event by event as it arrives, until it ends or an event ends the turn.
async fn read_stream(
    response: Response,
    format: StreamFormat,
    gathered: &mut Gathered<'_>,
) -> Result<(), EndpointError> {
    match format {
        StreamFormat::Ndjson => each_line(response, |line| {
            gathered.note(line);
            gathered.absorb(None, line)
        })
        .await
        .map(drop),
        StreamFormat::Sse => {
            let mut events = sse::Events::default();
            let ended = each_line(response, |line| {
                gathered.note(line);
                match events.line(line) {
                    Some(event) => gathered.absorb(Some(&event.name), &event.data),
                    None => Ok(Flow::Continue(0)),
                }
            })
            .await?;
            match events.finish() {
                Some(event) if !ended => gathered.absorb(Some(&event.name), &event.data).map(drop),
                _ => Ok(()),
            }
        }
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

    /// Defect #15: a server setting 90 new 4 KB cookies a reply made the jar send a 6.85 MB
    /// `Cookie` header by turn 20. The jar keeps the newest 180, and none over 4 KiB.
    #[test]
    fn the_jar_keeps_the_newest_cookies_within_browsers_limits() {
        let mut conversation = Conversation::default();
        for turn in 0..20 {
            let cookies = (0..90)
                .map(|i| SetCookie {
                    name: format!("c{turn}-{i}"),
                    value: Some("v".repeat(4000)),
                })
                .collect();
            conversation.keep(cookies);
        }
        assert_eq!(conversation.cookies.len(), JAR_COOKIES);
        assert_eq!(conversation.cookies[0].0, "c18-0");
        assert_eq!(conversation.cookies[179].0, "c19-89");
        conversation.keep(vec![SetCookie {
            name: "huge".to_owned(),
            value: Some("v".repeat(COOKIE_BYTES)),
        }]);
        assert!(conversation.cookies.iter().all(|(name, _)| name != "huge"));
    }

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
