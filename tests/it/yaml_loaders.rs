//! Plain scalars as the reference loaders read them, where a user sees it: a gecx scenario
//! under `%YAML 1.1` is read as the `yaml` package reads it then (its `yaml-1.1` schema), and
//! `lint` warns at file:line about a date, which SCRAPI refuses.

use crate::common;
use std::path::Path;

const SCENARIO: &str = "id: opt-in
when:
  - user: Sign me up
then:
  - scorer: tool-called-with-input
    args:
      name: subscribe
      input: { opt_in: y, code: 010, ratio: 1e3 }
";

/// The arguments `convert` writes for the scenario `text`, as SCRAPI's flow map.
fn converted_args(dir: &Path, text: &str) -> String {
    let source = dir.join("opt-in.scenario.yaml");
    std::fs::write(&source, text).unwrap();
    let out = dir.join("opt-in.yaml");
    let done = common::convert(dir, &source, "scrapi", &out);
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let written = std::fs::read_to_string(out).unwrap();
    let start = written.find("args: ").expect("the call's arguments");
    written[start..].lines().next().unwrap().to_owned()
}

#[test]
fn a_yaml_1_1_directive_makes_a_scenario_read_as_yaml_1_1() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        converted_args(dir.path(), SCENARIO),
        "args: {opt_in: \"y\", code: 10, ratio: 1000.0}}",
        "YAML 1.2 core without a directive"
    );
    let yaml_11 = format!("# a scenario\n%YAML 1.1\n---\n{SCENARIO}");
    assert_eq!(
        converted_args(dir.path(), &yaml_11),
        "args: {opt_in: true, code: 8, ratio: 1000.0}}",
        "the yaml package's yaml-1.1 schema under the directive"
    );
}

#[test]
fn lint_warns_where_scrapi_reads_a_date() {
    let golden = "conversations:
  - conversation: renewal
    turns:
      - user: Renew from the first
        agent: Done.
        tool_calls:
          - action: renew
            args: {since: 2024-01-31, until: \"2024-12-31\"}
            output: {ok: true}
";
    let (_dir, done) = common::lint_new("renewal.yaml", golden);
    assert_eq!(
        done.code,
        Some(0),
        "a warning: {}{}",
        done.stdout,
        done.stderr
    );
    let all = format!("{}{}", done.stdout, done.stderr);
    let dates: Vec<&str> = all
        .lines()
        .filter(|l| l.contains("a date to PyYAML"))
        .collect();
    assert_eq!(dates.len(), 1, "only the unquoted date: {all}");
    common::assert_contains(
        dates[0],
        &[
            "renewal.yaml:8: warning [G113] `2024-01-31`",
            "SCRAPI refuses the golden then",
            "quote it (`\"2024-01-31\"`)",
        ],
    );
}
