//! What the fault tests share: one-case suites, a run that keeps its report and time, command
//! agents written in sh, raw loopback servers that misbehave on purpose, and the checks that
//! no process outlived goldgate or grew large.
#![allow(dead_code)] // Each test crate uses some of them.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::common;

#[allow(unused_imports)] // Not every crate of the fault tests writes an sh agent.
pub use common::process::SH_REPLY;

/// A suite of `cases` one-turn conversations about ORD-12345 in `dir`.
pub fn suite(dir: &Path, cases: usize) {
    let conversations: String = (1..=cases)
        .map(|n| common::order_conversation(&format!("case_{n}")))
        .collect();
    common::order_golden(dir, &conversations);
}

/// `goldgate run goldens --output report.json` with `extra` args, in `dir`; the outcome, the
/// report (when written) and how long it took.
pub fn run(dir: &Path, extra: &[&str]) -> (common::Outcome, Option<Value>, Duration) {
    let started = Instant::now();
    let outcome = common::goldgate(dir, &run_args(extra));
    (outcome, read_report(dir), started.elapsed())
}

/// [`run`], and the most memory goldgate or any process it waited for held, in KiB.
#[cfg(unix)]
pub fn run_measured(dir: &Path, extra: &[&str]) -> (common::Outcome, Option<Value>, Duration, u64) {
    let started = Instant::now();
    let (outcome, peak_kib) =
        common::process::measured(common::process::command_in(dir).args(run_args(extra)));
    (outcome, read_report(dir), started.elapsed(), peak_kib)
}

fn run_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["run", "goldens", "--output", "report.json"];
    args.extend_from_slice(extra);
    args
}

fn read_report(dir: &Path) -> Option<Value> {
    fs::read_to_string(dir.join("report.json"))
        .ok()
        .map(|text| serde_json::from_str(&text).expect("the report is JSON"))
}

/// A command agent in `goldgate.yaml` of `dir`: `sh -c script`, with `settings` after it.
pub fn command_agent(dir: &Path, script: &str, settings: &str) {
    let argv = serde_json::to_string(&["sh", "-c", script]).unwrap();
    fs::write(
        dir.join("goldgate.yaml"),
        format!("agent:\n  command: {{ argv: {argv}{settings} }}\n"),
    )
    .unwrap();
}

/// Fails the test unless a run's peak memory (see [`run_measured`]) stayed under 200 MiB.
#[track_caller]
pub fn assert_stayed_small(peak_kib: u64) {
    assert!(peak_kib < 200 * 1024, "a process peaked at {peak_kib} KiB");
}

#[cfg(unix)]
use common::process::alive;

/// A loopback server that hands each connection, once its request has been read, to `answer`
/// on a thread of its own. Returns the agent URL.
pub fn raw_server(answer: fn(std::net::TcpStream)) -> String {
    use std::io::{BufRead, BufReader, Read};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut length = 0;
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                    if line == "\r\n" {
                        break;
                    }
                    let lower = line.to_ascii_lowercase();
                    if let Some(value) = lower.strip_prefix("content-length:") {
                        length = value.trim().parse().unwrap_or(0);
                    }
                    line.clear();
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                answer(stream);
            });
        }
    });
    format!("http://{addr}/turn")
}

/// A one-case suite against the HTTP agent at `url`, with no retries (unless `settings` say).
pub fn http_suite(dir: &Path, url: &str) {
    suite(dir, 1);
    fs::write(
        dir.join("goldgate.yaml"),
        format!("agent:\n  http: {{ url: \"{url}\" }}\nrun: {{ retries: 0 }}\n"),
    )
    .unwrap();
}

pub fn write_all(mut stream: &std::net::TcpStream, bytes: &[u8]) -> bool {
    use std::io::Write;
    stream
        .write_all(bytes)
        .and_then(|()| stream.flush())
        .is_ok()
}

/// A whole 200 reply of `content_type` holding `body`.
pub fn write_reply(stream: &std::net::TcpStream, content_type: &str, body: &[u8]) {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    write_all(stream, head.as_bytes());
    write_all(stream, body);
}

/// Reads the pids an agent wrote into `dir/pids`, waiting for the file.
#[cfg(unix)]
pub fn pids_in(dir: &Path) -> Vec<u32> {
    let path = dir.join("pids");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect()
}

/// Fails if any agent process that noted its pid in `dir/pids` is still alive.
#[cfg(unix)]
#[track_caller]
pub fn assert_no_agent_left(dir: &Path) {
    for pid in pids_in(dir) {
        assert!(!alive(pid), "agent process {pid} outlived goldgate");
    }
}

/// Runs goldgate on the suite in `dir` until the agent has written `dir/pids`, then sends it
/// one SIGTERM, as a CI cancel does; its exit status and stderr, within 15 s of the signal.
#[cfg(unix)]
pub fn terminate_goldgate(dir: &Path) -> (Option<i32>, String) {
    signal_goldgate(dir, "TERM")
}

/// [`terminate_goldgate`] with the signal `name` (`TERM`, `HUP`, `QUIT`).
#[cfg(unix)]
pub fn signal_goldgate(dir: &Path, name: &str) -> (Option<i32>, String) {
    let mut goldgate = common::process::Running::start_run(dir, &[]);
    common::process::wait_for_file(&dir.join("pids"));
    // A moment for the turns to be sent.
    std::thread::sleep(Duration::from_millis(300));
    goldgate.signal(name);
    assert!(
        goldgate.exited_within(Duration::from_secs(15)),
        "goldgate did not stop within 15 s of SIG{name}"
    );
    goldgate.finish()
}

/// The reports were written, marked incomplete, every one of the suite's `cases` listed (those
/// that never ran skipped, with why), and no agent process is left.
#[cfg(unix)]
pub fn assert_stopped_cleanly(dir: &Path, (code, stderr): (Option<i32>, String), cases: usize) {
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("cancelling the cases in flight"),
        "{stderr}"
    );
    let report = common::read_json(&dir.join("report.json"));
    assert_eq!(report["incomplete"], true);
    assert_eq!(report["cases"].as_array().unwrap().len(), cases, "{report}");
    assert_eq!(report["verdict"], "error");
    // A reader that only counts failures must not see a green run.
    let junit = fs::read_to_string(dir.join("junit.xml")).unwrap();
    // The cases, and one errored testcase that says the run is incomplete.
    assert!(
        junit.contains(&format!("tests=\"{}\"", cases + 1)),
        "{junit}"
    );
    assert!(junit.contains("goldgate: run incomplete"), "{junit}");
    assert!(junit.contains("name=\"goldgate.incomplete\""), "{junit}");
    assert_no_agent_left(dir);
}
