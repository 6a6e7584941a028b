//! The regression gate through the binary: `run --update-baseline`, `run --baseline
//! --fail-on-regress`, `compare`, `--max-errors`, against a real loopback agent whose
//! behaviour each test changes between runs (slower, hand-offs, a later first token, a wrong
//! answer, an error), so that each threshold is seen to trip for its own reason.

mod common;

use common::script::start_agent;
use common::{Outcome, goldgate};

use std::fs;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

/// Twenty one-turn order conversations `c01`..`c20` in one SCRAPI golden: enough turns that
/// one slow reply on a busy machine is not the p95.
fn write_suite(dir: &Path) {
    let conversations: String = (1..=20)
        .map(|i| common::order_conversation(&format!("c{i:02}")))
        .collect();
    common::order_golden(dir, &conversations);
}

/// The line `c{n}` starts on in the golden.
fn line_of(dir: &Path, conversation: &str) -> usize {
    let golden = fs::read_to_string(dir.join("goldens/orders.yaml")).unwrap();
    1 + golden
        .lines()
        .position(|l| l.ends_with(&format!("conversation: {conversation}")))
        .unwrap()
}

/// `goldgate compare` in `dir`.
fn compare(dir: &Path, args: &[&str]) -> Outcome {
    goldgate(dir, &[&["compare"], args].concat())
}

/// Gate the run on `baseline.json`, failing on a regression.
const GATED: &[&str] = &["--baseline", "baseline.json", "--fail-on-regress"];
/// Keep the run's report in `report.json`.
const REPORT: &[&str] = &["--output", "report.json"];

