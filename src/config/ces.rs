//! `agent: { ces: { app, deployment, entry_agent, base_url, api_version, quota_project,
//! platform } }`: a CX Agent Studio app (`ces.googleapis.com`) as the agent under test, turn by
//! turn, or with `platform` through its own evaluations ([`platform`]).
//!
//! Resource names are checked for their shape here, so that a mistyped `app` is an error with
//! its line before any request is sent; `deployment` and `entry_agent` may be written as short
//! ids and are completed under the app.

pub mod platform;

use super::http::optional_url;
use crate::diagnostic::{Code, Diagnostics};
use crate::yaml::{Fields, Node};

/// The public endpoint; `base_url` replaces it (regional endpoints, loopback tests).
pub const DEFAULT_BASE_URL: &str = "https://ces.googleapis.com";
/// Sessions have the same shape in v1 and v1beta: v1 is the stable one.
pub const DEFAULT_API_VERSION: &str = "v1";
/// Evaluations exist only in v1beta: the version of platform mode.
pub const PLATFORM_API_VERSION: &str = "v1beta";

#[derive(Clone, Debug, PartialEq)]
pub struct CesConfig {
    /// `projects/P/locations/L/apps/A`.
    pub app: String,
    /// `projects/P/locations/L/apps/A/deployments/D`, when the golden runs a deployment.
    pub deployment: Option<String>,
    /// `projects/P/locations/L/apps/A/agents/G`, when the session starts elsewhere than the
    /// root agent.
    pub entry_agent: Option<String>,
    /// With `${VAR}` still unexpanded: expanded when the agent is built.
    pub base_url: Option<String>,
    pub api_version: String,
    /// Sent as `x-goog-user-project`, the project billed for the quota.
    pub quota_project: Option<String>,
    /// Run the goldens as the app's own evaluations (`platform:`), not turn by turn.
    pub platform: Option<platform::PlatformConfig>,
}

pub(crate) fn parse_agent(node: &Node, path: &str, diags: &mut Diagnostics) -> Option<CesConfig> {
    let mut fields = Fields::of(node, path, diags)?;
    let app_node = fields.take("app");
    let app = match app_node {
        Some(n) => resource(n, &format!("{path}.app"), None, diags),
        None => {
            diags
                .at(node)
                .error(Code::G102, "missing `app`: the app's resource name")
                .field(path)
                .hint("e.g. `app: projects/my-project/locations/us/apps/my-app`");
            None
        }
    };
    let child =
        |fields: &mut Fields, key: &'static str, collection: &str, diags: &mut Diagnostics| {
            let node = fields.take(key)?;
            let field = format!("{path}.{key}");
            match &app {
                Some(app) => resource(node, &field, Some((app, collection)), diags),
                None => None,
            }
        };
    let deployment = child(&mut fields, "deployment", "deployments", diags);
    let entry_agent = child(&mut fields, "entry_agent", "agents", diags);
    let base_url = optional_url(&mut fields, "base_url", diags);
    let api_version = match fields.take("api_version") {
        Some(n) => {
            let text = crate::yaml::expect_text(n, &format!("{path}.api_version"), diags)?;
            if !["v1", "v1beta"].contains(&text.as_str()) {
                diags
                    .at(n)
                    .error(Code::G101, format!("unknown API version `{text}`"))
                    .field(format!("{path}.api_version"))
                    .hint(crate::diagnostic::suggestion(&text, &["v1", "v1beta"]));
                return None;
            }
            text
        }
        None => DEFAULT_API_VERSION.to_owned(),
    };
    let quota_project = fields.string("quota_project", diags);
    let platform = fields
        .take("platform")
        .and_then(|n| platform::parse(n, &format!("{path}.platform"), diags));
    let api_version = match (&platform, node.get("api_version")) {
        (Some(_), Some(n)) if api_version != PLATFORM_API_VERSION => {
            let message = format!(
                "platform evaluations exist only in {PLATFORM_API_VERSION}, not {api_version}"
            );
            diags
                .at(n)
                .error(Code::G101, message)
                .field(format!("{path}.api_version"))
                .hint("leave `api_version` out with `platform`");
            return None;
        }
        (Some(_), _) => PLATFORM_API_VERSION.to_owned(),
        (None, _) => api_version,
    };
    fields.finish(diags);
    Some(CesConfig {
        app: app?,
        deployment,
        entry_agent,
        base_url,
        api_version,
        quota_project,
        platform,
    })
}

/// A resource name: the app's (`projects/P/locations/L/apps/A`), or under `parent` in
/// `collection`, written whole or as its last id.
fn resource(
    node: &Node,
    field: &str,
    parent: Option<(&String, &str)>,
    diags: &mut Diagnostics,
) -> Option<String> {
    let text = crate::yaml::expect_text(node, field, diags)?;
    let text = text.trim().trim_matches('/').to_owned();
    let is_id = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    let parts: Vec<&str> = text.split('/').collect();
    let (full, example) = match parent {
        None => (
            matches!(parts.as_slice(), ["projects", p, "locations", l, "apps", a]
                if is_id(p) && is_id(l) && is_id(a))
            .then(|| text.clone()),
            "projects/my-project/locations/us/apps/my-app".to_owned(),
        ),
        Some((app, collection)) => {
            let full = if is_id(&text) {
                Some(format!("{app}/{collection}/{text}"))
            } else {
                text.strip_prefix(&format!("{app}/{collection}/"))
                    .filter(|id| is_id(id))
                    .map(|_| text.clone())
            };
            (full, format!("{app}/{collection}/ID, or the ID alone"))
        }
    };
    if full.is_none() {
        diags
            .at(node)
            .error(
                Code::G101,
                format!("`{text}` is not a resource name of the expected shape"),
            )
            .field(field)
            .hint(format!("expected {example}"));
    }
    full
}
