//! Google access tokens for CX Agent Studio, found in SCRAPI's order: `CXAS_OAUTH_TOKEN` (a raw
//! bearer token), then Application Default Credentials: the file `GOOGLE_APPLICATION_CREDENTIALS`
//! names, else gcloud's `application_default_credentials.json`, else the metadata server.
//!
//! A credentials file is a service-account key (an RS256 JWT grant against its `token_uri`),
//! gcloud user credentials (a refresh-token grant), or an `external_account` (Workload
//! Identity Federation, what `google-github-actions/auth` writes: a subject token read from a
//! URL or a file, exchanged at the STS `token_url`, then optionally for a service account's
//! token at `service_account_impersonation_url`). Every endpoint comes from the file, so tests
//! point them at loopback servers.
//!
//! Why not the `google-cloud-auth` crate: its service-account credentials sign their own JWTs
//! instead of calling the key's `token_uri` (so the flow cannot be tested against a loopback
//! endpoint), and it brings a second HTTP stack to build. The flows above are small, and ring,
//! which rustls already builds, signs RS256.
//!
//! Tokens are cached and fetched again five minutes before they expire. They are secrets:
//! never in an error, a log or [`Credentials::describe`]. So is every value a flow sends on
//! the way to one (a refresh token, a JWT assertion, a Workload Identity Federation's request
//! headers, subject token and federated token): each joins the run's secrets as soon as it
//! exists, before it is sent, since the endpoint it is sent to may echo it in its refusal.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::Client;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::net::{EndpointError, EndpointErrorKind};
use crate::net::{read_body, transport_error};
use crate::secrets::Secrets;

/// The scope SCRAPI asks for; `.../auth/ces` alone would do for sessions.
pub const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// Fetched again this long before it expires.
const MARGIN: Duration = Duration::from_secs(300);
const GCLOUD_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
const METADATA_HOST: &str = "metadata.google.internal";

/// Where tokens come from.
#[derive(Clone)]
enum Source {
    Static(String),
    ServiceAccount {
        email: String,
        key_id: Option<String>,
        key: std::sync::Arc<ring::signature::RsaKeyPair>,
        token_uri: String,
    },
    User {
        client_id: String,
        client_secret: String,
        refresh_token: String,
        token_uri: String,
    },
    External(Box<External>),
    Metadata {
        host: String,
    },
}

#[derive(Clone, Deserialize)]
struct External {
    audience: String,
    subject_token_type: String,
    token_url: String,
    #[serde(default)]
    service_account_impersonation_url: Option<String>,
    credential_source: CredentialSource,
}

#[derive(Clone, Deserialize)]
struct CredentialSource {
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    file: Option<PathBuf>,
    #[serde(default)]
    headers: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    format: Option<SourceFormat>,
}

#[derive(Clone, Deserialize)]
struct SourceFormat {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    subject_token_field_name: Option<String>,
}

/// A token source with its cached token.
pub struct Credentials {
    source: Source,
    /// Where they came from, for the report (never a secret).
    origin: String,
    client: Client,
    cached: Mutex<Option<(String, Option<Instant>)>>,
    /// Every secret of these credentials: what the file holds, and every value a flow
    /// obtains; the run's whole set once shared ([`Credentials::masking`]).
    shared: Secrets,
}

