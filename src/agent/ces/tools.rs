//! Tools run directly (SCRAPI tool tests): `POST {base}/{version}/{app}:executeTool` with the
//! tool, its arguments and the session state, answered by `{response, variables}`.
//!
//! Tests name a tool by its display name, as SCRAPI's do; the API wants its resource name. The
//! app's tools and toolsets are listed once, when the first tool test runs, and named as
//! SCRAPI names them: a tool by its display name, an OpenAPI toolset's operation as
//! `{toolset display name}_{operationId}` (read from the toolset's schema), any other toolset's
//! tools by the display names `retrieveTools` gives. A toolset's tool is executed as
//! `toolsetTool: {toolset, toolId}`.
//!
//! The session state is built as SCRAPI builds it: variables as written, a variable written
//! without a value (SCRAPI's list form) from the app's declared default, and every declared
//! default when the test gives no variables (or a context whose `state` is empty). The app's
//! declarations are read with the tools, from the app itself (`variableDeclarations`).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::CesAgent;
use crate::diagnostic::did_you_mean;
use crate::net::{EndpointError, EndpointErrorKind};
use crate::transcript::{Exchange, Reply, ToolCall};

/// What the app declares that tool tests need: its tools by display name (to resource name)
/// and its variables' defaults.
#[derive(Debug, Default)]
pub(super) struct Catalog {
    by_display_name: BTreeMap<String, String>,
    variable_defaults: Map<String, Value>,
}

/// Pages of a list are followed up to this many, against an API that never ends one.
const MAX_PAGES: usize = 100;

impl Catalog {
    fn add(&mut self, tool: &Value) {
        if let (Some(name), Some(display)) = (tool["name"].as_str(), tool["displayName"].as_str()) {
            self.by_display_name
                .insert(display.to_owned(), name.to_owned());
        }
    }

    /// Every tool: (display name, resource name).
    pub(super) fn all(&self) -> impl Iterator<Item = (&str, &str)> {
        self.by_display_name
            .iter()
            .map(|(d, n)| (d.as_str(), n.as_str()))
    }

    fn find(&self, display_name: &str) -> Result<&str, EndpointError> {
        if let Some(name) = self.by_display_name.get(display_name) {
            return Ok(name);
        }
        let names = self.by_display_name.keys().map(String::as_str);
        let hint = match did_you_mean(display_name, names.clone()) {
            Some(near) => format!("did you mean `{near}`?"),
            None if self.by_display_name.is_empty() => "the app lists no tools".to_owned(),
            None => format!("its tools: {}", names.collect::<Vec<_>>().join(", ")),
        };
        Err(EndpointError::new(
            crate::net::EndpointErrorKind::NotFound,
            format!("the app has no tool named `{display_name}` ({hint})"),
        ))
    }
}

impl CesAgent {
    /// Runs the tool of one `execute_tool` input and returns what it gave as the turn's one
    /// tool call, with the session variables it left. Latency is the executeTool round trip.
    pub(super) async fn execute_tool(&self, execution: &Value) -> Result<Exchange, EndpointError> {
        let display_name = execution["tool"].as_str().unwrap_or_default();
        let args = execution.get("args").cloned().unwrap_or(json!({}));
        let catalog = self.tools.get_or_try_init(|| self.catalog()).await?;
        let resource = catalog.find(display_name)?;
        let mut body = Map::new();
        match resource.split_once("/tools/") {
            Some((toolset, tool_id)) if toolset.contains("/toolsets/") => {
                body.insert(
                    "toolsetTool".into(),
                    json!({ "toolset": toolset, "toolId": tool_id }),
                );
            }
            _ => {
                body.insert("tool".into(), json!(resource));
            }
        }
        body.insert("args".into(), args.clone());
        let defaults = &catalog.variable_defaults;
        let given = |key: &str| match execution.get(key) {
            Some(Value::Object(map)) => Some(map.clone()),
            _ => None,
        };
        if let Some(mut context) = given("context") {
            if let Some(Value::Object(state)) = context.get("state") {
                let state = session_state(state, defaults);
                context.insert("state".into(), Value::Object(state));
            }
            body.insert("context".into(), Value::Object(context));
        } else {
            let variables = session_state(&given("variables").unwrap_or_default(), defaults);
            body.insert("variables".into(), Value::Object(variables));
        }
        let path = format!("{}:executeTool", self.config.app);
        let (answer, latency) = self
            .call(&path, Some(Value::Object(body)), Some(self.quota_project()))
            .await?;
        Ok(executed((display_name, resource), args, answer, latency))
    }

