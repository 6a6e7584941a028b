//! The exit code is the gate's verdict: what a pull request shows. Through the binary, against
//! a loopback agent: with `--baseline F --fail-on-regress`, known failures, quarantined cases
//! and undecided comparisons are listed but never red; a new failing case, a deterministic
//! break and a clear slowdown are red; a run that judged nothing is never green. Every output
//! opens with the same verdict as the exit code.

use crate::common;
use common::script::{GATED_WITH_OUTPUTS as GATED, order_suite as setup, run_suite as run};
use common::{Outcome, goldgate};

use std::collections::HashSet;
use std::fs;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

fn baseline(dir: &Path, addr: SocketAddr) {
    let out = run(dir, addr, &["--update-baseline", "baseline.json"]);
    assert!(
        matches!(out.code, Some(0 | 1)),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
}

fn report(dir: &Path) -> Value {
    serde_json::from_slice(&fs::read(dir.join("report.json")).unwrap()).unwrap()
}

/// With `config` as goldgate.yaml, the gated run is refused before anything runs (exit 2).
fn refused_config(dir: &Path, addr: SocketAddr, config: &str) -> Outcome {
    common::write(dir, "goldgate.yaml", config);
    run(dir, addr, GATED).exits(2)
}

/// The verdict every output opens with: the terminal's last line, the JSON, the Markdown
/// heading and the page's title all agree with the exit code.
fn assert_every_output_says(dir: &Path, out: &Outcome, code: i32, verdict: &str, headline: &str) {
    assert_eq!(out.code, Some(code), "{}\n{}", out.stdout, out.stderr);
    out.says(&[&format!("Result: {headline}"), &format!("(exit {code})")]);
    let json = report(dir);
    assert_eq!(json["verdict"], verdict);
    assert_eq!(json["exit"], code);
    let summary = fs::read_to_string(dir.join("summary.md")).unwrap();
    let heading = summary.lines().find(|l| l.starts_with("### ")).unwrap();
    let plain = heading.replace('\\', "");
    assert!(plain.contains(headline), "{heading}");
    let page = fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        page.contains(&format!("<title>goldgate: {headline}")),
        "{}",
        &page[..page.len().min(400)]
    );
}

#[test]
fn known_failures_are_listed_and_never_red() {
    let (dir, addr, script) = setup(6);
    script.lock().unwrap().wrong.insert("c02".to_owned());
    baseline(dir.path(), addr);

    let out = run(dir.path(), addr, GATED);
    assert_every_output_says(
        dir.path(),
        &out,
        0,
        "pass",
        "no regression (1 known failure)",
    );
    out.says(&["Known failures, failing on main too (not blocking) (1):"]);
    assert_eq!(report(dir.path())["gate"]["known_failures"][0]["id"], "c02");

    // Without --fail-on-regress, a failing case fails the run, as it always did.
    let out = run(dir.path(), addr, &["--baseline", "baseline.json"]).exits(1);
    out.says(&["Result: 1 of 6 cases failed"]);
}

#[test]
fn a_new_failing_case_and_a_deterministic_break_are_red() {
    let (dir, addr, script) = setup(5);
    baseline(dir.path(), addr);
    // A case the baseline does not have, failing.
    let golden = dir.path().join("goldens/orders.yaml");
    let mut text = fs::read_to_string(&golden).unwrap();
    text.push_str(&common::order_conversation("c99"));
    fs::write(&golden, text).unwrap();
    script.lock().unwrap().wrong.insert("c99".to_owned());
    let out = run(dir.path(), addr, GATED);
    assert_every_output_says(
        dir.path(),
        &out,
        1,
        "regressed",
        "regressed: 1 case newly failing",
    );
    out.says(&["a new case must pass"]);

    // A case that passed on main now fails in every run: red, and the report says why.
    script.lock().unwrap().wrong = HashSet::from(["c03".to_owned()]);
    let out = run(dir.path(), addr, GATED).exits(1);
    out.says(&["failed all 8 runs here"]);
}