/// `goldgate run` of the suite in `dir` against the agent at `addr`, with `extra` flags.
fn run(dir: &Path, addr: SocketAddr, extra: &[&str]) -> Outcome {
    let url = format!("http://{addr}/turn");
    let mut args = vec![
        "run",
        "--agent-url",
        &url,
        "--timeout",
        "10s",
        "--retries",
        "0",
    ];
    args.extend_from_slice(extra);
    args.push(".");
    goldgate(dir, &args)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

/// The thresholds that tripped in a report's `gate`, by seed name.
fn tripped(report: &Value) -> Vec<String> {
    report["gate"]["metrics"]
        .as_array()
        .unwrap_or_else(|| panic!("no gate in {report}"))
        .iter()
        .filter(|m| m["tripped"] == true)
        .map(|m| m["threshold"].as_str().unwrap().to_owned())
        .collect()
}

/// A baseline of the well-behaved agent, written by `--update-baseline`.
fn write_baseline(dir: &Path, addr: SocketAddr) {
    let Outcome {
        code,
        stdout: out,
        stderr: err,
    } = run(dir, addr, &["--update-baseline", "baseline.json"]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(err.contains("baseline written to baseline.json"), "{err}");
}

#[test]
fn a_baseline_is_written_then_reused_and_a_flipped_case_is_named() {
    let (addr, script) = start_agent();
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    write_baseline(dir.path(), addr);

    let Outcome {
        code,
        stdout: out,
        stderr: err,
    } = run(dir.path(), addr, GATED);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(
        out.contains("Regression gate (baseline: baseline.json; false-alarm rate 1%)"),
        "{out}"
    );
    assert!(out.contains("Gate: no regression"), "{out}");

    script.lock().unwrap().wrong.insert("c07".to_owned());
    let Outcome {
        code,
        stdout: out,
        stderr: err,
    } = run(dir.path(), addr, &[GATED, REPORT].concat());
    assert_eq!(code, Some(1), "{out}\n{err}");
    let named = format!(
        "Newly failing (1):\n  goldens/orders.yaml:{} c07: passed -> failed (runs passed: 100% -> 0%)",
        line_of(dir.path(), "c07")
    );
    assert!(out.contains(&named), "{out}");
    assert!(
        out.contains("Gate: REGRESSED: 1 case newly failing"),
        "{out}"
    );
    // One passing run and no history in the baseline: by default the case is run again (up
    // to 5 runs), and failing every one of them decides; the report says why. The pass
    // rate's own test cannot tell.
    assert!(
        out.contains(
            "decided by verdict: failed all 5 runs here, against one passing run and no history"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "Note: 1 case(s) passed the baseline's only run (no history) and failed every run here"
        ),
        "{out}"
    );
    assert!(
        out.contains("Result: regressed: 1 case newly failing (1 undecided) (exit 1)"),
        "{out}"
    );
    assert!(
        out.contains("dropped 5 pp (limit 0 pp)     INCONCLUSIVE"),
        "{out}"
    );
    let report = read_json(&dir.path().join("report.json"));
    assert_eq!(report["gate"]["newly_failing"][0]["id"], "c07");
    assert_eq!(report["gate"]["baseline"], "baseline.json");

    // The same gate on the saved report, without any agent.
    let Outcome {
        code, stdout: out, ..
    } = compare(dir.path(), &["report.json", "--baseline", "baseline.json"]);
    assert_eq!(code, Some(1));
    assert!(out.contains(&named), "{out}");
    let Outcome {
        code,
        stdout: out,
        stderr: err,
    } = compare(
        dir.path(),
        &["report.json", "--baseline", "baseline.json", "--json"],
    );
    assert_eq!(code, Some(1));
    let comparison: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(comparison["newly_failing"][0]["id"], "c07");
    assert!(
        err.contains("Newly failing (1)"),
        "the rendering goes to stderr: {err}"
    );
    // Read the other way round, the case is fixed: nothing regressed.
    let Outcome {
        code, stdout: out, ..
    } = compare(dir.path(), &["baseline.json", "--baseline", "report.json"]);
    assert_eq!(code, Some(0), "{out}");
    // One passing run against five failing ones is not yet beyond chance: not listed as
    // newly passing, and nothing regressed.
    assert!(out.contains("Gate: no regression"), "{out}");
}

#[test]
fn a_slower_agent_trips_p95_latency_only_with_fail_on_regress() {
    let (addr, script) = start_agent();
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    write_baseline(dir.path(), addr);

    script.lock().unwrap().delay = Duration::from_millis(400);
    let Outcome {
        code,
        stdout: out,
        stderr: err,
    } = run(
        dir.path(),
        addr,
        &["--baseline", "baseline.json", "--output", "report.json"],
    );
    assert_eq!(
        code,
        Some(0),
        "without --fail-on-regress only failures decide\n{out}\n{err}"
    );
    assert!(out.contains("REGRESSED"), "{out}");
    // Every latency now is slower than every one in the baseline: the exceedance test says
    // so far beyond noise.
    assert!(out.contains("20 vs 20 latencies"), "{out}");
    assert!(
        out.contains("without --fail-on-regress the gate does not decide the exit status"),
        "{out}"
    );
    // Rates are unchanged and TTFT is not measured (no streaming): latency alone trips.
    assert_eq!(
        tripped(&read_json(&dir.path().join("report.json"))),
        ["p95LatencyIncreasePct"]
    );

    let Outcome {
        code, stdout: out, ..
    } = run(dir.path(), addr, GATED);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("Gate: REGRESSED: p95LatencyIncreasePct (p95 latency rose"),
        "{out}"
    );
    assert!(
        out.contains("p95 TTFT            not measured in the baseline or now"),
        "{out}"
    );
}

#[test]
fn hand_offs_trip_deflection() {
    let (addr, script) = start_agent();
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    write_baseline(dir.path(), addr);

    script.lock().unwrap().handoff = true;
    let Outcome {
        code, stdout: out, ..
    } = run(dir.path(), addr, &[GATED, REPORT].concat());
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("100.0% -> 0.0%"), "{out}");
    assert!(
        out.contains("dropped 100 pp (limit 5 pp)   REGRESSED"),
        "{out}"
    );
    // The SCRAPI turns do not check hand-offs: every case still passes.
    let report = read_json(&dir.path().join("report.json"));
    assert_eq!(report["aggregates"]["pass_rate"], 1.0);
    let tripped = tripped(&report);
    assert!(
        tripped.contains(&"deflectionDropPp".to_owned()),
        "{tripped:?}"
    );
    assert!(
        !tripped.contains(&"passRateDropPp".to_owned()),
        "{tripped:?}"
    );
}