    /// The project billed: the configured one, else the app's own, as SCRAPI sends for
    /// executeTool.
    fn quota_project(&self) -> &str {
        self.config.quota_project.as_deref().unwrap_or_else(|| {
            let mut parts = self.config.app.split('/');
            parts.nth(1).unwrap_or_default()
        })
    }

    pub(super) async fn catalog(&self) -> Result<Catalog, EndpointError> {
        let app = &self.config.app;
        let quota = self.config.quota_project.as_deref();
        let (declared, _) = self.call(app, None, quota).await?;
        let mut catalog = Catalog {
            variable_defaults: variable_defaults(&declared),
            ..Catalog::default()
        };
        for tool in self.list(&format!("{app}/tools"), "tools").await? {
            catalog.add(&tool);
        }
        for toolset in self.list(&format!("{app}/toolsets"), "toolsets").await? {
            let name = toolset["name"].as_str().unwrap_or_default();
            match toolset["openApiToolset"]["openApiSchema"].as_str() {
                Some(schema) => {
                    let display = toolset["displayName"].as_str().unwrap_or(name);
                    for operation in operation_ids(schema) {
                        catalog.by_display_name.insert(
                            format!("{display}_{operation}"),
                            format!("{name}/tools/{operation}"),
                        );
                    }
                }
                None => {
                    let path = format!("{name}:retrieveTools");
                    let quota = self.config.quota_project.as_deref();
                    let (answer, _) = self.call(&path, Some(json!({})), quota).await?;
                    for tool in answer["tools"].as_array().into_iter().flatten() {
                        catalog.add(tool);
                    }
                }
            }
        }
        Ok(catalog)
    }

    /// Every item of a paged list (`{key: [...], nextPageToken}`).
    pub(super) async fn list(&self, path: &str, key: &str) -> Result<Vec<Value>, EndpointError> {
        let mut items = Vec::new();
        let mut page_token: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let paged = match &page_token {
                Some(token) => format!("{path}?pageToken={}", encode(token)),
                None => path.to_owned(),
            };
            let quota = self.config.quota_project.as_deref();
            let (answer, _) = self.call(&paged, None, quota).await?;
            if let Some(Value::Array(page)) = answer.get(key) {
                items.extend(page.iter().cloned());
            }
            page_token = answer["nextPageToken"]
                .as_str()
                .filter(|t| !t.is_empty())
                .map(str::to_owned);
            if page_token.is_none() {
                return Ok(items);
            }
        }
        Err(protocol(format!(
            "listing {path} did not end after {MAX_PAGES} pages"
        )))
    }
}

/// The state a tool runs with: each variable as given, one given without a value at the app's
/// default (left out when the app declares none), and every default when nothing is given.
fn session_state(given: &Map<String, Value>, defaults: &Map<String, Value>) -> Map<String, Value> {
    let mut state = Map::new();
    for (name, value) in given {
        let value = match value {
            Value::Null => defaults.get(name),
            value => Some(value),
        };
        if let Some(value) = value {
            state.insert(name.clone(), value.clone());
        }
    }
    if state.is_empty() {
        defaults.clone()
    } else {
        state
    }
}