#[test]
fn a_fivefold_slowdown_on_five_turns_is_red_with_a_one_run_baseline() {
    let (dir, addr, script) = setup(5);
    baseline(dir.path(), addr);
    script.lock().unwrap().delay = Duration::from_millis(120);
    let out = run(dir.path(), addr, GATED).exits(1);
    out.says(&["p95 latency"]);
    assert_eq!(report(dir.path())["verdict"], "regressed");
    // Every case passed: JUnit counts the tripped threshold as the run's failure.
    let junit = fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    common::assert_contains(
        &junit,
        &[
            "<testsuites name=\"goldgate\" tests=\"6\" failures=\"1\"",
            "<testcase name=\"p95 latency regressed\" classname=\"goldgate\"",
            "type=\"regression\"",
        ],
    );
    // The regression has no golden line to fail on: the run's annotation names it, red as the
    // exit code is; an advisory gate's (without --fail-on-regress) is a warning, as its exit 0.
    let actions = run_in_actions(dir.path(), addr, GATED);
    common::assert_contains(
        &actions,
        &[
            "::error title=goldgate%3A p95 latency regressed::p95LatencyIncreasePct (p95 latency rose ",
        ],
    );
    let advisory: Vec<&str> = (GATED.iter().copied())
        .filter(|flag| *flag != "--fail-on-regress")
        .collect();
    let actions = run_in_actions(dir.path(), addr, &advisory);
    common::assert_contains(
        &actions,
        &["::warning title=goldgate%3A p95 latency regressed::"],
    );
    common::assert_lacks(&actions, &["::error"]);
}

#[test]
fn quarantined_cases_do_not_block_until_their_date() {
    let (dir, addr, script) = setup(4);
    baseline(dir.path(), addr);
    script.lock().unwrap().wrong.insert("c04".to_owned());
    let quarantine = |expires: &str| {
        common::write(
            dir.path(),
            "goldgate.yaml",
            format!(
                "quarantine:\n  - case: goldens/orders.yaml#c04\n    owner: \"@maria\"\n    reason: refunds API flaky, INC-2211\n    expires: {expires}\n"
            ),
        );
    };
    quarantine("2999-12-31");
    let out = run(dir.path(), addr, GATED);
    assert_every_output_says(dir.path(), &out, 0, "pass", "no regression (1 quarantined)");
    out.says(&[
        "quarantined until 2999-12-31, owner @maria: refunds API flaky",
        "FAILED (quarantined)",
    ]);
    // Without the gate deciding, the quarantined failure does not fail the run either.
    run(dir.path(), addr, &[]).exits(0);

    quarantine("2001-01-31");
    let out = run(dir.path(), addr, GATED).exits(1);
    out.says(&["quarantine expired 2001-01-31 (blocks again)"]);
    // Without a gate too: the failure says why it blocks again.
    let expired = "quarantine expired 2001-01-31 (blocks again), owner @maria";
    let plain = run(dir.path(), addr, &["--markdown", "plain.md"]).exits(1);
    plain.says(&[expired, "FAILED (quarantine expired)"]);
    let summary = fs::read_to_string(dir.path().join("plain.md")).unwrap();
    common::assert_contains(&summary, &["quarantine expired 2001\\-01\\-31"]);

    // A quarantine that does not say why, or when, is refused with its line.
    refused_config(
        dir.path(),
        addr,
        "quarantine:\n  - case: c04\n    owner: \"@maria\"\n    expires: next week\n",
    )
    .warns(&["missing required key `reason`", "`next week` is not a date"]);
    let lint = goldgate(dir.path(), &["lint", "."]).exits(1);
    lint.says(&["goldgate.yaml:4"]);
}

