//! Platform mode: the cases run as the app's own evaluations, scored by CX Agent Studio.
//!
//! A batch is: push the cases ([`push`]), `runEvaluation` with `runCount` = the run's repeats
//! ([`run`]), poll the evaluation run with backoff until it ends, within `--timeout`, and read
//! each `EvaluationResult` back into a [`CaseResult`] ([`results`]). A stop (Ctrl-C, SIGTERM)
//! or the timeout cancels the evaluation run goldgate started (its long-running operation's
//! `:cancel`); the cases then end as errors saying why, and the batch is incomplete.
//!
//! Every call goes through [`CesAgent::api`]: the agent's own HTTP client and credentials, a
//! few retries with backoff (and `Retry-After`) for 429, 5xx and dropped connections (a POST
//! only for 429 and 503), and one retry with a fresh token after a 401 (a token that expired
//! mid-poll).

mod conversation;
mod existing;
mod golden;
mod push;
mod results;
mod run;
mod turn_metrics;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::Method;
use serde_json::Value;

use super::CesAgent;
use crate::agent::evaluations::{Bounds, Evaluated, Evaluations};
use crate::model::{Case, CaseKind};
use crate::net::{EndpointError, EndpointErrorKind, backoff};
use crate::results::CaseResult;

/// Attempts of one API call before its error is the batch's (or the case's).
const ATTEMPTS: u32 = 4;
/// The first wait before a retry; doubled on each attempt.
const RETRY_BASE: Duration = Duration::from_millis(250);
/// The console: an app's page is `{CONSOLE}/{app}`, its evaluation runs under it.
const CONSOLE: &str = "https://ces.cloud.google.com";

impl CesAgent {
    /// One call of the v1beta API, retried as the module docs say. Returns the JSON answer.
    async fn api(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, EndpointError> {
        let quota = self.config.quota_project.as_deref();
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self
                .send_as(method.clone(), path, body.clone(), quota)
                .await
            {
                Ok((value, _)) => return Ok(value),
                Err(error) if attempt < ATTEMPTS && retried(&error, attempt, &method) => {
                    tokio::time::sleep(backoff(RETRY_BASE, attempt, error.retry_after)).await;
                }
                Err(error) => return Err(self.masked(error)),
            }
        }
    }

    fn masked(&self, mut error: EndpointError) -> EndpointError {
        self.credentials.secrets().mask_string(&mut error.message);
        error
    }

    /// Each evaluation run started, as the console's link to it (which holds its resource
    /// name): short enough for the PR comment's foot (200 characters) with real names.
    pub(super) fn describe_platform(&self) -> String {
        let app = &self.config.app;
        let runs = self.runs.lock().map(|r| r.clone()).unwrap_or_default();
        let links: Vec<String> = runs.iter().map(|run| format!("{CONSOLE}/{run}")).collect();
        match links.as_slice() {
            [] => format!("CX Agent Studio {app} (platform evaluations, no run started)"),
            [one] => format!("CES evaluation run {one}"),
            many => format!("CES evaluation runs {}", many.join(" ")),
        }
    }
}

/// A 401 once (the credentials fetch a new token: [`CesAgent::send_as`] forgot the old one),
/// and what may pass on a second try; a POST (it creates or starts something) only when the
/// server said it did nothing (429, 503), never after a dropped connection or another 5xx,
/// which may have started a second evaluation run.
fn retried(error: &EndpointError, attempt: u32, method: &Method) -> bool {
    match error.kind {
        EndpointErrorKind::Status(401) => attempt == 1,
        EndpointErrorKind::Status(429 | 503) => true,
        _ if *method == Method::POST => false,
        _ => error.is_retryable(),
    }
}

#[async_trait]
impl Evaluations for CesAgent {
    async fn evaluate(&self, cases: &[Arc<Case>], runs: u32, bounds: Bounds<'_>) -> Evaluated {
        let started = tokio::time::Instant::now();
        let (goldens, mut to_run, mut results) = triage(cases, runs, &self.config.app);
        let chosen: Vec<Arc<Case>> = goldens.iter().map(|&i| Arc::clone(&cases[i])).collect();
        let pushed = tokio::select! {
            pushed = self.push(&chosen) => pushed,
            () = bounds.stop.cancelled() => Err(EndpointError::cancelled()),
        };
        let pushed = match pushed {
            Ok(pushed) => pushed,
            Err(error) => {
                let why = format!(
                    "the evaluations could not be pushed: {}",
                    self.masked(error)
                );
                results.extend(all_errors(&goldens, cases, runs, &why));
                return Evaluated {
                    results,
                    incomplete: true,
                };
            }
        };
        for (&index, pushed) in goldens.iter().zip(pushed) {
            match pushed {
                Ok(name) => to_run.push((index, name)),
                Err(why) => results.extend(all_errors(&[index], cases, runs, &why)),
            }
        }
        if to_run.is_empty() {
            return Evaluated {
                results,
                incomplete: false,
            };
        }
        let deadline = (started + bounds.timeout, bounds.timeout);
        let ended = self.run_batch(&to_run, runs, deadline, bounds.stop).await;
        let incomplete = !ended.complete;
        results.extend(self.read_back(cases, &to_run, runs, ended).await);
        Evaluated {
            results,
            incomplete,
        }
    }

    async fn existing(&self) -> Vec<Case> {
        self.existing_cases().await
    }
}

/// Sorts `cases`: local goldens to push; evaluations already in the app, by resource name, to
/// run as they are; and the results of the rest (not conversations: skipped; an existing
/// evaluation that could not be listed: an error).
#[allow(clippy::type_complexity)]
fn triage(
    cases: &[Arc<Case>],
    runs: u32,
    app: &str,
) -> (
    Vec<usize>,
    Vec<(usize, String)>,
    Vec<(usize, usize, CaseResult)>,
) {
    let (mut local, mut existing, mut done) = (Vec::new(), Vec::new(), Vec::new());
    let not_golden = "platform mode runs goldens only: this case is not a conversation (run it without `platform`)";
    for (index, case) in cases.iter().enumerate() {
        match existing::resource_of(case, app) {
            Some(Ok(name)) => existing.push((index, name)),
            Some(Err(why)) => done.extend(all_errors(&[index], cases, runs, &why)),
            None if case.kind() == CaseKind::Conversation => local.push(index),
            None => {
                for run in 0..runs as usize {
                    done.push((index, run, results::skipped(case, not_golden)));
                }
            }
        }
    }
    (local, existing, done)
}

/// `runs` error results for each case of `indices`, saying `why`.
fn all_errors(
    indices: &[usize],
    cases: &[Arc<Case>],
    runs: u32,
    why: &str,
) -> Vec<(usize, usize, CaseResult)> {
    let mut out = Vec::new();
    for &index in indices {
        for run in 0..runs as usize {
            out.push((index, run, results::error(&cases[index], why)));
        }
    }
    out
}
