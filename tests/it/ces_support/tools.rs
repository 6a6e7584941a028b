//! The loopback app's tools, run directly: `GET {app}/tools` and `{app}/toolsets` (paged),
//! `POST {toolset}:retrieveTools`, `GET {app}` (its variable declarations) and
//! `POST {app}:executeTool`, each request checked as the
//! real API would (path, bearer token, `x-goog-user-project`, exactly one of `tool` and
//! `toolsetTool`, not both `variables` and `context`) and answered in its JSON shapes.
//!
//! The tools behave as the ones SCRAPI's own tool tests describe (its project template and the
//! examples in its docs, in the shared corpus): `lookup_account` wants an authenticated session
//! and an account id, `set_session_state` sets variables, `lookup_order` reads an order's status
//! and delivery date from the session's variables, `diagnostic_lookup_tool` finds a service
//! issue, `check_order_status` answers anything.
#![allow(dead_code)] // Only the tool-test binary serves these routes.

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::{APP, Ces, google_error, refused_token, run_session};

/// An OpenAPI toolset: its operation `getOrder` is the tool `orders_getOrder`.
const ORDERS_SCHEMA: &str = "openapi: 3.0.0
info: {title: Orders, version: '1'}
paths:
  /orders/{order_id}:
    get:
      operationId: getOrder
      parameters:
        - {name: order_id, in: path, required: true, schema: {type: string}}
";

/// Every route of the loopback app: tools, toolsets and executions here, sessions in
/// [`run_session`].
pub async fn serve(
    State(ces): State<Ces>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_owned();
    if !path.ends_with(":executeTool") && !path.ends_with(":retrieveTools") && method != Method::GET
    {
        return run_session(State(ces), uri, headers, body).await;
    }
    *ces.requests.lock().unwrap() += 1;
    if let Some(refused) = refused_token(&ces, &headers) {
        return refused;
    }
    let query = uri.query().unwrap_or_default();
    match (method, path.as_str()) {
        // The app itself: its variable declarations, whose defaults tool tests may ask for.
        (Method::GET, p) if p == format!("/v1/{APP}") => Json(json!({
            "name": APP,
            "displayName": "Support",
            "variableDeclarations": [
                {"name": "auth_status", "schema": {"type": "STRING", "default": "guest"}},
                {"name": "customer_tier", "schema": {"type": "STRING", "default": "gold"}},
            ],
        }))
        .into_response(),
        (Method::GET, p) if p == format!("/v1/{APP}/tools") => list_tools(query),
        (Method::GET, p) if p == format!("/v1/{APP}/toolsets") => Json(json!({"toolsets": [
            {"name": format!("{APP}/toolsets/orders"), "displayName": "orders",
             "openApiToolset": {"openApiSchema": ORDERS_SCHEMA}},
            {"name": format!("{APP}/toolsets/crm"), "displayName": "crm",
             "connectorToolset": {"connector": "salesforce"}},
        ]}))
        .into_response(),
        (Method::POST, p) if p == format!("/v1/{APP}/toolsets/crm:retrieveTools") => {
            Json(json!({"tools": [
                {"name": format!("{APP}/toolsets/crm/tools/search_contacts"), "displayName": "crm_search"},
            ]}))
            .into_response()
        }
        (Method::POST, p) if p == format!("/v1/{APP}:executeTool") => {
            execute(&ces, &headers, &body)
        }
        (method, path) => ces.violation(format!("unexpected {method} {path}")),
    }
}

/// Two pages, so that the client must follow `nextPageToken`.
fn list_tools(query: &str) -> Response {
    let tool = |id: &str, name: &str| {
        json!({"name": format!("{APP}/tools/{id}"), "displayName": name,
               "pythonFunction": {"name": name}})
    };
    if query.contains("pageToken=page%2F2") {
        Json(json!({"tools": [
            tool("a91", "set_session_state"),
            tool("b07", "lookup_order"),
            tool("c55", "check_order_status"),
            tool("d12", "diagnostic_lookup_tool"),
            tool("e99", "divide"),
        ]}))
        .into_response()
    } else {
        Json(json!({"tools": [tool("f3c", "lookup_account")], "nextPageToken": "page/2"}))
            .into_response()
    }
}