#[test]
fn an_open_decision_is_a_warning_unless_fail_on_inconclusive() {
    let (dir, addr, script) = setup(4);
    // Two runs a case on main, two now, no adaptive repeats: a case failing one run of two
    // now looks worse, but two runs a side cannot tell it from noise.
    let two = ["--repeat", "2"];
    run(
        dir.path(),
        addr,
        &[&two[..], &["--update-baseline", "baseline.json"]].concat(),
    )
    .exits(0);
    // Every other answer is wrong: one run of each two fails.
    script.lock().unwrap().flaky.insert("c01".to_owned(), 2);
    let flags = [GATED, &two, &["--max-repeat", "2"]].concat();
    let out = run(dir.path(), addr, &flags);
    assert_every_output_says(dir.path(), &out, 0, "inconclusive", "no regression shown (");
    out.says(&["undecided"]);
    // An open decision says what the run could have seen.
    out.says(&["could detect a "]);
    let actions = run_in_actions(dir.path(), addr, &flags);
    common::assert_contains(&actions, &["::warning file=goldens/orders.yaml,line="]);
    common::assert_lacks(&actions, &["::error"]);
    let outputs = fs::read_to_string(dir.path().join("outputs.txt")).unwrap();
    common::assert_contains(&outputs, &["verdict=inconclusive\n"]);

    run(
        dir.path(),
        addr,
        &[&flags[..], &["--fail-on-inconclusive"]].concat(),
    )
    .exits(1);
    assert_eq!(report(dir.path())["verdict"], "inconclusive");
    // Red wherever it is shown, as the exit code is (it read yellow before the summary).
    let summary = fs::read_to_string(dir.path().join("summary.md")).unwrap();
    let heading = summary.lines().find(|l| l.starts_with("### ")).unwrap();
    assert!(heading.contains("❌ inconclusive"), "{heading}");
    let page = fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(page.contains("<header class=\"verdict failed\""));
}

/// The run as GitHub Actions runs it: its annotations (stdout), with the step outputs in
/// `outputs.txt`.
fn run_in_actions(dir: &Path, addr: SocketAddr, extra: &[&str]) -> String {
    let url = format!("http://{addr}/turn");
    let mut command = common::command_in(dir);
    command
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_WORKSPACE", dir)
        .env("GITHUB_OUTPUT", dir.join("outputs.txt"))
        .args(["run", "--agent-url", &url, "--retries", "0"])
        .args(extra)
        .arg(".");
    Outcome::of(&mut command).stdout
}

#[test]
fn a_run_that_judged_nothing_is_never_green() {
    let (dir, addr, script) = setup(3);
    script.lock().unwrap().broken = ["c01", "c02", "c03"].map(str::to_owned).into();
    let out = run(dir.path(), addr, &["--max-errors", "10"]).exits(2);
    out.warns(&["nothing was judged, so the run cannot pass"]);
    out.says(&["Result: nothing was judged"]);
}

/// `goldgate ARGS` in `dir` with its stdout closed before it writes a byte (`| head -0`, a
/// log collector that went away): its exit code.
fn with_stdout_closed(dir: &Path, args: &[&str]) -> Option<i32> {
    let mut child = common::process::command_in(dir)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait().unwrap().code()
}

#[test]
fn a_closed_stdout_changes_neither_the_exit_code_nor_the_reports() {
    let (dir, addr, script) = setup(3);
    script.lock().unwrap().wrong.insert("c02".to_owned());
    let url = format!("http://{addr}/turn");
    let args = [
        "run",
        "--agent-url",
        &url,
        "--output",
        "report.json",
        "--junit",
        "junit.xml",
        ".",
    ];
    assert_eq!(with_stdout_closed(dir.path(), &args), Some(1));
    assert_eq!(report(dir.path())["verdict"], "failed");
    assert!(dir.path().join("junit.xml").is_file());

    // lint with errors, its output unread: still 1.
    common::write(dir.path(), "goldens/broken.yaml", "conversations: [\n");
    assert_eq!(with_stdout_closed(dir.path(), &["lint", "."]), Some(1));
}

