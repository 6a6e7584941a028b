//! What a failed call says: transport failures by their innermost cause, and non-2xx answers
//! quoting the start of their body with the run's secrets masked out.

use std::error::Error as _;
use std::time::SystemTime;

use reqwest::Response;

use super::{CrossOrigin, EndpointError, EndpointErrorKind, read_start, retry_after};
use crate::secrets::Secrets;

/// How much of an error body is quoted in the error message.
const ERROR_BODY_CHARS: usize = 200;
/// How much of an error body is read: more than is quoted, so that the quote is cut after
/// masking and never leaves the start of a secret cut in half.
const ERROR_BODY_READ: usize = 4096;

/// Maps a failure to reach the server or to read its answer. The URL is left out of the
/// message: it may carry credentials.
pub fn transport_error(error: reqwest::Error) -> EndpointError {
    let mut kind = if error.is_timeout() {
        EndpointErrorKind::Timeout
    } else {
        EndpointErrorKind::Connect
    };
    let redirect = error.is_redirect();
    let error = error.without_url();
    // reqwest's and hyper's own texts are generic ("error sending request", "client error
    // (Connect)"): the innermost cause says why ("Connection refused (os error 111)").
    let mut message = error.to_string();
    let mut source = error.source();
    let mut certificate = false;
    let mut cross_origin = false;
    while let Some(cause) = source {
        certificate |= is_certificate_error(cause);
        cross_origin |= cause.is::<CrossOrigin>();
        message = cause.to_string();
        source = cause.source();
    }
    // None passes on a second try: not worth the retries a dropped connection gets.
    if cross_origin {
        // Its message (the innermost cause) says it all.
        kind = EndpointErrorKind::Refused;
    } else if redirect {
        kind = EndpointErrorKind::Refused;
        message.push_str(" (the URL redirects in a loop, or too many times: give the final URL)");
    } else if certificate {
        kind = EndpointErrorKind::Refused;
        message.push_str(
            " (the server's TLS certificate is not trusted: a self-signed certificate is refused)",
        );
    }
    EndpointError::new(kind, message)
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

/// The start of a reply, for an error message: at most [`ERROR_BODY_READ`] bytes of it, cut
/// to [`ERROR_BODY_CHARS`] characters with `secrets` masked out ([`Secrets::excerpt`]: masked
/// before any cut, a secret straddling the read's cap included).
pub fn quote(body: &[u8], secrets: &Secrets) -> String {
    // `read_start` may stop exactly at the cap of a longer body: that counts as cut short.
    let cut_short = body.len() >= ERROR_BODY_READ;
    let head = &body[..body.len().min(ERROR_BODY_READ)];
    secrets.excerpt(&String::from_utf8_lossy(head), cut_short, ERROR_BODY_CHARS)
}

/// Turns a non-2xx answer into an error quoting the start of its body, with `secrets` masked
/// out before it is cut to a quote.
pub async fn status_error(mut response: Response, secrets: &Secrets) -> EndpointError {
    let status = response.status();
    let retry_after = retry_after(response.headers(), SystemTime::now());
    // Read only a little more than is quoted: error pages can be large.
    let body = read_start(&mut response, ERROR_BODY_READ).await;
    let quoted = quote(&body, secrets);
    let reason = status.canonical_reason().unwrap_or("");
    let message = if quoted.is_empty() {
        format!("{} {reason}", status.as_u16())
    } else {
        format!("{} {reason}: {quoted}", status.as_u16())
    };
    EndpointError {
        kind: EndpointErrorKind::Status(status.as_u16()),
        message,
        retry_after,
    }
}
