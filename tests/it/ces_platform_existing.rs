//! Evaluations that already live in a CX Agent Studio app, chosen in goldgate.yaml by
//! display-name prefix or tags as `cxas run` chooses them, run and gated with no local file of
//! their own, against the loopback fake of the v1beta evaluation endpoints.

use crate::{ces_platform_support, common};
use std::fs;

use serde_json::{Value, json};

use ces_platform_support::cli::{config, local_golden, start, with_token};
use ces_platform_support::{APP, Fake};

fn seed(fake: &Fake) -> Vec<Value> {
    let evaluations = vec![
        json!({
            "name": format!("{APP}/evaluations/made-in-console-1"),
            "displayName": "smoke_refund",
            "tags": ["smoke"],
            "golden": {"turns": [{"steps": [
                {"userInput": {"text": "I want a refund"}},
                {"expectation": {"agentResponse": {"role": "agent", "chunks": [{"text": "Let me get billing for you."}]}}},
                {"expectation": {"agentTransfer": {"targetAgent": format!("{APP}/agents/b1")}}},
            ]}]},
        }),
        json!({
            "name": format!("{APP}/evaluations/made-in-console-2"),
            "displayName": "smoke_refund_scenario",
            "scenario": {"task": "Get a refund for order ORD-12345", "rubrics": ["The agent stays polite."], "scenarioExpectations": []},
        }),
        json!({
            "name": format!("{APP}/evaluations/made-in-console-3"),
            "displayName": "nightly_long_flow",
            "golden": {"turns": [{"steps": [{"userInput": {"text": "hi"}}]}]},
        }),
    ];
    fake.state().evaluations.extend(evaluations.clone());
    evaluations
}

#[test]
fn evaluations_chosen_by_prefix_run_and_gate_with_no_file_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    // One local golden; the chosen evaluations have no file.
    local_golden(dir.path());
    let fake = Fake::accepting(ces_platform_support::cli::TOKEN);
    let seeded = seed(&fake);
    config(
        dir.path(),
        start(&fake),
        "{ evaluations: { prefix: smoke_ } }",
    );
    let (code, report, printed) = with_token(dir.path(), &["--update-baseline", "baseline.json"]);
    assert_eq!(fake.state().violations, Vec::<String>::new(), "{printed}");
    assert_eq!(code, Some(0), "{printed}");
    let ids: Vec<&str> = texts(&report["cases"], "id");
    assert_eq!(
        ids,
        ["greeting", "smoke_refund", "smoke_refund_scenario"],
        "{printed}"
    );
    let refund = common::case(&report, "smoke_refund");
    assert_eq!(refund["file"], format!("{APP}/evaluations"));
    assert_eq!(refund["turns"][0]["input"], "I want a refund");
    assert_eq!(
        refund["turns"][0]["checks"][1]["label"], "transfer to Billing Agent",
        "{refund:#}"
    );
    let scenario = common::case(&report, "smoke_refund_scenario");
    let labels: Vec<&str> = texts(&scenario["checks"], "label");
    assert_eq!(labels, ["rubric", "user goal satisfied"], "{scenario:#}");
    let run = &fake.heard("POST", ":runEvaluation")[0].body;
    let names: Vec<&str> = texts(&run["evaluations"], "");
    assert!(
        names.contains(&seeded[0]["name"].as_str().unwrap())
            && names.contains(&seeded[1]["name"].as_str().unwrap())
    );
    assert!(
        !names.contains(&seeded[2]["name"].as_str().unwrap()),
        "not chosen"
    );
    assert!(
        fake.heard("PATCH", "").is_empty(),
        "the app's own evaluations are never changed"
    );
    assert_eq!(fake.state().evaluations[..3], seeded[..]);

    // The console's evaluation breaks: the gate sees it newly failing.
    fake.state()
        .failing
        .push("smoke_refund_scenario".to_owned());
    let (code, report, printed) = with_token(dir.path(), &["--baseline", "baseline.json"]);
    assert_eq!(code, Some(1), "{printed}");
    let scenario = common::case(&report, "smoke_refund_scenario");
    assert_eq!(scenario["status"], "failed");
    assert!(
        report["gate"]["newly_failing"]
            .to_string()
            .contains("smoke_refund_scenario"),
        "{:#}",
        report["gate"]
    );
}

#[test]
fn the_apps_own_evaluations_need_no_local_golden_at_all() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("goldens")).unwrap();
    let fake = Fake::accepting(ces_platform_support::cli::TOKEN);
    seed(&fake);
    config(
        dir.path(),
        start(&fake),
        "{ evaluations: { prefix: smoke_ } }",
    );
    let (code, report, printed) = with_token(dir.path(), &[]);
    assert_eq!(code, Some(0), "{printed}");
    assert!(!printed.contains("no golden files found"), "{printed}");
    let ids: Vec<&str> = texts(&report["cases"], "id");
    assert_eq!(ids, ["smoke_refund", "smoke_refund_scenario"], "{printed}");
}

/// The text of `field` of each item of the array `list` (of each item itself, with `""`).
fn texts<'v>(list: &'v Value, field: &str) -> Vec<&'v str> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|item| if field.is_empty() { item } else { &item[field] })
        .map(|text| text.as_str().unwrap_or_else(|| panic!("not text: {text}")))
        .collect()
}