#[test]
fn a_floor_holds_whatever_the_baseline_says() {
    let (dir, addr, script) = setup(4);
    script.lock().unwrap().wrong.insert("c02".to_owned());
    baseline(dir.path(), addr);
    common::write(
        dir.path(),
        "goldgate.yaml",
        "floors:\n  min_pass_rate: 0.9\n  max_failed_cases: 1\n",
    );
    // A known failure does not trip the gate, but the suite is below its floor.
    let out = run(dir.path(), addr, GATED);
    assert_every_output_says(
        dir.path(),
        &out,
        1,
        "failed",
        "below the floor: pass rate at least 90%: 75.0% (goldgate.yaml:2)",
    );
    out.says(&["Floor: at most 1 failed cases: 1 failed (goldgate.yaml:3) met"]);
    // The known failure is a warning; what fails the run is the floor, annotated where it is
    // written.
    let actions = run_in_actions(dir.path(), addr, GATED);
    common::assert_contains(
        &actions,
        &[
            "::error file=goldgate.yaml,line=2,title=goldgate%3A floor not met::pass rate at least 90%",
            "::warning file=goldens/orders.yaml,",
        ],
    );

    refused_config(
        dir.path(),
        addr,
        "floors:\n  min_pass_rate: 90\n  max_failed: 1\n",
    )
    .warns(&[
        "`floors.min_pass_rate` must be a share between 0 and 1",
        "unknown key `max_failed`",
        "max_failed_cases",
    ]);
}

#[test]
fn an_agent_that_does_not_start_still_leaves_every_report() {
    let (dir, _, _) = setup(2);
    let mut args = vec![
        "run",
        "--agent-cmd",
        "echo 'config not found' >&2; printf 'bad\\033[2Jterm\\n' >&2; exit 3",
        ".",
    ];
    args.extend(common::EVERY_REPORT);
    let ran = goldgate(dir.path(), &args).exits(2);
    // Its last words read as lines under the case, each one made safe.
    // (goldgate's own note that the ping could not be written may come first: a race.)
    ran.warns(&[
        "goldgate: 2 case(s) could not be judged, agent not started (it failed to start)",
        "stderr ends with:\n    ",
        "\n    config not found\n    bad\\u{1b}[2Jterm",
    ]);
    // The notice that the agent did not start quotes it made safe too.
    ran.never_prints(&["\u{1b}"]);
    for file in common::EVERY_REPORT.iter().skip(1).step_by(2) {
        assert!(dir.path().join(file).is_file(), "{file} was not written");
    }
    let json = report(dir.path());
    assert_eq!(json["verdict"], "error");
    let error = json["cases"][0]["error"].as_str().unwrap();
    common::assert_contains(error, &["the agent did not start"]);
    let junit = fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    common::assert_contains(&junit, &["errors=\"2\""]);
}

#[test]
fn outputs_that_cannot_be_written_are_refused_before_the_agent_is_called() {
    let (dir, addr, _) = setup(1);
    fs::create_dir(dir.path().join("out")).unwrap();
    for flag in ["--output", "--html", "--junit", "--markdown"] {
        let out = run(dir.path(), addr, &[flag, "out"]);
        assert_eq!(out.code, Some(2), "{flag}: {}", out.stderr);
        assert!(
            out.stderr.contains("is a directory"),
            "{flag}: {}",
            out.stderr
        );
        assert!(
            !out.stdout.contains("Result:"),
            "{flag}: the run went ahead"
        );
    }
    // A device is refused before the run, never replaced by a file.
    #[cfg(target_os = "linux")]
    {
        let out = run(dir.path(), addr, &["--output", "/dev/full"]).exits(2);
        out.warns(&["/dev/full"]);
        assert!(!fs::metadata("/dev/full").unwrap().is_file());
    }
}

#[test]
fn flags_that_would_mislead_are_refused_and_the_run_says_where_its_reports_are() {
    let (dir, addr, _) = setup(1);
    let out = run(dir.path(), addr, &["--timeout", "5"]).exits(2);
    out.warns(&["`5` has no unit: write `5s`"]);
    let out = run(dir.path(), addr, &["--concurrency", "0"]).exits(2);
    out.warns(&["must be at least 1"]);

    let out = run(
        dir.path(),
        addr,
        &["--output", "r.json", "--junit", "j.xml"],
    )
    .exits(0);
    out.warns(&["goldgate: reports in r.json, j.xml"]);
    // No progress bar in a log: a line per case as it finishes.
    out.warns(&["goldgate: [1/1] passed c01 (goldens/orders.yaml:"]);
}

