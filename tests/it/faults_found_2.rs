//! More defects of the fault trial (numbered as in its write-up), each driven through the
//! binary as a CI job would meet it: hostile replies, a budget, signals, odd outputs.

use crate::{common, faults_support};
use std::fs;
use std::path::Path;

use common::{Outcome, goldgate, read_json};
use serde_json::{Value, json};

/// A loopback protocol agent answering every turn with `reply`; its URL.
fn agent_replying(reply: Value) -> String {
    let addr = common::serve_turn(
        move || {
            let reply = reply.clone();
            async move { axum::Json(reply) }
        },
        (),
    );
    format!("http://{addr}/turn")
}

/// `cases` one-turn order conversations `c1`.. in `dir`.
fn suite(dir: &Path, cases: usize) {
    let conversations: String = (1..=cases)
        .map(|i| common::order_conversation(&format!("c{i}")))
        .collect();
    common::order_golden(dir, &conversations);
}

/// `goldgate run --agent-url URL --retries 0 EXTRA .` in `dir`.
fn run(dir: &Path, url: &str, extra: &[&str]) -> Outcome {
    let mut args = vec!["run", "--agent-url", url, "--retries", "0"];
    args.extend_from_slice(extra);
    args.push(".");
    goldgate(dir, &args)
}

/// #2: a reply's text used to be kept whole, three times over, in every report and log: a
/// few large replies made reports of hundreds of megabytes. It is judged whole, kept in part,
/// and every output says what was cut.
#[test]
fn a_huge_reply_is_judged_whole_and_kept_in_part_saying_what_was_cut() {
    // 2 MB of text whose last words are the answer, 300 messages and 300 unexpected calls.
    let long = format!(
        "{} {}",
        "filler ".repeat(300_000),
        common::script::GOOD_TEXT
    );
    let mut messages = vec![json!({ "text": long })];
    messages.extend((0..300).map(|i| json!({ "text": format!("note {i}") })));
    let mut calls = vec![json!({ "name": "lookup_order", "args": { "order_id": "ORD-12345" } })];
    calls.extend((0..300).map(|i| json!({ "name": "audit", "args": { "n": i } })));
    let url = agent_replying(json!({ "messages": messages, "tool_calls": calls }));
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 2);
    let ran = run(dir.path(), &url, &common::EVERY_REPORT).exits(1);

    let report = read_json(&dir.path().join("report.json"));
    let turn = &report["cases"][0]["turns"][0];
    // The answer at the end of the text was found: judged whole.
    let text_check = &turn["checks"][0];
    assert_eq!(text_check["label"], "agent text");
    assert_eq!(text_check["status"], "passed", "{text_check}");
    // 300 unexpected calls: 100 checks of their own, and one that counts the rest.
    let checks = turn["checks"].as_array().unwrap();
    let last = checks.last().unwrap();
    assert_eq!(last["reason"], "200 more unexpected tool calls", "{last}");
    assert!(checks.len() < 110, "{}", checks.len());
    // Kept: the start of the text, saying how much was left out, and the first 100 of each.
    let kept = turn["reply"]["messages"][0]["text"].as_str().unwrap();
    assert!(kept.starts_with("filler filler"), "{}", &kept[..40]);
    assert!(kept.len() < 70_000, "{}", kept.len());
    assert!(
        kept.contains("[goldgate cut "),
        "{}",
        &kept[kept.len() - 80..]
    );
    assert_eq!(turn["reply"]["messages"].as_array().unwrap().len(), 100);
    assert_eq!(turn["reply"]["tool_calls"].as_array().unwrap().len(), 100);
    assert_eq!(turn["cut"]["messages"], 201, "{}", turn["cut"]);
    assert_eq!(turn["cut"]["tool_calls"], 201, "{}", turn["cut"]);
    // Each output stays small, and says it.
    for file in ["report.json", "junit.xml", "report.html", "summary.md"] {
        let size = fs::metadata(dir.path().join(file)).unwrap().len();
        assert!(size < 1_000_000, "{file}: {size} bytes");
    }
    let junit = fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(
        junit.contains("goldgate kept part of this reply: 201 messages, 201 tool calls"),
        "{junit}"
    );
    assert!(
        ran.stdout.len() < 200_000,
        "{} bytes printed",
        ran.stdout.len()
    );
    // What was written reads back.
    goldgate(dir.path(), &["report", "report.json"]).exits(1);
}

