//! What GitHub Actions tells a step through its environment: the repository, the pull request,
//! the run, the API to call, the workspace and the files a step writes its results to.
//!
//! Read once, from a lookup function, so that tests describe an environment without touching
//! the process's. Every variable is optional: outside Actions the context is simply empty.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The public API, when `GITHUB_API_URL` is not set.
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// The variable that names the pull request when the event does not (a `workflow_run` from a
/// fork: GitHub leaves its `pull_requests` empty).
pub const PR_VARIABLE: &str = "GOLDGATE_PR";

/// The step's view of GitHub Actions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Context {
    /// `GITHUB_ACTIONS=true`: workflow commands (annotations) are understood.
    pub actions: bool,
    /// `GITHUB_REPOSITORY`, as owner and name.
    pub repository: Option<Repository>,
    /// `GITHUB_EVENT_NAME`: `pull_request`, `push`, `workflow_run`, ...
    pub event_name: Option<String>,
    /// The pull request this run is for, if any (see [`Context::from_lookup`]).
    pub pull_request: Option<u64>,
    /// The workflow run to link to.
    pub run_url: Option<String>,
    /// `GITHUB_API_URL`, without a trailing slash; GitHub Enterprise Server keeps its
    /// `/api/v3` path.
    pub api_url: String,
    /// `GITHUB_WORKSPACE`: annotation paths are relative to it.
    pub workspace: Option<PathBuf>,
    /// `GITHUB_STEP_SUMMARY`: Markdown appended here shows on the run's page.
    pub step_summary: Option<PathBuf>,
    /// `GITHUB_OUTPUT`: the step's outputs.
    pub output: Option<PathBuf>,
    /// `GITHUB_TOKEN`, or `GH_TOKEN`.
    pub token: Option<Token>,
}

/// `owner/name`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repository {
    pub owner: String,
    pub name: String,
}

impl fmt::Display for Repository {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

/// A token. It never prints: `Debug` and [`Token::redact`] show `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    pub fn new(secret: String) -> Self {
        Self(secret)
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

/// The most of an event payload read: GitHub caps a webhook's payload at 25 MB.
const MAX_EVENT_BYTES: u64 = 32 * 1024 * 1024;

/// The event payload at `path` when it is a regular file of at most [`MAX_EVENT_BYTES`]:
/// read on every run, so that `/dev/zero` or a named pipe there can neither fill memory nor
/// hang the run (a pipe is never opened). Otherwise none, as for an unreadable one.
fn read_event(path: &Path) -> Option<Vec<u8>> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_EVENT_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    let file = std::fs::File::open(path).ok()?;
    std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_EVENT_BYTES), &mut bytes).ok()?;
    Some(bytes)
}

impl Context {
    /// From the process's environment.
    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// From `lookup` (a variable's value by name; empty counts as unset). The pull request
    /// is, in order: [`PR_VARIABLE`]; the event payload at `GITHUB_EVENT_PATH`
    /// (`pull_request.number`, an issue comment's PR, a `workflow_run`'s first PR); then
    /// `GITHUB_REF` when it is `refs/pull/N/merge` or `refs/pull/N/head`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let event = var("GITHUB_EVENT_PATH")
            .and_then(|path| read_event(Path::new(&path)))
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok());
        let repository = var("GITHUB_REPOSITORY").and_then(|r| {
            let (owner, name) = r.split_once('/')?;
            (!owner.is_empty() && !name.is_empty() && !name.contains('/')).then(|| Repository {
                owner: owner.to_owned(),
                name: name.to_owned(),
            })
        });
        let pull_request = var(PR_VARIABLE)
            .and_then(|n| n.trim().parse().ok())
            .or_else(|| event.as_ref().and_then(event_pull_request))
            .or_else(|| var("GITHUB_REF").as_deref().and_then(ref_pull_request));
        let run_url = event
            .as_ref()
            .and_then(|e| {
                e.pointer("/workflow_run/html_url")?
                    .as_str()
                    .map(str::to_owned)
            })
            .or_else(|| {
                Some(format!(
                    "{}/{}/actions/runs/{}",
                    var("GITHUB_SERVER_URL")?.trim_end_matches('/'),
                    repository.as_ref()?,
                    var("GITHUB_RUN_ID")?
                ))
            });
        Self {
            actions: var("GITHUB_ACTIONS").as_deref() == Some("true"),
            event_name: var("GITHUB_EVENT_NAME"),
            pull_request,
            run_url,
            api_url: var("GITHUB_API_URL")
                .map(|url| url.trim_end_matches('/').to_owned())
                .unwrap_or_else(|| DEFAULT_API_URL.to_owned()),
            workspace: var("GITHUB_WORKSPACE").map(PathBuf::from),
            step_summary: var("GITHUB_STEP_SUMMARY").map(PathBuf::from),
            output: var("GITHUB_OUTPUT").map(PathBuf::from),
            token: var("GITHUB_TOKEN").or_else(|| var("GH_TOKEN")).map(Token),
            repository,
        }
    }
}

