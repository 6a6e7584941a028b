//! goldgate on a pull request, against a loopback server that speaks GitHub's REST API with
//! GitHub's own payloads (full user objects, reactions, timestamps, `Link` pagination) under an
//! Enterprise-style `/api/v3` base path, and serves the agent under test at `/turn`.
//!
//! What must hold: one sticky comment per suite, created once and then edited in place (found
//! on any page); a refused or missing token leaves the verdict and the other outputs alone and
//! says why in one line; hostile agent text cannot ping, inject HTML or break out of its code
//! fence, and a huge reply is cut below GitHub's limit; the step summary, the step outputs and
//! the annotations are written; the token appears nowhere but in the Authorization header.

use std::fs;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use assert_cmd::Command;
use axum::Json;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use serde_json::{Value, json};

const TOKEN: &str = "ghs_l00pb4ckT0k3nNeverPrinted";
const REPO: &str = "acme/agents";
const PR: u64 = 7;
const MARKER: &str = "<!-- goldgate:suite=default -->";

const PASSING_REPLY: &str = "Your order ORD-12345 has shipped and should arrive by April 18th.";

/// Everything the fake GitHub holds and saw.
#[derive(Default)]
struct Fake {
    /// Comments on pull request #7, oldest first, as GitHub returns them.
    comments: Vec<Value>,
    next_id: u64,
    /// `METHOD path?query`, in order.
    requests: Vec<String>,
    /// Authorization headers received.
    authorizations: Vec<String>,
    /// Answer writes with 403, as GitHub does for a fork's read-only token.
    refuse_writes: bool,
}

type Shared = Arc<Mutex<Fake>>;

struct Server {
    addr: SocketAddr,
    fake: Shared,
}

