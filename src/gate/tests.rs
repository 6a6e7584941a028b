//! The gate's rules on hand-made reports: each threshold, each kind of flip, repeats.

use std::time::Duration;

use super::baseline::{MEASURED, for_baseline, unfit};
use super::{Gate, Thresholds};
use crate::results::Decision;
use crate::results::json;
use crate::results::testing::{case, report};
use crate::results::{
    Aggregates, CaseResult, CheckCategory, CheckResult, Comparison, Method, Percentiles, Repeats,
    Report, Status, Threshold,
};

fn gate(baseline: Report) -> Gate {
    Gate::new("baseline.json".to_owned(), baseline, Thresholds::default())
}

fn tripped(comparison: &Comparison) -> Vec<Threshold> {
    comparison.tripped().map(|m| m.threshold).collect()
}

fn p95(ms: u64) -> Option<Percentiles> {
    Some(Percentiles {
        p50: Duration::from_millis(ms / 2),
        p95: Duration::from_millis(ms),
    })
}

/// Two reports with the same cases, their aggregates set by `before` and `now`.
fn metrics(before: impl Fn(&mut Aggregates), now: impl Fn(&mut Aggregates)) -> Comparison {
    let (mut baseline, mut current) = (report(Vec::new()), report(Vec::new()));
    before(&mut baseline.aggregates);
    now(&mut current.aggregates);
    gate(baseline).compare(&current)
}

#[test]
fn identical_reports_do_not_regress() {
    let cases = vec![case("a.yaml", "x", Status::Passed)];
    let comparison = gate(report(cases.clone())).compare(&report(cases));
    assert!(!comparison.regressed(), "{comparison:#?}");
    assert_eq!(comparison.metrics.len(), 5);
    assert_eq!(comparison.baseline, "baseline.json");
}

#[test]
fn each_threshold_trips_on_its_own_just_beyond_its_limit() {
    let pass = |rate| move |a: &mut Aggregates| a.pass_rate = Some(rate);
    assert_eq!(tripped(&metrics(pass(0.9), pass(0.9))), []);
    // passRateDropPp 0: any drop.
    assert_eq!(
        tripped(&metrics(pass(0.9), pass(0.89))),
        [Threshold::PassRateDropPp]
    );
    // The same rate from other counts is no drop.
    assert_eq!(tripped(&metrics(pass(1.0 / 3.0), pass(2.0 / 6.0))), []);

    let deflection = |rate| move |a: &mut Aggregates| a.deflection_rate = Some(rate);
    assert_eq!(tripped(&metrics(deflection(0.80), deflection(0.75))), []);
    let c = metrics(deflection(0.80), deflection(0.74));
    assert_eq!(tripped(&c), [Threshold::DeflectionDropPp]);
    let delta = &c.metrics[1];
    assert!((delta.change.unwrap() - 6.0).abs() < 1e-9, "{delta:?}");
    assert_eq!(delta.limit, 5.0);

    let hallucination = |rate| move |a: &mut Aggregates| a.hallucination_rate = Some(rate);
    assert_eq!(
        tripped(&metrics(hallucination(0.01), hallucination(0.03))),
        []
    );
    assert_eq!(
        tripped(&metrics(hallucination(0.01), hallucination(0.035))),
        [Threshold::HallucinationRateIncreasePp]
    );

    let latency = |ms| move |a: &mut Aggregates| a.latency = p95(ms);
    assert_eq!(tripped(&metrics(latency(1000), latency(1200))), []);
    assert_eq!(
        tripped(&metrics(latency(1000), latency(1201))),
        [Threshold::P95LatencyIncreasePct]
    );
    let ttft = |ms| move |a: &mut Aggregates| a.ttft = p95(ms);
    assert_eq!(
        tripped(&metrics(ttft(400), ttft(600))),
        [Threshold::TtftP95IncreasePct]
    );
    // Better is never a regression.
    assert_eq!(tripped(&metrics(latency(1000), latency(10))), []);
    assert_eq!(tripped(&metrics(pass(0.5), pass(1.0))), []);
}

