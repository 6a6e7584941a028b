//! A template agent's reply as its events come in (a whole reply is one event): each event is
//! read by the first `response.events` rule that selects it, else by `response`'s own paths,
//! and the parts found are gathered into one [`Reply`].
//!
//! A reply may hold no text: a silent turn, an error turn, a tool call alone. But the text
//! path must still fit it (find a node, null included, or a path it goes through; in a stream,
//! in some event, or a rule selected one), whatever else the reply holds: a tool call found
//! beside a misspelt text path would otherwise read as an agent that said nothing. The agent's
//! own error is the exception: an error reply is often the error object alone.

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use super::mapping::{self, CallPart, NothingFound, Unread};
use crate::config::http::{EventRule, Response};
use crate::net::{EndpointError, EndpointErrorKind, quote};
use crate::secrets::Secrets;
use crate::transcript::{Handoff, Message, Reply, ReplyError, ToolCall, Transfer};

/// How much of a reply is kept to quote when it cannot be read.
const HEAD: usize = 4096;

/// What an absorbed event asks of the reading: `Continue` with the memory it holds beyond
/// its bytes, or `Break` (with the same) when it ended the turn.
pub type Flow = ControlFlow<usize, usize>;

/// A reply's parts as its events come in.
pub struct Gathered<'a> {
    response: &'a Response,
    secrets: &'a Secrets,
    start: Instant,
    /// `Some`: a stream, of this content type (the one the server declared, for the error of a
    /// stream that is not one); a stream's texts are joined into one message.
    stream: Option<(&'static str, String)>,
    texts: Option<Vec<String>>,
    /// An event was selected by a rule, or the text path's shape was found: a reply without
    /// text is silence, not a path that fits nothing.
    understood: bool,
    calls: Vec<PendingCall>,
    transfer: Option<Transfer>,
    handoff: Option<Handoff>,
    error: Option<ReplyError>,
    session: Option<Json>,
    pub ttft: Option<Duration>,
    /// The start of the reply as it came, for the error of a reply that cannot be read.
    head: Vec<u8>,
}

/// A tool call being gathered: whole, or from the fragments that share its key.
struct PendingCall {
    key: Option<Json>,
    name: Option<String>,
    /// Arguments found as an object (or anything but a string).
    whole: Option<Json>,
    /// Argument strings found, joined: JSON sent in pieces.
    pieces: Option<String>,
}

impl<'a> Gathered<'a> {
    /// `stream`: the content type a stream should have and the one the reply declared.
    pub fn new(
        response: &'a Response,
        secrets: &'a Secrets,
        start: Instant,
        stream: Option<(&'static str, String)>,
    ) -> Self {
        Self {
            response,
            secrets,
            start,
            stream,
            texts: None,
            understood: false,
            calls: Vec::new(),
            transfer: None,
            handoff: None,
            error: None,
            session: None,
            ttft: None,
            head: Vec::new(),
        }
    }

    /// Keeps the start of the reply as it came (a stream's lines, or the whole body).
    pub fn note(&mut self, raw: &[u8]) {
        if self.head.len() < HEAD {
            if !self.head.is_empty() {
                self.head.push(b'\n');
            }
            let room = HEAD - self.head.len().min(HEAD);
            self.head.extend_from_slice(&raw[..raw.len().min(room)]);
        }
    }

    /// Reads one event (`name`: its SSE name) or the whole reply.
    pub fn absorb(&mut self, name: Option<&str>, data: &[u8]) -> Result<Flow, EndpointError> {
        let trimmed = data.trim_ascii();
        // Blank lines between NDJSON documents, and the `[DONE]` OpenAI-style streams end with.
        if trimmed.is_empty() || trimmed == b"[DONE]" {
            return Ok(Flow::Continue(0));
        }
        // A list holding only the data, on which rules' filters test the data itself.
        let listed = Json::Array(vec![mapping::parse(trimmed)]);
        let rule = self.rule(name, &listed).map_err(|e| self.unread(&e))?;
        let paths = rule.map_or(&self.response.paths, |rule| &rule.paths);
        let fragment = mapping::read(paths, &listed[0]).map_err(|e| self.unread(&e))?;
        self.understood |= rule.is_some() || fragment.shaped;
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
        fragment
            .tool_calls
            .into_iter()
            .for_each(|c| self.add_call(c));
        self.transfer = fragment.transfer.or(self.transfer.take());
        self.handoff = fragment.handoff.or(self.handoff.take());
        self.error = fragment.error.or(self.error.take());
        self.session = fragment.session.or(self.session.take());
        Ok(if rule.is_some_and(|r| r.end) {
            Flow::Break(held)
        } else {
            Flow::Continue(held)
        })
    }

    /// The first rule that selects a streamed event (its data `listed` alone in a list).
    fn rule(&self, name: Option<&str>, listed: &Json) -> Result<Option<&'a EventRule>, Unread> {
        if self.stream.is_none() {
            return Ok(None);
        }
        for rule in &self.response.events {
            let named = match (&rule.event, name) {
                (None, _) => true,
                (Some(wanted), Some(name)) => wanted == name,
                (Some(_), None) => false,
            };
            if named
                && rule
                    .matches
                    .as_ref()
                    .map_or(Ok(true), |m| mapping::finds(m, listed))?
            {
                return Ok(Some(rule));
            }
        }
        Ok(None)
    }