impl Context {
    /// `file`, as a report names it (relative to the project `root`, or absolute), relative
    /// to the workspace with `/` separators: the form annotations need and the one a reviewer
    /// reads. Unchanged outside Actions or outside the workspace.
    pub fn workspace_path(&self, file: &str, root: &Path) -> String {
        self.workspace
            .as_deref()
            .and_then(|workspace| relative_to(&root.join(file), workspace))
            .unwrap_or_else(|| file.to_owned())
    }
}

/// `path` relative to `workspace`; `None` when it lies outside. Symbolic links are resolved
/// on both sides when they exist (macOS runners' `/var` is `/private/var`), and `.`/`..`
/// lexically otherwise.
pub(crate) fn relative_to(path: &Path, workspace: &Path) -> Option<String> {
    let resolve = |p: &Path| {
        p.canonicalize()
            .unwrap_or_else(|_| crate::project::lexical(p))
    };
    let relative = resolve(path)
        .strip_prefix(resolve(workspace))
        .ok()?
        .to_path_buf();
    let parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(parts.join("/"))
}

/// The pull request an event payload is about.
fn event_pull_request(event: &Value) -> Option<u64> {
    event
        .pointer("/pull_request/number")
        .and_then(Value::as_u64)
        .or_else(|| {
            // An issue comment on a pull request: the issue is the pull request.
            let issue = event.get("issue")?;
            issue.get("pull_request")?;
            issue.get("number")?.as_u64()
        })
        .or_else(|| {
            event
                .pointer("/workflow_run/pull_requests/0/number")
                .and_then(Value::as_u64)
        })
}

/// `refs/pull/123/merge` -> 123.
fn ref_pull_request(git_ref: &str) -> Option<u64> {
    let rest = git_ref.strip_prefix("refs/pull/")?;
    let (number, kind) = rest.split_once('/')?;
    matches!(kind, "merge" | "head")
        .then(|| number.parse().ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn context(vars: &[(&str, &str)]) -> Context {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Context::from_lookup(|name| vars.get(name).cloned())
    }

    #[test]
    fn outside_actions_everything_is_absent() {
        let context = context(&[]);
        assert!(!context.actions);
        assert_eq!(context.pull_request, None);
        assert_eq!(context.api_url, DEFAULT_API_URL);
        assert_eq!(context.run_url, None);
    }

    #[test]
    fn the_pull_request_comes_from_the_event_then_the_ref() {
        let dir = tempfile::tempdir().unwrap();
        let event = dir.path().join("event.json");
        std::fs::write(
            &event,
            r#"{"action":"synchronize","pull_request":{"number":42}}"#,
        )
        .unwrap();
        let event = event.to_str().unwrap();
        let from_event = context(&[
            ("GITHUB_EVENT_PATH", event),
            ("GITHUB_REF", "refs/pull/7/merge"),
        ]);
        assert_eq!(from_event.pull_request, Some(42));
        assert_eq!(
            context(&[("GITHUB_REF", "refs/pull/7/merge")]).pull_request,
            Some(7)
        );
        assert_eq!(
            context(&[("GITHUB_REF", "refs/heads/main")]).pull_request,
            None
        );
        assert_eq!(
            context(&[(PR_VARIABLE, "9"), ("GITHUB_EVENT_PATH", event)]).pull_request,
            Some(9)
        );
    }

    #[test]
    fn enterprise_api_urls_keep_their_path_and_the_run_is_linked() {
        let context = context(&[
            ("GITHUB_API_URL", "https://ghe.example/api/v3/"),
            ("GITHUB_SERVER_URL", "https://ghe.example"),
            ("GITHUB_REPOSITORY", "acme/agents"),
            ("GITHUB_RUN_ID", "1234"),
        ]);
        assert_eq!(context.api_url, "https://ghe.example/api/v3");
        assert_eq!(
            context.run_url.as_deref(),
            Some("https://ghe.example/acme/agents/actions/runs/1234")
        );
    }

    #[test]
    fn paths_become_relative_to_the_workspace() {
        let context = Context {
            workspace: Some(PathBuf::from("/work/repo")),
            ..Context::default()
        };
        let root = Path::new("/work/repo/sub");
        assert_eq!(
            context.workspace_path("../evals/./a.yaml", root),
            "evals/a.yaml"
        );
        assert_eq!(context.workspace_path("/work/repo/b.yaml", root), "b.yaml");
        assert_eq!(
            context.workspace_path("/elsewhere/c.yaml", root),
            "/elsewhere/c.yaml"
        );
        assert_eq!(Context::default().workspace_path("d.yaml", root), "d.yaml");
    }

    #[test]
    fn a_token_never_shows() {
        let context = context(&[("GITHUB_TOKEN", "ghs_secret")]);
        let token = context.token.unwrap();
        assert_eq!(format!("{token:?}"), "Token(***)");
    }
}
