//! How `goldgate run` schedules cases against the agent, seen from the agent's side: a case
//! that is being graded (a case-level judge can take seconds) has given up its place, so at
//! `--concurrency 1` the next conversation starts while the judge is still thinking.

use crate::{common, llm_support};
use std::fs;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

use llm_support::{Answer, FakeProvider, KEY, Provider, goldgate, run};

/// How long the judge takes over each case-level question.
const JUDGE_THINKS: Duration = Duration::from_millis(1500);

#[test]
fn the_next_conversation_starts_while_the_last_case_is_judged() {
    let dir = tempfile::tempdir().unwrap();
    // The agent notes when each turn arrives.
    let arrivals: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let agent = common::serve_turn(
        |State(arrivals): State<Arc<Mutex<Vec<Instant>>>>, Json(_): Json<Value>| async move {
            arrivals.lock().unwrap().push(Instant::now());
            Json(json!({ "messages": [{ "text": "Orders ship within two days." }] }))
        },
        Arc::clone(&arrivals),
    );
    let judge = FakeProvider::start(
        Provider::Anthropic,
        Arc::new(|seen: &llm_support::Seen| {
            std::thread::sleep(JUDGE_THINKS);
            let tool = seen.forced.clone().unwrap_or_default();
            Answer::Calls(vec![(
                tool,
                json!({ "passed": true, "explanation": "met" }),
            )])
        }),
    );
    common::write(
        dir.path(),
        "goldgate.yaml",
        format!(
            "agent:\n  http: {{ url: \"http://{agent}/turn\" }}\njudge:\n  provider: anthropic\n  model: judge-model\n  base_url: \"{}\"\n",
            judge.base_url()
        ),
    );
    for name in ["first", "second"] {
        fs::write(
            dir.path().join(format!("{name}.scenario.yaml")),
            format!(
                "id: {name}\nwhen:\n  - user: how fast do you ship?\nthen:\n  - scorer: llm-judge-helpfulness\n    args: {{ criteria: \"answers the question\" }}\n"
            ),
        )
        .unwrap();
    }

    run(
        goldgate(dir.path())
            .env(Provider::Anthropic.key_var(), KEY)
            .args(["run", "--no-cache", "--concurrency", "1", "."]),
        dir.path(),
    )
    .exits(0);
    let arrivals = arrivals.lock().unwrap();
    assert_eq!(arrivals.len(), 2, "one turn per case");
    let gap = arrivals[1] - arrivals[0];
    // Waiting for the first case's judgement would put the second turn JUDGE_THINKS later.
    assert!(
        gap < JUDGE_THINKS * 2 / 3,
        "the second conversation waited {gap:?} for the first case's judge"
    );
}

/// How long the agent holds the slow case's turn.
const SLOW_TURN: Duration = Duration::from_secs(4);

/// In a CI log (stderr not a terminal) each case's line is written soon after it finishes,
/// whatever is still playing: the lines are batched, but a slow case does not hold back the
/// line of one that finished before it.
#[test]
fn a_finished_cases_line_is_in_the_log_while_a_slow_case_plays() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;

    let dir = tempfile::tempdir().unwrap();
    let agent = common::serve_turn(
        |Json(turn): Json<Value>| async move {
            if turn.to_string().contains("slowly") {
                tokio::time::sleep(SLOW_TURN).await;
            }
            Json(json!({ "messages": [{ "text": "Orders ship within two days." }] }))
        },
        (),
    );
    common::write(
        dir.path(),
        "goldgate.yaml",
        format!("agent:\n  http: {{ url: \"http://{agent}/turn\" }}\n"),
    );
    for (name, asks) in [
        ("quick", "how fast do you ship?"),
        ("slow", "ship it slowly?"),
    ] {
        common::write(
            dir.path(),
            &format!("{name}.scenario.yaml"),
            format!("id: {name}\nwhen:\n  - user: {asks}\nthen:\n  - scorer: no-error\n"),
        );
    }

    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_goldgate"))
        .current_dir(dir.path())
        .args(["run", "--concurrency", "2", "."])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut quick_line_at = None;
    let mut log = String::new();
    for line in stderr.lines() {
        let line = line.unwrap();
        if line.contains("] passed quick") {
            quick_line_at = Some(Instant::now());
        }
        log.push_str(&line);
        log.push('\n');
    }
    let ended_at = Instant::now();
    assert_eq!(child.wait().unwrap().code(), Some(0), "{log}");
    let quick_line_at = quick_line_at.unwrap_or_else(|| panic!("no line for `quick`:\n{log}"));
    // The quick case's line came while the slow case was still being played.
    assert!(
        ended_at - quick_line_at > SLOW_TURN / 2,
        "the line of the quick case came {:?} before the run ended:\n{log}",
        ended_at - quick_line_at
    );
}
