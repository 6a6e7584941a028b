//! Faults of the agent and of goldgate's own surroundings (issue 12): each ends as an error of
//! the run with a message that says what happened, within a bounded time, leaving no process
//! behind. Also the command agent's start-up handshake, which keeps start-up out of latency.

mod common;

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Replies `{"id":N, ...rest}` to the request in `$line`: `reply_with_rest '"messages":[…]'`.
const SH_REPLY: &str = r#"
reply_with_rest() {
  id=$(printf '%s\n' "$line" | sed -n 's/^{"id":\([0-9]*\).*/\1/p')
  printf '{"id":%s,%s}\n' "$id" "$1"
}
"#;

/// A suite of `cases` one-turn conversations about ORD-12345 in `dir`.
fn suite(dir: &Path, cases: usize) {
    let conversations: String = (1..=cases)
        .map(|n| common::order_conversation(&format!("case_{n}")))
        .collect();
    common::order_golden(dir, &conversations);
}

/// `goldgate run goldens --output report.json` with `extra` args, in `dir`; the outcome, the
/// report (when written) and how long it took.
fn run(dir: &Path, extra: &[&str]) -> (common::Outcome, Option<Value>, Duration) {
    let started = Instant::now();
    let mut args = vec!["run", "goldens", "--output", "report.json"];
    args.extend_from_slice(extra);
    let outcome = common::goldgate(dir, &args);
    let elapsed = started.elapsed();
    let report = fs::read_to_string(dir.join("report.json"))
        .ok()
        .map(|text| serde_json::from_str(&text).expect("the report is JSON"));
    (outcome, report, elapsed)
}

/// A command agent in `goldgate.yaml` of `dir`: `sh -c script`, with `settings` after it.
fn command_agent(dir: &Path, script: &str, settings: &str) {
    let argv = serde_json::to_string(&["sh", "-c", script]).unwrap();
    fs::write(
        dir.join("goldgate.yaml"),
        format!("agent:\n  command: {{ argv: {argv}{settings} }}\n"),
    )
    .unwrap();
}

#[cfg(unix)]
#[test]
fn a_command_agent_slow_to_start_is_timed_apart_from_its_turns() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 4);
    let script = format!(
        r#"{SH_REPLY}
sleep 2
while IFS= read -r line; do
  reply_with_rest '"messages":[{{"text":"Your order ORD-12345 has shipped and should arrive by April 18th."}}]'
done"#
    );
    command_agent(dir.path(), &script, "");
    let (outcome, report, _) = run(dir.path(), &[]);
    let report = report.expect("a report");
    assert_eq!(outcome.code, Some(1), "{}", outcome.stderr); // the tool call is missing
    let startup = report["aggregates"]["agent_startup_ms"].as_u64().unwrap();
    assert!(startup >= 2000, "start-up {startup} ms");
    for case in report["cases"].as_array().unwrap() {
        let latency = case["turns"][0]["latency_ms"].as_u64().unwrap();
        assert!(
            latency < 1000,
            "turn latency {latency} ms includes start-up"
        );
    }
    assert!(
        outcome.stdout.contains("Agent start-up: 2"),
        "{}",
        outcome.stdout
    );
}
