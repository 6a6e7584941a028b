//! The credentials goldgate knows, and masking them out of everything it writes, as GitHub
//! Actions masks secrets in logs: an agent may echo its request (an `Authorization` header, a
//! token in the URL) in an error or a reply, and reports, baselines, recordings and the PR
//! comment of a public repository are public.
//!
//! A secret is masked in every form a server is likely to echo it in: as it is, JSON-escaped
//! (as serde writes it, with PHP's `\/`, with Go's `\u0026 \u003c \u003e \u0027` in either
//! case of hex), HTML-escaped (`&amp; &lt; &gt; &quot; &#34; &#39; &#x27;`), percent-encoded
//! (strict, JavaScript's `encodeURIComponent`, form and URL-path encodings, upper- or
//! lower-case hex) and base64 (standard and URL-safe alphabets) at each of the three
//! alignments a secret can have inside a longer base64 text, which covers `Basic` credentials
//! (`user:password`), a base64 of the secret alone and one of any text holding it.
//!
//! A quote of a server's answer is masked whole before it is cut ([`Secrets::excerpt`]): cut
//! first, a secret straddling the cut would be left half there and unmasked.
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
pub(crate) const MASK: &str = "***";

/// Shorter values are not masked: words of 5 letters or fewer (a user name such as `admin`,
/// `Bearer`) are too common in ordinary text, and masking them would shred the reports.
pub(crate) const MIN_CHARS: usize = 6;

/// At the end of a text cut short, this many characters that begin a secret are masked: fewer
/// tell nothing of it, and would mask ordinary endings.
const MIN_TAIL_CHARS: usize = 3;