/// #2 and #3's reproduction, as a figure (the machines that run the tests are shared and
/// noisy): 100 cases answered with 10 MB of text each at `--concurrency 16`, every report
/// written. It used to abort at 3.76 GB; the goal is under 200 MB.
#[test]
#[cfg(target_os = "linux")]
#[ignore = "prints figures: cargo test --release --test it faults_found_2:: -- --ignored --nocapture"]
fn figures_memory_of_100_replies_of_10_mb_at_concurrency_16() {
    let text = format!("{} {}", common::script::GOOD_TEXT, "x".repeat(10_000_000));
    let url = agent_replying(json!({ "messages": [{ "text": text }] }));
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 100);
    let started = std::time::Instant::now();
    let flags = [
        &["--concurrency", "16", "--timeout", "600s"][..],
        &common::EVERY_REPORT,
    ]
    .concat();
    let mut args = vec!["run", "--agent-url", &url, "--retries", "0"];
    args.extend_from_slice(&flags);
    args.push(".");
    let (ran, peak_kib) =
        common::process::measured(common::process::command_in(dir.path()).args(args));
    assert!(ran.code.is_some_and(|code| code < 2), "{}", ran.stderr);
    println!(
        "100 replies of 10 MB at --concurrency 16: peak {} MiB, {:.1} s",
        peak_kib / 1024,
        started.elapsed().as_secs_f64()
    );
    for file in ["report.json", "junit.xml", "report.html", "summary.md"] {
        let size = fs::metadata(dir.path().join(file)).unwrap().len();
        println!("{file}: {size} bytes");
    }
    assert!(
        goldgate(dir.path(), &["report", "report.json"])
            .code
            .is_some_and(|c| c < 2)
    );
}

/// #6: the budget was looked at only when a case could start, so that one long conversation
/// spent $2.40 of a $1.00 budget with exit 0 and `reached: false`.
#[test]
fn the_budget_stops_a_long_conversation_at_the_turn_past_it() {
    let url = agent_replying(json!({
        "messages": [{ "text": "Your order ORD-12345 has shipped and should arrive by April 18th." }],
        "usage": { "input_tokens": 1000, "output_tokens": 100, "cost_usd": 0.12 },
    }));
    let dir = tempfile::tempdir().unwrap();
    let turn = "      - user: Where is ORD-12345?\n        agent: Your order ORD-12345 has shipped and should arrive by April 18th.\n";
    common::order_golden(
        dir.path(),
        &format!("  - conversation: long\n    turns:\n{}", turn.repeat(20)),
    );
    let ran = run(
        dir.path(),
        &url,
        &[
            "--budget",
            "1",
            "--output",
            "report.json",
            "--junit",
            "junit.xml",
        ],
    )
    .exits(2);
    // Nine turns spend $1.08: the tenth is not played.
    ran.says(&["stopped at the budget: spent $1.08 of $1.00"]);
    let report = read_json(&dir.path().join("report.json"));
    assert_eq!(
        report["budget"],
        json!({ "limit_usd": 1.0, "reached": true })
    );
    let turns = report["cases"][0]["turns"].as_array().unwrap();
    assert_eq!(turns[8]["status"], "passed");
    assert_eq!(turns[9]["error"], "not played: the run reached its budget");
}

/// #9: the JUnit file of a run stopped at its budget read green (`failures="0" errors="0"`,
/// its cases skipped), and blamed Ctrl-C for the cases it never started.
#[test]
fn the_junit_of_a_run_stopped_at_its_budget_has_an_error_that_says_why() {
    let url = agent_replying(json!({
        "messages": [{ "text": common::script::GOOD_TEXT }],
        "tool_calls": [{ "name": "lookup_order", "args": { "order_id": "ORD-12345" } }],
        "usage": { "input_tokens": 1000, "output_tokens": 100, "cost_usd": 0.6 },
    }));
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 3);
    let flags = [
        "--budget",
        "1",
        "--concurrency",
        "1",
        "--junit",
        "junit.xml",
    ];
    run(dir.path(), &url, &flags).exits(2);
    let junit = fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    let root = junit.lines().find(|l| l.contains("<testsuites")).unwrap();
    assert!(root.contains("errors=\"1\""), "{junit}");
    assert!(
        junit.contains(
            "goldgate: run incomplete: the run reached its budget of $1.00; 1 cases not run"
        ),
        "{junit}"
    );
    assert!(
        junit.contains("not run: the run reached its budget before this case started"),
        "{junit}"
    );
    assert!(!junit.contains("Ctrl-C"), "{junit}");
}

