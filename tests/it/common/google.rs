//! What the loopback fakes of Google's APIs (CES sessions, CES evaluations) share: reading the
//! bearer token of a request, and answering in Google's error shape.
#![allow(dead_code)] // Only the CES tests fake Google's APIs.

use axum::Json;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The bearer token `headers` carry, or "" when they carry none.
pub fn bearer_token(headers: &HeaderMap) -> &str {
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default()
}

/// Google's error shape: `{"error":{"code","message","status"}}`, with `status`.
pub fn google_error(status: StatusCode, name: &str, message: &str) -> Response {
    let body = json!({"error": {"code": status.as_u16(), "message": message, "status": name}});
    (status, Json(body)).into_response()
}
