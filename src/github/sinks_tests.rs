//! Every sink renders the one summary: for a matrix of gate outcome × policy × quarantine ×
//! errors × an excused flaky failure, each output shows the summary's severity and headline,
//! and the severity is the exit code's.

use crate::exit::Exit;
use crate::github::annotate;
use crate::github::outputs::Outputs;
use crate::report::summary::{Excuse, Severity, Standing, Summary};
use crate::report::{console, gate, html, junit, markdown};
use crate::results::testing::{case, report};
use crate::results::{
    CaseFlip, CaseResult, Comparison, Decision, MetricDelta, Policy, Quarantine, Repeats, Report,
    Status, Threshold,
};

/// `--fail-on-regress`.
const GATED: Policy = Policy {
    fail_on_regress: true,
    fail_on_inconclusive: false,
};

#[derive(Clone, Copy, Debug)]
enum GateOutcome {
    NoBaseline,
    Clear,
    /// A case newly failing.
    Regressed,
    /// A threshold tripped (p95 latency), every case passing.
    MetricRegressed,
    Undecided,
}

#[derive(Clone, Copy, Debug)]
enum Quarantined {
    None,
    Failing,
    Errored,
}

#[derive(Clone, Copy, Debug)]
enum Errors {
    None,
    Allowed,
    TooMany,
}

fn flip(case: &CaseResult, decision: Decision) -> CaseFlip {
    CaseFlip {
        id: case.id.clone(),
        name: case.name.clone(),
        file: case.file.clone(),
        line: case.line,
        baseline: Some(Status::Passed),
        current: case.status,
        pass_fraction: None,
        decision,
        evidence: None,
        quarantine: case.quarantine.clone(),
    }
}

fn quarantine() -> Quarantine {
    Quarantine {
        owner: "@maria".to_owned(),
        reason: "refunds API flaky".to_owned(),
        expires: "2999-12-31".to_owned(),
        expired: false,
    }
}

/// A report of that shape: one passing case, plus whatever the dimensions add.
fn shaped(
    outcome: GateOutcome,
    policy: Policy,
    quarantined: Quarantined,
    errors: Errors,
    flaky: bool,
) -> Report {
    let mut cases = vec![case("goldens/a.yaml", "ok", Status::Passed)];
    let mut comparison = Comparison::default();
    match outcome {
        GateOutcome::Regressed => {
            let broken = case("goldens/a.yaml", "broken", Status::Failed);
            comparison
                .newly_failing
                .push(flip(&broken, Decision::Regressed));
            cases.push(broken);
        }
        GateOutcome::MetricRegressed => comparison.metrics.push(MetricDelta {
            threshold: Threshold::P95LatencyIncreasePct,
            baseline: Some(100.0),
            current: Some(150.0),
            change: Some(50.0),
            limit: 20.0,
            tripped: true,
            decision: Decision::Regressed,
            evidence: None,
            unmeasured: None,
        }),
        GateOutcome::Undecided => {
            let open = case("goldens/a.yaml", "open", Status::Failed);
            comparison
                .undecided
                .push(flip(&open, Decision::Inconclusive));
            cases.push(open);
        }
        GateOutcome::NoBaseline | GateOutcome::Clear => {}
    }
    match quarantined {
        Quarantined::None => {}
        Quarantined::Failing => {
            let mut held = case("goldens/b.yaml", "held", Status::Failed);
            held.quarantine = Some(quarantine());
            comparison.quarantined.push(flip(&held, Decision::Clear));
            cases.push(held);
        }
        Quarantined::Errored => {
            let mut held = case("goldens/b.yaml", "held", Status::Error);
            held.quarantine = Some(quarantine());
            cases.push(held);
        }
    }
    if !matches!(errors, Errors::None) {
        cases.push(case("goldens/c.yaml", "down", Status::Error));
    }
    if flaky {
        let mut flaky = case("goldens/c.yaml", "flaky", Status::Failed);
        let runs = vec![Status::Passed, Status::Failed, Status::Failed];
        flaky.repeats = Some(Repeats::of(runs, 1));
        cases.push(flaky);
    }
    let errored = cases.iter().filter(|c| c.status == Status::Error).count();
    let mut report = report(cases);
    report.max_errors = match errors {
        Errors::TooMany => errored - 1,
        _ => errored,
    };
    report.policy = policy;
    if !matches!(outcome, GateOutcome::NoBaseline) {
        report.gate = Some(comparison);
    }
    report
}

/// Everything each sink shows, for one report.
struct Rendered {
    terminal: String,
    markdown: String,
    page: String,
    junit: String,
    annotations: Vec<String>,
    outputs: String,
}