impl Credentials {
    /// Finds the credentials as described in the module docs. Only files are read here; the
    /// first token is fetched with the first turn.
    pub fn find(client: Client) -> Result<Credentials, String> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let (source, origin) = if let Some(token) = env("CXAS_OAUTH_TOKEN") {
            (
                Source::Static(token.trim().to_owned()),
                "CXAS_OAUTH_TOKEN".to_owned(),
            )
        } else if let Some(path) = env("GOOGLE_APPLICATION_CREDENTIALS") {
            let path = PathBuf::from(path);
            (from_file(&path)?, path.display().to_string())
        } else if let Some(path) = gcloud_file().filter(|p| p.is_file()) {
            (from_file(&path)?, path.display().to_string())
        } else {
            let host = env("GCE_METADATA_HOST").unwrap_or_else(|| METADATA_HOST.to_owned());
            (Source::Metadata { host }, "the metadata server".to_owned())
        };
        let shared = Secrets::new();
        match &source {
            Source::Static(token) => shared.add(token),
            Source::User {
                client_secret,
                refresh_token,
                ..
            } => shared.extend([client_secret, refresh_token]),
            // The request token of GitHub's OIDC endpoint (`Bearer ...`).
            Source::External(external) => {
                let headers = external.credential_source.headers.values();
                headers.for_each(|value| shared.add_value(value));
            }
            // A service account's key was parsed into a key pair: its text is not kept, and
            // each assertion signed with it joins when it is made.
            Source::ServiceAccount { .. } | Source::Metadata { .. } => {}
        }
        Ok(Credentials {
            source,
            origin,
            client,
            cached: Mutex::new(None),
            shared,
        })
    }

    /// Shares `secrets`, which the run masks out of what it writes: these credentials' own
    /// join it, and so does every value a flow obtains from now on.
    pub fn masking(mut self, secrets: Secrets) -> Self {
        let own = std::mem::replace(&mut self.shared, secrets);
        self.shared.absorb(&own);
        self
    }

    /// Where the credentials came from: a variable's name, a file's path, the metadata server.
    pub fn describe(&self) -> &str {
        &self.origin
    }

    /// The secrets errors must never quote: these credentials' own and every token handed
    /// out so far (the run's whole set once shared).
    pub fn secrets(&self) -> &Secrets {
        &self.shared
    }

    /// A token valid for at least [`MARGIN`] more, fetched when the cached one is not.
    pub async fn token(&self) -> Result<String, EndpointError> {
        let mut cached = self.cached.lock().await;
        if let Some((token, expires)) = cached.as_ref()
            && expires.is_none_or(|at| Instant::now() + MARGIN < at)
        {
            return Ok(token.clone());
        }
        let (token, lifetime) = self.fetch().await.map_err(|e| {
            let metadata = matches!(self.source, Source::Metadata { .. });
            if metadata && e.kind == EndpointErrorKind::Connect {
                // The last resort of the chain, and off Google Cloud it is not there at all.
                return EndpointError::new(
                    EndpointErrorKind::Refused,
                    format!(
                        "no Google credentials found: set CXAS_OAUTH_TOKEN or \
                         GOOGLE_APPLICATION_CREDENTIALS, or run `gcloud auth \
                         application-default login` (the metadata server, tried last, did not \
                         answer: {})",
                        e.message
                    ),
                );
            }
            // A dropped connection, a 429 or a 5xx may pass on a second try; a refusal not.
            let kind = if e.is_retryable() {
                e.kind
            } else {
                EndpointErrorKind::Refused
            };
            EndpointError::new(
                kind,
                format!(
                    "could not get a Google access token with the credentials of {}: {}",
                    self.origin, e.message
                ),
            )
        })?;
        self.shared.add(&token);
        let expires = lifetime.map(|l| Instant::now() + l);
        *cached = Some((token.clone(), expires));
        Ok(token)
    }

    /// Forgets the cached token, after the API refused it.
    pub async fn forget(&self) {
        *self.cached.lock().await = None;
    }

    /// An OAuth grant: `form` posted to `token_uri`, answered with an access token.
    async fn grant(
        &self,
        token_uri: &str,
        form: &[(&str, &str)],
    ) -> Result<(String, Option<Duration>), EndpointError> {
        let request = self
            .client
            .post(token_uri)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form_body(form));
        self.oauth_token(request, "access_token", "expires_in")
            .await
    }

    async fn fetch(&self) -> Result<(String, Option<Duration>), EndpointError> {
        match &self.source {
            Source::Static(token) => Ok((token.clone(), None)),
            Source::ServiceAccount {
                email,
                key_id,
                key,
                token_uri,
            } => {
                let assertion = jwt(email, key_id.as_deref(), key, token_uri)?;
                self.shared.add(&assertion);
                let form = [
                    ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
                    ("assertion", assertion.as_str()),
                ];
                self.grant(token_uri, &form).await
            }
            Source::User {
                client_id,
                client_secret,
                refresh_token,
                token_uri,
            } => {
                let form = [
                    ("grant_type", "refresh_token"),
                    ("client_id", client_id.as_str()),
                    ("client_secret", client_secret.as_str()),
                    ("refresh_token", refresh_token.as_str()),
                ];
                self.grant(token_uri, &form).await
            }
            Source::External(external) => self.external(external).await,
            Source::Metadata { host } => {
                let url = format!(
                    "http://{host}/computeMetadata/v1/instance/service-accounts/default/token"
                );
                let request = self.client.get(url).header("Metadata-Flavor", "Google");
                self.oauth_token(request, "access_token", "expires_in")
                    .await
            }
        }
    }

    /// Workload Identity Federation: subject token, STS exchange, then impersonation.
    async fn external(
        &self,
        external: &External,
    ) -> Result<(String, Option<Duration>), EndpointError> {
        let source = &external.credential_source;
        let raw = if let Some(url) = &source.url {
            let mut request = self.client.get(url);
            for (name, value) in &source.headers {
                request = request.header(name, value);
            }
            let response = request.send().await.map_err(transport_error)?;
            if !response.status().is_success() {
                return Err(refused("the subject token URL", response, &self.shared).await);
            }
            String::from_utf8_lossy(&read_body(response).await?).into_owned()
        } else if let Some(file) = &source.file {
            std::fs::read_to_string(file).map_err(|e| {
                protocol(format!(
                    "cannot read the subject token file {}: {e}",
                    file.display()
                ))
            })?
        } else {
            return Err(protocol(
                "`credential_source` has neither `url` nor `file`".into(),
            ));
        };
        let subject = match &source.format {
            Some(format) if format.kind == "json" => {
                let field = format
                    .subject_token_field_name
                    .as_deref()
                    .unwrap_or("value");
                let value: Value = serde_json::from_str(&raw)
                    .map_err(|_| protocol("the subject token is not JSON".into()))?;
                value
                    .get(field)
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| protocol(format!("the subject token has no `{field}`")))?
            }
            _ => raw.trim().to_owned(),
        };
        self.shared.add(&subject);
        let form = [
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:token-exchange",
            ),
            ("audience", external.audience.as_str()),
            ("scope", SCOPE),
            (
                "requested_token_type",
                "urn:ietf:params:oauth:token-type:access_token",
            ),
            ("subject_token", subject.as_str()),
            ("subject_token_type", external.subject_token_type.as_str()),
        ];
        let request = self
            .client
            .post(&external.token_url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form_body(&form));
        let (federated, lifetime) = self
            .oauth_token(request, "access_token", "expires_in")
            .await?;
        self.shared.add(&federated);
        let Some(url) = &external.service_account_impersonation_url else {
            return Ok((federated, lifetime));
        };
        let request = self
            .client
            .post(url)
            .bearer_auth(&federated)
            .json(&json!({ "scope": [SCOPE], "lifetime": "3600s" }));
        let (token, _) = self.oauth_token(request, "accessToken", "").await?;
        Ok((token, Some(Duration::from_secs(3600))))
    }

    /// Sends a token request and reads the token and its lifetime from the answer.
    async fn oauth_token(
        &self,
        request: reqwest::RequestBuilder,
        token_field: &str,
        lifetime_field: &str,
    ) -> Result<(String, Option<Duration>), EndpointError> {
        let response = request.send().await.map_err(transport_error)?;
        if !response.status().is_success() {
            return Err(refused("the token endpoint", response, &self.shared).await);
        }
        let body: Value = serde_json::from_slice(&read_body(response).await?)
            .map_err(|_| protocol("the token endpoint's answer is not JSON".into()))?;
        let token = body
            .get(token_field)
            .and_then(Value::as_str)
            .ok_or_else(|| {
                protocol(format!(
                    "the token endpoint's answer has no `{token_field}`"
                ))
            })?;
        let lifetime = body
            .get(lifetime_field)
            .and_then(Value::as_u64)
            .map(Duration::from_secs)
            .or(Some(Duration::from_secs(3600)));
        Ok((token.to_owned(), lifetime))
    }
}