    /// A call found whole joins the list; a fragment joins the call of its key.
    fn add_call(&mut self, part: CallPart) {
        let (whole, piece) = match part.args {
            Some(Json::String(text)) => (None, Some(text)),
            other => (other, None),
        };
        let same = part
            .key
            .as_ref()
            .and_then(|key| self.calls.iter_mut().find(|c| c.key.as_ref() == Some(key)));
        match same {
            Some(call) => {
                call.name = call.name.take().or(part.name);
                call.whole = whole.or(call.whole.take());
                if let Some(piece) = piece {
                    call.pieces.get_or_insert_with(String::new).push_str(&piece);
                }
            }
            None => self.calls.push(PendingCall {
                key: part.key,
                name: part.name,
                whole,
                pieces: piece,
            }),
        }
    }

    /// The error of a reply or event that cannot be read, quoting the reply's start.
    fn unread(&self, unread: &Unread) -> EndpointError {
        let what = match (&self.stream, unread) {
            (None, _) => "the reply",
            (
                Some(_),
                Unread::NothingFound(NothingFound {
                    tool_call: None, ..
                }),
            ) => "the stream",
            (Some(_), _) => "an event of the stream",
        };
        let mut message = unread.message(what, &quote(&self.head, self.secrets));
        if let Some((expected, declared)) = &self.stream {
            let essence = declared.split(';').next().unwrap_or_default().trim();
            if !essence.eq_ignore_ascii_case(expected) {
                let declared = if essence.is_empty() {
                    "no content type"
                } else {
                    essence
                };
                message = format!("the reply is `{declared}`, not `{expected}`: {message}");
            }
        }
        EndpointError::new(EndpointErrorKind::Protocol, message)
    }

    /// The reply: each text found a message, or a stream's texts joined into one; and the
    /// session id the server assigned, if it did.
    pub fn finish(&mut self) -> Result<(Reply, Option<Json>), EndpointError> {
        let tool_calls = std::mem::take(&mut self.calls)
            .into_iter()
            .enumerate()
            .map(|(i, call)| self.tool_call(call, i + 1))
            .collect::<Result<Vec<_>, _>>()?;
        let texts = match self.texts.take() {
            Some(texts) if self.stream.is_some() => vec![texts.concat()],
            Some(texts) => texts,
            None if self.understood || self.error.is_some() => Vec::new(),
            None => {
                let read =
                    !tool_calls.is_empty() || self.transfer.is_some() || self.handoff.is_some();
                return Err(self.unread(&Unread::NothingFound(self.text_path(read))));
            }
        };
        let reply = Reply {
            messages: texts
                .into_iter()
                .filter(|t| !t.is_empty())
                .map(|text| Message { text, agent: None })
                .collect(),
            tool_calls,
            transfer: self.transfer.take(),
            handoff: self.handoff.take(),
            error: self.error.take(),
            ..Reply::default()
        };
        Ok((reply, self.session.take()))
    }

    /// The text path that found nothing: `response.text`, else the first rule's. `read`: the
    /// other paths found something, which does not excuse it (said, so that the error is not
    /// taken for a misreading of those).
    fn text_path(&self, read: bool) -> NothingFound {
        let rules = self.response.events.iter().map(|rule| &rule.paths.text);
        let path = std::iter::once(&self.response.paths.text)
            .chain(rules)
            .flatten()
            .next();
        NothingFound {
            path: path.map(|p| p.source.clone()).unwrap_or_default(),
            tool_call: None,
            hint: read.then(|| {
                "a tool call, transfer or handoff found does not excuse it: a reply without \
                 text holds the path as null or \"\", or a path it goes through"
                    .to_owned()
            }),
        }
    }

    /// A gathered call; one made of fragments must have had a name in one of them.
    fn tool_call(&self, call: PendingCall, n: usize) -> Result<ToolCall, EndpointError> {
        let Some(name) = call.name else {
            let missing = NothingFound {
                path: self.response.paths.tool_name.source.clone(),
                tool_call: Some(n),
                hint: None,
            };
            return Err(self.unread(&Unread::NothingFound(missing)));
        };
        let args = match call.pieces {
            Some(pieces) if !pieces.trim().is_empty() => Some(Json::String(pieces)),
            _ => call.whole,
        };
        Ok(ToolCall::new(name, mapping::arguments(args)))
    }
}
