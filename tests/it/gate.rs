//! The regression gate through the binary: `run --update-baseline`, `run --baseline
//! --fail-on-regress`, `compare`, `--max-errors`, against a real loopback agent whose
//! behaviour each test changes between runs (slower, hand-offs, a later first token, a wrong
//! answer, an error), so that each threshold is seen to trip for its own reason.

use crate::common;
use common::script::{Shared, start_agent};
use common::{Outcome, assert_contains, assert_lacks, case, goldgate, read_json};

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
/// `compare report.json` against `baseline.json`.
const AGAINST_BASELINE: &[&str] = &["report.json", "--baseline", "baseline.json"];

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

/// Fails unless `report.json` in `dir` tripped `threshold` and not the pass rate.
#[track_caller]
fn trips_only_beside_the_pass_rate(dir: &Path, threshold: &str) {
    let tripped = tripped(&read_json(&dir.join("report.json")));
    assert!(tripped.contains(&threshold.to_owned()), "{tripped:?}");
    assert!(
        !tripped.contains(&"passRateDropPp".to_owned()),
        "{tripped:?}"
    );
}

/// A baseline of the well-behaved agent, written by `--update-baseline`.
fn write_baseline(dir: &Path, addr: SocketAddr) {
    run(dir, addr, &["--update-baseline", "baseline.json"])
        .exits(0)
        .warns(&["baseline written to baseline.json"]);
}

/// A temporary folder holding [`write_suite`], the agent serving it, and (with `baseline`)
/// the agent's baseline.
fn suite_and_agent(baseline: bool) -> (tempfile::TempDir, SocketAddr, Shared) {
    let (addr, script) = start_agent();
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    if baseline {
        write_baseline(dir.path(), addr);
    }
    (dir, addr, script)
}

/// For tests about verdicts, not latency: a loaded CI machine can slow a loopback agent's
/// replies past the latency limits and the 50 ms floor, which would add reruns or a
/// regression the test is not about.
fn latency_out_of_the_way(dir: &Path) {
    fs::write(
        dir.join("goldgate.yaml"),
        "thresholds: { p95LatencyIncreasePct: 100000, ttftP95IncreasePct: 100000 }\n",
    )
    .unwrap();
}

#[test]
fn a_baseline_is_written_then_reused_and_a_flipped_case_is_named() {
    let (dir, addr, script) = suite_and_agent(true);
    latency_out_of_the_way(dir.path());
    run(dir.path(), addr, GATED).exits(0).says(&[
        "Regression gate (baseline: baseline.json; false-alarm rate 1%)",
        "Gate: no regression",
    ]);

    script.lock().unwrap().wrong.insert("c07".to_owned());
    let named = format!(
        "Newly failing (1):\n  goldens/orders.yaml:{} c07: passed -> failed (runs passed: 100% -> 0%)",
        line_of(dir.path(), "c07")
    );
    // One passing run and no history in the baseline: by default the case is run again (up
    // to 8 runs), and failing every one of them decides; the report says why. The pass
    // rate's own test cannot tell.
    run(dir.path(), addr, &[GATED, REPORT].concat())
        .exits(1)
        .says(&[
            &named,
            "Gate: REGRESSED: 1 case newly failing",
            "decided by verdict: failed all 8 runs here, against one passing run and no history",
            "Note: 1 case(s) passed the baseline's only run (no history) and failed every run here",
            // Undecided: the pass rate. The cases combined are clear: c07 alone moved, and a
            // case failing most of its pooled runs counts for little there.
            "Result: regressed: 1 case newly failing (1 undecided) (exit 1)",
            "dropped 5 pp (limit 0 pp)     INCONCLUSIVE",
        ]);
    let report = read_json(&dir.path().join("report.json"));
    assert_eq!(report["gate"]["newly_failing"][0]["id"], "c07");
    assert_eq!(report["gate"]["baseline"], "baseline.json");
    the_saved_report_gates_the_same_without_an_agent(dir.path(), &named);
}

