//! The sticky PR comment: one per suite, found again by its hidden marker and edited in place
//! on every run, so a pull request never collects a stack of stale reports.
//!
//! Calls GitHub's REST API through octocrab over goldgate's own HTTP client (one TLS stack),
//! at `GITHUB_API_URL`. The existing comments are read a page of 100 at a time until the
//! marker is found; only a comment whose body *starts* with the marker counts, so a reviewer
//! quoting the bot does not get their comment overwritten.
//!
//! Commenting is a courtesy, never the verdict: every way it can fail is a [`NotPosted`] that
//! says in one line why, and the caller keeps the test verdict as the exit code. That line
//! quotes GitHub, a proxy or the network stack: the run's secrets are masked out of it, and
//! the URLs reqwest's errors name (which may carry credentials) are left out.

use std::fmt;
use std::time::Duration;

use octocrab::Octocrab;
use octocrab::models::CommentId;
use octocrab::models::issues::Comment;

use super::context::{Context, PR_VARIABLE, Repository, Token};
use crate::secrets::Secrets;

/// Longest the whole exchange with GitHub may take before the run goes on without it.
const TIME_LIMIT: Duration = Duration::from_secs(60);

/// Where the comment goes and who posts it.
#[derive(Debug)]
pub struct Target {
    pub api_url: String,
    pub repository: Repository,
    pub pull_request: u64,
    pub token: Token,
}

impl Target {
    /// The target named by the environment, or why there is none.
    pub fn from_context(context: &Context) -> Result<Target, NotPosted> {
        let repository = context.repository.clone().ok_or(NotPosted::NoRepository)?;
        let pull_request = context
            .pull_request
            .ok_or_else(|| NotPosted::NotPullRequest {
                event: context.event_name.clone(),
            })?;
        let token = context.token.clone().ok_or(NotPosted::NoToken)?;
        Ok(Target {
            api_url: context.api_url.clone(),
            repository,
            pull_request,
            token,
        })
    }
}

/// What was done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Posted {
    Created { url: String },
    Updated { url: String },
}

/// Why no comment was posted. Each renders as one line that names the cause and the fix, and
/// never the token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotPosted {
    NoToken,
    NoRepository,
    NotPullRequest {
        event: Option<String>,
    },
    /// 401, 403 or 404: the token may not write here (a fork's pull request gets a read-only
    /// token) or cannot see the repository.
    Refused {
        status: u16,
        message: String,
    },
    /// Anything else: the network, a server error after retries, an unexpected answer.
    Failed(String),
}

impl fmt::Display for NotPosted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotPosted::NoToken => f.write_str(
                "no token: set GITHUB_TOKEN (the action passes its `github-token` input) with `pull-requests: write`",
            ),
            NotPosted::NoRepository => f.write_str("GITHUB_REPOSITORY is not set to owner/name"),
            NotPosted::NotPullRequest { event } => write!(
                f,
                "this run is not for a pull request (event: {}); set {PR_VARIABLE} to name one",
                event.as_deref().unwrap_or("none")
            ),
            NotPosted::Refused { status, message } => write!(
                f,
                "GitHub refused (HTTP {status}: {message}): the token may not write to this pull request; a pull request from a fork gets a read-only token (see goldgate's docs/github.md: pull requests from forks), otherwise grant `pull-requests: write`"
            ),
            NotPosted::Failed(message) => write!(f, "{message}"),
        }
    }
}

