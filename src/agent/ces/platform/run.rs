//! `runEvaluation`, the poll of the evaluation run it starts, its cancellation, and reading
//! its results back.
//!
//! The long-running operation `runEvaluation` returns names the evaluation run in its
//! metadata (`metadata.evaluationRun`); until it does, the operation is polled. The run is then
//! polled (`GET .../evaluationRuns/*`) with a doubling wait, 200 ms up to 10 s, until its state
//! is COMPLETED, ERROR or CANCELLED; a stop or the deadline cancels the operation
//! (`POST {operation}:cancel`). Results are the run's `evaluationResults`, each read with
//! `GET`, or, when the run lists none, each evaluation's results of this run.

use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::results;
use crate::agent::ces::CesAgent;
use crate::config::ces::platform::PlatformConfig;
use crate::model::Case;
use crate::results::CaseResult;

const FIRST_POLL: Duration = Duration::from_millis(200);
const MOST_POLL: Duration = Duration::from_secs(10);
/// How long a cancellation may take before goldgate stops waiting for it.
const CANCEL_WAIT: Duration = Duration::from_secs(10);

/// How an evaluation run ended, as goldgate saw it.
pub(super) struct Ended {
    /// Every result was produced (the run COMPLETED, or ended in ERROR on its own).
    pub complete: bool,
    /// The evaluation run as last read; none when it never started.
    pub run: Option<Value>,
    /// Why runs without a result have none (the cases' error).
    pub why: String,
}

/// What a poll waited for.
enum Waited {
    Time,
    Stopped,
    Deadline,
}

impl CesAgent {
    /// Starts the evaluation run of `to_run` and waits for it to end, stop or time out.
    pub(super) async fn run_batch(
        &self,
        to_run: &[(usize, String)],
        runs: u32,
        (deadline, timeout): (Instant, Duration),
        stop: &CancellationToken,
    ) -> Ended {
        let platform = self.config.platform.clone().unwrap_or_default();
        let body = run_request(&self.config.app, to_run, runs, &platform);
        let path = format!("{}:runEvaluation", self.config.app);
        let operation = match self.api(Method::POST, &path, Some(body)).await {
            Ok(operation) => operation,
            Err(error) => return failed(format!("runEvaluation failed: {error}")),
        };
        let op_name = operation["name"].as_str().unwrap_or_default().to_owned();
        let mut run_name = run_of(&operation);
        if let Some(name) = &run_name {
            self.started(name);
        }
        let mut wait = FIRST_POLL;
        let mut last: Option<Value> = None;
        loop {
            let polled = match &run_name {
                Some(name) => self.api(Method::GET, name, None).await,
                None => self.api(Method::GET, &op_name, None).await,
            };
            match (polled, &run_name) {
                (Err(error), _) => {
                    // Not followed any more: not left running (and billed) either.
                    self.cancel(&op_name).await;
                    let why = format!(
                        "polling the evaluation run failed, so goldgate cancelled it: {error}"
                    );
                    return Ended {
                        complete: false,
                        run: last,
                        why,
                    };
                }
                (Ok(operation), None) => {
                    run_name = run_of(&operation);
                    if let Some(name) = &run_name {
                        self.started(name);
                    } else if operation["done"].as_bool() == Some(true) {
                        let message = operation["error"]["message"]
                            .as_str()
                            .unwrap_or("no evaluation run");
                        return failed(format!(
                            "runEvaluation ended without an evaluation run: {message}"
                        ));
                    }
                }
                (Ok(run), Some(_)) => {
                    let state = run["state"].as_str().unwrap_or_default().to_owned();
                    last = Some(run);
                    if let Some(ended) = finished(&state, last.as_ref()) {
                        return ended;
                    }
                }
            }
            let why = match pause(wait, deadline, stop).await {
                Waited::Time => {
                    wait = (wait * 2).min(MOST_POLL);
                    continue;
                }
                Waited::Stopped => format!(
                    "goldgate cancelled the evaluation run {}: goldgate was stopped (Ctrl-C or SIGTERM) before the run ended",
                    run_name.as_deref().unwrap_or("(not yet named)")
                ),
                Waited::Deadline => timed_out(run_name.as_deref(), last.as_ref(), timeout),
            };
            self.cancel(&op_name).await;
            return Ended {
                complete: false,
                run: last,
                why,
            };
        }
    }

    /// Remembers an evaluation run started, for the report.
    fn started(&self, run: &str) {
        if let Ok(mut runs) = self.runs.lock() {
            runs.push(run.to_owned());
        }
    }

    /// Cancels the operation goldgate started; a failure leaves nothing more to do.
    async fn cancel(&self, operation: &str) {
        if operation.is_empty() {
            return;
        }
        let path = format!("{operation}:cancel");
        let _ =
            tokio::time::timeout(CANCEL_WAIT, self.api(Method::POST, &path, Some(json!({})))).await;
    }

    /// Each case's runs from the results of `ended`, an error for each run without one.
    pub(super) async fn read_back(
        &self,
        cases: &[Arc<Case>],
        to_run: &[(usize, String)],
        runs: u32,
        ended: Ended,
    ) -> Vec<(usize, usize, CaseResult)> {
        let found = match &ended.run {
            Some(run) => self.results_of(run, to_run).await,
            None => Vec::new(),
        };
        let labels = self.labels().await;
        let conversations = self.conversations(&found).await;
        let context = results::Context {
            labels: &labels,
            conversations: &conversations,
            unfinished: &ended.why,
        };
        let mut out = Vec::new();
        for (index, evaluation) in to_run {
            let case = &cases[*index];
            let prefix = format!("{evaluation}/results/");
            let mine = found
                .iter()
                .filter(|r| r["name"].as_str().is_some_and(|n| n.starts_with(&prefix)));
            let mut mine = mine.map(|r| results::of(case, r, &context));
            for run in 0..runs as usize {
                let result = mine.next().unwrap_or_else(|| {
                    let why = if ended.why.is_empty() {
                        "the platform returned no result for this run"
                    } else {
                        &ended.why
                    };
                    results::error(case, why)
                });
                out.push((*index, run, result));
            }
        }
        out
    }

