//! Credentials kept out of everything goldgate writes: the terminal, every report, the
//! baseline, `--record` transcripts and the PR comment, which on a public repository are all
//! public. An agent may echo its request (an `Authorization` header, its URL) in an error or a
//! reply; goldgate masks what it knows to be secret, as GitHub Actions masks secrets in logs.
//!
//! What is known: the value of every `${VAR}` the config expands, every header value, a URL's
//! user and password, the LLM providers' keys, CX Agent Studio's token and GitHub's. Each is
//! masked as it is and in the encodings a server may echo it in: base64 (of the secret, and of
//! `user:password` as Basic authentication sends it) and percent-encoding. Values shorter than
//! [`SHORTEST`] are not masked: masking `abc` everywhere would shred ordinary text and tell
//! nothing worth hiding.

use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};

use crate::config::{AgentConfig, Config};
use crate::results::Report;

/// What a masked secret reads as.
pub const MASK: &str = "***";

/// The shortest value masked.
pub const SHORTEST: usize = 6;

/// Environment variables that hold credentials whether or not the config names them.
const KNOWN_VARIABLES: [&str; 8] = [
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "CXAS_OAUTH_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GOOGLE_OAUTH_ACCESS_TOKEN",
];

/// The secrets of a run, each in every form it is masked in, longest first.
#[derive(Clone, Debug, Default)]
pub struct Secrets {
    forms: Vec<String>,
}

impl Secrets {
    /// What the config and the agent under test make secret, read from `env`.
    pub fn of(
        config: &Config,
        agent: Option<&AgentConfig>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Self {
        let mut secrets = Self::default();
        for name in KNOWN_VARIABLES {
            secrets.add_all(env(name));
        }
        let mut templates: Vec<&str> = Vec::new();
        for agent in agent.into_iter().chain(config.agent.as_ref()) {
            if let AgentConfig::Http { url, headers } = agent {
                templates.push(url);
                for (_, value) in headers {
                    templates.push(value);
                    // A header's whole value is a credential (`Bearer ...`), expanded or not,
                    // and so is what follows its scheme.
                    let expanded = expand(value, &env);
                    if let Some((_, credential)) = expanded.split_once(' ') {
                        secrets.add(credential.trim());
                    }
                    secrets.add(&expanded);
                }
                secrets.add_userinfo(&expand(url, &env));
            }
        }
        for template in templates {
            for name in variables(template) {
                secrets.add_all(env(name));
            }
        }
        secrets
            .forms
            .sort_by_key(|form| std::cmp::Reverse(form.len()));
        secrets.forms.dedup();
        secrets
    }

    /// The secrets of `values`, in every form: for tests and for callers with their own.
    pub fn from_values<'a>(values: impl IntoIterator<Item = &'a str>) -> Self {
        let mut secrets = Self::default();
        for value in values {
            secrets.add(value);
        }
        secrets
            .forms
            .sort_by_key(|form| std::cmp::Reverse(form.len()));
        secrets.forms.dedup();
        secrets
    }

    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }

    fn add_all(&mut self, value: Option<String>) {
        if let Some(value) = value {
            self.add(&value);
        }
    }

    /// `value` and its encodings, when it is long enough to mask.
    fn add(&mut self, value: &str) {
        if value.chars().count() < SHORTEST {
            return;
        }
        self.forms.push(value.to_owned());
        let bytes = value.as_bytes();
        for engine in [&STANDARD, &STANDARD_NO_PAD, &URL_SAFE, &URL_SAFE_NO_PAD] {
            self.forms.push(engine.encode(bytes));
        }
        let percent = percent_encoded(value);
        if percent != value {
            self.forms.push(percent);
        }
    }

    /// A URL's user and password, alone and as Basic authentication sends them.
    fn add_userinfo(&mut self, url: &str) {
        let Ok(url) = reqwest::Url::parse(url) else {
            return;
        };
        let (user, password) = (url.username(), url.password().unwrap_or_default());
        if !password.is_empty() {
            self.add(password);
            self.add(&format!("{user}:{password}"));
            // Decoded too: the URL keeps them percent-encoded.
            let decode = |s: &str| percent_decoded(s);
            self.add(&format!("{}:{}", decode(user), decode(password)));
            self.add(&decode(password));
        }
        if !user.is_empty() {
            self.add(user);
        }
    }

    /// `text` with every secret masked.
    pub fn mask<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        if !self.forms.iter().any(|form| text.contains(form.as_str())) {
            return std::borrow::Cow::Borrowed(text);
        }
        let mut masked = text.to_owned();
        for form in &self.forms {
            if masked.contains(form.as_str()) {
                masked = masked.replace(form.as_str(), MASK);
            }
        }
        std::borrow::Cow::Owned(masked)
    }

    /// Masks every text of `report`, in place: what every sink and the baseline read.
    pub fn mask_report(&self, report: &mut Report) -> serde_json::Result<()> {
        if self.is_empty() {
            return Ok(());
        }
        let mut value = serde_json::to_value(&*report)?;
        if self.mask_value(&mut value) {
            *report = serde_json::from_value(value)?;
        }
        Ok(())
    }

    /// Masks every string in `value`; whether anything changed.
    fn mask_value(&self, value: &mut serde_json::Value) -> bool {
        match value {
            serde_json::Value::String(text) => match self.mask(text) {
                std::borrow::Cow::Owned(masked) => {
                    *text = masked;
                    true
                }
                std::borrow::Cow::Borrowed(_) => false,
            },
            serde_json::Value::Array(items) => items
                .iter_mut()
                .fold(false, |changed, item| self.mask_value(item) | changed),
            serde_json::Value::Object(map) => map
                .values_mut()
                .fold(false, |changed, item| self.mask_value(item) | changed),
            _ => false,
        }
    }

    /// Masks every file under `dir` (a `--record` directory) in place, atomically.
    pub fn mask_files(&self, dir: &Path) -> std::io::Result<()> {
        if self.is_empty() || !dir.is_dir() {
            return Ok(());
        }
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                self.mask_files(&path)?;
            } else if let Ok(text) = std::fs::read_to_string(&path)
                && let std::borrow::Cow::Owned(masked) = self.mask(&text)
            {
                crate::atomic::write(&path, |out| out.write_all(masked.as_bytes()))?;
            }
        }
        Ok(())
    }
}

