//! A loopback stand-in for GitHub's REST API (under an Enterprise-style `/api/v3` base path)
//! that also serves the agent under test at `/turn`. Its payloads are GitHub's own: complete
//! comment objects with full user objects, reactions and timestamps, and `Link` headers for
//! pagination, because octocrab's models are strict.

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Json;
use axum::extract::{FromRequestParts, Path as UrlPath, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

pub const TOKEN: &str = "ghs_l00pb4ckT0k3nNeverPrinted";
pub const REPO: &str = "acme/agents";
pub const PR: u64 = 7;
pub const MARKER: &str = "<!-- goldgate:suite=default -->";

pub const PASSING_REPLY: &str = "Your order ORD-12345 has shipped and should arrive by April 18th.";

/// Everything the fake GitHub holds and saw.
#[derive(Default)]
pub struct Fake {
    /// Comments on pull request #7, oldest first, as GitHub returns them.
    pub comments: Vec<Value>,
    next_id: u64,
    /// `METHOD path?query`, in order.
    pub requests: Vec<String>,
    /// Authorization headers received.
    pub authorizations: Vec<String>,
    /// Answer writes with 403, as GitHub does for a fork's read-only token.
    pub refuse_writes: bool,
}

pub type Shared = Arc<Mutex<Fake>>;

pub struct Server {
    pub addr: SocketAddr,
    pub fake: Shared,
}

impl Server {
    pub fn start() -> Self {
        let fake = Shared::default();
        fake.lock().unwrap().next_id = 1_000;
        let state = fake.clone();
        let app = axum::Router::new()
            .route("/turn", axum::routing::post(agent))
            .route(
                "/api/v3/repos/{owner}/{repo}/issues/{number}/comments",
                axum::routing::get(list_comments).post(create_comment),
            )
            .route(
                "/api/v3/repos/{owner}/{repo}/issues/comments/{id}",
                axum::routing::post(update_comment).patch(update_comment),
            )
            .fallback(not_found)
            .with_state(state);
        Self {
            addr: crate::common::serve(app),
            fake,
        }
    }

    pub fn api_url(&self) -> String {
        format!("http://{}/api/v3", self.addr)
    }

    pub fn comments(&self) -> Vec<Value> {
        self.fake.lock().unwrap().comments.clone()
    }

    pub fn requests(&self) -> Vec<String> {
        self.fake.lock().unwrap().requests.clone()
    }

    /// Comments by other people, before goldgate runs.
    pub fn seed(&self, bodies: impl IntoIterator<Item = String>) {
        let mut fake = self.fake.lock().unwrap();
        for body in bodies {
            fake.next_id += 1;
            let id = fake.next_id;
            let comment = comment_json(self.addr, id, &octocat(), &body);
            fake.comments.push(comment);
        }
    }
}

/// The agent under test: a good answer for `order_lookup`, hostile text for `hostile*`, and
/// for `hostile_error` a refusal whose quoted body lands in the error of the run (prose, not
/// code, in the comment).
async fn agent(Json(request): Json<Value>) -> Response {
    let text = match request["conversation"].as_str() {
        Some("hostile_error") => {
            let body = "@octocat <script>alert(1)</script> [click](https://evil.example) #1 `x`";
            return (StatusCode::BAD_REQUEST, body).into_response();
        }
        Some(name) if name.starts_with("hostile") => hostile_reply(),
        _ => PASSING_REPLY.to_owned(),
    };
    Json(json!({ "messages": [{ "text": text }] })).into_response()
}

/// Mentions, HTML, fences of every length, a forged closing tag and 70 KB of two-byte text.
fn hostile_reply() -> String {
    let mut text = String::from(
        "@octocat and @acme/security, see #1.\n<script>alert('pwned')</script>\n<img src=x onerror=alert(1)>\n</details>\n```\n````\nescaped?\n",
    );
    text.push_str(&"é".repeat(35_000));
    text
}

/// A request to the fake GitHub, recorded in [`Fake::requests`] (with its authorization) as
/// the handler extracts it, so that no handler can forget to.
struct Recorded {
    uri: Uri,
    headers: HeaderMap,
}

impl FromRequestParts<Shared> for Recorded {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, fake: &Shared) -> Result<Self, Self::Rejection> {
        let mut fake = fake.lock().unwrap();
        fake.requests
            .push(format!("{} {}", parts.method, parts.uri));
        if let Some(auth) = parts.headers.get(header::AUTHORIZATION) {
            fake.authorizations
                .push(auth.to_str().unwrap_or_default().to_owned());
        }
        Ok(Self {
            uri: parts.uri.clone(),
            headers: parts.headers.clone(),
        })
    }
}

impl Recorded {
    /// The `Host` the request was sent to: the fake's own address.
    fn host(&self) -> &str {
        self.headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or_default()
    }
}

#[derive(serde::Deserialize)]
struct PageQuery {
    per_page: Option<usize>,
    page: Option<usize>,
}

