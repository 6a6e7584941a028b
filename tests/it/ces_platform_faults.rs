//! CX Agent Studio platform mode when the platform misbehaves, against the loopback fake of
//! the v1beta evaluation endpoints: an evaluation run that can no longer be polled is
//! cancelled rather than left running, and every case says why, in Google's words; a throttled
//! `runEvaluation` waits as `Retry-After` says and goes on.

use crate::{ces_platform_support, common};
use std::time::{Duration, Instant};

use ces_platform_support::cli::{local_golden, platform_project, with_token};

#[test]
fn a_run_that_cannot_be_polled_is_cancelled_and_every_case_says_why() {
    let (dir, fake) = platform_project(local_golden, |p| p.broken_polls = true);
    let (code, report, printed) = with_token(dir.path(), &[]);
    assert_eq!(code, Some(2), "{printed}");
    assert_eq!(report["incomplete"], true);
    let error = common::case(&report, "greeting")["error"]
        .as_str()
        .unwrap()
        .to_owned();
    common::assert_contains(
        &error,
        &[
            "polling the evaluation run failed",
            "HTTP 500",
            "Internal error encountered.",
        ],
    );
    // Retried with backoff first (a GET may be), then given up and cancelled.
    assert_eq!(
        fake.heard("GET", "/evaluationRuns/run1").len(),
        4,
        "{printed}"
    );
    assert_eq!(
        fake.heard("POST", "/operations/op1:cancel").len(),
        1,
        "{printed}"
    );
}

#[test]
fn a_throttled_run_request_waits_as_google_asks_and_goes_on() {
    let (dir, fake) = platform_project(local_golden, |p| p.throttled_runs = 1);
    let started = Instant::now();
    let (code, _, printed) = with_token(dir.path(), &[]);
    assert_eq!(code, Some(0), "{printed}");
    assert_eq!(fake.heard("POST", ":runEvaluation").len(), 2);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After was honoured"
    );
    assert_eq!(fake.state().runs.len(), 1, "one evaluation run, not two");
}
