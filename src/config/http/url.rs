//! Whether a text can be an HTTP agent's URL: one check for `agent.http.url` when goldgate.yaml
//! loads, for `--agent-url` and `GOLDGATE_AGENT_URL` when the plan picks them, and for the URL
//! once its `${VAR}`s are expanded, when the agent is built. A URL without a scheme
//! (`localhost:8080/turn`) would otherwise pass `lint` and fail every case of `run` in the HTTP
//! client's words, naming no line.

use reqwest::Url;

use crate::diagnostic::{Code, Diagnostics};
use crate::yaml::{self, Fields, Node};

/// Why a text is not a URL goldgate can ask. Displayed as a predicate of the URL, which the
/// caller names (`` `localhost:8080/turn` has no scheme: ... ``).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// `localhost:8080/turn`, `127.0.0.1:8080/turn`: no `http://` before it.
    #[error("has no scheme: a URL needs `http://` or `https://`")]
    NoScheme,
    /// `ws://...`, `htp://...`: a scheme that is not HTTP's.
    #[error("has the scheme `{0}://`: a URL needs `http://` or `https://`")]
    Scheme(String),
    /// The URL parser's reason; `non_ascii`: the text holds a character beyond ASCII.
    #[error("is not a URL ({reason})")]
    Invalid { reason: String, non_ascii: bool },
}

impl UrlError {
    /// A line that helps, the URL as it was likely meant when `written` is given: the text as
    /// the user wrote it, never one with `${VAR}` expanded, which may hold a secret; [`shown`].
    pub fn hint(&self, written: Option<&str>) -> Option<String> {
        match self {
            UrlError::NoScheme | UrlError::Scheme(_) => {
                let meant = meant(&shown(written?))?;
                Some(format!("did you mean `{meant}`?"))
            }
            // goldgate is built without Unicode host names (Cargo.toml, `idna_adapter`).
            UrlError::Invalid {
                non_ascii: true, ..
            } => Some(
                "host names are read in ASCII only: write an international one in its `xn--` form"
                    .to_owned(),
            ),
            UrlError::Invalid { .. } => None,
        }
    }
}

/// Checks `written`, a URL as goldgate.yaml or a flag gives it. A `${VAR}` it starts with
/// holds the scheme; one further on leaves only the scheme to check: the rest is checked with
/// [`parse_url`] once expanded. `{{placeholders}}` are checked where they stand, as the agent
/// parses the URL with them in it.
pub fn check_url(written: &str) -> Result<(), UrlError> {
    let text = written.trim();
    match text.find("${") {
        // In the scheme or right after it (`http${S}://`): only the expanded URL can tell.
        Some(at) if at <= split_scheme(text).0.len() => Ok(()),
        Some(_) => check_scheme(text),
        None => parse_url(text).map(drop),
    }
}

/// Reports `url`, written at `node` as `field`, when it is not a URL goldgate can ask: a G101
/// that quotes it (query and credentials hidden, [`shown`]) with the URL as it was likely
/// meant.
pub fn report_unaskable(url: &str, node: &Node, field: &str, diags: &mut Diagnostics) {
    if let Err(error) = check_url(url) {
        let message = format!("`{}` {error}", shown(url));
        let diag = diags.at(node).error(Code::G101, message).field(field);
        if let Some(hint) = error.hint(Some(url)) {
            diag.hint(hint);
        }
    }
}

/// The optional URL at `key` of a mapping (an LLM's or CX Agent Studio's `base_url`),
/// checked as `agent.http.url` is ([`report_unaskable`]).
pub fn optional_url(
    fields: &mut Fields<'_>,
    key: &'static str,
    diags: &mut Diagnostics,
) -> Option<String> {
    let node = fields.take(key)?;
    let field = fields.path_of(key);
    let url = yaml::expect_text(node, &field, diags)?;
    report_unaskable(&url, node, &field, diags);
    Some(url)
}

/// A configured `base_url` with `${VAR}` expanded; `field` names it in errors.
pub fn expanded_base_url(base_url: Option<&str>, field: &str) -> Result<Option<String>, String> {
    let Some(written) = base_url else {
        return Ok(None);
    };
    let field = format!("{field}.base_url");
    let url = crate::config::expand_env(written).map_err(|e| format!("{field}: {e}"))?;
    parse_expanded(written, &url, &field)?;
    Ok(Some(url))
}

/// `url`, `written`'s `${VAR}`s expanded, parsed; `field` names it in the error. It was checked
/// as written when it was read: what is left to find is in what a `${VAR}` held, which may be a
/// secret, so the error does not quote it.
pub fn parse_expanded(written: &str, url: &str, field: &str) -> Result<Url, String> {
    parse_url(url).map_err(|e| {
        let hint = e.hint(None).map_or(String::new(), |h| format!("; {h}"));
        let field = if written.contains("${") {
            format!("{field}, its `${{VAR}}`s expanded,")
        } else {
            field.to_owned()
        };
        format!("{field} {e}{hint}")
    })
}

/// A whole URL (`${VAR}`s expanded), parsed.
pub fn parse_url(text: &str) -> Result<Url, UrlError> {
    check_scheme(text.trim())?;
    Url::parse(text).map_err(|e| UrlError::Invalid {
        reason: e.to_string(),
        non_ascii: !text.is_ascii(),
    })
}

/// The scheme is `http` or `https`.
fn check_scheme(text: &str) -> Result<(), UrlError> {
    let (scheme, rest) = split_scheme(text);
    let http = ["http", "https"]
        .iter()
        .any(|s| scheme.eq_ignore_ascii_case(s));
    if http && rest.starts_with(':') {
        Ok(())
    } else if named_scheme(scheme, rest) {
        Err(UrlError::Scheme(scheme.to_owned()))
    } else {
        Err(UrlError::NoScheme)
    }
}