#[test]
fn a_later_first_token_trips_ttft() {
    let (addr, script) = start_agent();
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    script.lock().unwrap().late_first_token = Some(false);
    write_baseline(dir.path(), addr);
    let baseline = read_json(&dir.path().join("baseline.json"));
    assert!(
        baseline["aggregates"]["ttft"]["p95_ms"].is_u64(),
        "streamed replies measure TTFT: {}",
        baseline["aggregates"]
    );

    // The same total time per reply, but the text comes last.
    script.lock().unwrap().late_first_token = Some(true);
    let Outcome {
        code, stdout: out, ..
    } = run(dir.path(), addr, &[GATED, REPORT].concat());
    assert_eq!(code, Some(1), "{out}");
    let tripped = tripped(&read_json(&dir.path().join("report.json")));
    assert!(
        tripped.contains(&"ttftP95IncreasePct".to_owned()),
        "{tripped:?}\n{out}"
    );
    assert!(
        !tripped.contains(&"passRateDropPp".to_owned()),
        "{tripped:?}"
    );
}

#[test]
fn a_pass_rate_lower_only_because_fewer_cases_ran_is_no_regression() {
    let (addr, script) = start_agent();
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    script.lock().unwrap().wrong.insert("c01".to_owned());
    // A baseline may hold known failures: 19 of 20 pass.
    let Outcome {
        code, stdout: out, ..
    } = run(dir.path(), addr, &["--update-baseline", "baseline.json"]);
    assert_eq!(code, Some(1), "{out}");

    // Nine cases now, c01 still failing among them: 8 of 9 pass, a lower rate, but every
    // case does what it did. Compared case by case, nothing changed.
    let Outcome {
        code: _,
        stdout: out,
        ..
    } = run(
        dir.path(),
        addr,
        &["--name", "c0*", "--output", "report.json"],
    );
    assert!(out.contains("Total: 9 conversations"), "{out}");
    let Outcome {
        code, stdout: out, ..
    } = compare(dir.path(), &["report.json", "--baseline", "baseline.json"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("95.0% -> 88.9%"), "{out}");
    assert!(!out.contains("Newly failing"), "{out}");
    assert!(
        out.contains("In the baseline, not run now (11): goldens/orders.yaml#c10"),
        "{out}"
    );
    assert!(out.contains("Gate: no regression"), "{out}");
}

#[test]
fn a_pass_rate_drop_spread_over_cases_trips_though_no_single_case_can() {
    let (addr, script) = start_agent();
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    let Outcome {
        code, stdout: out, ..
    } = run(
        dir.path(),
        addr,
        &["--repeat", "3", "--update-baseline", "baseline.json"],
    );
    assert_eq!(code, Some(0), "{out}");
    // Six cases now fail all three runs: 3 of 3 against 0 of 3 is p = 0.05 for each, which
    // a 1% gate over 20 cases cannot call; six of them at once it can.
    let wrong = ["c01", "c02", "c03", "c04", "c05", "c06"];
    script
        .lock()
        .unwrap()
        .wrong
        .extend(wrong.map(str::to_owned));
    let Outcome {
        code, stdout: out, ..
    } = run(dir.path(), addr, &[GATED, &["--repeat", "3"]].concat());
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("Looks worse, undecided (6):"), "{out}");
    assert!(out.contains("not enough runs"), "{out}");
    assert!(!out.contains("Newly failing"), "{out}");
    assert!(
        out.contains("Gate: REGRESSED: passRateDropPp (pass rate dropped 30 pp, limit 0 pp)"),
        "{out}"
    );
    assert!(out.contains("60 vs 60 runs"), "{out}");
}