/// A green gated run says how much it looked at, in every output: what a golden must do to
/// trip it, and the smallest worsening of each tested metric these runs could show.
#[test]
fn a_green_gated_run_says_what_it_would_have_caught() {
    let (dir, addr, _) = suite_and_agent(true);
    latency_out_of_the_way(dir.path());
    let outputs = ["--markdown", "summary.md", "--html", "report.html"];
    let out = run(dir.path(), addr, &[GATED, REPORT, &outputs].concat()).exits(0);
    let line = "a golden that never failed on main failing every run; pass rate down ";
    out.says(&[&format!("Would catch: {line}")]);
    let report = read_json(&dir.path().join("report.json"));
    let sight = report["gate"]["sight"]["metrics"].as_array().unwrap();
    let pass_rate = sight
        .iter()
        .find(|m| m["threshold"] == "passRateDropPp")
        .unwrap();
    // Twenty cases that all passed, one run each: a drop is showable, and it is a real amount.
    let smallest = pass_rate["smallest"].as_f64().unwrap();
    assert!(smallest > 0.0 && smallest <= 100.0, "{smallest}");
    let markdown = fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert_contains(
        &markdown,
        &["**This gate would catch:** a golden that never failed"],
    );
    let html = fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert_contains(
        &html,
        &["This gate would catch: a golden that never failed"],
    );
}

/// `compare` on the report of [`a_baseline_is_written_then_reused_and_a_flipped_case_is_named`].
fn the_saved_report_gates_the_same_without_an_agent(dir: &Path, named: &str) {
    compare(dir, AGAINST_BASELINE).exits(1).says(&[named]);
    let json = compare(dir, &[AGAINST_BASELINE, &["--json"]].concat()).exits(1);
    let comparison: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(comparison["newly_failing"][0]["id"], "c07");
    // The rendering goes to stderr.
    json.warns(&["Newly failing (1)"]);
    // Read the other way round, the case is fixed: nothing regressed. One passing run against
    // five failing ones is not yet beyond chance: not listed as newly passing.
    compare(dir, &["baseline.json", "--baseline", "report.json"])
        .exits(0)
        .says(&["Gate: no regression"]);
}

#[test]
fn a_slower_agent_trips_p95_latency_only_with_fail_on_regress() {
    let (dir, addr, script) = suite_and_agent(true);
    script.lock().unwrap().delay = Duration::from_millis(400);
    // Without --fail-on-regress only failures decide. Every latency now is slower than every
    // one in the baseline: the exceedance test says so far beyond noise.
    run(
        dir.path(),
        addr,
        &["--baseline", "baseline.json", "--output", "report.json"],
    )
    .exits(0)
    .says(&[
        "REGRESSED",
        "20 vs 20 latencies",
        "without --fail-on-regress the gate does not decide the exit status",
    ]);
    // Rates are unchanged and TTFT is not measured (no streaming): latency alone trips.
    assert_eq!(
        tripped(&read_json(&dir.path().join("report.json"))),
        ["p95LatencyIncreasePct"]
    );
    run(dir.path(), addr, GATED).exits(1).says(&[
        "Gate: REGRESSED: p95LatencyIncreasePct (p95 latency rose",
        "p95 TTFT            not measured in the baseline or now",
    ]);
}

#[test]
fn hand_offs_trip_deflection() {
    let (dir, addr, script) = suite_and_agent(true);
    script.lock().unwrap().handoff = true;
    run(dir.path(), addr, &[GATED, REPORT].concat())
        .exits(1)
        .says(&["100.0% -> 0.0%", "dropped 100 pp (limit 5 pp)   REGRESSED"]);
    // The SCRAPI turns do not check hand-offs: every case still passes.
    let report = read_json(&dir.path().join("report.json"));
    assert_eq!(report["aggregates"]["pass_rate"], 1.0);
    trips_only_beside_the_pass_rate(dir.path(), "deflectionDropPp");
}

#[test]
fn a_later_first_token_trips_ttft() {
    let (dir, addr, script) = suite_and_agent(false);
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
    run(dir.path(), addr, &[GATED, REPORT].concat()).exits(1);
    trips_only_beside_the_pass_rate(dir.path(), "ttftP95IncreasePct");
}

#[test]
fn a_pass_rate_lower_only_because_fewer_cases_ran_is_no_regression() {
    let (dir, addr, script) = suite_and_agent(false);
    script.lock().unwrap().wrong.insert("c01".to_owned());
    // A baseline may hold known failures: 19 of 20 pass.
    run(dir.path(), addr, &["--update-baseline", "baseline.json"]).exits(1);

    // Nine cases now, c01 still failing among them: 8 of 9 pass, a lower rate, but every
    // case does what it did. Compared case by case, nothing changed.
    run(
        dir.path(),
        addr,
        &["--name", "c0*", "--output", "report.json"],
    )
    .says(&["Total: 9 conversations"]);
    compare(dir.path(), AGAINST_BASELINE)
        .exits(0)
        .says(&[
            "95.0% -> 88.9%",
            "In the baseline, not run now (11): goldens/orders.yaml#c10",
            "Gate: no regression",
        ])
        .never_prints(&["Newly failing"]);
}

