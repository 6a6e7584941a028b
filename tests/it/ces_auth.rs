//! Google credentials for a CX Agent Studio run, against loopback token endpoints: a
//! service-account key whose `token_uri` is one (a signed RS256 JWT grant, checked with the
//! key's public half; the token cached across cases), and an `external_account` file as
//! `google-github-actions/auth` writes it, whose `credential_source.url`, `token_url` and
//! `service_account_impersonation_url` are (the subject token fetched with its headers and
//! exchanged at STS; a short-lived token fetched again before it expires). No token, subject
//! token or key reaches the output, the report or the recordings, not even when an endpoint
//! refuses and quotes what it was sent.

use crate::{ces_support, common};
use std::collections::HashMap;
use std::fs;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use ces_support::{APP, Ces};

const EMAIL: &str = "goldgate-ci@p.iam.gserviceaccount.com";
const SA_TOKEN: &str = "ya29.service-account-token-42";
const SUBJECT: &str = "eyJ.github-oidc-subject-token.sig";
const REQUEST_TOKEN: &str = "actions-request-token-77";
const FEDERATED: &str = "ya29.federated-sts-token-13";
const IMPERSONATED: &str = "ya29.impersonated-token-99";

/// Requests each token endpoint answered, and what was wrong with any of them.
#[derive(Clone, Default)]
struct Tokens {
    hits: Arc<Mutex<HashMap<&'static str, usize>>>,
    problems: Arc<Mutex<Vec<String>>>,
    /// `expires_in` of the STS answer.
    sts_lifetime: u64,
    addr: Arc<Mutex<Option<SocketAddr>>>,
    /// The endpoint that refuses, quoting what it was sent ([`Tokens::refusal`]).
    refusing: Option<&'static str>,
    /// What it quoted.
    echoed: Arc<Mutex<Vec<String>>>,
}

impl Tokens {
    fn hit(&self, name: &'static str) {
        *self.hits.lock().unwrap().entry(name).or_default() += 1;
    }
    fn hits(&self, name: &str) -> usize {
        self.hits.lock().unwrap().get(name).copied().unwrap_or(0)
    }
    /// A refusal quoting `sent`, as an indiscreet endpoint words it, when `name` is the
    /// endpoint [`Tokens::refusing`] names.
    fn refusal(&self, name: &str, status: StatusCode, sent: &str) -> Option<Response> {
        (self.refusing == Some(name)).then(|| {
            self.echoed.lock().unwrap().push(sent.to_owned());
            let body = json!({"error": "invalid_request", "error_description": format!("you sent {sent}")});
            (status, Json(body)).into_response()
        })
    }

    fn problem(&self, text: String) -> Response {
        self.problems.lock().unwrap().push(text.clone());
        let body = json!({"error": "invalid_grant", "error_description": text});
        (StatusCode::BAD_REQUEST, Json(body)).into_response()
    }
}

fn form(body: &Bytes) -> HashMap<String, String> {
    let decode = |s: &str| {
        let s = s.replace('+', " ");
        let bytes = s.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' && i + 2 < bytes.len() {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 3;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        String::from_utf8(out).unwrap()
    };
    String::from_utf8_lossy(body)
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (decode(k), decode(v)))
        .collect()
}