/// Each declared variable's default (`schema.default`, else its `value`), from an `App`.
fn variable_defaults(app: &Value) -> Map<String, Value> {
    let declarations = app["variableDeclarations"].as_array().into_iter().flatten();
    declarations
        .filter_map(|declaration| {
            let name = declaration["name"].as_str()?;
            let default = [&declaration["schema"]["default"], &declaration["value"]]
                .into_iter()
                .find(|v| !v.is_null())?;
            Some((name.to_owned(), default.clone()))
        })
        .collect()
}

/// The operationIds of an OpenAPI schema (YAML or JSON), in the order written.
fn operation_ids(schema: &str) -> Vec<String> {
    let Ok(schema) = crate::yaml::parse(schema).map(|root| root.to_json()) else {
        return Vec::new();
    };
    let paths = schema["paths"].as_object().into_iter().flatten();
    paths
        .filter_map(|(_, methods)| methods.as_object())
        .flat_map(|methods| methods.values())
        .filter_map(|operation| operation["operationId"].as_str())
        .map(str::to_owned)
        .collect()
}

/// A page token in a query string: the characters a URL keeps as they are, the rest escaped.
fn encode(token: &str) -> String {
    token
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The exchange of one execution: the tool as the turn's one call, with what it returned.
fn executed(
    (display_name, resource): (&str, &str),
    args: Value,
    answer: Value,
    latency: Duration,
) -> Exchange {
    let variables = match answer.get("variables") {
        Some(Value::Object(vars)) => Some(vars.clone()),
        _ => None,
    };
    let response = answer.get("response").cloned().unwrap_or(Value::Null);
    Exchange {
        reply: Reply {
            tool_calls: vec![ToolCall {
                name: display_name.to_owned(),
                args,
                response: Some(response),
                resource: Some(resource.to_owned()),
            }],
            variables,
            ..Reply::default()
        },
        latency,
        ttft: None,
    }
}

fn protocol(message: String) -> EndpointError {
    EndpointError::new(EndpointErrorKind::Protocol, message)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Catalog, encode, operation_ids, session_state, variable_defaults};

    #[test]
    fn state_is_built_as_scrapi_builds_it() {
        let app = json!({"variableDeclarations": [
            {"name": "auth_status", "schema": {"type": "STRING", "default": "guest"}},
            {"name": "tier", "value": "gold"},
            {"name": "undeclared_default", "schema": {"type": "STRING"}},
        ]});
        let defaults = variable_defaults(&app);
        assert_eq!(
            json!(defaults),
            json!({"auth_status": "guest", "tier": "gold"})
        );
        let state =
            |given: serde_json::Value| json!(session_state(given.as_object().unwrap(), &defaults));
        // Written values as they are; a name without one at the app's default.
        assert_eq!(
            state(json!({"auth_status": "authenticated", "tier": null, "nope": null})),
            json!({"auth_status": "authenticated", "tier": "gold"})
        );
        // Nothing given: every default.
        assert_eq!(state(json!({})), json!(defaults));
    }

    #[test]
    fn operations_are_read_from_a_yaml_schema() {
        let schema = "openapi: 3.0.0\npaths:\n  /orders/{id}:\n    get:\n      operationId: getOrder\n    delete:\n      operationId: cancelOrder\n  /health:\n    get: {}\n";
        assert_eq!(operation_ids(schema), ["getOrder", "cancelOrder"]);
        assert!(operation_ids(": not yaml :").is_empty());
    }

    #[test]
    fn an_unknown_tool_names_the_near_miss() {
        let mut catalog = Catalog::default();
        catalog
            .add(&serde_json::json!({"name": "apps/a/tools/t1", "displayName": "lookup_account"}));
        assert_eq!(catalog.find("lookup_account").unwrap(), "apps/a/tools/t1");
        let error = catalog.find("lookup_acount").unwrap_err().message;
        assert!(error.contains("did you mean `lookup_account`"), "{error}");
    }

    #[test]
    fn page_tokens_are_escaped() {
        assert_eq!(encode("a b/c=="), "a%20b%2Fc%3D%3D");
    }
}
