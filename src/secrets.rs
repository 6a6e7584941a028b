//! The credentials goldgate knows, and masking them out of everything it writes, as GitHub
//! Actions masks secrets in logs: an agent may echo its request (an `Authorization` header, a
//! token in the URL) in an error or a reply, and reports, baselines, recordings and the PR
//! comment of a public repository are public.
//!
//! A secret is masked in every form a server is likely to echo it in: as it is, JSON-escaped,
//! percent-encoded (strict, JavaScript's `encodeURIComponent`, form and URL-path encodings,
//! upper- or lower-case hex) and base64 (standard and URL-safe alphabets) at each of the three
//! alignments a secret can have inside a longer base64 text, which covers `Basic` credentials
//! (`user:password`), a base64 of the secret alone and one of any text holding it.
//!
//! [`Secrets`] is a cheap shared handle: the set grows while the run learns secrets (a Google
//! access token fetched mid-run) and every clone sees it.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::{Arc, RwLock};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use serde_json::Value;

/// What a masked secret becomes.
pub const MASK: &str = "***";

/// Shorter values are not masked: words of 5 letters or fewer (a user name such as `admin`,
/// `Bearer`) are too common in ordinary text, and masking them would shred the reports.
pub const MIN_CHARS: usize = 6;

/// The environment variables holding credentials goldgate reads, wherever it reads them: the
/// LLM providers' keys (judges, simulated users, LLM agents), Google tokens for CX Agent
/// Studio, and GitHub's (the PR comment).
pub const CREDENTIAL_VARS: [&str; 6] = [
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "CXAS_OAUTH_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
];

/// The set of secrets, with every form of each, longest first.
#[derive(Clone, Default)]
pub struct Secrets {
    inner: Arc<RwLock<Known>>,
}

#[derive(Default)]
struct Known {
    values: BTreeSet<String>,
    /// Every form of every value, longest first so that a whole form is masked before a
    /// shorter one inside it.
    forms: Vec<String>,
}

impl std::fmt::Debug for Secrets {
    // Never the values themselves.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} values)", self.read().values.len())
    }
}

impl Secrets {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a secret (and its forms), unless it is shorter than [`MIN_CHARS`]. Surrounding
    /// whitespace is not part of it.
    pub fn add(&self, secret: &str) {
        let secret = secret.trim();
        if secret.chars().count() < MIN_CHARS || self.read().values.contains(secret) {
            return;
        }
        let mut known = self.inner.write().unwrap_or_else(|e| e.into_inner());
        known.values.insert(secret.to_owned());
        let mut forms: BTreeSet<String> = known.forms.drain(..).collect();
        forms.extend(encodings(secret));
        known.forms = forms.into_iter().collect();
        known
            .forms
            .sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    }

    /// Adds a configured value that may hold secrets: the whole, and each of its words (the
    /// token of `Bearer TOKEN`) but a leading scheme of letters (`Bearer`), which is no secret
    /// and is common in ordinary text.
    pub fn add_value(&self, value: &str) {
        self.add(value);
        let mut words = value.split_whitespace().peekable();
        if let Some(first) = words.next() {
            let scheme = words.peek().is_some() && first.chars().all(|c| c.is_ascii_alphabetic());
            if !scheme {
                self.add(first);
            }
        }
        words.for_each(|word| self.add(word));
    }

    /// Adds what a URL carries that may be secret: its user and password (each, and
    /// `user:password` as `Basic` sends it) and its query values, percent-decoded. A token in
    /// its path comes from a `${VAR}`, added with the other expanded values.
    pub fn add_url(&self, url: &str) {
        let Ok(url) = reqwest::Url::parse(url) else {
            self.add(url);
            return;
        };
        let user = decode(url.username());
        let password = url.password().map(decode);
        if let Some(password) = &password {
            self.add(password);
            self.add(&format!("{user}:{password}"));
        }
        // A user name alone is often no secret (`admin`), but a long one may be a token.
        self.add(&user);
        for (_, value) in url.query_pairs() {
            self.add(&value);
        }
    }

