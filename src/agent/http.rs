//! An agent behind an HTTP endpoint: one POST per turn, the [`TurnRequest`] as the JSON body.
//!
//! The reply is either one [`Reply`] object or, when the server answers with
//! `application/x-ndjson` (or `application/jsonl`), a stream of reply fragments, one per line,
//! merged with [`Reply::absorb`]. Streaming is what makes time to first token measurable, so
//! the body is read chunk by chunk as it arrives rather than buffered whole.
//!
//! Headers come from the config with `${VAR}` already expanded, so they may hold secrets:
//! they are marked sensitive (hidden from `Debug`) and never appear in errors or in
//! [`Agent::describe`].

use std::error::Error as _;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use futures_util::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};
use reqwest::{Client, Response, Url};

use super::{Agent, AgentError, AgentErrorKind, TurnRequest};
use crate::secrets::Secrets;
use crate::transcript::{Exchange, Message, Reply, ToolCall};

/// How much of an error body is quoted in the error message.
const ERROR_BODY_CHARS: usize = 200;
/// How much of an error body is read: more than is quoted, so that the quote is cut after
/// masking and never leaves the start of a secret cut in half.
const ERROR_BODY_READ: usize = 4096;
/// The largest reply read, streamed or not: a bigger one is a protocol error, so that an agent
/// sending hundreds of megabytes cannot fill goldgate's memory.
pub const MAX_BODY: usize = 16 * 1024 * 1024;

