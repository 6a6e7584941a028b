//! One meaning in every output: what a report means is decided once (`report::Summary`), so
//! the terminal, the Markdown and PR comment, the page, JUnit and the step outputs agree with
//! each other and with the exit code. Each test reproduces, through the binary, a disagreement
//! users met when each output worked its meaning out for itself (an open decision that fails
//! the run reads red: `verdict::an_open_decision_is_a_warning_unless_fail_on_inconclusive`).

use crate::common;
use std::fs;
use std::path::Path;
use std::time::Duration;

use common::script::{GATED_WITH_OUTPUTS as GATED, order_suite, run_suite};

fn read(dir: &Path, file: &str) -> String {
    fs::read_to_string(dir.join(file)).unwrap()
}

/// The Markdown heading: `### goldgate: SIGN HEADLINE`.
fn heading(dir: &Path) -> String {
    let summary = read(dir, "summary.md");
    let heading = summary.lines().find(|l| l.starts_with("### ")).unwrap();
    heading.replace('\\', "")
}

#[test]
fn a_quarantine_does_not_count_a_case_that_errored() {
    let (dir, addr, script) = order_suite(3);
    run_suite(dir.path(), addr, &["--update-baseline", "baseline.json"]).exits(0);
    common::write(
        dir.path(),
        "goldgate.yaml",
        "quarantine:\n  - case: goldens/orders.yaml#c03\n    owner: \"@maria\"\n    reason: refunds API flaky\n    expires: 2999-12-31\n",
    );
    script.lock().unwrap().broken.insert("c03".to_owned());
    let out = run_suite(dir.path(), addr, &[GATED, &["--max-errors", "1"]].concat()).exits(0);
    out.says(&["Result: no regression (1 errored) (exit 0)"]);
    out.never_prints(&["quarantined)"]);
    let heading = heading(dir.path());
    assert!(
        heading.ends_with("✅ no regression (1 errored)"),
        "{heading}"
    );
}

#[test]
fn report_posts_to_the_comment_of_the_suite_the_run_named() {
    let (dir, addr, _script) = order_suite(2);
    common::write(dir.path(), "ci.yaml", "floors:\n  min_pass_rate: 0.5\n");
    let flags = [
        "--config",
        "ci.yaml",
        "--output",
        "report.json",
        "--markdown",
        "run.md",
    ];
    run_suite(dir.path(), addr, &flags).exits(0);
    let marker = "<!-- goldgate:suite=ci.yaml -->";
    assert!(read(dir.path(), "run.md").starts_with(marker));
    for extra in [&[][..], &["--config", "ci.yaml"][..]] {
        let args = [
            &["report", "report.json", "--markdown", "again.md"][..],
            extra,
        ]
        .concat();
        common::goldgate(dir.path(), &args).exits(0);
        let again = read(dir.path(), "again.md");
        assert!(again.starts_with(marker), "{extra:?}: {again}");
    }
}

/// The p95 latency, in whole milliseconds, after `label` on a line of `text`.
fn p95_after(text: &str, label: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|line| line.split_once(label).map(|(_, rest)| rest))
        .map(|rest| {
            let digits: String = rest
                .trim_start()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().unwrap()
        })
        .collect()
}

#[test]
fn one_run_shows_one_p95_latency() {
    let (dir, addr, script) = order_suite(4);
    let repeat = ["--repeat", "3"];
    run_suite(
        dir.path(),
        addr,
        &[&repeat[..], &["--update-baseline", "baseline.json"]].concat(),
    )
    .exits(0);
    script.lock().unwrap().delay = Duration::from_millis(40);
    let out = run_suite(dir.path(), addr, &[GATED, &repeat].concat());
    // The table's `Latency: p50 X ms, p95 Y ms`, the gate's `p95 latency  A ms -> B ms`.
    let table: Vec<u64> = (out.stdout.lines())
        .filter(|l| l.starts_with("Latency: "))
        .flat_map(|l| p95_after(l, "p95 "))
        .collect();
    let gate: Vec<u64> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("p95 latency"))
        .flat_map(|l| p95_after(l, "-> "))
        .collect();
    assert_eq!(table.first(), gate.first(), "{}", out.stdout);
    let json: serde_json::Value = serde_json::from_str(&read(dir.path(), "report.json")).unwrap();
    let latency = json["gate"]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["threshold"] == "p95LatencyIncreasePct")
        .unwrap();
    let (before, now) = (
        latency["baseline"].as_f64().unwrap(),
        latency["current"].as_f64().unwrap(),
    );
    assert_eq!(
        Some(now.round() as u64),
        gate.first().copied(),
        "{}",
        out.stdout
    );
    // The Markdown row shows the same p95 now, and the change between the two it shows.
    let summary = read(dir.path(), "summary.md");
    let row = summary
        .lines()
        .find(|l| l.starts_with("| Latency p50 / p95 |"))
        .unwrap();
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    assert!(
        cells[2].ends_with(&format!("/ {} ms", now.round())),
        "{row}"
    );
    let change = (now / before - 1.0) * 100.0;
    assert!(
        cells[4].contains(&goldgate::results::Unit::Percent.amount(change.abs())),
        "{row}: {change}"
    );
}

