//! Defects a fault trial of the release binary found (numbered as in its write-up), each
//! driven through the binary as a CI job would meet it: an edited baseline, a closed pipe,
//! a report of another suite, a hostile file name.

use crate::common;
use std::fs;
use std::net::SocketAddr;
use std::path::Path;

use common::{Outcome, goldgate, read_json};
use serde_json::Value;

/// Three one-turn order conversations `c1`..`c3` in one SCRAPI golden.
fn write_suite(dir: &Path) {
    let conversations: String = (1..=3)
        .map(|i| common::order_conversation(&format!("c{i}")))
        .collect();
    common::order_golden(dir, &conversations);
}

/// `goldgate run` of the suite in `dir` against the agent at `addr`, with `extra` flags.
fn run(dir: &Path, addr: SocketAddr, extra: &[&str]) -> Outcome {
    let url = format!("http://{addr}/turn");
    let mut args = vec!["run", "--agent-url", &url, "--retries", "0"];
    args.extend_from_slice(extra);
    args.push(".");
    goldgate(dir, &args)
}

/// Port 9 of loopback, where nothing listens: a call would be an error of the run.
fn nowhere() -> SocketAddr {
    "127.0.0.1:9".parse().unwrap()
}

/// Rewrites the JSON file at `path` with `edit`.
fn edit_json(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut value = read_json(path);
    edit(&mut value);
    fs::write(path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
}

/// #1: a 22-byte edit of a committed baseline's latency count used to abort every gated run
/// after all its cases ran, with no report.
#[test]
fn an_absurd_latency_count_in_a_baseline_is_refused_before_any_case_runs() {
    let (addr, _script) = common::script::start_agent();
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    run(dir.path(), addr, &["--update-baseline", "baseline.json"]).exits(0);
    let baseline = dir.path().join("baseline.json");
    let gated = ["--baseline", "baseline.json", "--fail-on-regress"];

    edit_json(&baseline, |b| {
        b["samples"]["latency"] = "7:1000000000000".into()
    });
    run(dir.path(), nowhere(), &gated)
        .exits(2)
        .warns(&[
            "baseline.json: samples.latency: 1000000000000 latencies, over the 1000000",
            "--update-baseline",
        ])
        // Refused before any case was played against the agent.
        .never_prints(&["could not be judged"]);
    goldgate(
        dir.path(),
        &["compare", "baseline.json", "--baseline", "baseline.json"],
    )
    .exits(2)
    .warns(&["samples.latency: 1000000000000 latencies"]);

    // The same bound covers each case's own times.
    edit_json(&baseline, |b| {
        b["samples"]["latency"] = "7:10".into();
        b["cases"][1]["turn_times"]["ttft"] = "7:18446744073709551615".into();
    });
    run(dir.path(), nowhere(), &gated)
        .exits(2)
        .warns(&["cases[1].turn_times.ttft (case goldens/orders.yaml#c2): 18446744073709551615"])
        .never_prints(&["could not be judged"]);
}

/// `goldgate run` of the suite in `dir` with stderr into a pipe whose reader is gone, as
/// `goldgate run ... 2>&1 | head -1` leaves it: its exit code.
fn run_into_a_closed_stderr(dir: &Path, addr: SocketAddr) -> Option<i32> {
    let url = format!("http://{addr}/turn");
    let mut child = common::process::command_in(dir)
        .args(["run", "--agent-url", &url, "--retries", "0"])
        .args(["--output", "report.json", "."])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    child.wait().unwrap().code()
}

/// #5: a CI script piping goldgate's output into `head` used to go red (134) whatever the
/// verdict.
#[test]
fn a_closed_stderr_leaves_the_exit_code_the_verdict() {
    let (addr, script) = common::script::start_agent();
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    assert_eq!(run_into_a_closed_stderr(dir.path(), addr), Some(0));
    script.lock().unwrap().wrong.insert("c2".to_owned());
    assert_eq!(run_into_a_closed_stderr(dir.path(), addr), Some(1));
}

/// #7: a passing report of another suite given to `--rerun` used to turn the run green
/// without one call to the agent.
#[test]
fn a_rerun_of_another_suites_report_is_refused_before_any_case_runs() {
    let (addr, script) = common::script::start_agent();
    let other = tempfile::tempdir().unwrap();
    write_suite(other.path());
    run(other.path(), addr, &["--output", "other.json"]).exits(0);

    let dir = tempfile::tempdir().unwrap();
    common::order_golden(dir.path(), &common::order_conversation("d1"));
    fs::copy(
        other.path().join("other.json"),
        dir.path().join("other.json"),
    )
    .unwrap();
    script.lock().unwrap().wrong.insert("d1".to_owned());
    run(
        dir.path(),
        addr,
        &["--rerun", "other.json", "--output", "out.json"],
    )
    .exits(2)
    .warns(&[
        "--rerun: other.json is a report of other cases than those selected",
        "nothing was run",
    ])
    .never_prints(&["all 3 cases passed"]);
    assert!(!dir.path().join("out.json").exists());
    assert!(!script.lock().unwrap().asked.contains_key("d1"));
}

/// #18: a golden's file name printed raw by `list` could inject a GitHub workflow command.
#[test]
fn list_escapes_a_file_name_that_would_be_a_workflow_command() {
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    let forged = dir
        .path()
        .join("goldens/x\n::error title=FORGED::forged by a file name\n.yaml");
    fs::rename(dir.path().join("goldens/orders.yaml"), forged).unwrap();
    let listed = goldgate(dir.path(), &["list", "."]).exits(0);
    assert!(listed.stdout.contains("c1"), "{}", listed.stdout);
    let mut lines = listed.stdout.lines().chain(listed.stderr.lines());
    assert!(
        lines.all(|line| !line.trim_start().starts_with("::")),
        "{}",
        listed.stdout
    );
    assert!(
        listed.stdout.contains(r"x\n::error title=FORGED"),
        "{}",
        listed.stdout
    );
}

/// #14: shards run with different gate policies used to merge into the first file's policy,
/// so that the order of the files decided between a red and a green verdict.
#[test]
fn shards_of_different_gate_policies_are_not_merged() {
    let (addr, _script) = common::script::start_agent();
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    run(dir.path(), addr, &["--update-baseline", "baseline.json"]).exits(0);
    let gated = ["--baseline", "baseline.json", "--fail-on-regress"];
    let first = [&["--shard", "1/2", "--output", "part-1.json"][..], &gated].concat();
    run(dir.path(), addr, &first);
    run(
        dir.path(),
        addr,
        &["--shard", "2/2", "--output", "part-2.json"],
    );
    for parts in [
        ["part-1.json", "part-2.json"],
        ["part-2.json", "part-1.json"],
    ] {
        goldgate(
            dir.path(),
            &["merge", parts[0], parts[1], "--output", "all.json"],
        )
        .exits(2)
        .warns(&["gate policies", "--fail-on-regress"]);
        assert!(!dir.path().join("all.json").exists());
    }
}

/// #4: a report past the size `--baseline`, `--rerun`, `compare` and `merge` read used to be
/// written all the same, and then refused by every one of them.
#[test]
fn a_report_too_big_to_read_back_is_not_written() {
    // Replies are kept in part (#2), but what the goldens say is kept whole: twenty goldens,
    // each a turn whose user says 14 MB, make over 256 MiB of report. They expand to 267 MiB
    // in memory, under the 512 MiB the goldens may expand to in all (#8).
    let (addr, _script) = common::script::start_agent();
    let dir = tempfile::tempdir().unwrap();
    let said = "Where is ORD-12345? ".repeat(700_000);
    fs::create_dir_all(dir.path().join("goldens")).unwrap();
    for i in 1..=20 {
        let conversation = common::order_conversation(&format!("big{i}"))
            .replace("user: Where is ORD-12345?", &format!("user: {said}"));
        let golden = format!(
            "common_session_parameters:\n  order_12345_status: shipped\nconversations:\n{conversation}"
        );
        fs::write(dir.path().join(format!("goldens/big{i}.yaml")), golden).unwrap();
    }
    run(
        dir.path(),
        addr,
        &["--concurrency", "2", "--output", "report.json"],
    )
    .exits(2)
    .warns(&[
        "cannot write the JSON report to report.json",
        "over the 256 MiB a report may hold to be read back",
    ]);
    assert!(!dir.path().join("report.json").exists());
}

/// #13: with stdout on a full disk, the run used to exit 2 while its report said exit 0.
#[test]
fn a_full_stdout_leaves_the_exit_code_the_verdict() {
    let (addr, _script) = common::script::start_agent();
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    let url = format!("http://{addr}/turn");
    let full = fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let ran = common::process::command_in(dir.path())
        .args(["run", "--agent-url", &url, "--output", "report.json", "."])
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert_eq!(ran.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("cannot print the results on standard output"),
        "{stderr}"
    );
    assert_eq!(read_json(&dir.path().join("report.json"))["exit"], 0);
}