/// `POST /token`: the JWT bearer grant, signature and claims checked.
async fn token(State(tokens): State<Tokens>, body: Bytes) -> Response {
    tokens.hit("token");
    let form = form(&body);
    let sent = form
        .get("assertion")
        .map(String::as_str)
        .unwrap_or_default();
    if let Some(refused) = tokens.refusal("token", StatusCode::BAD_REQUEST, sent) {
        return refused;
    }
    if form.get("grant_type").map(String::as_str)
        != Some("urn:ietf:params:oauth:grant-type:jwt-bearer")
    {
        return tokens.problem(format!("grant_type {:?}", form.get("grant_type")));
    }
    let assertion = form.get("assertion").cloned().unwrap_or_default();
    let Some((signed, signature)) = assertion.rsplit_once('.') else {
        return tokens.problem("not a JWT".into());
    };
    let public = fs::read("fixtures/ces/auth/test-key.pub.der").unwrap();
    let key = ring::signature::UnparsedPublicKey::new(
        &ring::signature::RSA_PKCS1_2048_8192_SHA256,
        public,
    );
    let signature = URL_SAFE_NO_PAD.decode(signature).unwrap_or_default();
    if key.verify(signed.as_bytes(), &signature).is_err() {
        return tokens.problem("the signature does not verify".into());
    }
    let (header, claims) = signed.split_once('.').unwrap();
    let decode = |part: &str| -> Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    };
    let (header, claims) = (decode(header), decode(claims));
    let addr = tokens.addr.lock().unwrap().unwrap();
    let expected_aud = format!("http://{addr}/token");
    if header["alg"] != "RS256"
        || header["kid"] != "key-1"
        || claims["iss"] != EMAIL
        || claims["aud"] != json!(expected_aud)
        || !claims["scope"]
            .as_str()
            .unwrap_or_default()
            .contains("cloud-platform")
        || claims["exp"].as_u64() <= claims["iat"].as_u64()
    {
        return tokens.problem(format!("header {header} claims {claims}"));
    }
    Json(json!({"access_token": SA_TOKEN, "expires_in": 3599, "token_type": "Bearer"}))
        .into_response()
}

/// `GET /oidc`: GitHub's ID token endpoint, as the action's file describes it.
async fn oidc(State(tokens): State<Tokens>, headers: HeaderMap) -> Response {
    tokens.hit("oidc");
    let auth = headers.get("authorization").and_then(|v| v.to_str().ok());
    let sent = auth.unwrap_or_default();
    if let Some(refused) = tokens.refusal("oidc", StatusCode::UNAUTHORIZED, sent) {
        return refused;
    }
    if auth != Some(&format!("Bearer {REQUEST_TOKEN}")) {
        return tokens.problem(format!(
            "subject token request without its header: {auth:?}"
        ));
    }
    Json(json!({"count": 1, "value": SUBJECT})).into_response()
}