#[test]
fn latency_within_the_floor_and_unmeasured_metrics_do_not_trip() {
    let latency = |ms| move |a: &mut Aggregates| a.latency = p95(ms);
    // +100% but +2 ms: noise.
    let c = metrics(latency(2), latency(4));
    assert_eq!(tripped(&c), []);
    assert!(c.metrics[2].within_latency_floor());
    // A 0 ms baseline divides as 1 ms: finite, and beyond the floor it trips.
    let c = metrics(latency(0), latency(80));
    assert_eq!(c.metrics[2].change, Some(8000.0));
    assert_eq!(tripped(&c), [Threshold::P95LatencyIncreasePct]);

    let ttft = |ms| move |a: &mut Aggregates| a.ttft = p95(ms);
    let c = metrics(|_| {}, ttft(900));
    let delta = &c.metrics[3];
    assert_eq!((delta.baseline, delta.current), (None, Some(900.0)));
    assert_eq!(delta.change, None);
    assert!(!delta.tripped && !delta.within_latency_floor());
}

#[test]
fn a_case_that_passed_or_is_new_and_fails_now_trips() {
    let baseline = report(vec![
        case("g/a.yaml", "kept", Status::Passed),
        case("g/a.yaml", "flips", Status::Passed),
        case("g/a.yaml", "still_failing", Status::Failed),
        case("g/a.yaml", "fixed", Status::Failed),
        case("g/a.yaml", "errored_then", Status::Error),
        case("g/a.yaml", "gone", Status::Passed),
    ]);
    let current = report(vec![
        case("./g/a.yaml", "kept", Status::Passed),
        case("g/a.yaml", "flips", Status::Failed),
        case("g/a.yaml", "still_failing", Status::Failed),
        case("g\\a.yaml", "fixed", Status::Passed),
        case("g/a.yaml", "errored_then", Status::Failed),
        case("g/a.yaml", "new_failure", Status::Failed),
        case("g/a.yaml", "new_pass", Status::Passed),
        // Same id in another file: another case.
        case("g/b.yaml", "kept", Status::Failed),
    ]);
    let c = gate(baseline).compare(&current);
    let ids = |flips: &[super::CaseFlip]| flips.iter().map(|f| f.id.clone()).collect::<Vec<_>>();
    assert_eq!(
        ids(&c.newly_failing),
        ["flips", "errored_then", "new_failure", "kept"]
    );
    assert_eq!(c.newly_failing[0].baseline, Some(Status::Passed));
    assert_eq!(c.newly_failing[1].baseline, Some(Status::Error));
    assert_eq!(c.newly_failing[2].baseline, None);
    assert_eq!(c.newly_failing[3].file, "g/b.yaml");
    assert_eq!(ids(&c.newly_passing), ["fixed"]);
    assert_eq!(c.missing, ["g/a.yaml#gone"]);
    assert!(c.regressed());
}

#[test]
fn errors_now_are_never_regressions() {
    let baseline = report(vec![case("a.yaml", "x", Status::Passed)]);
    let current = report(vec![case("a.yaml", "x", Status::Error)]);
    let c = gate(baseline).compare(&current);
    assert!(c.newly_failing.is_empty() && c.newly_passing.is_empty());
    assert!(!c.regressed());
}

fn repeated(status: Status, passed: usize, runs: usize) -> CaseResult {
    let mut case = case("r.yaml", "flaky", status);
    let mut statuses = vec![Status::Passed; passed];
    statuses.resize(runs, Status::Failed);
    case.repeats = Some(Repeats {
        runs: statuses,
        passed: passed as u32,
        min_pass: 3,
        pass_fraction: passed as f64 / runs as f64,
        pass_hat_k: 0.0,
        flaky: passed != 0 && passed != runs,
    });
    case
}

#[test]
fn with_repeats_only_a_drop_beyond_chance_is_a_regression() {
    // 4/5 then 2/5: the case now fails its min-pass of 3, but five runs cannot tell the two
    // fractions apart.
    let c = gate(report(vec![repeated(Status::Passed, 4, 5)])).compare(&report(vec![repeated(
        Status::Failed,
        2,
        5,
    )]));
    assert!(c.newly_failing.is_empty(), "{c:#?}");
    assert_eq!(c.undecided[0].decision, Decision::NotEnoughRuns);
    // 5/5 then 0/5 is.
    let c = gate(report(vec![repeated(Status::Passed, 5, 5)])).compare(&report(vec![repeated(
        Status::Failed,
        0,
        5,
    )]));
    assert_eq!(c.newly_failing.len(), 1);
    assert_eq!(c.newly_failing[0].pass_fraction, Some((1.0, 0.0)));
    // And back up again.
    let c = gate(report(vec![repeated(Status::Failed, 0, 5)])).compare(&report(vec![repeated(
        Status::Passed,
        5,
        5,
    )]));
    assert_eq!(c.newly_passing.len(), 1);
    // Errored runs are not judged: 5/5 then 1 pass and 4 errors is no evidence of a drop.
    let mut errored = repeated(Status::Passed, 1, 5);
    if let Some(r) = errored.repeats.as_mut() {
        r.runs[1..].fill(Status::Error);
    }
    let c = gate(report(vec![repeated(Status::Passed, 5, 5)])).compare(&report(vec![errored]));
    assert!(!c.regressed(), "{c:#?}");
    // A repeated run against a single-run baseline is tested too: one baseline run cannot
    // show that 2 of 5 is worse, whatever the five runs do.
    let c = gate(report(vec![case("r.yaml", "flaky", Status::Passed)]))
        .compare(&report(vec![repeated(Status::Failed, 2, 5)]));
    assert!(c.newly_failing.is_empty(), "{c:#?}");
    assert_eq!(c.undecided[0].decision, Decision::NotEnoughRuns);
    assert!(
        c.notes[0].contains("no result of these runs"),
        "{:?}",
        c.notes
    );
}