/// Creates this suite's comment on the pull request, or edits the one `marker` finds.
/// `client` is goldgate's HTTP client ([`crate::net::http_client`]); `secrets` are masked out
/// of why it failed (the token and the API URL's credentials join them).
pub async fn upsert(
    client: reqwest::Client,
    target: &Target,
    marker: &str,
    body: &str,
    secrets: &Secrets,
) -> Result<Posted, NotPosted> {
    secrets.add(target.token.expose());
    secrets.add_url(&target.api_url);
    let exchange = async {
        let github = Octocrab::builder()
            .base_uri(target.api_url.as_str())
            .map_err(|e| {
                NotPosted::Failed(format!("GITHUB_API_URL is not a URL: {}", target.api_url))
                    .with_source(e)
            })?
            .personal_token(target.token.expose().to_owned())
            .build_with_reqwest(client)
            .map_err(|e| failed("cannot set up the GitHub client", e))?;
        let issues = github.issues(&target.repository.owner, &target.repository.name);
        match find(&github, target, marker).await? {
            Some(id) => issues
                .update_comment(id, body)
                .await
                .map(|c| Posted::Updated {
                    url: c.html_url.to_string(),
                }),
            None => issues
                .create_comment(target.pull_request, body)
                .await
                .map(|c| Posted::Created {
                    url: c.html_url.to_string(),
                }),
        }
        .map_err(classify)
    };
    match tokio::time::timeout(TIME_LIMIT, exchange).await {
        Ok(posted) => posted,
        Err(_) => Err(NotPosted::Failed(format!(
            "GitHub did not answer within {} s",
            TIME_LIMIT.as_secs()
        ))),
    }
    .map_err(|e| e.masked(secrets))
}

/// The first comment on the pull request whose body starts with `marker`, page by page.
async fn find(
    github: &Octocrab,
    target: &Target,
    marker: &str,
) -> Result<Option<CommentId>, NotPosted> {
    let is_ours = |c: &Comment| c.body.as_deref().is_some_and(|b| b.starts_with(marker));
    let mut page = github
        .issues(&target.repository.owner, &target.repository.name)
        .list_comments(target.pull_request)
        .per_page(100)
        .send()
        .await
        .map_err(classify)?;
    loop {
        if let Some(comment) = page.items.iter().find(|c| is_ours(c)) {
            return Ok(Some(comment.id));
        }
        match github
            .get_page::<Comment>(&page.next)
            .await
            .map_err(classify)?
        {
            Some(next) => page = next,
            None => return Ok(None),
        }
    }
}

/// An octocrab error as the one line the user sees.
fn classify(error: octocrab::Error) -> NotPosted {
    match &error {
        octocrab::Error::GitHub { source, .. } => {
            let status = source.status_code.as_u16();
            let message = source.message.clone();
            if matches!(status, 401 | 403 | 404) {
                NotPosted::Refused { status, message }
            } else {
                NotPosted::Failed(format!("GitHub answered HTTP {status}: {message}"))
            }
        }
        _ => failed("the GitHub API call failed", error),
    }
}

fn failed(what: &str, error: impl std::error::Error + 'static) -> NotPosted {
    NotPosted::Failed(what.to_owned()).with_source(error)
}

impl NotPosted {
    /// Adds the causes of `error` (each level once; octocrab's own `Display` of a variant
    /// names only the variant), without the URL a reqwest error names: it may carry
    /// credentials (`GITHUB_API_URL`'s user and password), and every level above quotes it.
    fn with_source(self, error: impl std::error::Error + 'static) -> NotPosted {
        let NotPosted::Failed(mut message) = self else {
            return self;
        };
        let top: &(dyn std::error::Error + 'static) = &error;
        let causes = || std::iter::successors(Some(top), |e| e.source());
        let urls: Vec<String> = causes()
            .filter_map(|e| e.downcast_ref::<reqwest::Error>()?.url())
            .map(|url| format!(" for url ({url})"))
            .collect();
        for error in causes() {
            let mut text = error.to_string();
            for url in &urls {
                text = text.replace(url.as_str(), "");
            }
            // snafu variants without a message print their name only; a backtrace is noise.
            let text = text.split("\n").next().unwrap_or_default();
            if !text.is_empty() && !message.contains(text) {
                message.push_str(": ");
                message.push_str(text);
            }
        }
        NotPosted::Failed(message)
    }

    fn masked(self, secrets: &Secrets) -> NotPosted {
        match self {
            NotPosted::Refused { status, message } => NotPosted::Refused {
                status,
                message: secrets.mask(&message).into_owned(),
            },
            NotPosted::Failed(message) => NotPosted::Failed(secrets.mask(&message).into_owned()),
            other => other,
        }
    }
}