/// Two reports of one run, `baseline.json` and `report.json`, the hallucination rate set by
/// hand in each (no judge exists yet to measure it).
fn hallucination_reports(dir: &Path, addr: SocketAddr, before: f64, now: f64) {
    let Outcome {
        code, stdout: out, ..
    } = run(dir, addr, &["--output", "run.json"]);
    assert_eq!(code, Some(0), "{out}");
    for (name, rate) in [("baseline.json", before), ("report.json", now)] {
        let mut report = read_json(&dir.join("run.json"));
        report["aggregates"]["hallucination_rate"] = json!(rate);
        fs::write(dir.join(name), serde_json::to_vec_pretty(&report).unwrap()).unwrap();
    }
}

#[test]
fn a_hallucination_rise_trips_and_thresholds_come_from_every_source_in_order() {
    let (addr, _script) = start_agent();
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    hallucination_reports(dir.path(), addr, 0.01, 0.06);
    let gate = |extra: &[&str]| {
        compare(
            dir.path(),
            &[&["report.json", "--baseline", "baseline.json"], extra].concat(),
        )
    };

    let Outcome {
        code, stdout: out, ..
    } = gate(&[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("1.0% -> 6.0%"), "{out}");
    assert!(
        out.contains("rose 5 pp (limit 2 pp)        REGRESSED"),
        "{out}"
    );
    assert!(
        out.contains("Gate: REGRESSED: hallucinationRateIncreasePp"),
        "{out}"
    );
    // Latencies are the same numbers on both sides here: only the edited rate differs.
    assert_eq!(out.matches("REGRESSED").count(), 2, "{out}");
    // No per-case data backs a rate set by hand: the values decide, and the report says so.
    assert!(
        out.contains("decided by the values: nothing to test on"),
        "{out}"
    );

    // goldgate.yaml, then eval.config.json, then --regression-config: later wins.
    fs::write(
        dir.path().join("goldgate.yaml"),
        "thresholds: { hallucinationRateIncreasePp: 10 }\n",
    )
    .unwrap();
    assert_eq!(gate(&[]).code, Some(0));
    // `--config` names another file, for `compare` as for `run`.
    fs::write(
        dir.path().join("strict.yaml"),
        "thresholds: { hallucinationRateIncreasePp: 1 }\n",
    )
    .unwrap();
    assert_eq!(gate(&["--config", "strict.yaml"]).code, Some(1));
    fs::write(
        dir.path().join("eval.config.json"),
        "{\"regressionThresholds\": {\"hallucinationRateIncreasePp\": 4}}",
    )
    .unwrap();
    let Outcome {
        code, stdout: out, ..
    } = gate(&[]);
    assert_eq!(code, Some(1));
    assert!(out.contains("(limit 4 pp)"), "{out}");
    fs::write(
        dir.path().join("gate.json"),
        "{\"hallucinationRateIncreasePp\": 6}",
    )
    .unwrap();
    assert_eq!(gate(&["--regression-config", "gate.json"]).code, Some(0));
    // `report` reads it too: its summary shows the limit it gave.
    let Outcome {
        code,
        stdout: _,
        stderr: err,
    } = goldgate(
        dir.path(),
        &[
            "report",
            "report.json",
            "--baseline",
            "baseline.json",
            "--regression-config",
            "gate.json",
            "--markdown",
            "summary.md",
        ],
    );
    assert_ne!(code, Some(2), "{err}");
    let summary = fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(summary.contains("6 pp"), "{summary}");
    assert!(!summary.contains("4 pp"), "{summary}");

    // A typo is an error with file, line, key and a suggestion: exit 2.
    fs::write(
        dir.path().join("eval.config.json"),
        "{\n  \"regressionThresholds\": {\n    \"halucinationRateIncreasePp\": 4\n  }\n}\n",
    )
    .unwrap();
    let Outcome {
        code,
        stdout: _,
        stderr: err,
    } = gate(&[]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("eval.config.json:3: error [G100] regressionThresholds.halucinationRateIncreasePp: unknown key"),
        "{err}"
    );
    assert!(
        err.contains("did you mean `hallucinationRateIncreasePp`?"),
        "{err}"
    );
    fs::remove_file(dir.path().join("eval.config.json")).unwrap();
    fs::write(
        dir.path().join("gate.yaml"),
        "regressionThresholds:\n  p95Latency: 5\n",
    )
    .unwrap();
    let Outcome {
        code,
        stdout: _,
        stderr: err,
    } = gate(&["--regression-config", "gate.yaml"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("gate.yaml:2: error [G100]"), "{err}");
}

#[test]
fn unreadable_inputs_exit_2_naming_the_file_before_any_agent_call() {
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    // Nothing listens on port 9: a call would be an error of the run, but none must be made.
    let nowhere: SocketAddr = "127.0.0.1:9".parse().unwrap();
    let Outcome {
        code,
        stdout: _,
        stderr: err,
    } = run(dir.path(), nowhere, &["--baseline", "missing.json"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("cannot use the baseline: missing.json: cannot read the report"),
        "{err}"
    );

    fs::write(
        dir.path().join("old.json"),
        "{\"schema_version\": 0, \"cases\": []}",
    )
    .unwrap();
    let Outcome {
        code,
        stdout: _,
        stderr: err,
    } = run(dir.path(), nowhere, &["--baseline", "old.json"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("old.json: a report of schema version 0"),
        "{err}"
    );
    assert!(!err.contains("could not be judged"), "nothing ran: {err}");

    fs::write(dir.path().join("garbage.json"), "not json").unwrap();
    let Outcome {
        code,
        stdout: _,
        stderr: err,
    } = compare(dir.path(), &["garbage.json", "--baseline", "old.json"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("old.json"), "{err}");
    let Outcome {
        code,
        stdout: _,
        stderr: err,
    } = compare(dir.path(), &["garbage.json"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--baseline FILE is required"), "{err}");
}

#[test]
fn errors_are_bounded_by_max_errors_refuse_a_baseline_and_are_never_regressions() {
    let (addr, script) = start_agent();
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    write_baseline(dir.path(), addr);
    script.lock().unwrap().broken.insert("c03".to_owned());
    let listed = format!("  goldens/orders.yaml:{} c03: ", line_of(dir.path(), "c03"));

    // One error, none allowed: exit 2 with the list; the baseline is not replaced.
    let before = fs::read(dir.path().join("baseline.json")).unwrap();
    let Outcome {
        code,
        stdout: out,
        stderr: err,
    } = run(dir.path(), addr, &["--update-baseline", "baseline.json"]);
    assert_eq!(code, Some(2), "{out}\n{err}");
    assert!(err.contains("more than --max-errors 0"), "{err}");
    assert!(err.contains(&listed), "{err}");
    assert!(
        err.contains("not updating the baseline baseline.json: 1 case(s) could not be judged (errors of the run): c03 (--force writes it anyway)"),
        "{err}"
    );
    assert_eq!(fs::read(dir.path().join("baseline.json")).unwrap(), before);

    // Within the limit the failures and the gate decide; the error is not a regression.
    let Outcome {
        code,
        stdout: out,
        stderr: err,
    } = run(
        dir.path(),
        addr,
        &[
            "--max-errors",
            "1",
            "--baseline",
            "baseline.json",
            "--fail-on-regress",
        ],
    );
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(err.contains("within --max-errors 1"), "{err}");
    assert!(out.contains("Gate: no regression"), "{out}");

    // The report records the allowance, so every command reading it exits as the run did.
    let Outcome {
        code,
        stdout: out,
        stderr: err,
    } = run(
        dir.path(),
        addr,
        &["--max-errors", "1", "--output", "within.json"],
    );
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert_eq!(read_json(&dir.path().join("within.json"))["max_errors"], 1);
    let Outcome {
        code,
        stdout: _,
        stderr: err,
    } = goldgate(dir.path(), &["report", "within.json"]);
    assert_eq!(code, Some(0), "report: {err}");
    let Outcome {
        code,
        stdout: _,
        stderr: err,
    } = goldgate(dir.path(), &["merge", "within.json", "-o", "merged.json"]);
    assert_eq!(code, Some(0), "merge: {err}");
    let Outcome {
        code,
        stdout: _,
        stderr: err,
    } = goldgate(
        dir.path(),
        &["compare", "within.json", "--baseline", "baseline.json"],
    );
    assert_eq!(code, Some(0), "compare: {err}");
    let Outcome { code, .. } = run(dir.path(), addr, &["--output", "beyond.json"]);
    assert_eq!(code, Some(2));
    for command in [
        &["report", "beyond.json"][..],
        &["merge", "beyond.json", "-o", "m.json"],
    ] {
        assert_eq!(goldgate(dir.path(), command).code, Some(2), "{command:?}");
    }
    script.lock().unwrap().wrong.insert("c05".to_owned());
    let Outcome { code, .. } = run(dir.path(), addr, &["--max-errors", "1"]);
    assert_eq!(code, Some(1));
    script.lock().unwrap().wrong.clear();

    // --force writes it anyway.
    let Outcome {
        code,
        stdout: _,
        stderr: err,
    } = run(
        dir.path(),
        addr,
        &[
            "--update-baseline",
            "forced.json",
            "--force",
            "--max-errors",
            "1",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let forced = read_json(&dir.path().join("forced.json"));
    let c03 = forced["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "c03")
        .unwrap();
    assert_eq!(c03["status"], "error");
}

#[test]
fn two_runs_of_the_example_suite_give_the_same_baseline_but_for_latency_percentiles() {
    let agent = common::support_agent();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str| {
        let path = dir.path().join(name);
        let output = common::command()
            .args(["run", "examples/suite", "--agent-cmd"])
            .arg(&agent)
            .arg("--update-baseline")
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        fs::read_to_string(path).unwrap()
    };
    let (first, second) = (write("a.json"), write("b.json"));
    assert_eq!(first.lines().count(), second.lines().count());
    for (a, b) in first.lines().zip(second.lines()) {
        let measured = [
            "\"p50_ms\": ",
            "\"p95_ms\": ",
            "\"latency\": ",
            "\"ttft\": ",
        ]
        .iter()
        .any(|key| a.trim_start().starts_with(key) && b.trim_start().starts_with(key));
        assert!(
            a == b || measured,
            "the baselines differ beyond latency:\n{a}\n{b}"
        );
    }
    // Per-request timings and the agent's log are left out.
    let baseline: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(baseline["agent_log"], Value::Null);
    assert_eq!(baseline["gate"], Value::Null);
    assert!(
        first.contains("\"actual\": \"(measured: not kept in the baseline)\""),
        "the example's latency scorer keeps its verdict, not its value"
    );
    for case in baseline["cases"].as_array().unwrap() {
        assert_eq!(case["duration_ms"], 0, "{case}");
        for turn in case["turns"].as_array().unwrap() {
            assert_eq!(turn["latency_ms"], Value::Null, "{turn}");
        }
    }
    // A baseline is a report: comparing it with itself finds nothing.
    let Outcome {
        code, stdout: out, ..
    } = compare(dir.path(), &["a.json", "--baseline", "b.json"]);
    assert_eq!(code, Some(0), "{out}");
}

#[test]
fn adaptive_repeats_rerun_only_what_is_open_and_history_makes_a_broken_case_decidable() {
    let (addr, script) = start_agent();
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    // Two builds of main, five runs each: the baseline's history holds ten runs a case.
    for build in 1..=2 {
        let Outcome {
            code, stderr: err, ..
        } = run(
            dir.path(),
            addr,
            &["--repeat", "5", "--update-baseline", "baseline.json"],
        );
        assert_eq!(code, Some(0), "{err}");
        if build == 2 {
            assert!(
                err.contains("the baseline's history now spans 2 builds"),
                "{err}"
            );
        }
    }
    let baseline = read_json(&dir.path().join("baseline.json"));
    assert_eq!(
        baseline["cases"][0]["history"],
        json!([{"passed": 5, "judged": 5}])
    );
    assert_eq!(baseline["samples"]["builds"], 2);

    // Unchanged: one run a case settles everything.
    let adaptive = [GATED, REPORT, &["--max-repeat", "5"]].concat();
    let Outcome {
        code, stdout: out, ..
    } = run(dir.path(), addr, &adaptive);
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("Adaptive repeats"), "{out}");
    let report = read_json(&dir.path().join("report.json"));
    assert_eq!(report["gate"]["extra_runs"], 0);
    assert_eq!(report["cases"][0]["repeats"], Value::Null);

    // c07 now always fails: one failed run against ten passes could be chance, so the gate
    // reruns, and five failed runs are beyond it.
    script.lock().unwrap().wrong.insert("c07".to_owned());
    let Outcome {
        code, stdout: out, ..
    } = run(dir.path(), addr, &adaptive);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("c07: passed -> failed (runs passed: 100% -> 0%)"),
        "{out}"
    );
    assert!(out.contains("Adaptive repeats: "), "{out}");
    let report = read_json(&dir.path().join("report.json"));
    let gate = &report["gate"];
    assert_eq!(gate["newly_failing"][0]["id"], "c07");
    assert_eq!(gate["newly_failing"][0]["decision"], "regressed");
    assert_eq!(gate["newly_failing"][0]["evidence"]["test"], "fisher");
    assert!(gate["extra_runs"].as_u64().unwrap() > 0, "{gate}");
    assert_eq!(report["alpha_share"], 0.6, "the last look spends 3/5");
    let c07 = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "c07")
        .unwrap();
    assert_eq!(c07["repeats"]["runs"].as_array().unwrap().len(), 5);
}

#[test]
fn gate_flags_that_make_no_sense_exit_2_saying_why() {
    let (addr, _script) = start_agent();
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    write_baseline(dir.path(), addr);
    let bad_rate = run(
        dir.path(),
        addr,
        &[GATED, &["--false-alarm-rate", "0"]].concat(),
    );
    assert_eq!(bad_rate.code, Some(2), "{}", bad_rate.stderr);
    assert!(
        bad_rate
            .stderr
            .contains("`0` is not a percentage between 0 and 100 (exclusive)"),
        "{}",
        bad_rate.stderr
    );
    let below = run(
        dir.path(),
        addr,
        &[GATED, &["--repeat", "3", "--max-repeat", "2"]].concat(),
    );
    assert_eq!(below.code, Some(2), "{}", below.stderr);
    assert!(
        below.stderr.contains("--max-repeat 2 is below --repeat 3"),
        "{}",
        below.stderr
    );
    // A stricter rate is honoured and shown.
    let strict = run(
        dir.path(),
        addr,
        &[GATED, &["--false-alarm-rate", "0.1%"]].concat(),
    );
    assert_eq!(strict.code, Some(0), "{}", strict.stderr);
    assert!(
        strict.stdout.contains("false-alarm rate 0.1%)"),
        "{}",
        strict.stdout
    );
}

#[test]
fn an_agent_nobody_answers_is_named_once_and_each_case_says_why() {
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    let nowhere: SocketAddr = "127.0.0.1:9".parse().unwrap();
    let Outcome {
        code, stderr: err, ..
    } = run(dir.path(), nowhere, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "goldgate: 20 case(s) could not be judged against the agent http://127.0.0.1:9/turn \
             (errors of the run, not test failures; more than --max-errors 0):"
        ),
        "{err}"
    );
    assert!(
        err.contains("  goldens/orders.yaml:4 c01: connection failed"),
        "{err}"
    );
    assert!(err.contains("Connection refused"), "{err}");
}