/// Posts each turn to one URL. Cheap to share: the [`Client`] holds the connection pool.
pub struct HttpAgent {
    client: Client,
    url: Url,
    headers: HeaderMap,
    /// Configured values an agent may echo back in an error (header values and their words,
    /// the URL's user, password and query values), with the run's others when it shares its
    /// set ([`HttpAgent::masking`]): masked out of every error message.
    secrets: Secrets,
}

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
        headers.entry(ACCEPT).or_insert(HeaderValue::from_static(
            "application/json, application/x-ndjson",
        ));
        Self {
            client,
            url,
            headers,
            secrets,
        }
    }

    /// Masks errors with the run's whole set (a token expanded into the URL's path), to which
    /// this agent's own secrets are added.
    pub fn masking(mut self, secrets: Secrets) -> Self {
        let own = std::mem::replace(&mut self.secrets, secrets);
        self.secrets.absorb(&own);
        self
    }

    fn redacted(&self, mut error: AgentError) -> AgentError {
        self.secrets.mask_string(&mut error.message);
        error
    }

    async fn exchange(&self, request: &TurnRequest) -> Result<Exchange, AgentError> {
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
            let body = read_body(response).await?;
            let reply = serde_json::from_slice::<Reply>(&body).map_err(|e| {
                AgentError::new(
                    AgentErrorKind::Protocol,
                    format!("reply is not protocol JSON: {e}"),
                )
            })?;
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
    async fn send(&self, request: &TurnRequest) -> Result<Exchange, AgentError> {
        self.exchange(request).await.map_err(|e| self.redacted(e))
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
async fn read_stream(response: Response, start: Instant) -> Result<Exchange, AgentError> {
    let mut reply = Reply::default();
    let mut ttft = None;
    let mut pending = Vec::new();
    let mut line_number = 0;
    let mut chunks = response.bytes_stream();
    // What the reply holds in memory beyond its bytes: each fragment's messages and tool
    // calls. Counted against the cap, so that a stream of tiny fragments (each several times
    // its size once parsed) is bounded by the cap too, not by a multiple of it.
    let mut held = 0;
    let mut absorb_line = |line: &[u8], line_number: usize| -> Result<usize, AgentError> {
        if line.trim_ascii().is_empty() {
            return Ok(held);
        }
        let fragment = serde_json::from_slice::<Reply>(line).map_err(|e| {
            AgentError::new(
                AgentErrorKind::Protocol,
                format!("streamed line {line_number} is not a protocol fragment: {e}"),
            )
        })?;
        if ttft.is_none() && fragment.messages.iter().any(|m| !m.text.is_empty()) {
            ttft = Some(start.elapsed());
        }
        held += fragment.messages.len() * size_of::<Message>()
            + fragment.tool_calls.len() * size_of::<ToolCall>();
        reply.absorb(fragment);
        Ok(held)
    };
    let (mut read, mut held) = (0, 0);
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(transport_error)?;
        read += chunk.len();
        if read + held > MAX_BODY {
            return Err(too_big());
        }
        // Linear in the reply: only the new bytes are searched for a newline (a line spread
        // over many chunks was searched again from its start for each), and the lines found
        // are taken off the front once per chunk, not once per line.
        let mut searched = pending.len();
        pending.extend_from_slice(&chunk);
        let mut start = 0;
        while let Some(offset) = pending[searched..].iter().position(|&b| b == b'\n') {
            let end = searched + offset;
            line_number += 1;
            held = absorb_line(&pending[start..end], line_number)?;
            (start, searched) = (end + 1, end + 1);
        }
        pending.drain(..start);
    }
    // The last line need not end with a newline.
    absorb_line(&pending, line_number + 1)?;
    Ok(Exchange {
        reply,
        latency: start.elapsed(),
        ttft,
    })
}

/// A whole (not streamed) reply, up to [`MAX_BODY`].
pub(crate) async fn read_body(mut response: Response) -> Result<Vec<u8>, AgentError> {
    if response
        .content_length()
        .is_some_and(|length| length > MAX_BODY as u64)
    {
        return Err(too_big());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport_error)? {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(too_big());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn too_big() -> AgentError {
    AgentError::new(
        AgentErrorKind::Protocol,
        format!(
            "the reply is larger than {} MiB, so it was not read",
            MAX_BODY / (1024 * 1024)
        ),
    )
}

/// Maps a failure to reach the server or to read its answer. The URL is left out of the
/// message: it may carry credentials.
pub(crate) fn transport_error(error: reqwest::Error) -> AgentError {
    let mut kind = if error.is_timeout() {
        AgentErrorKind::Timeout
    } else {
        AgentErrorKind::Connect
    };
    let redirect = error.is_redirect();
    let error = error.without_url();
    // reqwest's and hyper's own texts are generic ("error sending request", "client error
    // (Connect)"): the innermost cause says why ("Connection refused (os error 111)").
    let mut message = error.to_string();
    let mut source = error.source();
    let mut certificate = false;
    while let Some(cause) = source {
        certificate |= is_certificate_error(cause);
        message = cause.to_string();
        source = cause.source();
    }
    // Neither passes on a second try: not worth the retries a dropped connection gets.
    if redirect {
        kind = AgentErrorKind::Refused;
        message.push_str(" (the URL redirects in a loop, or too many times: give the final URL)");
    } else if certificate {
        kind = AgentErrorKind::Refused;
        message.push_str(
            " (the server's TLS certificate is not trusted: a self-signed certificate is refused)",
        );
    }
    AgentError::new(kind, message)
}

/// A TLS certificate refused, directly or inside the `io::Error` the connector wraps it in
/// (whose `source` skips the wrapped error itself). The connector may box it once more, out
/// of reach of a downcast: then rustls's own words for it are what is left to go by.
fn is_certificate_error(cause: &(dyn std::error::Error + 'static)) -> bool {
    const RUSTLS_WORDS: [&str; 2] = ["invalid peer certificate", "no certificates presented"];
    let text = cause.to_string();
    if RUSTLS_WORDS.iter().any(|words| text.contains(words)) {
        return true;
    }
    let tls = cause.downcast_ref::<rustls::Error>().or_else(|| {
        cause
            .downcast_ref::<std::io::Error>()
            .and_then(|e| e.get_ref())
            .and_then(|e| e.downcast_ref::<rustls::Error>())
    });
    matches!(
        tls,
        Some(rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented)
    )
}

/// Turns a non-2xx answer into an error quoting the start of its body, with `secrets` masked
/// out before it is cut to a quote.
pub(crate) async fn status_error(mut response: Response, secrets: &Secrets) -> AgentError {
    let status = response.status();
    let retry_after = retry_after(response.headers(), SystemTime::now());
    // Read only a little more than is quoted: error pages can be large.
    let mut body = Vec::new();
    while body.len() < ERROR_BODY_READ {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    let text = String::from_utf8_lossy(&body);
    let text = secrets.mask(&text);
    let quoted: String = text.trim().chars().take(ERROR_BODY_CHARS).collect();
    let reason = status.canonical_reason().unwrap_or("");
    let message = if quoted.is_empty() {
        format!("{} {reason}", status.as_u16())
    } else {
        format!("{} {reason}: {quoted}", status.as_u16())
    };
    AgentError {
        kind: AgentErrorKind::Status(status.as_u16()),
        message,
        retry_after,
    }
}

/// `Retry-After` as delta-seconds or as an IMF-fixdate (the HTTP-date form senders must use).
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let date = parse_imf_fixdate(value)?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Parses `Sun, 06 Nov 1994 08:49:37 GMT`.
fn parse_imf_fixdate(value: &str) -> Option<SystemTime> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let parts: Vec<&str> = value.split_ascii_whitespace().collect();
    let [weekday, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    if !weekday.ends_with(',') {
        return None;
    }
    let day: i64 = day.parse().ok().filter(|d| (1..=31).contains(d))?;
    let month = MONTHS.iter().position(|m| m == month)? as i64 + 1;
    let year: i64 = year.parse().ok()?;
    let mut clock = time.split(':').map(|part| part.parse::<i64>().ok());
    let (Some(Some(hour)), Some(Some(minute)), Some(Some(second)), None) =
        (clock.next(), clock.next(), clock.next(), clock.next())
    else {
        return None;
    };
    if !(0..24).contains(&hour) || !(0..60).contains(&minute) || !(0..=60).contains(&second) {
        return None;
    }
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
    Some(UNIX_EPOCH + Duration::from_secs(u64::try_from(seconds).ok()?))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(retry_after: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_str(retry_after).unwrap());
        headers
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
        assert_eq!(
            retry_after(&headers("2"), now),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            retry_after(&headers("Sun, 06 Nov 1994 08:49:47 GMT"), now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            retry_after(&headers("Sat, 05 Nov 1994 08:49:37 GMT"), now),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after(&headers("soon"), now), None);
        assert_eq!(
            retry_after(&headers("Sun, 06 Nov 1994 25:00:00 GMT"), now),
            None
        );
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn civil_days_match_known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(1994, 11, 6), 9_075);
    }

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