async fn list_comments(
    State(fake): State<Shared>,
    UrlPath((owner, repo, number)): UrlPath<(String, String, u64)>,
    Query(query): Query<PageQuery>,
    request: Recorded,
) -> Response {
    if format!("{owner}/{repo}") != REPO || number != PR {
        return github_error(StatusCode::NOT_FOUND, "Not Found");
    }
    let per_page = query.per_page.unwrap_or(30).clamp(1, 100);
    let page = query.page.unwrap_or(1).max(1);
    let comments = fake.lock().unwrap().comments.clone();
    let last = comments.len().div_ceil(per_page).max(1);
    let items: Vec<Value> = comments
        .iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .cloned()
        .collect();
    let link = |page: usize, rel: &str| {
        format!(
            "<http://{}{}?per_page={per_page}&page={page}>; rel=\"{rel}\"",
            request.host(),
            request.uri.path()
        )
    };
    let mut links = Vec::new();
    if page > 1 {
        links.push(link(page - 1, "prev"));
    }
    if page < last {
        links.push(link(page + 1, "next"));
        links.push(link(last, "last"));
    }
    if page > 1 {
        links.push(link(1, "first"));
    }
    let mut response = Json(Value::Array(items)).into_response();
    if !links.is_empty() {
        response
            .headers_mut()
            .insert(header::LINK, links.join(", ").parse().unwrap());
    }
    response
}

/// The fake, locked for a write; `None` when it refuses writes (answer [`refused`]).
fn writable(fake: &Shared) -> Option<MutexGuard<'_, Fake>> {
    let fake = fake.lock().unwrap();
    (!fake.refuse_writes).then_some(fake)
}

/// The 403 GitHub answers a token without write access.
fn refused() -> Response {
    github_error(
        StatusCode::FORBIDDEN,
        "Resource not accessible by integration",
    )
}

#[derive(serde::Deserialize)]
struct CommentBody {
    body: String,
}

async fn create_comment(
    State(fake): State<Shared>,
    UrlPath((owner, repo, number)): UrlPath<(String, String, u64)>,
    sent: Recorded,
    Json(request): Json<CommentBody>,
) -> Response {
    let Some(mut fake) = writable(&fake) else {
        return refused();
    };
    if format!("{owner}/{repo}") != REPO || number != PR {
        return github_error(StatusCode::NOT_FOUND, "Not Found");
    }
    if let Some(refused) = too_long(&request.body) {
        return refused;
    }
    fake.next_id += 1;
    let addr = sent.host().parse().unwrap();
    let comment = comment_json(addr, fake.next_id, &actions_bot(), &request.body);
    fake.comments.push(comment.clone());
    (StatusCode::CREATED, Json(comment)).into_response()
}

async fn update_comment(
    State(fake): State<Shared>,
    UrlPath((_owner, _repo, id)): UrlPath<(String, String, u64)>,
    _: Recorded,
    Json(request): Json<CommentBody>,
) -> Response {
    let Some(mut fake) = writable(&fake) else {
        return refused();
    };
    if let Some(refused) = too_long(&request.body) {
        return refused;
    }
    match fake.comments.iter_mut().find(|c| c["id"] == id) {
        Some(comment) => {
            comment["body"] = Value::String(request.body);
            comment["updated_at"] = json!("2026-11-22T10:05:00Z");
            Json(comment.clone()).into_response()
        }
        None => github_error(StatusCode::NOT_FOUND, "Not Found"),
    }
}

/// GitHub refuses a body over 65,536 characters, whether it creates the comment or edits it.
fn too_long(body: &str) -> Option<Response> {
    (body.chars().count() > 65_536).then(|| {
        github_error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Validation Failed: body is too long (maximum is 65536 characters)",
        )
    })
}

async fn not_found(_: Recorded) -> Response {
    github_error(StatusCode::NOT_FOUND, "Not Found")
}

fn github_error(status: StatusCode, message: &str) -> Response {
    let body = json!({
        "message": message,
        "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
        "status": status.as_u16().to_string(),
    });
    (status, Json(body)).into_response()
}

/// An issue comment exactly as GitHub's REST API returns one.
fn comment_json(addr: SocketAddr, id: u64, user: &Value, body: &str) -> Value {
    let api = format!("http://{addr}/api/v3/repos/{REPO}");
    json!({
        "url": format!("{api}/issues/comments/{id}"),
        "html_url": format!("https://github.example/{REPO}/pull/{PR}#issuecomment-{id}"),
        "issue_url": format!("{api}/issues/{PR}"),
        "id": id,
        "node_id": format!("IC_kwDOLk2bLM6{id:x}"),
        "user": user,
        "created_at": "2026-11-22T10:00:00Z",
        "updated_at": "2026-11-22T10:00:00Z",
        "author_association": if user["type"] == "Bot" { "NONE" } else { "MEMBER" },
        "body": body,
        "reactions": {
            "url": format!("{api}/issues/comments/{id}/reactions"),
            "total_count": 1, "+1": 1, "-1": 0, "laugh": 0, "hooray": 0,
            "confused": 0, "heart": 0, "rocket": 0, "eyes": 0
        },
        "performed_via_github_app": null
    })
}