    /// Adds the values of the credential variables set in `env` ([`CREDENTIAL_VARS`]).
    pub fn add_vars(&self, env: &dyn Fn(&str) -> Option<String>) {
        for var in CREDENTIAL_VARS {
            if let Some(value) = env(var) {
                self.add(&value);
            }
        }
    }

    /// Adds each of `secrets`.
    pub fn extend(&self, secrets: impl IntoIterator<Item = impl AsRef<str>>) {
        for secret in secrets {
            self.add(secret.as_ref());
        }
    }

    /// Adds every secret of `other`.
    pub fn absorb(&self, other: &Secrets) {
        let values: Vec<String> = other.read().values.iter().cloned().collect();
        self.extend(values);
    }

    pub fn is_empty(&self) -> bool {
        self.read().values.is_empty()
    }

    /// `text` with every form of every secret replaced by [`MASK`].
    pub fn mask<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let known = self.read();
        let mut masked = Cow::Borrowed(text);
        for form in &known.forms {
            if masked.contains(form.as_str()) {
                masked = Cow::Owned(masked.replace(form.as_str(), MASK));
            }
        }
        masked
    }

    /// Masks `text` where it is.
    pub fn mask_string(&self, text: &mut String) {
        if let Cow::Owned(masked) = self.mask(text) {
            *text = masked;
        }
    }

    /// Masks every string of a JSON value, object keys included.
    pub fn mask_json(&self, value: &mut Value) {
        match value {
            Value::String(text) => self.mask_string(text),
            Value::Array(items) => items.iter_mut().for_each(|v| self.mask_json(v)),
            Value::Object(map) => {
                let masked_keys = map.keys().any(|k| matches!(self.mask(k), Cow::Owned(_)));
                if masked_keys {
                    *map = std::mem::take(map)
                        .into_iter()
                        .map(|(k, v)| (self.mask(&k).into_owned(), v))
                        .collect();
                }
                map.values_mut().for_each(|v| self.mask_json(v));
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Known> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }
}

/// Every form of `secret` a server may echo (see the module docs).
fn encodings(secret: &str) -> BTreeSet<String> {
    let mut forms = BTreeSet::from([secret.to_owned()]);
    if let Ok(json) = serde_json::to_string(secret) {
        forms.insert(json[1..json.len() - 1].to_owned());
    }
    // Characters each percent-encoder leaves as they are, besides letters and digits.
    const KEPT: [&str; 4] = ["-._~", "-._~!'()*", "-._*", "-._~!$&'()*+,;=:@"];
    for kept in KEPT {
        for upper in [true, false] {
            forms.insert(percent_encode(secret, kept, upper, false));
            forms.insert(percent_encode(secret, kept, upper, true));
        }
    }
    // The whole encodings too: longer, they go first and leave no padding behind.
    for engine in [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD] {
        forms.insert(engine.encode(secret));
    }
    forms.extend(base64_cores(secret.as_bytes()));
    // A form that lost too much (a base64 core of a short secret) would mask ordinary text.
    forms.retain(|form| form.len() >= MIN_CHARS);
    forms
}

fn percent_encode(text: &str, kept: &str, upper: bool, plus_for_space: bool) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || kept.as_bytes().contains(&byte) {
            out.push(char::from(byte));
        } else if byte == b' ' && plus_for_space {
            out.push('+');
        } else if upper {
            out.push_str(&format!("%{byte:02X}"));
        } else {
            out.push_str(&format!("%{byte:02x}"));
        }
    }
    out
}

