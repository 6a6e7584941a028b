//! Limits (issue 12, faults 7 to 9): a rate limit asking for more than `--rate-limit-wait`
//! allows ends the turn at once and the report says what was really waited; a report read
//! back must be a regular file under the size cap; a command agent's line past its limit fails
//! the turn at once. Each ends within a bounded time (the binary runs under
//! [`common::command`]'s time limit).

use crate::{common, faults_support};
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use axum::http::{HeaderValue, StatusCode};
use axum::response::IntoResponse;
use serde_json::Value;

/// A one-case suite in `dir` against the HTTP agent at `url`.
fn http_suite(dir: &Path, url: &str) {
    common::order_golden(dir, &common::order_conversation("late"));
    common::write(
        dir,
        "goldgate.yaml",
        format!("agent:\n  http: {{ url: \"{url}\" }}\n"),
    );
}

/// An agent answering every turn `status` with `Retry-After: 3600`.
fn come_back_in_an_hour(status: StatusCode) -> String {
    let addr = common::serve_turn(
        move || async move {
            let mut answer = (status, "come back later").into_response();
            answer
                .headers_mut()
                .insert("retry-after", HeaderValue::from_static("3600"));
            answer
        },
        (),
    );
    format!("http://{addr}/turn")
}

/// `goldgate run goldens --output report.json` with `extra`: the outcome, report and time.
fn run(dir: &Path, extra: &[&str]) -> (common::Outcome, Value, Duration) {
    let (outcome, report, elapsed) = faults_support::run(dir, extra);
    let report =
        report.unwrap_or_else(|| panic!("no report\n{}\n{}", outcome.stdout, outcome.stderr));
    (outcome, report, elapsed)
}

/// A one-case run with `flags` against an agent answering every turn `status` with
/// `Retry-After: 3600`, which must end with exit 2 within 30 s (a budget the hour exceeds):
/// the outcome, the report, the case's error and the agent's rate-limit figures (waits,
/// waited ms).
fn told_to_wait_an_hour(
    status: StatusCode,
    flags: &[&str],
) -> (common::Outcome, Value, String, (u64, u64)) {
    let dir = tempfile::tempdir().unwrap();
    http_suite(dir.path(), &come_back_in_an_hour(status));
    let (outcome, report, elapsed) = run(dir.path(), flags);
    assert_eq!(outcome.code, Some(2), "{}", outcome.stderr);
    assert!(elapsed < Duration::from_secs(30), "{elapsed:?}");
    let error = report["cases"][0]["error"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    let agent = common::item(&report["rate_limits"], "endpoint", "agent");
    let waits = (
        agent["waits"].as_u64().unwrap(),
        agent["waited_ms"].as_u64().unwrap(),
    );
    (outcome, report, error, waits)
}

#[test]
fn a_503_asking_for_an_hour_ends_the_turn_at_once_whatever_the_retries() {
    // It held the turn for 600 s: now it is one request and no wait at all.
    let flags = ["--timeout", "2s", "--retries", "3", "--no-cache"];
    let (outcome, report, error, waits) =
        told_to_wait_an_hour(StatusCode::SERVICE_UNAVAILABLE, &flags);
    common::assert_contains(
        &error,
        &[
            "asked to wait 3600 s",
            "--rate-limit-wait allows (300 s)",
            "HTTP 503",
        ],
    );
    assert_eq!(report["cases"][0]["turns"][0]["attempts"], 1);
    assert_eq!(waits, (1, 0));
    outcome.says(&["asked to slow down 1 time; waited 0"]);
}

#[test]
fn a_429_asking_for_more_than_the_wait_budget_says_both_and_waits_nothing() {
    // It took 300 s and summed 600 s of waits: now nothing is waited, and the report says so.
    let flags = ["--rate-limit-wait", "10s", "--no-cache"];
    let (_, _, error, waits) = told_to_wait_an_hour(StatusCode::TOO_MANY_REQUESTS, &flags);
    assert!(
        error.starts_with("rate limited: the server asked to wait 3600 s (Retry-After)"),
        "{error}"
    );
    common::assert_contains(&error, &["--rate-limit-wait allows (10 s)"]);
    common::assert_lacks(&error, &["after waiting"]);
    assert_eq!(waits, (1, 0));
}

/// `goldgate args...` in `dir`: refused with exit 2 in a bounded time, saying `words`.
fn assert_refused(dir: &Path, args: &[&str], words: &[&str]) {
    let started = Instant::now();
    let outcome = common::goldgate(dir, args);
    assert_eq!(outcome.code, Some(2), "{args:?}: {}", outcome.stderr);
    assert!(started.elapsed() < Duration::from_secs(30), "{args:?}");
    for word in words {
        assert!(
            outcome.stderr.contains(word),
            "{args:?}: {}",
            outcome.stderr
        );
    }
}

/// `report`, `compare --baseline` and `merge` of `file` in `dir`: each refused (see
/// [`assert_refused`]) saying `said`.
fn assert_readers_refuse(dir: &Path, file: &str, said: &[&str]) {
    assert_refused(dir, &["report", file], said);
    assert_refused(dir, &["compare", "x.json", "--baseline", file], said);
    assert_refused(dir, &["merge", file, file, "--output", "m.json"], said);
}

#[test]
fn a_report_over_the_size_cap_is_refused_unread_by_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    // Sparse: 300 MiB that cost no disk, and that were read whole before.
    let big = fs::File::create(dir.path().join("big.json")).unwrap();
    big.set_len(300 * 1024 * 1024).unwrap();
    let said = ["big.json: 300 MiB, over the 256 MiB a report may hold"];
    assert_readers_refuse(dir.path(), "big.json", &said);
    // `run` refuses its baseline before it calls the agent (nothing listens on port 9).
    let run = [
        "run",
        "--agent-url",
        "http://127.0.0.1:9/turn",
        "--baseline",
        "big.json",
    ];
    assert_refused(dir.path(), &run, &["cannot use the baseline", said[0]]);
}