/// The environment variables holding credentials goldgate reads, wherever it reads them: the
/// LLM providers' keys (judges, simulated users, LLM agents), Google tokens for CX Agent
/// Studio, and GitHub's (the PR comment).
pub(crate) const CREDENTIAL_VARS: [&str; 6] = [
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
    /// and is common in ordinary text. The credentials of `Basic CREDS` are added decoded too
    /// (`user:password`, and the password), as a server may echo them once decoded.
    pub fn add_value(&self, value: &str) {
        self.add(value);
        let words: Vec<&str> = value.split_whitespace().collect();
        let scheme = words.len() > 1 && words[0].chars().all(|c| c.is_ascii_alphabetic());
        words[usize::from(scheme)..]
            .iter()
            .for_each(|word| self.add(word));
        if scheme && words[0].eq_ignore_ascii_case("basic") {
            self.add_basic(words[1]);
        }
    }

    /// Adds what base64 `user:password` credentials decode to: the pair and the password.
    fn add_basic(&self, credentials: &str) {
        let decoded = STANDARD
            .decode(credentials)
            .or_else(|_| STANDARD_NO_PAD.decode(credentials))
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok());
        if let Some((pair, (_, password))) = decoded
            .as_deref()
            .and_then(|pair| Some((pair, pair.split_once(':')?)))
        {
            self.add(pair);
            self.add(password);
        }
    }

    /// Adds what a URL carries that may be secret: its user and password (each, and
    /// `user:password` as `Basic` sends it) and its query values, percent-decoded. A token in
    /// its path comes from a `${VAR}`, added with the other expanded values.
    pub fn add_url(&self, url: &str) {
        let Ok(url) = url::Url::parse(url) else {
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

    /// At most `chars` characters of `text`, trimmed, for an error message. The whole text is
    /// masked before anything is cut, so that no cut leaves part of a secret unmasked. When
    /// `text` is itself cut short (the start of a longer answer, read up to a cap), a secret
    /// may straddle its end: an end that begins a form of a secret is masked too.
    pub fn excerpt(&self, text: &str, cut_short: bool, chars: usize) -> String {
        let mut masked = self.mask(text).into_owned();
        if cut_short {
            self.mask_tail(&mut masked);
        }
        masked.trim().chars().take(chars).collect()
    }

    /// Masks the end of `text` where it is the start of a form of a secret, of at least
    /// [`MIN_TAIL_CHARS`] characters.
    fn mask_tail(&self, text: &mut String) {
        // A multi-byte character cut in half by the cap was decoded as U+FFFD.
        let end = text.trim_end_matches(char::REPLACEMENT_CHARACTER).len();
        let head = &text[..end];
        let known = self.read();
        let started = |form: &String| {
            // The byte lengths of the form's prefixes, longest first.
            let mut prefixes = form.char_indices().map(|(i, c)| i + c.len_utf8()).rev();
            prefixes
                .find(|&len| head.ends_with(&form[..len]))
                .filter(|&len| form[..len].chars().count() >= MIN_TAIL_CHARS)
        };
        if let Some(len) = known.forms.iter().filter_map(started).max() {
            text.truncate(end - len);
            text.push_str(MASK);
        }
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
        forms.extend(json_escapes(&json[1..json.len() - 1]));
    }
    forms.extend(html_escapes(secret));
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

/// `json` (a string as serde escapes it) as other JSON encoders write it: PHP's `json_encode`
/// escapes `/` as `\/`; Go's `encoding/json` (and others that make JSON safe inside HTML)
/// `& < > '` as `\u0026`..., in lower- or upper-case hex.
fn json_escapes(json: &str) -> Vec<String> {
    let mut forms = Vec::new();
    for slash in [false, true] {
        for hex in [None, Some(false), Some(true)] {
            let mut out = String::with_capacity(json.len() * 2);
            for c in json.chars() {
                match (c, hex) {
                    ('/', _) if slash => out.push_str("\\/"),
                    ('&' | '<' | '>' | '\'', Some(upper)) => {
                        let code = u32::from(c);
                        out.push_str(&if upper {
                            format!("\\u{code:04X}")
                        } else {
                            format!("\\u{code:04x}")
                        });
                    }
                    _ => out.push(c),
                }
            }
            forms.push(out);
        }
    }
    forms
}

/// `secret` HTML-escaped: `& < >` always, quotes as they are or as either entity.
fn html_escapes(secret: &str) -> Vec<String> {
    let mut forms = Vec::new();
    for quote in ["\"", "&quot;", "&#34;"] {
        for apostrophe in ["'", "&#39;", "&#x27;"] {
            let mut out = String::with_capacity(secret.len() * 2);
            for c in secret.chars() {
                match c {
                    '&' => out.push_str("&amp;"),
                    '<' => out.push_str("&lt;"),
                    '>' => out.push_str("&gt;"),
                    '"' => out.push_str(quote),
                    '\'' => out.push_str(apostrophe),
                    _ => out.push(c),
                }
            }
            forms.push(out);
        }
    }
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
    fn json_and_html_escapes_of_a_secret_are_masked() {
        let secrets = Secrets::new();
        secrets.add("a<b>c'd&e/f\"g-tok3n");
        let echoes = [
            r#"a\u003cb\u003ec\u0027d\u0026e/f\"g-tok3n"#,
            r#"a\u003Cb\u003Ec\u0027d\u0026e/f\"g-tok3n"#,
            r#"a<b>c'd&e\/f\"g-tok3n"#,
            r#"a\u003cb\u003ec\u0027d\u0026e\/f\"g-tok3n"#,
            "a&lt;b&gt;c&#x27;d&amp;e/f&quot;g-tok3n",
            "a&lt;b&gt;c&#39;d&amp;e/f&#34;g-tok3n",
            "a&lt;b&gt;c'd&amp;e/f\"g-tok3n",
        ];
        for echo in echoes {
            let text = format!("<p>bad key {echo}</p>");
            assert_eq!(secrets.mask(&text), "<p>bad key ***</p>", "{echo}");
        }
    }

    #[test]
    fn an_excerpt_is_masked_before_it_is_cut() {
        let secrets = Secrets::new();
        let secret = "sk-live-ABCDEF123456";
        secrets.add(secret);
        // Cut to 300 characters first, the secret would have lost its end and its mask.
        let long = format!("{}{secret} and more", "x".repeat(290));
        let quoted = secrets.excerpt(&long, false, 300);
        assert_eq!(quoted, format!("{}*** and mo", "x".repeat(290)));
        // A read capped inside a secret (after padding that trimming takes away).
        let capped = format!("{}{}", " ".repeat(4090), &secret[..6]);
        assert_eq!(secrets.excerpt(&capped, true, 200), "***");
        let base64 = STANDARD.encode(format!("user:{secret}"));
        let capped = format!("Basic {}", &base64[..16]);
        // What encodes `user:` alone is no secret.
        assert_eq!(secrets.excerpt(&capped, true, 200), "Basic dXNlcjp***");
        // Not cut short, or too little of a secret to tell anything: left as it is.
        assert_eq!(
            secrets.excerpt("ends sk-live-ABC", false, 200),
            "ends sk-live-ABC"
        );
        assert_eq!(secrets.excerpt("the end. sk", true, 200), "the end. sk");
        assert_eq!(
            secrets.excerpt("a whole answer.", true, 200),
            "a whole answer."
        );
    }

    #[test]
    fn basic_credentials_of_a_header_are_masked_decoded() {
        let secrets = Secrets::new();
        secrets.add_value(&format!("Basic {}", STANDARD.encode("robot:hunter2-pw")));
        assert_eq!(secrets.mask("user robot:hunter2-pw"), "user ***");
        assert_eq!(secrets.mask("password hunter2-pw"), "password ***");
        assert_eq!(secrets.mask("robot"), "robot");
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