/// gcloud's ADC file: `%APPDATA%\gcloud\...` on Windows, `~/.config/gcloud/...` elsewhere.
fn gcloud_file() -> Option<PathBuf> {
    let dir = if cfg!(windows) {
        PathBuf::from(std::env::var_os("APPDATA")?).join("gcloud")
    } else if let Some(config) = std::env::var_os("CLOUDSDK_CONFIG") {
        PathBuf::from(config)
    } else {
        PathBuf::from(std::env::var_os("HOME")?).join(".config/gcloud")
    };
    Some(dir.join("application_default_credentials.json"))
}

fn from_file(path: &Path) -> Result<Source, String> {
    let place = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the Google credentials file {place}: {e}"))?;
    let file: Value = serde_json::from_str(&text)
        .map_err(|e| format!("the Google credentials file {place} is not JSON: {e}"))?;
    let field = |name: &str| {
        file.get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("the Google credentials file {place} has no `{name}`"))
    };
    match file.get("type").and_then(Value::as_str) {
        Some("service_account") => {
            let pem = field("private_key")?;
            let key = private_key(&pem)
                .map_err(|e| format!("the private key in {place} cannot be used: {e}"))?;
            Ok(Source::ServiceAccount {
                email: field("client_email")?,
                key_id: field("private_key_id").ok(),
                key: std::sync::Arc::new(key),
                token_uri: field("token_uri").unwrap_or_else(|_| GCLOUD_TOKEN_URI.to_owned()),
            })
        }
        Some("authorized_user") => Ok(Source::User {
            client_id: field("client_id")?,
            client_secret: field("client_secret")?,
            refresh_token: field("refresh_token")?,
            token_uri: field("token_uri").unwrap_or_else(|_| GCLOUD_TOKEN_URI.to_owned()),
        }),
        Some("external_account") => serde_json::from_value::<External>(file.clone())
            .map(|e| Source::External(Box::new(e)))
            .map_err(|e| format!("the external account in {place} cannot be used: {e}")),
        Some(other) => Err(format!(
            "the Google credentials file {place} has type `{other}`, which goldgate cannot use \
             (service_account, authorized_user, external_account)"
        )),
        None => Err(format!("the Google credentials file {place} has no `type`")),
    }
}

