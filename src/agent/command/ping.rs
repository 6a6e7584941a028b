//! The start-up ping of a command agent's process: ready once a line with its `id` comes back.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::PING_SESSION;
use super::routes::{RouteGuard, Routes};
use crate::net::{EndpointError, EndpointErrorKind};

/// Sends the start-up ping and waits for a line with its id: any answer means ready. A
/// failure quotes what the process printed on stdout that was no reply, if anything.
pub(super) async fn ping(
    id: u64,
    routes: &Arc<Routes>,
    lines: &mpsc::UnboundedSender<Vec<u8>>,
    timeout: Duration,
    name: &str,
) -> Result<(), EndpointError> {
    let request = serde_json::json!({
        "id": id,
        "ping": true,
        "session": PING_SESSION,
        "conversation": PING_SESSION,
        "turn": 0,
        "input": {},
    });
    let mut line = request.to_string().into_bytes();
    line.push(b'\n');
    let answer = routes.register(id)?;
    let _route = RouteGuard {
        routes: Arc::clone(routes),
        id,
    };
    let _ = lines.send(line);
    let outcome = tokio::time::timeout(timeout, answer).await;
    // Read after the wait: the lines the process printed while goldgate waited.
    let printed = routes
        .ignored()
        .map(|ignored| format!("; {ignored}"))
        .unwrap_or_default();
    match outcome {
        // A reply that is not protocol JSON still shows the agent reads and answers.
        Ok(Ok(
            Ok(_)
            | Err(EndpointError {
                kind: EndpointErrorKind::Protocol,
                ..
            }),
        )) => Ok(()),
        Ok(Ok(Err(error))) => Err(EndpointError::new(
            error.kind,
            format!("before it was ready: {}{printed}", error.message),
        )),
        Ok(Err(_)) => Err(EndpointError::new(
            EndpointErrorKind::Crashed,
            "the agent process's supervisor stopped during start-up",
        )),
        Err(_) => Err(EndpointError::new(
            EndpointErrorKind::Timeout,
            format!(
                "`{name}` did not answer the start-up ping within {timeout:?}: a command agent \
                 must answer each request line, the ping `{{\"id\":{id},\"ping\":true,...}}` \
                 included, with a line carrying the same `id` (raise \
                 `agent.command.startup_timeout` if it is still building){printed}"
            ),
        )),
    }
}