fn render(summary: &Summary) -> Rendered {
    let mut terminal = Vec::new();
    console::write_table(summary, std::time::Duration::ZERO, &mut terminal, false).unwrap();
    gate::write_after_table(summary, &mut terminal).unwrap();
    console::write_verdict(summary, &mut terminal).unwrap();
    let path = |file: &str| file.to_owned();
    let options = markdown::Options {
        suite: &summary.suite,
        run_url: None,
        path: &path,
    };
    Rendered {
        terminal: String::from_utf8(terminal).unwrap(),
        markdown: markdown::render(summary, &options),
        page: html::render(summary).unwrap(),
        junit: junit::to_xml(summary, &junit::Options { locations: true }).unwrap(),
        annotations: [
            annotate::failing_checks(summary, &path),
            annotate::run_findings(summary, &path),
        ]
        .concat(),
        outputs: Outputs::of(summary, None).render(),
    }
}

fn xml_attribute(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn assert_every_sink_says(summary: &Summary, shape: &str) {
    let out = render(summary);
    let (headline, code) = (&summary.headline, summary.exit.code());
    let expected = match summary.exit {
        Exit::Success => [Severity::Passed, Severity::Warning].contains(&summary.severity),
        Exit::Failure => summary.severity == Severity::Failed,
        Exit::Error => summary.severity == Severity::Error,
    };
    assert!(expected, "{shape}: {:?} for exit {code}", summary.severity);
    let result = format!("Result: {} (exit {code})", console::escape(headline));
    assert!(out.terminal.contains(&result), "{shape}: {}", out.terminal);
    let counts = format!("Cases: {}", summary.counts);
    assert!(out.terminal.contains(&counts), "{shape}: {}", out.terminal);
    let heading = format!(
        "`ci.yaml`: {} {}\n",
        summary.severity.sign(),
        markdown::escape::prose(headline)
    );
    assert!(out.markdown.contains(&heading), "{shape}: {}", out.markdown);
    let header = format!(
        "<header class=\"verdict {}\" id=\"verdict\">\n<h1>goldgate: {}</h1>",
        summary.severity.name(),
        html::escape::text(headline)
    );
    assert!(out.page.contains(&header), "{shape}");
    for (name, value) in [
        ("goldgate.exit", code.to_string()),
        ("goldgate.verdict", summary.verdict.name().to_owned()),
        ("goldgate.headline", xml_attribute(headline)),
    ] {
        let property = format!("<property name=\"{name}\" value=\"{value}\"/>");
        assert!(out.junit.contains(&property), "{shape}: {}", out.junit);
    }
    let output = format!(
        "verdict={}\nexit={code}\nheadline={headline}\n",
        summary.verdict.name()
    );
    assert!(out.outputs.contains(&output), "{shape}: {}", out.outputs);
    // The annotations are red when the exit is 1, and when it is 0 only for a case that
    // errored (allowed by --max-errors): a run that fails on a metric, a floor or an open
    // decision says so there too.
    let errored = |a: &&String| {
        (summary.report.cases.iter())
            .any(|c| c.status == Status::Error && a.contains(&format!("goldgate%3A {} ", c.id)))
    };
    // A reader that counts JUnit failures sees one in a run that fails, whatever failed it.
    let root = out
        .junit
        .lines()
        .find(|l| l.starts_with("<testsuites"))
        .unwrap();
    let counted = !root.contains(" failures=\"0\"") || !root.contains(" errors=\"0\"");
    if summary.exit == Exit::Failure {
        assert!(counted, "{shape}: {root}");
    }
    let mut red = out.annotations.iter().filter(|a| a.starts_with("::error"));
    match summary.exit {
        Exit::Success => assert!(red.all(|a| errored(&a)), "{shape}: {:?}", out.annotations),
        Exit::Failure => assert!(red.next().is_some(), "{shape}: no error annotation"),
        Exit::Error => {}
    }
    for case in &summary.report.cases {
        let on_case = |a: &&String| a.contains(&format!("goldgate%3A {} ", case.id));
        let annotation = out.annotations.iter().find(on_case);
        let excused = matches!(summary.standing(case), Standing::Excused(_));
        match (case.status.is_bad(), annotation) {
            (false, _) => {}
            (true, Some(a)) => assert_eq!(a.starts_with("::warning"), excused, "{shape}: {a}"),
            (true, None) => panic!("{shape}: no annotation for {}", case.id),
        }
        // A failure that did not block says so wherever it is shown as failed.
        if let Standing::Excused(excuse) = summary.standing(case) {
            let note = format!("not blocking: {}", excuse.describe());
            assert!(out.terminal.contains(&note), "{shape}: {}", out.terminal);
            assert!(out.markdown.contains(&note), "{shape}");
            assert!(out.page.contains(&format!("[\"{note}\"]")), "{shape}");
            let message = format!("not blocking ({})", excuse.describe());
            assert!(out.junit.contains(&xml_attribute(&message)), "{shape}");
        }
    }
}

#[test]
fn every_sink_shows_the_summary_severity_and_headline() {
    let outcomes = [
        GateOutcome::NoBaseline,
        GateOutcome::Clear,
        GateOutcome::Regressed,
        GateOutcome::MetricRegressed,
        GateOutcome::Undecided,
    ];
    let policies =
        [(false, false), (true, false), (true, true)].map(|(regress, inconclusive)| Policy {
            fail_on_regress: regress,
            fail_on_inconclusive: inconclusive,
        });
    let mut shapes = 0;
    for outcome in outcomes {
        for policy in policies {
            for quarantined in [
                Quarantined::None,
                Quarantined::Failing,
                Quarantined::Errored,
            ] {
                for errors in [Errors::None, Errors::Allowed, Errors::TooMany] {
                    for flaky in [false, true] {
                        let report = shaped(outcome, policy, quarantined, errors, flaky);
                        let summary = Summary::new(&report, "ci.yaml");
                        let shape = format!(
                            "{outcome:?} {policy:?} {quarantined:?} {errors:?} flaky={flaky}"
                        );
                        assert_every_sink_says(&summary, &shape);
                        shapes += 1;
                    }
                }
            }
        }
    }
    assert_eq!(shapes, 5 * 3 * 3 * 3 * 2);
}

#[test]
fn an_open_decision_that_fails_the_run_reads_red_everywhere() {
    let policy = Policy {
        fail_on_regress: true,
        fail_on_inconclusive: true,
    };
    let report = shaped(
        GateOutcome::Undecided,
        policy,
        Quarantined::None,
        Errors::None,
        false,
    );
    let summary = Summary::new(&report, "default");
    assert_eq!(summary.exit, Exit::Failure);
    assert_eq!(summary.severity, Severity::Failed);
    assert!(
        summary
            .headline
            .starts_with("inconclusive: 1 decision left open"),
        "{}",
        summary.headline
    );
    let without = Policy {
        fail_on_inconclusive: false,
        ..policy
    };
    let report = shaped(
        GateOutcome::Undecided,
        without,
        Quarantined::None,
        Errors::None,
        false,
    );
    let summary = Summary::new(&report, "default");
    assert_eq!(
        (summary.exit, summary.severity),
        (Exit::Success, Severity::Warning)
    );
}

#[test]
fn a_quarantine_counts_failures_never_errors() {
    let report = shaped(
        GateOutcome::Clear,
        GATED,
        Quarantined::Errored,
        Errors::Allowed,
        false,
    );
    let summary = Summary::new(&report, "default");
    assert_eq!(summary.counts.quarantined, 0);
    assert!(
        !summary.headline.contains("quarantined"),
        "{}",
        summary.headline
    );
    let report = shaped(
        GateOutcome::Clear,
        GATED,
        Quarantined::Failing,
        Errors::None,
        false,
    );
    let summary = Summary::new(&report, "default");
    assert_eq!(summary.counts.quarantined, 1);
    assert_eq!(summary.headline, "no regression (1 quarantined)");
}

#[test]
fn a_failure_the_gate_saw_no_change_in_does_not_block_and_says_why() {
    let report = shaped(
        GateOutcome::Clear,
        GATED,
        Quarantined::None,
        Errors::None,
        true,
    );
    let summary = Summary::new(&report, "default");
    let flaky = report.cases.iter().find(|c| c.id == "flaky").unwrap();
    assert_eq!(summary.standing(flaky), Standing::Excused(Excuse::NoWorse));
    assert_eq!(summary.exit, Exit::Success);
    assert_eq!(summary.counts.excused, 1);
    assert_eq!(summary.counts.flaky, Some((1, 1)));
    // Without the gate deciding, the same failure fails the run.
    let report = shaped(
        GateOutcome::Clear,
        Policy::default(),
        Quarantined::None,
        Errors::None,
        true,
    );
    let summary = Summary::new(&report, "default");
    let flaky = report.cases.iter().find(|c| c.id == "flaky").unwrap();
    assert_eq!(summary.standing(flaky), Standing::Blocks);
    assert_eq!(summary.exit, Exit::Failure);
}

#[test]
fn a_run_that_could_not_be_judged_has_no_gate_verdict() {
    let report = shaped(
        GateOutcome::Clear,
        GATED,
        Quarantined::None,
        Errors::TooMany,
        false,
    );
    let summary = Summary::new(&report, "default");
    assert_eq!(summary.exit, Exit::Error);
    let line = summary.gate_line().unwrap();
    assert!(line.starts_with("not decided"), "{line}");
}
