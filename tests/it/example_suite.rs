//! The shipped example: the suite in all four formats against the demo agent, as the README's
//! first command plays it (here with a prebuilt agent, so the test does not nest cargo runs).

use crate::common;
use serde_json::Value;

#[test]
fn the_example_suite_passes_against_the_example_agent() {
    let agent = common::support_agent();
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let junit = dir.path().join("junit.xml");
    let output = common::command()
        .args(["run", "examples/suite", "--agent-cmd"])
        .arg(&agent)
        .arg("--output")
        .arg(&report)
        .arg("--junit")
        .arg(&junit)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    common::assert_contains(&stdout, &["Total: 8 conversations"]);

    let report: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let formats: std::collections::BTreeSet<&str> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["format"].as_str().unwrap())
        .collect();
    assert_eq!(formats.len(), 4, "every format is exercised: {formats:?}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    assert_eq!(
        doc.descendants()
            .filter(|n| n.has_tag_name("testcase"))
            .count(),
        8
    );
}

#[test]
fn the_example_config_loads_and_names_the_demo_agent() {
    let config =
        goldgate::config::Config::load(std::path::Path::new("examples/goldgate.yaml")).unwrap();
    match config.agent {
        Some(goldgate::config::AgentConfig::Command { argv, .. }) => {
            assert!(argv.contains(&"support-agent".to_owned()))
        }
        other => panic!("unexpected agent {other:?}"),
    }
}
