//! The last defects of the fault trial (numbered as in its write-up), each driven through the
//! binary as a CI job would meet it: a rerun of a doubtful report, quarantine entries spelt
//! two ways, outputs that are no files, goldens too large as a whole, reports read back.

use crate::common;
use std::fs;

use common::read_json;
use common::script::{order_suite, run_suite, start_agent};

/// #20: a rerun of another agent's report was refused only after replaying its failed cases
/// against the agent (turns that may be billed), and a report holding a case twice was
/// replayed, its duplicate carried into the merged report.
#[test]
fn a_rerun_refuses_another_agent_before_asking_it_and_a_report_holding_a_case_twice() {
    let (dir, addr, script) = order_suite(3);
    let root = dir.path();
    script.lock().unwrap().wrong.insert("c01".to_owned());
    run_suite(root, addr, &["--output", "report.json"]).exits(1);

    let (other, asked_other) = start_agent();
    let rerun = ["--rerun", "report.json", "--output", "out.json"];
    run_suite(root, other, &rerun).exits(2).warns(&[
        "--rerun: the saved report is of the agent",
        "nothing was played and nothing was written",
    ]);
    assert_eq!(asked_other.lock().unwrap().asked, Default::default());
    assert!(!root.join("out.json").exists());

    let mut twice = read_json(&root.join("report.json"));
    let cases = twice["cases"].as_array_mut().unwrap();
    cases.push(cases[0].clone());
    fs::write(root.join("twice.json"), twice.to_string()).unwrap();
    let rerun = ["--rerun", "twice.json", "--output", "out.json"];
    run_suite(root, addr, &rerun).exits(2).warns(&[
        "--rerun: twice.json holds the case goldens/orders.yaml#c01 more than once",
        "nothing was run",
    ]);
    assert_eq!(script.lock().unwrap().asked["c01"], 1);
    assert!(!root.join("out.json").exists());
}