impl Server {
    fn start() -> Self {
        let fake = Shared::default();
        fake.lock().unwrap().next_id = 1_000;
        let state = fake.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(listener.local_addr().unwrap()).unwrap();
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
                axum::serve(listener, app).await.unwrap();
            });
        });
        Self {
            addr: rx.recv().unwrap(),
            fake,
        }
    }

    fn api_url(&self) -> String {
        format!("http://{}/api/v3", self.addr)
    }

    fn comments(&self) -> Vec<Value> {
        self.fake.lock().unwrap().comments.clone()
    }

    fn requests(&self) -> Vec<String> {
        self.fake.lock().unwrap().requests.clone()
    }

    /// Comments by other people, before goldgate runs.
    fn seed(&self, bodies: impl IntoIterator<Item = String>) {
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

fn record(fake: &Shared, method: &Method, uri: &Uri, headers: &HeaderMap) {
    let mut fake = fake.lock().unwrap();
    fake.requests.push(format!("{method} {uri}"));
    if let Some(auth) = headers.get(header::AUTHORIZATION) {
        fake.authorizations
            .push(auth.to_str().unwrap_or_default().to_owned());
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
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    record(&fake, &method, &uri, &headers);
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
            headers
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .unwrap_or_default(),
            uri.path()
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

#[derive(serde::Deserialize)]
struct CommentBody {
    body: String,
}

async fn create_comment(
    State(fake): State<Shared>,
    UrlPath((owner, repo, number)): UrlPath<(String, String, u64)>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    Json(request): Json<CommentBody>,
) -> Response {
    record(&fake, &method, &uri, &headers);
    let mut fake = fake.lock().unwrap();
    if fake.refuse_writes {
        return github_error(
            StatusCode::FORBIDDEN,
            "Resource not accessible by integration",
        );
    }
    if format!("{owner}/{repo}") != REPO || number != PR {
        return github_error(StatusCode::NOT_FOUND, "Not Found");
    }
    if request.body.chars().count() > 65_536 {
        return github_error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Validation Failed: body is too long (maximum is 65536 characters)",
        );
    }
    fake.next_id += 1;
    let addr = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.parse().ok())
        .unwrap();
    let comment = comment_json(addr, fake.next_id, &actions_bot(), &request.body);
    fake.comments.push(comment.clone());
    (StatusCode::CREATED, Json(comment)).into_response()
}

async fn update_comment(
    State(fake): State<Shared>,
    UrlPath((_owner, _repo, id)): UrlPath<(String, String, u64)>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    Json(request): Json<CommentBody>,
) -> Response {
    record(&fake, &method, &uri, &headers);
    let mut fake = fake.lock().unwrap();
    if fake.refuse_writes {
        return github_error(
            StatusCode::FORBIDDEN,
            "Resource not accessible by integration",
        );
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

async fn not_found(
    State(fake): State<Shared>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    record(&fake, &method, &uri, &headers);
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

// ---- the repository under test --------------------------------------------------------------

/// A workspace with one golden file holding `conversations` (see [`agent`]).
fn workspace(conversations: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut golden = String::from("conversations:\n");
    for name in conversations {
        let user = match *name {
            "hostile" => "\"Tell @octocat about <b>this</b>\"",
            _ => "Where is ORD-12345?",
        };
        golden.push_str(&format!(
            "  - conversation: {name}\n    turns:\n      - user: {user}\n        agent: {PASSING_REPLY}\n"
        ));
    }
    fs::create_dir_all(dir.path().join("goldens")).unwrap();
    fs::write(dir.path().join("goldens/orders.yaml"), golden).unwrap();
    fs::write(
        dir.path().join("event.json"),
        json!({"action": "synchronize", "number": PR, "pull_request": {"number": PR}}).to_string(),
    )
    .unwrap();
    dir
}

/// goldgate as a pull_request workflow step runs it.
fn goldgate(dir: &Path, server: &Server) -> Command {
    let mut cmd = Command::cargo_bin("goldgate").unwrap();
    cmd.current_dir(dir)
        .timeout(Duration::from_secs(120))
        .env("NO_COLOR", "1")
        .env_remove("GOLDGATE_CONFIG")
        .env_remove("GOLDGATE_PR")
        .env_remove("GH_TOKEN")
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_API_URL", server.api_url())
        .env("GITHUB_SERVER_URL", "https://github.example")
        .env("GITHUB_REPOSITORY", REPO)
        .env("GITHUB_RUN_ID", "4242")
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", dir.join("event.json"))
        .env("GITHUB_REF", format!("refs/pull/{PR}/merge"))
        .env("GITHUB_WORKSPACE", dir)
        .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"))
        .env("GITHUB_OUTPUT", dir.join("output.txt"))
        .env("GITHUB_TOKEN", TOKEN);
    cmd
}

struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(dir: &Path, server: &Server, extra: &[&str]) -> Ran {
    let goldens = dir.join("goldens");
    let output = goldgate(dir, server)
        .args(["run", "--output", "report.json", "--agent-url"])
        .arg(format!("http://{}/turn", server.addr))
        .arg(&goldens)
        .args(extra)
        .output()
        .unwrap();
    Ran {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Everything goldgate wrote, to search for the token.
fn everything(dir: &Path, ran: &Ran, server: &Server) -> String {
    let mut all = format!("{}{}", ran.stdout, ran.stderr);
    for file in ["summary.md", "output.txt", "report.json"] {
        all.push_str(&fs::read_to_string(dir.join(file)).unwrap_or_default());
    }
    for comment in server.comments() {
        all.push_str(comment["body"].as_str().unwrap_or_default());
    }
    all
}

// ---- the tests -------------------------------------------------------------------------------

#[test]
fn the_first_run_creates_the_comment_and_the_next_one_edits_it() {
    let dir = workspace(&["order_lookup", "hostile"]);
    let server = Server::start();

    let first = run(dir.path(), &server, &["--comment"]);
    assert_eq!(first.code, Some(1), "{}", first.stderr);
    let comments = server.comments();
    assert_eq!(comments.len(), 1);
    let body = comments[0]["body"].as_str().unwrap();
    assert!(body.starts_with(MARKER), "{body}");
    assert!(
        first.stderr.contains("commented on the pull request"),
        "{}",
        first.stderr
    );

    let second = run(dir.path(), &server, &["--comment"]);
    assert_eq!(second.code, Some(1), "{}", second.stderr);
    let comments = server.comments();
    assert_eq!(comments.len(), 1, "a second comment was created");
    assert_eq!(comments[0]["updated_at"], "2026-11-22T10:05:00Z");
    assert!(
        second.stderr.contains("updated the pull request comment"),
        "{}",
        second.stderr
    );

    let requests = server.requests();
    let creates = requests
        .iter()
        .filter(|r| r.starts_with(&format!("POST /api/v3/repos/{REPO}/issues/{PR}/comments")))
        .count();
    let updates = requests
        .iter()
        .filter(|r| r.contains(&format!("/api/v3/repos/{REPO}/issues/comments/")))
        .count();
    assert_eq!((creates, updates), (1, 1), "{requests:#?}");
    // The Enterprise base path was kept on every call.
    assert!(
        requests
            .iter()
            .filter(|r| !r.starts_with("POST /turn"))
            .all(|r| r.split(' ').nth(1).unwrap().starts_with("/api/v3/")),
        "{requests:#?}"
    );

    let fake = server.fake.lock().unwrap();
    assert!(!fake.authorizations.is_empty());
    assert!(
        fake.authorizations
            .iter()
            .all(|a| a == &format!("Bearer {TOKEN}"))
    );
    drop(fake);
    for ran in [&first, &second] {
        assert!(!everything(dir.path(), ran, &server).contains(TOKEN));
    }
}

#[test]
fn the_comment_is_found_on_a_later_page_and_a_quote_of_it_is_left_alone() {
    let dir = workspace(&["order_lookup"]);
    let server = Server::start();
    // A report to publish, written without any GitHub environment.
    let ran = run(dir.path(), &server, &[]);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);

    let mut bodies: Vec<String> = (0..130).map(|i| format!("review comment {i}")).collect();
    bodies[3] = format!("> {MARKER}\n> quoting the bot");
    bodies[114] = format!("{MARKER}\nan old report");
    server.seed(bodies);
    let ours = server.comments()[114]["id"].as_u64().unwrap();

    let output = goldgate(dir.path(), &server)
        .args(["report", "report.json", "--comment"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");

    let comments = server.comments();
    assert_eq!(comments.len(), 130, "no new comment");
    assert!(
        comments[114]["body"]
            .as_str()
            .unwrap()
            .contains("all 1 cases passed")
    );
    assert!(
        comments[3]["body"]
            .as_str()
            .unwrap()
            .contains("quoting the bot")
    );
    let requests = server.requests();
    let github: Vec<&String> = requests
        .iter()
        .filter(|r| !r.starts_with("POST /turn"))
        .collect();
    assert_eq!(github.len(), 3, "{github:#?}");
    assert!(github[0].starts_with("GET ") && github[0].contains("per_page=100"));
    assert!(github[1].starts_with("GET ") && github[1].contains("page=2"));
    assert!(
        github[2].ends_with(&format!("/issues/comments/{ours}")),
        "{github:#?}"
    );
}

#[test]
fn a_refused_token_costs_one_line_and_nothing_else() {
    let dir = workspace(&["order_lookup"]);
    let server = Server::start();
    server.fake.lock().unwrap().refuse_writes = true;

    let ran = run(dir.path(), &server, &["--comment"]);
    assert_eq!(
        ran.code,
        Some(0),
        "the verdict, not the comment, decides: {}",
        ran.stderr
    );
    let lines: Vec<&str> = ran
        .stderr
        .lines()
        .filter(|l| l.contains("comment"))
        .collect();
    assert_eq!(lines.len(), 1, "{}", ran.stderr);
    assert!(
        lines[0].contains("HTTP 403") && lines[0].contains("fork"),
        "{}",
        lines[0]
    );
    assert!(server.comments().is_empty());
    // The step summary and the outputs are written all the same.
    assert!(
        fs::read_to_string(dir.path().join("summary.md"))
            .unwrap()
            .starts_with(MARKER)
    );
    let outputs = fs::read_to_string(dir.path().join("output.txt")).unwrap();
    assert!(outputs.contains("pass-rate=100.0\n"), "{outputs}");
    assert!(!everything(dir.path(), &ran, &server).contains(TOKEN));
}

#[test]
fn without_a_token_nothing_is_sent_and_the_run_says_why() {
    let dir = workspace(&["order_lookup", "hostile"]);
    let server = Server::start();
    let goldens = dir.path().join("goldens");
    let output = goldgate(dir.path(), &server)
        .env_remove("GITHUB_TOKEN")
        .args(["run", "--comment", "--agent-url"])
        .arg(format!("http://{}/turn", server.addr))
        .arg(&goldens)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("comment")).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains("GITHUB_TOKEN"), "{}", lines[0]);
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.starts_with("POST /turn")),
        "{:#?}",
        server.requests()
    );
}

#[test]
fn hostile_agent_text_is_inert_and_a_huge_reply_is_cut_below_the_limit() {
    let dir = workspace(&["order_lookup", "hostile", "hostile_error"]);
    let server = Server::start();
    let ran = run(dir.path(), &server, &["--comment", "--retries", "0"]);
    assert_eq!(ran.code, Some(2), "an error of the run: {}", ran.stderr);
    let comments = server.comments();
    let body = comments[0]["body"].as_str().unwrap();

    assert!(
        body.chars().count() < 65_536 && body.len() < 65_536,
        "{}",
        body.len()
    );
    assert!(
        body.contains("more characters in the JSON report"),
        "the cut is not said"
    );

    let mut in_code_block = false;
    let mut code_text = String::new();
    let mut footer_link = None;
    let mut html = Vec::new();
    let mut prose = String::new();
    for event in Parser::new_ext(body, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) => in_code_block = true,
            Event::End(TagEnd::CodeBlock) => in_code_block = false,
            Event::Text(text) if in_code_block => code_text.push_str(&text),
            Event::Text(text) => {
                assert!(!text.contains("@octocat"), "a mention outside code: {text}");
                assert!(!text.contains("@acme/security"), "a team mention: {text}");
                assert!(!text.contains("#1"), "a reference: {text}");
                prose.push_str(&text);
            }
            Event::Html(text) | Event::InlineHtml(text) => html.push(text.to_string()),
            Event::Start(Tag::Link { dest_url, .. }) => {
                assert!(!in_code_block);
                assert!(!dest_url.contains("evil"), "a link from agent text");
                footer_link = Some(dest_url.to_string());
            }
            _ => {}
        }
    }
    // Every fence closed: the run link after the last one is a real link.
    assert_eq!(
        footer_link.as_deref(),
        Some("https://github.example/acme/agents/actions/runs/4242")
    );
    assert!(
        code_text.contains("<script>alert('pwned')</script>"),
        "shown as code"
    );
    assert!(
        code_text.contains("```\n````"),
        "the fences in the reply are shown verbatim"
    );
    for tag in &html {
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
    // Text events may split at escapes: the prose as a whole holds no mention either.
    assert!(
        !prose.contains("@octocat") && !prose.contains("#1"),
        "{prose}"
    );
    // The error of the run, quoted from the agent, reads as text and does nothing.
    assert!(prose.contains("<script>alert(1)</script>"), "{prose}");
    assert!(prose.contains("[click](https:"), "{prose}");
    let opened = body.matches("<details>").count();
    assert_eq!(opened, 2);
    assert_eq!(
        body.matches("</details>").count() - 1,
        opened,
        "the reply's own </details> is inside code"
    );
}

#[test]
fn a_body_over_the_limit_keeps_whole_blocks_and_says_what_it_left_out() {
    let names: Vec<String> = (1..=60).map(|i| format!("hostile_{i:02}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let dir = workspace(&names);
    let server = Server::start();
    let ran = run(dir.path(), &server, &["--comment"]);
    assert_eq!(ran.code, Some(1), "{}", ran.stderr);
    let comments = server.comments();
    assert_eq!(comments.len(), 1, "{}", ran.stderr);
    let body = comments[0]["body"].as_str().unwrap();
    assert!(body.len() < 65_536, "{}", body.len());
    assert!(body.len() > 50_000, "the budget is used: {}", body.len());
    assert!(
        body.contains("failing cases. The JSON report has everything."),
        "no note"
    );

    let (mut opened, mut closed, mut in_code_block, mut last_link) = (0, 0, false, None);
    for event in Parser::new_ext(body, Options::ENABLE_TABLES) {
        match event {
            Event::Html(html) if html.starts_with("<details>") => opened += 1,
            Event::Html(html) if html.starts_with("</details>") => closed += 1,
            Event::Start(Tag::CodeBlock(_)) => in_code_block = true,
            Event::End(TagEnd::CodeBlock) => in_code_block = false,
            Event::Start(Tag::Link { dest_url, .. }) if !in_code_block => {
                last_link = Some(dest_url.to_string())
            }
            _ => {}
        }
    }
    assert!(opened > 5 && opened < 60, "{opened} cases shown");
    assert_eq!(opened, closed, "a <details> left open");
    assert!(!in_code_block);
    assert!(
        last_link.is_some_and(|l| l.ends_with("/actions/runs/4242")),
        "the footer survived"
    );
}

#[test]
fn the_step_summary_outputs_and_annotations_are_written() {
    let dir = workspace(&["order_lookup", "hostile"]);
    let server = Server::start();
    let ran = run(dir.path(), &server, &[]);
    assert_eq!(ran.code, Some(1), "{}", ran.stderr);

    let summary = fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(summary.starts_with(MARKER), "{summary}");
    assert!(
        summary.contains("### goldgate: ❌ 1 of 2 cases failed"),
        "{summary}"
    );
    assert!(summary.contains("<code>hostile</code>"), "{summary}");
    assert_eq!(
        fs::read_to_string(dir.path().join("output.txt")).unwrap(),
        "pass-rate=50.0\npassed=1\nfailed=1\nregressed=false\nreport=report.json\n"
    );

    // The line of the failing turn in its golden, the path relative to the workspace although
    // the goldens were named by their absolute path.
    let golden = fs::read_to_string(dir.path().join("goldens/orders.yaml")).unwrap();
    let line = golden
        .lines()
        .position(|l| l.contains("Tell @octocat"))
        .unwrap()
        + 1;
    let annotations: Vec<&str> = ran.stdout.lines().filter(|l| l.starts_with("::")).collect();
    assert_eq!(annotations.len(), 1, "{}", ran.stdout);
    let expected = format!(
        "::error file=goldens/orders.yaml,line={line},title=goldgate%3A hostile turn 1 failed::"
    );
    assert!(annotations[0].starts_with(&expected), "{}", annotations[0]);
    assert!(!annotations[0].contains('\x1b'));
    // No comment without --comment.
    assert!(server.comments().is_empty());
}

#[test]
fn goldgate_report_renders_markdown_from_a_saved_report() {
    let dir = workspace(&["order_lookup", "hostile"]);
    let server = Server::start();
    let ran = run(dir.path(), &server, &[]);
    assert_eq!(ran.code, Some(1), "{}", ran.stderr);
    let output = Command::cargo_bin("goldgate")
        .unwrap()
        .current_dir(dir.path())
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_OUTPUT")
        .args(["report", "report.json", "--markdown", "summary-again.md"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "the report's verdict");
    let again = fs::read_to_string(dir.path().join("summary-again.md")).unwrap();
    let summary = fs::read_to_string(dir.path().join("summary.md")).unwrap();
    // The same Markdown, but for the run link (no workflow run around `report` here).
    let strip = |text: &str| {
        text.lines()
            .filter(|l| !l.starts_with("<sub>"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&again), strip(&summary));
}