    /// The display names of the app's tools and agents by resource name, for the report (none
    /// when they cannot be listed: resource names are shown then).
    async fn labels(&self) -> results::Labels {
        let mut labels: results::Labels = match self.tools.get() {
            Some(catalog) => catalog
                .all()
                .map(|(d, n)| (n.to_owned(), d.to_owned()))
                .collect(),
            None => results::Labels::new(),
        };
        let path = format!("{}/agents", self.config.app);
        for agent in self.list(&path, "agents").await.unwrap_or_default() {
            if let (Some(name), Some(display)) =
                (agent["name"].as_str(), agent["displayName"].as_str())
            {
                labels.insert(name.to_owned(), display.to_owned());
            }
        }
        labels
    }

    /// The results of `run`, in the order it lists them; those that cannot be read are left
    /// out (their runs are errors).
    async fn results_of(&self, run: &Value, to_run: &[(usize, String)]) -> Vec<Value> {
        let names: Vec<&str> = run["evaluationResults"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut found = Vec::new();
        if names.is_empty() {
            let run_name = run["name"].as_str().unwrap_or_default();
            for (_, evaluation) in to_run {
                let listed = self
                    .list(&format!("{evaluation}/results"), "evaluationResults")
                    .await;
                found.extend(
                    listed
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|r| r["evaluationRun"] == run_name),
                );
            }
            return found;
        }
        for name in names {
            if let Ok(result) = self.api(Method::GET, name, None).await {
                found.push(result);
            }
        }
        found
    }
}

/// The `runEvaluation` request: the evaluations, `runCount`, and the configured run method,
/// channel and tool-call behaviour.
fn run_request(
    app: &str,
    to_run: &[(usize, String)],
    runs: u32,
    platform: &PlatformConfig,
) -> Value {
    let evaluations: Vec<&str> = to_run.iter().map(|(_, name)| name.as_str()).collect();
    json!({
        "app": app,
        "evaluations": evaluations,
        "displayName": "goldgate",
        "runCount": runs,
        "goldenRunMethod": platform.run_method.wire(),
        "config": {
            "evaluationChannel": platform.channel.wire(),
            "toolCallBehaviour": platform.tool_calls.wire(),
        },
        "generateLatencyReport": true,
    })
}

/// The evaluation run an operation names: in its metadata while running, in its response once
/// done.
fn run_of(operation: &Value) -> Option<String> {
    operation["metadata"]["evaluationRun"]
        .as_str()
        .or(operation["response"]["evaluationRun"]["name"].as_str())
        .or(operation["response"]["evaluationRun"].as_str())
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
}

/// How a run in `state` ended, or `None` while it runs.
fn finished(state: &str, run: Option<&Value>) -> Option<Ended> {
    let message = |run: Option<&Value>| {
        run.and_then(|r| {
            r["errorInfo"]["errorMessage"]
                .as_str()
                .or(r["error"]["message"].as_str())
        })
        .unwrap_or("no message")
        .to_owned()
    };
    let (complete, why) = match state {
        "COMPLETED" => (true, String::new()),
        "ERROR" => (
            true,
            format!(
                "the platform ended the evaluation run in ERROR ({}): {}",
                run.and_then(|r| r["errorInfo"]["errorType"].as_str())
                    .unwrap_or("no error type"),
                message(run)
            ),
        ),
        "CANCELLED" => (
            false,
            "the evaluation run was cancelled on the platform, not by goldgate".to_owned(),
        ),
        _ => return None,
    };
    Some(Ended {
        complete,
        run: run.cloned(),
        why,
    })
}

fn failed(why: String) -> Ended {
    Ended {
        complete: false,
        run: None,
        why,
    }
}

/// Sleeps `wait`, unless the stop or the deadline comes first.
async fn pause(wait: Duration, deadline: Instant, stop: &CancellationToken) -> Waited {
    if Instant::now() >= deadline {
        return Waited::Deadline;
    }
    tokio::select! {
        () = stop.cancelled() => Waited::Stopped,
        () = tokio::time::sleep_until(deadline) => Waited::Deadline,
        () = tokio::time::sleep(wait) => Waited::Time,
    }
}

/// `the evaluation run R did not finish within 30s (RUNNING, 2 of 5 results done)`.
fn timed_out(run: Option<&str>, last: Option<&Value>, timeout: Duration) -> String {
    let progress = last.map(|r| {
        let p = &r["progress"];
        format!(
            " ({}, {} of {} results done)",
            r["state"].as_str().unwrap_or("RUNNING"),
            p["completedCount"].as_i64().unwrap_or(0) + p["errorCount"].as_i64().unwrap_or(0),
            p["totalCount"].as_i64().unwrap_or(0)
        )
    });
    format!(
        "timed out: goldgate cancelled the evaluation run {} because it did not finish within {:?}{} (raise --timeout: it bounds the whole platform run)",
        run.unwrap_or("(not yet named)"),
        timeout,
        progress.unwrap_or_default()
    )
}