#[test]
fn a_pass_rate_drop_spread_over_cases_trips_though_no_single_case_can() {
    let (dir, addr, script) = suite_and_agent(false);
    run(
        dir.path(),
        addr,
        &["--repeat", "3", "--update-baseline", "baseline.json"],
    )
    .exits(0);
    // Six cases now pass one run in three: 3 of 3 against 1 of 3 is p = 0.2 for each, which
    // no gate can call (0 of 3 would be 0.05, short of a 1% gate over 20 cases); six of them
    // at once it can.
    let flaky = ["c01", "c02", "c03", "c04", "c05", "c06"];
    script
        .lock()
        .unwrap()
        .flaky
        .extend(flaky.map(|c| (c.to_owned(), 3)));
    // One look (`--max-repeat 3`), so the pass rate's test spends the whole rate at once.
    run(
        dir.path(),
        addr,
        &[GATED, &["--repeat", "3", "--max-repeat", "3"]].concat(),
    )
    .exits(1)
    .says(&[
        "Looks worse, undecided (6):",
        "not enough runs",
        "Gate: REGRESSED: passRateDropPp (pass rate dropped 30 pp, limit 0 pp)",
        "60 vs 60 judged runs",
    ])
    .never_prints(&["Newly failing"]);
}

/// Two reports of one run, `baseline.json` and `report.json`, the hallucination rate set by
/// hand in each (no judge exists yet to measure it).
fn hallucination_reports(dir: &Path, addr: SocketAddr, before: f64, now: f64) {
    run(dir, addr, &["--output", "run.json"]).exits(0);
    for (name, rate) in [("baseline.json", before), ("report.json", now)] {
        let mut report = read_json(&dir.join("run.json"));
        report["aggregates"]["hallucination_rate"] = json!(rate);
        fs::write(dir.join(name), serde_json::to_vec_pretty(&report).unwrap()).unwrap();
    }
}

/// `compare report.json --baseline baseline.json` with `extra` flags.
fn gate(dir: &Path, extra: &[&str]) -> Outcome {
    compare(dir, &[AGAINST_BASELINE, extra].concat())
}

/// Writes `text` to `dir/name`.
fn write(dir: &Path, name: &str, text: &str) {
    fs::write(dir.join(name), text).unwrap();
}

#[test]
fn a_hallucination_rise_trips_and_thresholds_come_from_every_source_in_order() {
    let (dir, addr, _script) = suite_and_agent(false);
    hallucination_reports(dir.path(), addr, 0.01, 0.06);
    let out = gate(dir.path(), &[]).exits(1);
    out.says(&[
        "1.0% -> 6.0%",
        "rose 5 pp (limit 2 pp)        REGRESSED",
        "Gate: REGRESSED: hallucinationRateIncreasePp",
        // No per-case data backs a rate set by hand: the values decide, and the report says so.
        "decided by the values: nothing to test on",
    ]);
    // Latencies are the same numbers on both sides here: only the edited rate differs.
    assert_eq!(out.stdout.matches("REGRESSED").count(), 2, "{}", out.stdout);
    thresholds_come_from_every_source_in_order(dir.path());
    threshold_typos_exit_2_with_file_line_and_suggestion(dir.path());
}