#[test]
fn a_run_that_could_not_be_judged_shows_no_gate_verdict() {
    let (dir, addr, script) = order_suite(3);
    run_suite(dir.path(), addr, &["--update-baseline", "baseline.json"]).exits(0);
    script.lock().unwrap().broken.insert("c02".to_owned());
    let out = run_suite(dir.path(), addr, GATED).exits(2);
    out.never_prints(&["Gate: no regression"]);
    out.says(&[
        "Gate: not decided: the run could not be judged",
        "Result: could not be judged",
    ]);
}

#[test]
fn a_failure_the_gate_excused_says_it_did_not_block() {
    let (dir, addr, script) = order_suite(4);
    // c01 fails two runs of three on main and here alike.
    script.lock().unwrap().flaky.insert("c01".to_owned(), 3);
    let repeat = ["--repeat", "3"];
    run_suite(
        dir.path(),
        addr,
        &[&repeat[..], &["--update-baseline", "baseline.json"]].concat(),
    )
    .exits(1);
    let out = run_suite(dir.path(), addr, &[GATED, &repeat].concat()).exits(0);
    out.says(&["not blocking: "]);
    let junit = read(dir.path(), "junit.xml");
    common::assert_contains(&junit, &["message=\"not blocking ("]);
    let summary = read(dir.path(), "summary.md");
    common::assert_contains(&summary, &["not blocking: "]);
}

#[test]
fn a_report_gated_again_keeps_the_adaptive_repeats_its_run_played() {
    let (dir, addr, script) = order_suite(3);
    // Verdicts only: a slow turn on a busy machine must not trip latency at the first look.
    common::write(
        dir.path(),
        "goldgate.yaml",
        "thresholds: { p95LatencyIncreasePct: 100000, ttftP95IncreasePct: 100000 }\n",
    );
    run_suite(dir.path(), addr, &["--update-baseline", "baseline.json"]).exits(0);
    // One failed run could be a flake: the gate plays c02 again before it decides.
    script.lock().unwrap().wrong.insert("c02".to_owned());
    run_suite(dir.path(), addr, GATED).exits(1);
    let json: serde_json::Value = serde_json::from_str(&read(dir.path(), "report.json")).unwrap();
    let played = json["gate"]["extra_runs"].as_u64().unwrap();
    assert!(played > 0, "{}", json["gate"]);
    let markdown = format!("{played} extra runs (adaptive repeats)");
    let page = format!("Adaptive repeats: {played} extra run(s)");
    common::assert_contains(&read(dir.path(), "summary.md"), &[&markdown]);

    // Gated again, from the saved report: the runs were played all the same.
    let again = [
        "report",
        "report.json",
        "--baseline",
        "baseline.json",
        "--fail-on-regress",
        "--markdown",
        "again.md",
        "--html",
        "again.html",
    ];
    common::goldgate(dir.path(), &again).exits(1);
    common::assert_contains(&read(dir.path(), "again.md"), &[&markdown]);
    common::assert_contains(&read(dir.path(), "again.html"), &[&page]);
    let compare = ["compare", "report.json", "--baseline", "baseline.json"];
    common::goldgate(dir.path(), &compare)
        .exits(1)
        .says(&[&page]);
}
