//! An author's comments survive `goldgate convert`: the comment lines above a case and above a
//! turn are written back above the same case and turn by the YAML writers (SCRAPI, gecx
//! scenario), and converting to CES CSV, which has no comments, warns at the file:line of each
//! case and turn whose comments are lost. Driven through the binary.

use crate::common;
use std::path::Path;

/// A SCRAPI golden with the author's comments above its second conversation and that
/// conversation's second turn, and one goldgate annotation (not the author's) among them.
const GOLDEN: &str = "\
conversations:
  - conversation: greeting
    turns:
      - user: Hello
        agent: Hi, how can I help?
  # Regression for ticket 42: the agent once forgot the order.
  #   indented on purpose
  # goldgate name: Order status
  - conversation: order-status
    turns:
      - user: Where is my order?
        agent: Let me check that for you.
      # The thank-you turn must stay polite.
      - user: Thanks
        agent: You're welcome.
";

const CASE_COMMENTS: [&str; 2] = [
    "# Regression for ticket 42: the agent once forgot the order.",
    "#   indented on purpose",
];
const TURN_COMMENTS: [&str; 1] = ["# The thank-you turn must stay polite."];

/// `goldgate convert source --to to -o out` in `dir`, which must succeed: its stderr.
fn convert(dir: &Path, source: &str, to: &str, out: &str) -> String {
    let done = common::convert(dir, source, to, out);
    assert_eq!(done.code, Some(0), "{source} --to {to}: {}", done.stderr);
    done.stderr
}

/// The author's comment lines (trimmed) right above the first line that, trimmed, starts
/// with `line`; goldgate's own annotations left out.
fn comments_above(text: &str, line: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim_start().starts_with(line))
        .unwrap_or_else(|| panic!("no line `{line}` in\n{text}"));
    let mut found: Vec<String> = lines[..at]
        .iter()
        .rev()
        .map(|l| l.trim_start())
        .take_while(|l| l.starts_with('#'))
        .filter(|l| !l.starts_with("# goldgate "))
        .map(str::to_owned)
        .collect();
    found.reverse();
    found
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

/// The case's and the turn's comments stand right above `case_line` and the thank-you turn
/// in `text` (named `what` if not).
fn assert_in_place(text: &str, case_line: &str, what: &str) {
    assert_eq!(
        comments_above(text, case_line),
        CASE_COMMENTS,
        "{what}:\n{text}"
    );
    assert_eq!(
        comments_above(text, "- user: Thanks"),
        TURN_COMMENTS,
        "{what}:\n{text}"
    );
}

/// Both comments are where the source had them, in a SCRAPI `text`.
fn assert_scrapi_keeps_them(text: &str) {
    assert_in_place(text, "- conversation: order-status", "SCRAPI");
    assert!(
        comments_above(text, "- conversation: greeting").is_empty(),
        "{text}"
    );
    assert!(comments_above(text, "- user: Where").is_empty(), "{text}");
    assert_eq!(
        text.matches("# goldgate name: Order status").count(),
        1,
        "{text}"
    );
}

#[test]
fn scrapi_to_scrapi_keeps_the_comments_in_place() {
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "orders.yaml", GOLDEN);
    convert(dir.path(), "orders.yaml", "scrapi", "same.yaml");
    assert_scrapi_keeps_them(&read(dir.path(), "same.yaml"));
}

#[test]
fn scrapi_to_scenario_and_back_keeps_the_comments_in_place() {
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "orders.yaml", GOLDEN);
    convert(dir.path(), "orders.yaml", "scenario", "scenarios");
    let scenario = read(dir.path(), "scenarios/order-status.scenario.yaml");
    assert_in_place(&scenario, "id: order-status", "the scenario");
    assert!(!scenario.contains("goldgate"), "{scenario}");
    let greeting = read(dir.path(), "scenarios/greeting.scenario.yaml");
    assert!(!greeting.contains('#'), "{greeting}");

    convert(
        dir.path(),
        "scenarios/order-status.scenario.yaml",
        "scrapi",
        "back.yaml",
    );
    let back = read(dir.path(), "back.yaml");
    assert_in_place(&back, "- conversation: order-status", "back");
}

#[test]
fn to_ces_csv_the_lost_comments_are_warned_at_their_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "orders.yaml", GOLDEN);
    let done = common::convert(dir.path(), "orders.yaml", "ces-csv", "orders.golden.csv").exits(0);
    done.warns(&[
        "orders.yaml:9: warning: CES CSV has no comments: the author's comments above this case are left out",
        "orders.yaml:14: warning: CES CSV has no comments: the author's comments above this turn are left out",
    ]);
    // The goldgate annotation is carried (as the display name), and the case without
    // comments warns of none.
    let stderr = &done.stderr;
    assert_eq!(stderr.matches("has no comments").count(), 2, "{stderr}");
    assert!(read(dir.path(), "orders.golden.csv").contains("Order status"));
}

/// A Regtrace set with comments above a test case and above its `input` (the case's turn).
const REGTRACE: &str = "\
name: orders
version: \"1.0.0\"
description: Order questions
interaction_type: single_turn
tags: []
author: ci
created_at: \"2025-01-01\"
updated_at: \"2025-01-01\"
test_cases:
  # Regression for ticket 42: the agent once forgot the order.
  #   indented on purpose
  - id: order-status
    description: Asks where the order is
    # The thank-you turn must stay polite.
    input: Thanks
    system_prompt: null
    expected_output: You're welcome.
    actual_output: null
    metrics: [factuality]
    tags: []
";

/// A SCRAPI turn eval with comments above a test and above its second step.
const TURN_EVAL: &str = "\
tests:
  # Regression for ticket 42: the agent once forgot the order.
  #   indented on purpose
  - name: order-status
    turns:
      - turn: ask
        user: Where is my order?
        expectations:
          - type: contains
            value: order
      # The thank-you turn must stay polite.
      - turn: thank
        user: Thanks
        expectations:
          - type: contains
            value: welcome
";

/// A gecx scenario written by hand, its comments above `id` and the second `when` item.
const SCENARIO: &str = "\
# Regression for ticket 42: the agent once forgot the order.
#   indented on purpose
id: order-status
when:
  - user: Where is my order?
  # The thank-you turn must stay polite.
  - user: Thanks
then:
  - scorer: no-error
";

#[test]
fn every_yaml_reader_keeps_the_comments_for_the_writers() {
    for (name, source) in [
        ("orders.regtrace.yaml", REGTRACE),
        ("orders_eval.yaml", TURN_EVAL),
        ("orders.scenario.yaml", SCENARIO),
    ] {
        let dir = tempfile::tempdir().unwrap();
        common::write(dir.path(), name, source);
        convert(dir.path(), name, "scrapi", "out.yaml");
        let out = read(dir.path(), "out.yaml");
        assert_in_place(&out, "- conversation: order-status", name);
    }
}