#[cfg(unix)]
#[test]
fn a_device_or_a_named_pipe_is_refused_as_a_report() {
    let dir = tempfile::tempdir().unwrap();
    // `/dev/zero` grew until killed; a FIFO with no writer blocked forever.
    let zero = ["/dev/zero: not a regular file (a character device)"];
    assert_readers_refuse(dir.path(), "/dev/zero", &zero);
    let made = std::process::Command::new("mkfifo")
        .arg(dir.path().join("pipe.json"))
        .status()
        .unwrap();
    assert!(made.success());
    let pipe = ["pipe.json: not a regular file (a named pipe)"];
    assert_readers_refuse(dir.path(), "pipe.json", &pipe);
}

/// A command agent that answers the ping, then each turn with `printf`'s `format` (given the
/// request's id) followed by a 20 MiB run of `x` and `end`.
#[cfg(unix)]
fn long_line_agent(dir: &Path, format: &str, end: &str) {
    common::order_golden(dir, &common::order_conversation("long"));
    let script = format!(
        r#"read -r ping; echo '{{"id":1}}'
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/^{{"id":\([0-9]*\).*/\1/p')
  printf '{format}' "$id"; head -c 20971520 /dev/zero | tr '\0' x; printf '{end}\n'
done"#
    );
    let argv = serde_json::to_string(&["sh", "-c", &script]).unwrap();
    common::write(
        dir,
        "goldgate.yaml",
        format!("agent:\n  command: {{ argv: {argv} }}\nrun: {{ retries: 0 }}\n"),
    );
}

#[cfg(unix)]
#[test]
fn a_command_agent_line_past_the_limit_fails_its_turn_at_once_saying_so() {
    // With its id first, and with no id at all: the one request waiting is the one failed.
    for (format, end) in [
        (r#"{"id":%s,"messages":[{"text":"#, r#""}]}"#),
        ("%.0s", ""),
    ] {
        let dir = tempfile::tempdir().unwrap();
        long_line_agent(dir.path(), format, end);
        let (outcome, report, elapsed) = run(dir.path(), &["--timeout", "100s"]);
        assert_eq!(outcome.code, Some(2), "{}", outcome.stderr);
        // It waited out the turn's timeout.
        assert!(elapsed < Duration::from_secs(60), "{elapsed:?}");
        let error = report["cases"][0]["error"].as_str().unwrap_or("");
        assert!(
            error.starts_with("bad reply: ")
                && error.contains("a stdout line of 2097")
                && error.contains("over the 16 MiB a line may hold"),
            "{error}"
        );
        // The agent's log says it once, in one sentence (#23).
        let log = report["agent_log"].as_str().unwrap_or("");
        assert!(
            log.contains("[goldgate] line dropped: the agent wrote a stdout line of 2097"),
            "{log}"
        );
    }
}