#[test]
fn a_baseline_leaves_out_what_changes_from_run_to_run() {
    let check = |category, actual: &str| CheckResult {
        label: "check".to_owned(),
        category,
        line: 4,
        status: Status::Passed,
        expected: "p95 < 500 ms".to_owned(),
        actual: actual.to_owned(),
        method: Method::deterministic("deterministic"),
        score: None,
        reason: Some("why".to_owned()),
    };
    let mut measured = case("a.yaml", "x", Status::Passed);
    measured.checks = vec![
        check(CheckCategory::Latency, "p95 = 8 ms over 2 turns"),
        check(CheckCategory::AgentText, "hello"),
    ];
    let mut report = report(vec![measured]);
    report.aggregates.latency = p95(120);
    report.gate = Some(Comparison::default());
    let baseline = for_baseline(&report);
    assert_eq!(baseline.agent_log, None);
    assert_eq!(baseline.gate, None);
    assert_eq!(baseline.cases[0].duration, Duration::ZERO);
    let checks = &baseline.cases[0].checks;
    assert_eq!(
        (checks[0].actual.as_str(), &checks[0].reason),
        (MEASURED, &None)
    );
    assert_eq!(checks[0].status, Status::Passed, "the verdict is kept");
    assert_eq!(checks[1], report.cases[0].checks[1]);
    assert_eq!(
        baseline.aggregates.latency,
        p95(120),
        "the gate compares these"
    );
    assert_eq!(unfit(&report), None);

    let mut errored = report.clone();
    errored.cases.push(case("a.yaml", "y", Status::Error));
    assert!(
        unfit(&errored)
            .unwrap()
            .contains("1 case(s) could not be judged")
    );
    errored.incomplete = true;
    assert!(unfit(&errored).unwrap().contains("interrupted"));
}

#[test]
fn a_saved_report_reads_back_and_another_schema_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("baseline.json");
    let report = report(vec![case("a.yaml", "x", Status::Passed)]);
    json::write_file_atomically(&path, &report).unwrap();
    let gate = Gate::load(&path, Thresholds::default()).unwrap();
    assert_eq!(gate.baseline, report);

    let text = std::fs::read_to_string(&path).unwrap().replacen(
        "\"schema_version\": 1",
        "\"schema_version\": 99",
        1,
    );
    std::fs::write(&path, text).unwrap();
    let err = Gate::load(&path, Thresholds::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("baseline.json: a report of schema version 99"),
        "{err}"
    );

    std::fs::write(&path, "{\"schema_version\": 1, \"cases\": 3}").unwrap();
    let err = Gate::load(&path, Thresholds::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("baseline.json: not a goldgate JSON report"),
        "{err}"
    );
    let err = Gate::load(&dir.path().join("none.json"), Thresholds::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("none.json: cannot read the report"), "{err}");
}

#[test]
fn a_case_that_errored_in_the_baseline_and_fails_all_its_runs_now_still_regresses() {
    let mut errored = case("r.yaml", "flaky", Status::Error);
    errored.repeats = Some(Repeats::of(vec![Status::Error; 3], 2));
    let c = gate(report(vec![errored])).compare(&report(vec![repeated(Status::Failed, 0, 3)]));
    assert_eq!(c.newly_failing.len(), 1, "{c:#?}");
    assert_eq!(
        c.newly_failing[0].evidence.as_ref().unwrap().test,
        crate::results::Test::Verdicts
    );
}