/// The base64 characters that depend on `bytes` alone, for each of the three offsets the
/// bytes can start at within a base64 group, in both alphabets: one of them is inside any
/// base64 text that encodes the bytes, whatever comes before or after them.
fn base64_cores(bytes: &[u8]) -> Vec<String> {
    let mut cores = Vec::new();
    for shift in 0..3 {
        let mut shifted = vec![0; shift];
        shifted.extend_from_slice(bytes);
        // The characters mixing in the `shift` bytes before: none, 2 or 3.
        let skip = [0, 2, 3][shift];
        // The last character of an unpadded encoding mixes in the bytes after, unless the
        // bytes end a group.
        let cut = usize::from(shifted.len() % 3 != 0);
        for engine in [STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
            let encoded = engine.encode(&shifted);
            if encoded.len() > skip + cut {
                cores.push(encoded[skip..encoded.len() - cut].to_owned());
            }
        }
    }
    cores
}

/// A percent-decoded URL part (user names and passwords are stored encoded).
fn decode(part: &str) -> String {
    let bytes = part.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(Some(high)), Some(Some(low))) = (
                bytes.get(i + 1).map(|&b| hex(b)),
                bytes.get(i + 2).map(|&b| hex(b)),
            )
        {
            out.push((high * 16 + low) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "s3cr3t/T0ken+=?&x y";

    #[test]
    fn every_encoding_of_a_secret_is_masked() {
        let secrets = Secrets::new();
        secrets.add(SECRET);
        let echoes = [
            SECRET.to_owned(),
            format!("Bearer {SECRET}"),
            STANDARD.encode(SECRET),
            URL_SAFE.encode(SECRET),
            STANDARD_NO_PAD.encode(SECRET),
            STANDARD.encode(format!("user:{SECRET}")),
            STANDARD.encode(format!("ab:{SECRET}:more")),
            URL_SAFE.encode(format!("{{\"token\":\"{SECRET}\"}}")),
            percent_encode(SECRET, "-._~", true, false),
            percent_encode(SECRET, "-._~", false, true),
            "s3cr3t%2FT0ken%2B%3D%3F%26x%20y".to_owned(),
            "s3cr3t%2fT0ken%2b%3d%3f%26x+y".to_owned(),
            serde_json::to_string(SECRET).unwrap(),
        ];
        for echo in echoes {
            let text = format!("echo: {echo} (end)");
            let masked = secrets.mask(&text);
            assert!(masked.contains(MASK), "{echo} not masked: {masked}");
            assert!(!masked.contains("T0ken"), "{echo}: {masked}");
            assert!(masked.starts_with("echo: ") && masked.ends_with(" (end)"));
        }
    }

    #[test]
    fn basic_credentials_of_a_url_are_masked() {
        let secrets = Secrets::new();
        secrets.add_url("http://alice.user:pa%40ss-w0rd@127.0.0.1:1/turn?key=query-secret");
        let basic = STANDARD.encode("alice.user:pa@ss-w0rd");
        let echo = format!("Authorization: Basic {basic}; key=query-secret");
        let masked = secrets.mask(&echo);
        assert!(!masked.contains(&basic[4..basic.len() - 4]), "{masked}");
        assert!(!masked.contains("query-secret"), "{masked}");
        assert_eq!(secrets.mask("pa@ss-w0rd"), MASK);
    }

    #[test]
    fn short_values_and_ordinary_text_are_left_alone() {
        let secrets = Secrets::new();
        for short in ["admin", "abc", "  x  ", ""] {
            secrets.add(short);
        }
        assert!(secrets.is_empty());
        secrets.add("correct-horse-battery");
        secrets.add_value("Bearer tok3n-abcdef");
        let text = "The weather is fine; admin may book a flight. Bearer tokens are opaque.";
        assert!(matches!(secrets.mask(text), Cow::Borrowed(_)));
    }

    #[test]
    fn json_strings_and_keys_are_masked_and_clones_share_the_set() {
        let secrets = Secrets::new();
        let shared = secrets.clone();
        shared.add("late-token-123");
        let mut value = serde_json::json!({
            "args": ["late-token-123", 3],
            "late-token-123": {"nested": "x late-token-123 y"},
        });
        secrets.mask_json(&mut value);
        assert_eq!(
            value,
            serde_json::json!({"args": ["***", 3], "***": {"nested": "x *** y"}})
        );
        assert_eq!(format!("{secrets:?}"), "Secrets(1 values)");
    }
}