/// goldgate.yaml, then eval.config.json, then --regression-config: later wins.
fn thresholds_come_from_every_source_in_order(dir: &Path) {
    write(
        dir,
        "goldgate.yaml",
        "thresholds: { hallucinationRateIncreasePp: 10 }\n",
    );
    gate(dir, &[]).exits(0);
    // `--config` names another file, for `compare` as for `run`.
    write(
        dir,
        "strict.yaml",
        "thresholds: { hallucinationRateIncreasePp: 1 }\n",
    );
    gate(dir, &["--config", "strict.yaml"]).exits(1);
    let json = "{\"regressionThresholds\": {\"hallucinationRateIncreasePp\": 4}}";
    write(dir, "eval.config.json", json);
    gate(dir, &[]).exits(1).says(&["(limit 4 pp)"]);
    write(dir, "gate.json", "{\"hallucinationRateIncreasePp\": 6}");
    gate(dir, &["--regression-config", "gate.json"]).exits(0);
    // `report` reads it too: its summary shows the limit it gave.
    let report = goldgate(
        dir,
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
    assert_ne!(report.code, Some(2), "{}", report.stderr);
    let summary = fs::read_to_string(dir.join("summary.md")).unwrap();
    assert_contains(&summary, &["6 pp"]);
    assert_lacks(&summary, &["4 pp"]);
}

/// A typo is an error with file, line, key and a suggestion: exit 2.
fn threshold_typos_exit_2_with_file_line_and_suggestion(dir: &Path) {
    let typo = "{\n  \"regressionThresholds\": {\n    \"halucinationRateIncreasePp\": 4\n  }\n}\n";
    write(dir, "eval.config.json", typo);
    gate(dir, &[]).exits(2).warns(&[
        "eval.config.json:3: error [G100] regressionThresholds.halucinationRateIncreasePp: unknown key",
        "did you mean `hallucinationRateIncreasePp`?",
    ]);
    fs::remove_file(dir.join("eval.config.json")).unwrap();
    write(dir, "gate.yaml", "regressionThresholds:\n  p95Latency: 5\n");
    gate(dir, &["--regression-config", "gate.yaml"])
        .exits(2)
        .warns(&["gate.yaml:2: error [G100]"]);
}

/// Port 9 of loopback, where nothing listens: a call would be an error of the run.
fn nowhere() -> SocketAddr {
    "127.0.0.1:9".parse().unwrap()
}

#[test]
fn unreadable_inputs_exit_2_naming_the_file_before_any_agent_call() {
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    // A call to nowhere would be an error of the run, but none must be made.
    run(dir.path(), nowhere(), &["--baseline", "missing.json"])
        .exits(2)
        .warns(&["cannot use the baseline: missing.json: cannot read the report"]);

    write(
        dir.path(),
        "old.json",
        "{\"schema_version\": 0, \"cases\": []}",
    );
    run(dir.path(), nowhere(), &["--baseline", "old.json"])
        .exits(2)
        .warns(&["old.json: a report of schema version 0"])
        // Nothing ran.
        .never_prints(&["could not be judged"]);

    write(dir.path(), "garbage.json", "not json");
    compare(dir.path(), &["garbage.json", "--baseline", "old.json"])
        .exits(2)
        .warns(&["old.json"]);
    compare(dir.path(), &["garbage.json"])
        .exits(2)
        .warns(&["--baseline FILE is required"]);
}

#[test]
fn errors_are_bounded_by_max_errors_refuse_a_baseline_and_are_never_regressions() {
    let (dir, addr, script) = suite_and_agent(true);
    latency_out_of_the_way(dir.path());
    script.lock().unwrap().broken.insert("c03".to_owned());
    let listed = format!("  goldens/orders.yaml:{} c03: ", line_of(dir.path(), "c03"));

    // One error, none allowed: exit 2 with the list; the baseline is not replaced.
    let before = fs::read(dir.path().join("baseline.json")).unwrap();
    run(dir.path(), addr, &["--update-baseline", "baseline.json"])
        .exits(2)
        .warns(&[
            "more than --max-errors 0",
            &listed,
            "not updating the baseline baseline.json: 1 case(s) could not be judged (errors of the run): c03 (--force writes it anyway)",
        ]);
    assert_eq!(fs::read(dir.path().join("baseline.json")).unwrap(), before);

    // Within the limit the failures and the gate decide; the error is not a regression.
    run(dir.path(), addr, &[&["--max-errors", "1"], GATED].concat())
        .exits(0)
        .warns(&["within --max-errors 1"])
        .says(&[
            "Gate: no regression",
            "Result: no regression (1 errored) (exit 0)",
        ]);
    every_command_reading_a_report_exits_as_its_run_did(dir.path(), addr, &script);

    // --force writes it anyway.
    let forced = [
        "--update-baseline",
        "forced.json",
        "--force",
        "--max-errors",
        "1",
    ];
    run(dir.path(), addr, &forced).exits(0);
    let forced = read_json(&dir.path().join("forced.json"));
    assert_eq!(case(&forced, "c03")["status"], "error");
}

/// The report records the `--max-errors` allowance, so `report`, `merge` and `compare` exit
/// as the run did.
fn every_command_reading_a_report_exits_as_its_run_did(
    dir: &Path,
    addr: SocketAddr,
    script: &Shared,
) {
    run(dir, addr, &["--max-errors", "1", "--output", "within.json"]).exits(0);
    assert_eq!(read_json(&dir.join("within.json"))["max_errors"], 1);
    for command in [
        &["report", "within.json"][..],
        &["merge", "within.json", "-o", "merged.json"],
        &["compare", "within.json", "--baseline", "baseline.json"],
    ] {
        let outcome = goldgate(dir, command);
        assert_eq!(outcome.code, Some(0), "{command:?}: {}", outcome.stderr);
    }
    run(dir, addr, &["--output", "beyond.json"]).exits(2);
    for command in [
        &["report", "beyond.json"][..],
        &["merge", "beyond.json", "-o", "m.json"],
    ] {
        assert_eq!(goldgate(dir, command).code, Some(2), "{command:?}");
    }
    script.lock().unwrap().wrong.insert("c05".to_owned());
    run(dir, addr, &["--max-errors", "1"]).exits(1);
    script.lock().unwrap().wrong.clear();
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
    compare(dir.path(), &["a.json", "--baseline", "b.json"]).exits(0);
}

#[test]
fn adaptive_repeats_rerun_only_what_is_open_and_history_makes_a_broken_case_decidable() {
    let (dir, addr, script) = suite_and_agent(false);
    latency_out_of_the_way(dir.path());
    // Three builds of main, one run each (a CI's default): three runs a case, too few for
    // Fisher to tell 3 of 3 from 0 of 5 at the suite's bar (p = 1/56).
    let update = ["--update-baseline", "baseline.json"];
    run(dir.path(), addr, &update).exits(0);
    run(dir.path(), addr, &update).exits(0);
    run(dir.path(), addr, &update)
        .exits(0)
        .warns(&["the baseline's history now spans 3 builds"]);
    let baseline = read_json(&dir.path().join("baseline.json"));
    assert_eq!(
        baseline["cases"][0]["history"],
        json!([{"passed": 1, "judged": 1}, {"passed": 1, "judged": 1}])
    );
    assert_eq!(baseline["samples"]["builds"], 3);

    // Unchanged: one run a case settles everything.
    let adaptive = [GATED, REPORT, &["--max-repeat", "5"]].concat();
    run(dir.path(), addr, &adaptive)
        .exits(0)
        .never_prints(&["Adaptive repeats"]);
    let report = read_json(&dir.path().join("report.json"));
    assert_eq!(report["gate"]["extra_runs"], 0);
    assert_eq!(report["cases"][0]["repeats"], Value::Null);

    // c07 now always fails: one failed run could be a flake, so the gate reruns it, and a
    // case that never failed on main failing all five is a break, as with no history.
    script.lock().unwrap().wrong.insert("c07".to_owned());
    run(dir.path(), addr, &adaptive).exits(1).says(&[
        "c07: passed -> failed (runs passed: 100% -> 0%)",
        "failed all 5 runs here, and none of its 3 runs on main",
        "Adaptive repeats: ",
    ]);
    let report = read_json(&dir.path().join("report.json"));
    let gate = &report["gate"];
    assert_eq!(gate["newly_failing"][0]["id"], "c07");
    assert_eq!(gate["newly_failing"][0]["decision"], "regressed");
    assert_eq!(gate["newly_failing"][0]["evidence"]["test"], "verdicts");
    assert!(gate["extra_runs"].as_u64().unwrap() > 0, "{gate}");
    assert_eq!(
        report["alpha_share"], 0.98,
        "the last look spends all but a hundredth for each look before it"
    );
    let runs = &case(&report, "c07")["repeats"]["runs"];
    assert_eq!(runs.as_array().unwrap().len(), 5);
}

#[test]
fn gate_flags_that_make_no_sense_exit_2_saying_why() {
    let (dir, addr, _script) = suite_and_agent(true);
    let gated = |flags: &[&str]| run(dir.path(), addr, &[GATED, flags].concat());
    gated(&["--false-alarm-rate", "0"])
        .exits(2)
        .warns(&["`0` is not a percentage between 0 and 100 (exclusive)"]);
    gated(&["--repeat", "3", "--max-repeat", "2"])
        .exits(2)
        .warns(&["--max-repeat 2 is below --repeat 3"]);
    // A stricter rate is honoured and shown.
    gated(&["--false-alarm-rate", "0.1%"])
        .exits(0)
        .says(&["false-alarm rate 0.1%)"]);
}

#[test]
fn an_agent_nobody_answers_is_named_once_and_each_case_says_why() {
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    run(dir.path(), nowhere(), &[]).exits(2).warns(&[
        "goldgate: 20 case(s) could not be judged, agent http://127.0.0.1:9/turn \
         (errors of the run, not test failures; more than --max-errors 0):",
        "  goldens/orders.yaml:4 c01: connection failed",
        "Connection refused",
    ]);
}