/// A case with one played turn, handed off or not, of `kind`.
fn played(id: &str, kind: crate::model::CaseKind, handed_off: bool) -> CaseResult {
    use crate::transcript::{Handoff, Reply};
    let reply = Reply {
        handoff: handed_off.then(|| Handoff {
            status: "requested".to_owned(),
        }),
        ..Reply::default()
    };
    CaseResult {
        kind,
        turns: vec![crate::results::TurnResult {
            index: 1,
            line: 1,
            status: Status::Passed,
            input: String::new(),
            attempts: 1,
            error: None,
            reply: Some(reply),
            cut: None,
            latency: None,
            ttft: None,
            checks: Vec::new(),
        }],
        ..case("d.yaml", id, Status::Passed)
    }
}

#[test]
fn tool_tests_beside_conversations_do_not_change_the_deflection_decision() {
    use crate::model::CaseKind;
    // 100 conversations handed off 2 times on main and 10 now: a drop of 8 pp.
    let conversations = |handed_off: usize| -> Vec<CaseResult> {
        (0..100)
            .map(|i| played(&format!("c{i:03}"), CaseKind::Conversation, i < handed_off))
            .collect()
    };
    let tool_tests: Vec<CaseResult> = (0..300)
        .map(|i| played(&format!("t{i:03}"), CaseKind::ToolTest, false))
        .collect();
    let decide = |extra: &[CaseResult]| {
        let with = |mut cases: Vec<CaseResult>| {
            cases.extend_from_slice(extra);
            report(cases)
        };
        let comparison = gate(with(conversations(2))).compare(&with(conversations(10)));
        let delta = comparison.metrics[1].clone();
        assert_eq!(delta.threshold, Threshold::DeflectionDropPp);
        (delta.decision, delta.change.map(|c| c.round()))
    };
    let alone = decide(&[]);
    assert_eq!(alone, decide(&tool_tests));
    assert_eq!(alone.1, Some(8.0));
}

/// A case that passed each of 10 builds of main, and a run of it with `now` runs.
fn with_history(id: &str, now: Vec<Status>) -> (CaseResult, CaseResult) {
    let mut before = case("g/a.yaml", id, Status::Passed);
    before.history = vec![crate::stats::Tally::new(1, 1); 9];
    let mut current = case("g/a.yaml", id, now[0]);
    current.repeats = Some(Repeats::of(now, 5));
    (before, current)
}

#[test]
fn cases_each_a_little_worse_add_up_to_a_regression_of_the_cases_combined() {
    use Status::{Failed as F, Passed as P};
    let pairs = |worse: usize| {
        let (before, now): (Vec<_>, Vec<_>) = (0..25)
            .map(|i| {
                let runs = if i < worse {
                    vec![P, F, P, F, P]
                } else {
                    vec![P; 5]
                };
                with_history(&format!("c{i}"), runs)
            })
            .unzip();
        gate(report(before)).compare(&report(now))
    };
    // Five cases 10 of 10 on main, 3 of 5 now: each alone p = 0.095, together far beyond.
    let five = pairs(5);
    let combined = five.combined.as_ref().expect("cases could move");
    assert_eq!(combined.decision, Decision::Regressed, "{combined:?}");
    assert_eq!(combined.cases, 5);
    assert!(
        five.regressed() && five.newly_failing.is_empty(),
        "{five:#?}"
    );
    assert!(five.undecided.iter().all(|f| f.decision.is_undecided()));
    // One such case is not enough.
    let one = pairs(1);
    assert_ne!(one.combined_decision(), Some(Decision::Regressed));
    assert!(!one.regressed());
    // Nothing moved: every run agreeing, nothing to combine.
    assert_eq!(pairs(0).combined, None);
}

#[test]
fn the_combined_test_keeps_most_of_the_rate_and_gives_it_back_once_it_rejects() {
    use super::split_adjusted;
    // Not rejecting: the others are held to a tenth of the rate (their adjusted values ten
    // times theirs).
    let (combined, others) = split_adjusted(&[0.0004, 0.5], &[0.0; 2], Some(0.2), 0.01);
    assert!(
        (combined.unwrap() - 0.2 / 0.9).abs() < 1e-12,
        "{combined:?}"
    );
    assert!((others[0] - 0.008).abs() < 1e-12, "{others:?}");
    // Rejecting: the others get the whole rate, as Holm alone would.
    let (combined, others) = split_adjusted(&[0.0004, 0.5], &[0.0; 2], Some(0.001), 0.01);
    assert!(
        (combined.unwrap() - 0.001 / 0.9).abs() < 1e-12,
        "{combined:?}"
    );
    assert!((others[0] - 0.0008).abs() < 1e-12, "{others:?}");
    // No combined test: Holm alone.
    assert_eq!(split_adjusted(&[0.004], &[0.0], None, 0.01).1, [0.004]);
}
