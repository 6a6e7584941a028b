//! Figures for issue 12's faults 9 and 10, printed, never asserted (the machines that run the
//! tests are shared and noisy): `cargo test --release --test it limits_figures:: -- --ignored
//! --nocapture`. Each drives the binary as a user would, against loopback servers.

use crate::common;
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;

/// Serves every turn `body()` with `content_type`; the URL.
fn agent(content_type: &'static str, body: fn() -> Body) -> String {
    let addr = common::serve_turn(
        move || async move { ([(CONTENT_TYPE, content_type)], body()).into_response() },
        (),
    );
    format!("http://{addr}/turn")
}

/// `cases` one-turn cases against `url` in `dir`.
fn suite(dir: &Path, url: &str, cases: usize) {
    let conversations: String = (1..=cases)
        .map(|n| common::order_conversation(&format!("case_{n}")))
        .collect();
    common::order_golden(dir, &conversations);
    common::write(
        dir,
        "goldgate.yaml",
        format!("agent:\n  http: {{ url: \"{url}\" }}\nrun: {{ retries: 0 }}\n"),
    );
}

/// Runs goldgate in `dir` with `args`; how long it took.
fn timed(dir: &Path, args: &[&str]) -> Duration {
    let started = Instant::now();
    let outcome = common::goldgate(dir, args);
    let elapsed = started.elapsed();
    assert!(outcome.code.is_some(), "{}", outcome.stderr);
    elapsed
}

/// A 15 MiB reply: one message, as one JSON object.
fn one_big_json() -> Body {
    Body::from(one_big_json_bytes())
}

/// The same bytes as one NDJSON line, sent in 16 KiB chunks as a streaming server would.
fn one_big_line() -> Body {
    let line = Bytes::from(one_big_json_bytes());
    let chunks: Vec<Result<Bytes, std::io::Error>> = (0..line.len())
        .step_by(16 * 1024)
        .map(|at| Ok(line.slice(at..(at + 16 * 1024).min(line.len()))))
        .collect();
    Body::from_stream(futures_util::stream::iter(chunks))
}

fn one_big_json_bytes() -> Vec<u8> {
    let text = "x".repeat(15 * 1024 * 1024);
    format!("{{\"messages\":[{{\"text\":\"{text}\"}}]}}").into_bytes()
}

#[test]
#[ignore = "prints figures: cargo test --release --test it limits_figures:: -- --ignored --nocapture"]
fn figures_ndjson_scan_against_one_json() {
    for (name, content_type, body) in [
        ("one JSON", "application/json", one_big_json as fn() -> Body),
        ("one NDJSON line", "application/x-ndjson", one_big_line),
    ] {
        let dir = tempfile::tempdir().unwrap();
        suite(dir.path(), &agent(content_type, body), 4);
        let took = timed(dir.path(), &["run", "goldens", "--timeout", "110s"]);
        println!("fault 9: 4 replies of 15 MiB as {name}: {took:.2?}");
    }
}

/// 200 MB of NDJSON in lines of one short message each, streamed without end of memory.
fn endless_small_lines() -> Body {
    let line = Bytes::from_static(b"{\"messages\":[{\"text\":\"x\"}]}\n");
    let chunk = Bytes::from(line.repeat(16 * 1024 / line.len()));
    let count = 200 * 1024 * 1024 / chunk.len();
    let chunks = std::iter::repeat_n(chunk, count).map(Ok::<_, std::io::Error>);
    Body::from_stream(futures_util::stream::iter(chunks))
}