/// `written` to quote in a message, which may reach a pull request: its query, fragment and
/// credentials (where tokens hide) replaced with `…`, as the agent's description drops them.
pub fn shown(written: &str) -> String {
    let text = written.trim();
    // Credentials first, on the whole text: a password may hold `?` or `#`, which would cut
    // the authority short and quote the password's start.
    let start = text.find("://").map_or(0, |i| i + 3);
    let authority = text[start..].split('/').next().unwrap_or_default();
    let text = match authority.rfind('@') {
        Some(at) => format!("{}…{}", &text[..start], &text[start + at..]),
        None => text.to_owned(),
    };
    match text.find(['?', '#']) {
        Some(end) => format!("{}…", &text[..end]),
        None => text,
    }
}

/// The text up to the first character a scheme cannot hold (RFC 3986: letters, digits, `+`,
/// `-`, `.`), and the rest.
fn split_scheme(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .unwrap_or(text.len());
    text.split_at(end)
}

/// Whether `scheme` followed by `rest` names a scheme (`ws://`), rather than a host and port
/// (`localhost:8080`).
fn named_scheme(scheme: &str, rest: &str) -> bool {
    scheme.starts_with(|c: char| c.is_ascii_alphabetic()) && rest.starts_with("://")
}

/// The URL `written` was likely meant to be, `http://` before it or in place of its scheme,
/// when that is a URL with a host.
fn meant(written: &str) -> Option<String> {
    let written = written.trim();
    let (scheme, rest) = split_scheme(written);
    let after = if named_scheme(scheme, rest) {
        &rest[3..]
    } else if let Some(after) = written.strip_prefix("//") {
        after
    } else if written.starts_with('/') {
        return None; // a path alone: no host to guess
    } else {
        written
    };
    let meant = format!("http://{after}");
    let parsed = Url::parse(&meant).ok()?;
    parsed
        .host_str()
        .is_some_and(|h| !h.is_empty())
        .then_some(meant)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_without_http_is_refused_with_the_url_it_was_meant_to_be() {
        for (text, meant) in [
            ("localhost:8080/turn", "http://localhost:8080/turn"),
            ("127.0.0.1:8080/turn", "http://127.0.0.1:8080/turn"),
            ("//agent.example.com/turn", "http://agent.example.com/turn"),
        ] {
            let error = check_url(text).unwrap_err();
            assert_eq!(error, UrlError::NoScheme, "{text}");
            let hint = format!("did you mean `{meant}`?");
            assert_eq!(error.hint(Some(text)), Some(hint), "{text}");
            assert_eq!(error.hint(None), None, "{text}: expanded, it is not quoted");
        }
        let error = check_url("htp://127.0.0.1:8080/turn").unwrap_err();
        assert_eq!(error, UrlError::Scheme("htp".to_owned()));
        assert_eq!(
            error.hint(Some("htp://127.0.0.1:8080/turn")).unwrap(),
            "did you mean `http://127.0.0.1:8080/turn`?"
        );
        assert_eq!(check_url("/turn").unwrap_err().hint(Some("/turn")), None);
    }

    #[test]
    fn http_urls_and_those_an_environment_variable_completes_pass() {
        for text in [
            "http://127.0.0.1:8080/turn",
            "HTTPS://agent.example.com/turn?key=1",
            "http://127.0.0.1:8000/sessions/{{session}}/messages",
            "${AGENT_URL}",
            "${AGENT_URL}/turn",
            "http://${AGENT_HOST}:8080/turn",
        ] {
            assert_eq!(check_url(text), Ok(()), "{text}");
        }
        assert_eq!(check_url("localhost:${PORT}/turn"), Err(UrlError::NoScheme));
    }

    #[test]
    fn what_may_hold_a_token_is_not_quoted() {
        let written = "agent:tok-42@127.0.0.1:8080/turn?key=sekret";
        assert_eq!(shown(written), "…@127.0.0.1:8080/turn…");
        assert_eq!(
            check_url(written).unwrap_err().hint(Some(written)).unwrap(),
            "did you mean `http://…@127.0.0.1:8080/turn…`?"
        );
        assert_eq!(shown("ws://a:b@host/x#frag"), "ws://…@host/x…");
        assert_eq!(shown("localhost:8080/turn"), "localhost:8080/turn");
        // A password holding `?` or `#` is hidden whole.
        assert_eq!(
            shown("agent:s3cr?t@127.0.0.1:8080/turn"),
            "…@127.0.0.1:8080/turn"
        );
        assert_eq!(
            shown("http://user:ab#cd@127.0.0.1:9/turn"),
            "http://…@127.0.0.1:9/turn"
        );
        assert_eq!(
            shown("http://127.0.0.1:9/turn?e=a@b"),
            "http://127.0.0.1:9/turn…"
        );
    }

    #[test]
    fn a_variable_in_the_scheme_is_left_to_the_expanded_url() {
        for written in [
            "http${S}://127.0.0.1:8080/turn",
            "${SCHEME}://127.0.0.1:8080/turn",
        ] {
            assert_eq!(check_url(written), Ok(()), "{written}");
        }
    }

    #[test]
    fn a_url_that_does_not_parse_says_why() {
        let error = check_url("http://").unwrap_err();
        assert!(
            matches!(
                &error,
                UrlError::Invalid {
                    non_ascii: false,
                    ..
                }
            ),
            "{error:?}"
        );
        assert_eq!(error.hint(Some("http://")), None);
        let error = check_url("http://bücher.example/turn").unwrap_err();
        assert!(
            error.hint(None).unwrap().contains("`xn--` form"),
            "{error:?}"
        );
    }
}