#[test]
fn report_gates_a_saved_run_as_the_run_would() {
    let (dir, addr, script) = setup(3);
    baseline(dir.path(), addr);
    script.lock().unwrap().wrong.insert("c02".to_owned());
    run(dir.path(), addr, &["--output", "saved.json"]).exits(1);
    for (flags, code, why) in [
        (
            &["--fail-on-regress"][..],
            1,
            "gated afterwards: one run a side, a case that passed on main now fails",
        ),
        (
            &[][..],
            1,
            "without --fail-on-regress it exits as the run did",
        ),
        (
            &["--fail-on-inconclusive"][..],
            2,
            "with --fail-on-inconclusive",
        ),
    ] {
        let args = [
            &["report", "saved.json", "--baseline", "baseline.json"],
            flags,
        ]
        .concat();
        let out = goldgate(dir.path(), &args);
        assert_eq!(out.code, Some(code), "{why}: {args:?}\n{}", out.stderr);
    }
}

/// `compare`'s gate always decides its exit code: its help offers no `--fail-on-regress`, a
/// flag it could only refuse, while `run`, `report` and `merge`, whose gate decides only when
/// asked, offer it.
#[test]
fn compare_offers_no_fail_on_regress_and_the_others_do() {
    let here = Path::new(".");
    for help in ["--help", "-h"] {
        let out = goldgate(here, &["compare", help]).exits(0);
        out.never_prints(&["--fail-on-regress"]);
        out.says(&["--fail-on-inconclusive"]);
    }
    goldgate(here, &["compare", "--help"]).says(&["The gate always decides the exit code"]);
    for command in ["run", "report", "merge"] {
        (goldgate(here, &[command, "--help"]).exits(0)).says(&["--fail-on-regress"]);
    }
    let given = [
        "compare",
        "r.json",
        "--baseline",
        "b.json",
        "--fail-on-regress",
    ];
    let out = goldgate(here, &given).exits(2);
    out.warns(&["unexpected argument '--fail-on-regress'"]);
}

/// `--filter` or `--name` against the whole suite's baseline gates the chosen cases only, as
/// `--changed-since` does: the others are not "not run now", and the whole suite's pooled
/// latencies are not held against a few cases'.
#[test]
fn a_run_of_chosen_cases_is_gated_on_those_cases() {
    let (dir, addr, _script) = setup(6);
    baseline(dir.path(), addr);
    let chosen = run(dir.path(), addr, &[GATED, &["--name", "c0[12]"]].concat()).exits(0);
    chosen.never_prints(&["not run now"]);
    let gate = &report(dir.path())["gate"];
    assert_eq!(gate["missing"], serde_json::json!([]), "{gate}");
    let p95 = gate["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["threshold"] == "p95LatencyIncreasePct")
        .unwrap();
    assert_eq!(p95["baseline"], Value::Null, "{p95}");
    // Why, in every output: the baseline measured it, over the whole suite.
    let why = "kept for the whole suite only, and the run played part of it";
    chosen.says(&[&format!("p95 latency         not measured: {why}")]);
    let summary = fs::read_to_string(dir.path().join("summary.md")).unwrap();
    common::assert_contains(&summary, &[why]);
}

/// More errors than allowed outrank the gate (exit 2), but a regression it found is said on
/// the verdict line too: retrying the job for its errors will not clear it.
#[test]
fn a_regression_beside_too_many_errors_is_still_named() {
    let (dir, addr, script) = setup(4);
    baseline(dir.path(), addr);
    script.lock().unwrap().wrong.insert("c01".to_owned());
    script.lock().unwrap().broken.insert("c02".to_owned());
    let out = run(dir.path(), addr, GATED).exits(2);
    out.says(&[
        "Result: could not be judged: 1 of 4 cases errored (--max-errors 0); the gate found a \
         regression too (exit 2)",
    ]);
    assert_eq!(report(dir.path())["verdict"], "error");
}