fn execute(ces: &Ces, headers: &HeaderMap, body: &[u8]) -> Response {
    if headers
        .get("x-goog-user-project")
        .and_then(|v| v.to_str().ok())
        != Some("p")
    {
        return ces.violation("executeTool without x-goog-user-project: p".into());
    }
    let Ok(request) = serde_json::from_slice::<Value>(body) else {
        return ces.violation("the body is not JSON".into());
    };
    let target = match (request.get("tool"), request.get("toolsetTool")) {
        (Some(tool), None) => tool.as_str().unwrap_or_default().to_owned(),
        (None, Some(set)) => format!(
            "{}/tools/{}",
            set["toolset"].as_str().unwrap_or_default(),
            set["toolId"].as_str().unwrap_or_default()
        ),
        _ => return ces.violation(format!("exactly one of tool and toolsetTool: {request}")),
    };
    if request.get("variables").is_some() && request.get("context").is_some() {
        return ces.violation("both variables and context".into());
    }
    let Some(args) = request["args"].as_object() else {
        return ces.violation(format!("args is not an object: {request}"));
    };
    let variables = request["variables"]
        .as_object()
        .or_else(|| request["context"]["state"].as_object())
        .cloned()
        .unwrap_or_default();
    let text = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or_default();
    let (result, updated) = match target.strip_prefix(APP) {
        // The docs' own example looks an account up by customer and reads it without `result`.
        Some("/tools/f3c") if args.contains_key("customer_id") => {
            let account = json!({"account_status": "active", "balance": 12.0});
            return Json(json!({"response": account, "variables": variables})).into_response();
        }
        Some("/tools/f3c") => (lookup_account(text("account_id"), &variables), variables),
        Some("/tools/b07") => {
            let order = lookup_order(text("order_id"), &variables);
            return Json(json!({"response": order, "variables": variables})).into_response();
        }
        Some("/tools/c55") => (json!({"status": "processing"}), variables),
        // A python tool that raises: the API answers with the exception, not a response.
        Some("/tools/e99") => {
            return google_error(
                StatusCode::BAD_REQUEST,
                "FAILED_PRECONDITION",
                "Tool execution failed: ZeroDivisionError: division by zero",
            );
        }
        Some("/tools/d12") => (
            json!({"status": "found", "issue_type": "service outage"}),
            variables,
        ),
        Some("/tools/a91") => {
            let mut updated = variables;
            updated.insert(
                "escalation_reason".into(),
                json!(text("_escalation_reason")),
            );
            (json!({"status": "success"}), updated)
        }
        Some("/toolsets/orders/tools/getOrder") => (
            json!({"order_id": text("order_id"), "status": "shipped", "items": ["kettle", "mug"]}),
            variables,
        ),
        Some("/toolsets/crm/tools/search_contacts") => (json!({"contacts": []}), variables),
        _ => {
            return google_error(
                StatusCode::NOT_FOUND,
                "NOT_FOUND",
                &format!("Tool {target} not found."),
            );
        }
    };
    Json(json!({"response": {"result": result}, "variables": updated})).into_response()
}

/// SCRAPI's docs: an order's status and delivery date are the session's
/// `order_<digits>_status` and `order_<digits>_eta`; an unknown one gets an `agent_action`.
fn lookup_order(order_id: &str, variables: &Map<String, Value>) -> Value {
    let digits: String = order_id.chars().filter(char::is_ascii_digit).collect();
    let status = variables
        .get(&format!("order_{digits}_status"))
        .and_then(Value::as_str);
    match status {
        Some(status) if !digits.is_empty() && status != "not_found" => json!({
            "order_id": order_id,
            "status": status,
            "estimated_delivery": variables.get(&format!("order_{digits}_eta")),
        }),
        _ => json!({"agent_action": "Tell the customer the order was not found."}),
    }
}

/// SCRAPI's example: an account needs an authenticated session and an id.
fn lookup_account(account_id: &str, variables: &Map<String, Value>) -> Value {
    if variables.get("auth_status") != Some(&json!("authenticated")) {
        return json!({"agent_action": "Ask the customer to verify their identity first."});
    }
    if account_id.is_empty() {
        return json!({"agent_action": "Ask the customer for their account number."});
    }
    json!({"status": "success", "account": {"id": account_id, "balance": 42.5, "plans": ["fiber", "tv"]}})
}