/// #11: SIGHUP (a closed terminal or SSH session) and SIGQUIT used to end goldgate at once,
/// with no report, leaving the agent's children running.
#[cfg(unix)]
#[test]
fn sighup_and_sigquit_write_the_reports_and_stop_the_agent_with_its_children() {
    for signal in ["HUP", "QUIT"] {
        let dir = tempfile::tempdir().unwrap();
        faults_support::suite(dir.path(), 3);
        let script = format!(
            "{}\nIFS= read -r line; reply_with_rest '\"messages\":[]'\nsleep 1000 &\necho $$ $! > pids\ncat > /dev/null",
            faults_support::SH_REPLY
        );
        faults_support::command_agent(dir.path(), &script, "");
        let stopped = faults_support::signal_goldgate(dir.path(), signal);
        faults_support::assert_stopped_cleanly(dir.path(), stopped, 3);
    }
}

/// #10: an `--agent-cmd` whose shell does not `exec` the agent (`cd dir && ./agent`) left its
/// zombie to goldgate, which counted it alive and waited the whole 3 s grace at every end.
#[cfg(unix)]
#[test]
fn an_agent_command_through_a_shell_that_does_not_exec_ends_without_the_grace_wait() {
    let dir = tempfile::tempdir().unwrap();
    faults_support::suite(dir.path(), 1);
    let reply = r#""messages":[{"text":"Your order ORD-12345 has shipped and should arrive by April 18th."}],"tool_calls":[{"name":"lookup_order","args":{"order_id":"ORD-12345"}}]"#;
    let script = format!(
        "{}\nwhile IFS= read -r line; do reply_with_rest '{reply}'; done\n",
        faults_support::SH_REPLY
    );
    fs::write(dir.path().join("agent.sh"), script).unwrap();
    let started = std::time::Instant::now();
    let (ran, report, _) = faults_support::run(dir.path(), &["--agent-cmd", "cd . && sh agent.sh"]);
    let ended = started.elapsed();
    ran.exits(0);
    assert_eq!(report.unwrap()["verdict"], "pass");
    // A turn on loopback takes milliseconds; the grace period alone was 3 s.
    assert!(ended < std::time::Duration::from_millis(2500), "{ended:?}");
}

/// #24: the event payload at `GITHUB_EVENT_PATH` was read whole on every run: `/dev/zero`
/// took gigabytes, and a named pipe hung the run.
#[cfg(unix)]
#[test]
fn an_event_payload_that_is_no_file_is_not_read() {
    let (addr, _script) = common::script::start_agent();
    let url = format!("http://{addr}/turn");
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 1);
    let fifo = dir.path().join("event.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for event in [Path::new("/dev/zero"), &fifo] {
        let (ran, peak_kib) = common::process::measured(
            common::process::command_in(dir.path())
                .env("GITHUB_EVENT_PATH", event)
                .args(["run", "--agent-url", &url, "."]),
        );
        ran.exits(0);
        faults_support::assert_stayed_small(peak_kib);
    }
}

/// #23: `run.budget: 0` was accepted (while `--budget 0` is refused) and ran nothing, and
/// `run.budget: -5` read "expected a non-negative number of US dollars, found a number".
#[test]
fn a_budget_of_zero_or_below_in_the_config_is_refused_saying_what_it_was() {
    let (addr, _script) = common::script::start_agent();
    let url = format!("http://{addr}/turn");
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 1);
    for (budget, said) in [
        ("0", "a budget of 0 would run nothing"),
        (
            "-5",
            "expected a non-negative number of US dollars, found -5",
        ),
    ] {
        common::write(
            dir.path(),
            "goldgate.yaml",
            format!("agent:\n  http: {{ url: \"{url}\" }}\nrun: {{ budget: {budget} }}\n"),
        );
        goldgate(dir.path(), &["run", "goldens"]).exits(2).warns(&[
            "goldgate.yaml",
            "run.budget",
            said,
        ]);
    }
}