#[cfg(target_os = "linux")]
#[test]
#[ignore = "prints figures: cargo test --release --test it limits_figures:: -- --ignored --nocapture"]
fn figures_memory_of_oversized_ndjson_replies_at_concurrency_16() {
    let dir = tempfile::tempdir().unwrap();
    suite(
        dir.path(),
        &agent("application/x-ndjson", endless_small_lines),
        100,
    );
    let args = ["run", "goldens", "--concurrency", "16", "--timeout", "110s"];
    let started = Instant::now();
    let (outcome, peak_kib) =
        common::process::measured(common::process::command_in(dir.path()).args(args));
    let took = started.elapsed();
    assert!(outcome.code.is_some(), "{}", outcome.stderr);
    println!(
        "fault 9: 100 NDJSON replies of 200 MB at --concurrency 16: {took:.2?}, peak {} MiB",
        peak_kib / 1024
    );
}

#[cfg(unix)]
#[test]
#[ignore = "prints figures: cargo test --release --test it limits_figures:: -- --ignored --nocapture"]
fn figures_command_agent_line_of_64_mb() {
    let dir = tempfile::tempdir().unwrap();
    common::order_golden(dir.path(), &common::order_conversation("long"));
    // Answers the ping, then every turn with one 64 MB line.
    let script = r#"read -r ping; echo '{"id":1}'
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/^{"id":\([0-9]*\).*/\1/p')
  printf '{"id":%s,"messages":[{"text":"' "$id"; head -c 67108864 /dev/zero | tr '\0' x; printf '"}]}\n'
done"#;
    let argv = serde_json::to_string(&["sh", "-c", script]).unwrap();
    common::write(
        dir.path(),
        "goldgate.yaml",
        format!("agent:\n  command: {{ argv: {argv} }}\nrun: {{ retries: 0 }}\n"),
    );
    let took = timed(dir.path(), &["run", "goldens", "--timeout", "60s"]);
    println!("fault 9: a 64 MB stdout line under --timeout 60s: the turn ended after {took:.2?}");
}

/// `files` small golden files under `dir/goldens`, one case each.
fn many_files(dir: &Path, files: usize) {
    fs::create_dir_all(dir.join("goldens")).unwrap();
    for n in 0..files {
        let text = format!(
            "conversations:\n  - conversation: case_{n}\n    turns:\n      - user: hi\n        agent: hello\n"
        );
        fs::write(dir.join(format!("goldens/g{n:06}.yaml")), text).unwrap();
    }
}

#[test]
#[ignore = "prints figures: cargo test --release --test it limits_figures:: -- --ignored --nocapture"]
fn figures_list_against_lint_of_20000_files() {
    let dir = tempfile::tempdir().unwrap();
    many_files(dir.path(), 20_000);
    let lint = timed(dir.path(), &["lint", "goldens"]);
    let list = timed(dir.path(), &["list", "goldens"]);
    println!("fault 10: 20,000 files: lint {lint:.2?}, list {list:.2?}");
}

#[test]
#[ignore = "prints figures: cargo test --release --test it limits_figures:: -- --ignored --nocapture"]
fn figures_junit_of_50000_cases() {
    let dir = tempfile::tempdir().unwrap();
    // One real report of one case, its case copied into 50,000 files.
    let url = agent("application/json", || {
        Body::from(r#"{"messages":[{"text":"hello"}]}"#)
    });
    many_files(dir.path(), 1);
    common::write(
        dir.path(),
        "goldgate.yaml",
        format!("agent:\n  http: {{ url: \"{url}\" }}\n"),
    );
    let args = ["run", "goldens", "--output", "one.json"];
    common::goldgate(dir.path(), &args);
    let mut report: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("one.json")).unwrap()).unwrap();
    let case = report["cases"][0].clone();
    let cases: Vec<serde_json::Value> = (0..50_000)
        .map(|n| {
            let mut case = case.clone();
            case["file"] = format!("goldens/g{n:06}.yaml").into();
            case["id"] = format!("case_{n}").into();
            case
        })
        .collect();
    report["cases"] = cases.into();
    common::write(dir.path(), "big.json", report.to_string());
    let took = timed(dir.path(), &["report", "big.json", "--junit", "junit.xml"]);
    println!("fault 10: JUnit of 50,000 cases in 50,000 files: {took:.2?}");
}