/// `template` with each `${NAME}` that `env` knows replaced by its value.
fn expand(template: &str, env: &impl Fn(&str) -> Option<String>) -> String {
    let mut out = template.to_owned();
    for name in variables(template) {
        if let Some(value) = env(name) {
            out = out.replace(&format!("${{{name}}}"), &value);
        }
    }
    out
}

/// The names of the `${NAME}`s in `template`.
fn variables(template: &str) -> impl Iterator<Item = &str> {
    template
        .split("${")
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
}

/// Every byte but RFC 3986's unreserved ones as `%XX`.
fn percent_encoded(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::{MASK, Secrets};
    use crate::config::{AgentConfig, Config};

    #[test]
    fn a_secret_is_masked_in_every_encoding_a_server_may_echo() {
        let secrets = Secrets::from_values(["s3cr3t/token+x"]);
        for echoed in [
            "s3cr3t/token+x",
            "czNjcjN0L3Rva2VuK3g=",
            "czNjcjN0L3Rva2VuK3g",
            "s3cr3t%2Ftoken%2Bx",
        ] {
            let text = format!("got <{echoed}> back");
            assert_eq!(
                secrets.mask(&text),
                format!("got <{MASK}> back"),
                "{echoed}"
            );
        }
        // Short values are left alone.
        assert!(Secrets::from_values(["abc"]).is_empty());
    }

    #[test]
    fn the_config_names_its_secrets_and_basic_auth_is_masked() {
        let config = Config::default();
        let agent = AgentConfig::Http {
            url: "http://bob:hunter22@127.0.0.1:9/turn/${AGENT_TOKEN}".to_owned(),
            headers: vec![("X-Api-Key".to_owned(), "${AGENT_KEY}".to_owned())],
        };
        let env = |name: &str| match name {
            "AGENT_TOKEN" => Some("path-token-123".to_owned()),
            "AGENT_KEY" => Some("key-456789".to_owned()),
            "GITHUB_TOKEN" => Some("ghs_abcdefgh".to_owned()),
            _ => None,
        };
        let secrets = Secrets::of(&config, Some(&agent), env);
        let basic = "Ym9iOmh1bnRlcjIy"; // base64("bob:hunter22")
        let text = format!(
            "POST /turn/path-token-123 X-Api-Key: key-456789 Authorization: Basic {basic} ghs_abcdefgh hunter22"
        );
        let masked = secrets.mask(&text);
        for secret in [
            "path-token-123",
            "key-456789",
            basic,
            "ghs_abcdefgh",
            "hunter22",
        ] {
            assert!(!masked.contains(secret), "{secret} in {masked}");
        }
    }
}