/// A PKCS#8 PEM private key, as service-account keys hold.
fn private_key(pem: &str) -> Result<ring::signature::RsaKeyPair, String> {
    let body: String = pem
        .lines()
        .filter(|line| !line.starts_with("-----"))
        .collect::<Vec<_>>()
        .concat();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body.trim())
        .map_err(|_| "not PEM".to_owned())?;
    ring::signature::RsaKeyPair::from_pkcs8(&der).map_err(|e| format!("not an RSA key ({e})"))
}

/// The signed assertion of the JWT bearer grant (RFC 7523), valid for an hour.
fn jwt(
    email: &str,
    key_id: Option<&str>,
    key: &ring::signature::RsaKeyPair,
    audience: &str,
) -> Result<String, EndpointError> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let mut header = json!({ "alg": "RS256", "typ": "JWT" });
    if let Some(kid) = key_id {
        header["kid"] = json!(kid);
    }
    let claims = json!({
        "iss": email, "scope": SCOPE, "aud": audience, "iat": now, "exp": now + 3600,
    });
    let signing_input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let mut signature = vec![0; key.public().modulus_len()];
    key.sign(
        &ring::signature::RSA_PKCS1_SHA256,
        &ring::rand::SystemRandom::new(),
        signing_input.as_bytes(),
        &mut signature,
    )
    .map_err(|_| protocol("cannot sign the token request".into()))?;
    Ok(format!(
        "{signing_input}.{}",
        URL_SAFE_NO_PAD.encode(signature)
    ))
}

/// A token endpoint's refusal with its own explanation (`error_description`, Google's
/// `error.message`), `secrets` masked out: it may echo what was sent.
async fn refused(what: &str, response: reqwest::Response, secrets: &Secrets) -> EndpointError {
    let status = response.status().as_u16();
    let body = read_body(response).await.unwrap_or_default();
    let reason = google_message(&body, secrets).unwrap_or_default();
    let message = if reason.is_empty() {
        format!("{what} answered HTTP {status}")
    } else {
        format!("{what} answered HTTP {status}: {reason}")
    };
    EndpointError::new(EndpointErrorKind::Status(status), message)
}

/// The explanation in an OAuth or Google API error body, `secrets` masked out, then cut to
/// at most 300 characters ([`Secrets::excerpt`]).
pub fn google_message(body: &[u8], secrets: &Secrets) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let text = value
        .pointer("/error/message")
        .or_else(|| value.get("error_description"))
        .or_else(|| value.get("error").filter(|e| e.is_string()))?
        .as_str()?;
    Some(secrets.excerpt(text, false, 300))
}

/// An `application/x-www-form-urlencoded` body (reqwest's `form` feature would rebuild it).
fn form_body(fields: &[(&str, &str)]) -> String {
    let encode = |text: &str| {
        let mut out = String::new();
        for byte in text.bytes() {
            if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'*') {
                out.push(byte as char);
            } else if byte == b' ' {
                out.push('+');
            } else {
                out.push_str(&format!("%{byte:02X}"));
            }
        }
        out
    };
    fields
        .iter()
        .map(|(name, value)| format!("{}={}", encode(name), encode(value)))
        .collect::<Vec<_>>()
        .join("&")
}

fn protocol(message: String) -> EndpointError {
    EndpointError::new(EndpointErrorKind::Protocol, message)
}