/// `POST /sts`: the token exchange.
async fn sts(State(tokens): State<Tokens>, body: Bytes) -> Response {
    tokens.hit("sts");
    let form = form(&body);
    let field = |k: &str| form.get(k).map(String::as_str).unwrap_or_default();
    let sent = field("subject_token");
    if let Some(refused) = tokens.refusal("sts", StatusCode::BAD_REQUEST, sent) {
        return refused;
    }
    if field("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange"
        || field("subject_token") != SUBJECT
        || field("subject_token_type") != "urn:ietf:params:oauth:token-type:jwt"
        || field("requested_token_type") != "urn:ietf:params:oauth:token-type:access_token"
        || !field("audience").starts_with("//iam.googleapis.com/projects/123/")
    {
        return tokens.problem(format!("STS form {form:?}"));
    }
    Json(json!({
        "access_token": FEDERATED,
        "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
        "token_type": "Bearer",
        "expires_in": tokens.sts_lifetime,
    }))
    .into_response()
}

/// `POST /impersonate`: IAM Credentials' generateAccessToken.
async fn impersonate(State(tokens): State<Tokens>, headers: HeaderMap, body: Bytes) -> Response {
    tokens.hit("impersonate");
    let auth = headers.get("authorization").and_then(|v| v.to_str().ok());
    let request: Value = serde_json::from_slice(&body).unwrap_or_default();
    let sent = auth.unwrap_or_default();
    if let Some(refused) = tokens.refusal("impersonate", StatusCode::FORBIDDEN, sent) {
        return refused;
    }
    if auth != Some(&format!("Bearer {FEDERATED}")) || request["scope"].as_array().is_none() {
        return tokens.problem(format!("impersonation request {auth:?} {request}"));
    }
    Json(json!({"accessToken": IMPERSONATED, "expireTime": "2099-01-01T00:00:00Z"})).into_response()
}

fn start_tokens(tokens: &Tokens) -> SocketAddr {
    let addr = common::serve(
        axum::Router::new()
            .route("/token", post(token))
            .route("/oidc", get(oidc))
            .route("/sts", post(sts))
            .route("/impersonate", post(impersonate))
            .with_state(tokens.clone()),
    );
    *tokens.addr.lock().unwrap() = Some(addr);
    addr
}

fn setup(dir: &Path, ces: &Ces) {
    fs::create_dir_all(dir.join("goldens")).unwrap();
    common::order_golden(dir, &common::order_conversation("one"));
    common::write(
        dir,
        "goldens/more.yaml",
        "common_session_parameters:\n  order_12345_status: shipped\nconversations:\n".to_owned()
            + &common::order_conversation("two")
            + &common::order_conversation("three"),
    );
    let addr = common::serve(
        axum::Router::new()
            .fallback(post(ces_support::run_session))
            .with_state(ces.clone()),
    );
    common::write(
        dir,
        "goldgate.yaml",
        format!(
            "agent:\n  ces:\n    app: {APP}\n    base_url: http://{addr}\nrun:\n  retries: 0\n"
        ),
    );
}

/// Runs with only `GOOGLE_APPLICATION_CREDENTIALS` set, recording transcripts; returns the
/// exit code and everything goldgate wrote: output, report, recordings.
fn run(dir: &Path, credentials: &Path) -> (Option<i32>, String) {
    let mut command = common::command_in(dir);
    for name in ["CXAS_OAUTH_TOKEN", "GCE_METADATA_HOST", "CLOUDSDK_CONFIG"] {
        command.env_remove(name);
    }
    let output = command
        .env("HOME", dir)
        .env("GOOGLE_APPLICATION_CREDENTIALS", credentials)
        .args([
            "run",
            "--output",
            "report.json",
            "--record",
            "recorded",
            "goldens",
        ])
        .output()
        .unwrap();
    let mut written = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    written += &fs::read_to_string(dir.join("report.json")).unwrap_or_default();
    for entry in common::files_under(&dir.join("recorded")) {
        written += &fs::read_to_string(entry).unwrap_or_default();
    }
    (output.status.code(), written)
}

fn assert_no_secret(written: &str, secrets: &[&str]) {
    for secret in secrets {
        assert!(
            !written.contains(secret),
            "`{secret}` was written:\n{written}"
        );
    }
}

/// The suite of [`setup`] run against a CES app that accepts the token `accepted`, with only
/// the credentials file `name`, which `credentials` writes for the token endpoints of `tokens`
/// at their address: the app, the exit code and everything goldgate wrote (see [`run`]).
fn run_with_credentials(
    tokens: &Tokens,
    accepted: &str,
    name: &str,
    credentials: impl FnOnce(SocketAddr) -> Value,
) -> (Ces, Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let addr = start_tokens(tokens);
    let ces = Ces::accepting(accepted);
    setup(dir.path(), &ces);
    let file = dir.path().join(name);
    fs::write(&file, credentials(addr).to_string()).unwrap();
    let (code, written) = run(dir.path(), &file);
    (ces, code, written)
}

/// The run passed, and neither the token endpoints nor the app saw a request they would refuse.
#[track_caller]
fn assert_passed_with_valid_requests(tokens: &Tokens, ces: &Ces, code: Option<i32>, written: &str) {
    assert_eq!(
        tokens.problems.lock().unwrap().clone(),
        Vec::<String>::new()
    );
    assert_eq!(ces.violations(), Vec::<String>::new());
    assert_eq!(code, Some(0), "{written}");
}

/// A service-account key file for `client_email`, whose token URI is at `addr`.
fn service_account_key(addr: SocketAddr, client_email: &str) -> Value {
    json!({
        "type": "service_account",
        "project_id": "p",
        "private_key_id": "key-1",
        "private_key": fs::read_to_string("fixtures/ces/auth/test-key.pem").unwrap(),
        "client_email": client_email,
        "token_uri": format!("http://{addr}/token"),
    })
}

#[test]
fn a_service_account_key_gets_a_token_from_its_token_uri_once_per_run() {
    let tokens = Tokens::default();
    let (ces, code, written) = run_with_credentials(&tokens, SA_TOKEN, "key.json", |addr| {
        service_account_key(addr, EMAIL)
    });
    assert_passed_with_valid_requests(&tokens, &ces, code, &written);
    assert_eq!(tokens.hits("token"), 1, "the token is cached across cases");
    assert_eq!(*ces.requests.lock().unwrap(), 3);
    let pem = fs::read_to_string("fixtures/ces/auth/test-key.pem").unwrap();
    assert_no_secret(
        &written,
        &[SA_TOKEN, "PRIVATE KEY", pem.lines().nth(1).unwrap()],
    );
}

fn external_account(addr: SocketAddr, impersonate: bool) -> Value {
    let mut file = json!({
        "type": "external_account",
        "audience": "//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/github/providers/repo",
        "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
        "token_url": format!("http://{addr}/sts"),
        "credential_source": {
            "url": format!("http://{addr}/oidc?api-version=2.0&audience=https://iam.googleapis.com/projects/123"),
            "headers": {"Authorization": format!("Bearer {REQUEST_TOKEN}")},
            "format": {"type": "json", "subject_token_field_name": "value"},
        },
    });
    if impersonate {
        file["service_account_impersonation_url"] = json!(format!("http://{addr}/impersonate"));
    }
    file
}

#[test]
fn workload_identity_federation_exchanges_the_subject_token_and_impersonates() {
    let tokens = Tokens {
        sts_lifetime: 3600,
        ..Tokens::default()
    };
    let (ces, code, written) =
        run_with_credentials(&tokens, IMPERSONATED, "gha-creds.json", |addr| {
            external_account(addr, true)
        });
    assert_passed_with_valid_requests(&tokens, &ces, code, &written);
    assert_eq!(
        (
            tokens.hits("oidc"),
            tokens.hits("sts"),
            tokens.hits("impersonate")
        ),
        (1, 1, 1)
    );
    assert_no_secret(&written, &[IMPERSONATED, FEDERATED, SUBJECT, REQUEST_TOKEN]);
}

#[test]
fn a_token_about_to_expire_is_fetched_again() {
    // Inside the five minutes before expiry from the start: never reused.
    let tokens = Tokens {
        sts_lifetime: 60,
        ..Tokens::default()
    };
    let (_, code, written) = run_with_credentials(&tokens, FEDERATED, "gha-creds.json", |addr| {
        external_account(addr, false)
    });
    assert_eq!(code, Some(0), "{written}");
    assert_eq!(tokens.hits("sts"), 3, "one exchange per turn");
    assert_eq!(tokens.hits("impersonate"), 0);
    assert_no_secret(&written, &[FEDERATED, SUBJECT, REQUEST_TOKEN]);
}

#[test]
fn a_refused_token_request_is_an_error_of_the_run_with_the_endpoints_reason() {
    let tokens = Tokens::default();
    // Signed by the key, but claiming another account: the endpoint refuses the grant.
    let (ces, code, written) = run_with_credentials(&tokens, SA_TOKEN, "key.json", |addr| {
        service_account_key(addr, "someone-else@p.iam.gserviceaccount.com")
    });
    assert_eq!(code, Some(2), "{written}");
    common::assert_contains(
        &written,
        &[
            "could not get a Google access token",
            "the token endpoint answered HTTP 400",
        ],
    );
    assert_eq!(*ces.requests.lock().unwrap(), 0);
}

#[test]
fn what_a_refusing_token_endpoint_quotes_of_its_request_is_masked() {
    let federation = |addr| external_account(addr, true);
    let service_account = |addr| service_account_key(addr, EMAIL);
    let cases: [(_, &dyn Fn(SocketAddr) -> Value, _); 4] = [
        (
            "oidc",
            &federation,
            "the subject token URL answered HTTP 401: you sent ***",
        ),
        (
            "sts",
            &federation,
            "the token endpoint answered HTTP 400: you sent ***",
        ),
        (
            "impersonate",
            &federation,
            "the token endpoint answered HTTP 403: you sent Bearer ***",
        ),
        (
            "token",
            &service_account,
            "the token endpoint answered HTTP 400: you sent ***",
        ),
    ];
    for (refusing, credentials, quoted) in cases {
        let tokens = Tokens {
            refusing: Some(refusing),
            sts_lifetime: 3600,
            ..Tokens::default()
        };
        let (_, code, written) =
            run_with_credentials(&tokens, IMPERSONATED, "creds.json", credentials);
        assert_eq!(code, Some(2), "{refusing}: {written}");
        common::assert_contains(&written, &[quoted]);
        let echoed = tokens.echoed.lock().unwrap().clone();
        assert!(!echoed.is_empty(), "{refusing} refused nothing");
        let sent: Vec<&str> = echoed
            .iter()
            .map(|e| e.trim_start_matches("Bearer "))
            .collect();
        assert_no_secret(&written, &sent);
        assert_no_secret(&written, &[REQUEST_TOKEN, SUBJECT, FEDERATED]);
    }
}