fn user_json(login: &str, id: u64, node_id: &str, kind: &str, html_url: &str) -> Value {
    let api = format!(
        "https://api.github.com/users/{}",
        login.replace('[', "%5B").replace(']', "%5D")
    );
    json!({
        "login": login,
        "id": id,
        "node_id": node_id,
        "avatar_url": format!("https://avatars.githubusercontent.com/u/{id}?v=4"),
        "gravatar_id": "",
        "url": api,
        "html_url": html_url,
        "followers_url": format!("{api}/followers"),
        "following_url": format!("{api}/following{{/other_user}}"),
        "gists_url": format!("{api}/gists{{/gist_id}}"),
        "starred_url": format!("{api}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("{api}/subscriptions"),
        "organizations_url": format!("{api}/orgs"),
        "repos_url": format!("{api}/repos"),
        "events_url": format!("{api}/events{{/privacy}}"),
        "received_events_url": format!("{api}/received_events"),
        "type": kind,
        "user_view_type": "public",
        "site_admin": false
    })
}

fn actions_bot() -> Value {
    user_json(
        "github-actions[bot]",
        41_898_282,
        "MDM6Qm90NDE4OTgyODI=",
        "Bot",
        "https://github.com/apps/github-actions",
    )
}

fn octocat() -> Value {
    user_json(
        "octocat",
        583_231,
        "MDQ6VXNlcjU4MzIzMQ==",
        "User",
        "https://github.com/octocat",
    )
}

// ---- what a comment shows ----

/// What a Markdown body shows, as GitHub's renderer (CommonMark with tables) reads it.
pub struct Rendered {
    /// The text of every fenced code block.
    pub code_text: String,
    /// The last link's target (the footer's link to the run).
    pub footer_link: Option<String>,
    /// Every HTML tag, block or inline.
    pub html: Vec<String>,
    /// The text outside code.
    pub prose: String,
}

/// Renders `body`, failing on a mention, a reference or an agent's link in it.
pub fn render(body: &str) -> Rendered {
    let mut in_code_block = false;
    let mut shown = Rendered {
        code_text: String::new(),
        footer_link: None,
        html: Vec::new(),
        prose: String::new(),
    };
    for event in Parser::new_ext(body, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) => in_code_block = true,
            Event::End(TagEnd::CodeBlock) => in_code_block = false,
            Event::Text(text) if in_code_block => shown.code_text.push_str(&text),
            Event::Text(text) => {
                assert!(!text.contains("@octocat"), "a mention outside code: {text}");
                assert!(!text.contains("@acme/security"), "a team mention: {text}");
                assert!(!text.contains("#1"), "a reference: {text}");
                shown.prose.push_str(&text);
            }
            Event::Html(text) | Event::InlineHtml(text) => shown.html.push(text.to_string()),
            Event::Start(Tag::Link { dest_url, .. }) => {
                assert!(!in_code_block);
                assert!(!dest_url.contains("evil"), "a link from agent text");
                shown.footer_link = Some(dest_url.to_string());
            }
            _ => {}
        }
    }
    shown
}

/// Fails on any HTML tag goldgate does not write itself.
pub fn assert_only_goldgates_html(html: &[String]) {
    for tag in html {
        let allowed = [
            "<!-- goldgate:",
            "<details>",
            "</details>",
            "<summary>",
            "</summary>",
            "<code>",
            "</code>",
            "<sub>",
            "</sub>",
        ];
        let rest = tag.trim();
        assert!(
            allowed.iter().any(|a| rest.starts_with(a)),
            "HTML that goldgate did not write: {tag}"
        );
        assert!(
            !rest.contains("<script") && !rest.contains("<img") && !rest.contains("<b>"),
            "{tag}"
        );
    }
}

/// Writes `dir/event.json`: the `synchronize` event of [`PR`], as a pull_request workflow
/// step finds it.
pub fn write_pr_event(dir: &std::path::Path) {
    std::fs::write(
        dir.join("event.json"),
        json!({"action": "synchronize", "number": PR, "pull_request": {"number": PR}}).to_string(),
    )
    .unwrap();
}

/// Gives `command` the variables of a pull_request workflow step in `dir` on `github`: its
/// event (`dir/event.json`), its `step_summary` file, `dir/output.txt` for its outputs and
/// [`TOKEN`], and none of GH_TOKEN or GOLDGATE_PR.
pub fn as_pr_step(
    command: &mut assert_cmd::Command,
    dir: &std::path::Path,
    github: &Server,
    step_summary: &str,
) {
    command
        .env_remove("GOLDGATE_PR")
        .env_remove("GH_TOKEN")
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_API_URL", github.api_url())
        .env("GITHUB_SERVER_URL", "https://github.example")
        .env("GITHUB_REPOSITORY", REPO)
        .env("GITHUB_RUN_ID", "4242")
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", dir.join("event.json"))
        .env("GITHUB_REF", format!("refs/pull/{PR}/merge"))
        .env("GITHUB_WORKSPACE", dir)
        .env("GITHUB_STEP_SUMMARY", dir.join(step_summary))
        .env("GITHUB_OUTPUT", dir.join("output.txt"))
        .env("GITHUB_TOKEN", TOKEN);
}
