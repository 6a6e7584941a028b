//! SCRAPI simulation files into `Simulation`s (`formats::scrapi::simulation`): both shapes,
//! every step key, problems with their line, and every simulation file of the shared corpus
//! (when present) with the count its manifest gives.

use crate::common;
use std::path::Path;
use std::sync::Arc;

use goldgate::diagnostic::{Diagnostics, Severity};
use goldgate::formats::scrapi::simulation;
use goldgate::model::{CheckKind, Simulation};

fn load(text: &str) -> (Vec<Simulation>, Vec<String>) {
    let file: Arc<Path> = Arc::from(Path::new("sims.yaml"));
    let mut diags = Diagnostics::new(&file);
    let root = goldgate::yaml::parse(text).expect("the test YAML parses");
    let simulations = simulation::load(&root, &mut diags);
    let problems = diags
        .items
        .iter()
        .map(|d| {
            let severity = if d.severity == Severity::Error {
                "error"
            } else {
                "warning"
            };
            format!("{}: {severity}: {}", d.location.line, d.message)
        })
        .collect();
    (simulations, problems)
}

#[test]
fn an_evals_mapping_loads_every_key() {
    let (simulations, problems) = load(
        "evals:
  - name: billing
    tags: [P0, billing]
    steps:
      - goal: Ask about the balance
        success_criteria: The agent gives the balance
        response_guide: Give account 42 when asked
        max_turns: 10
        inject_variables: { channel: phone }
      - static_utterance: Thanks, bye
    expectations:
      - The agent verifies the caller first
      - { prompt: The agent never invents a balance }
    session_parameters: { account_id: \"42\" }
",
    );
    assert!(problems.is_empty(), "{problems:?}");
    let billing = &simulations[0];
    assert_eq!(billing.name, "billing");
    assert_eq!(billing.tags, ["P0", "billing"]);
    assert_eq!(billing.location.line, 2);
    assert_eq!(billing.steps.len(), 2);
    assert_eq!(billing.steps[0].max_turns, Some(10));
    assert_eq!(billing.steps[0].inject_variables["channel"], "phone");
    assert_eq!(
        billing.steps[1].static_utterance.as_deref(),
        Some("Thanks, bye")
    );
    assert_eq!(billing.steps[1].goal, "");
    assert_eq!(billing.session_parameters["account_id"], "42");
    let criteria: Vec<&str> = billing
        .expectations
        .iter()
        .map(|c| match &c.kind {
            CheckKind::Criterion(text) => text.as_str(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        criteria,
        [
            "The agent verifies the caller first",
            "The agent never invents a balance"
        ]
    );
}

#[test]
fn a_bare_list_loads_too() {
    let (simulations, problems) = load(
        "- name: one\n  steps:\n    - goal: Say hello\n- name: two\n  steps:\n    - goal: Leave\n",
    );
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(simulations.len(), 2);
}

#[test]
fn problems_name_their_line() {
    let (simulations, problems) = load(
        "evals:
  - name: a
    steps:
      - goal: x
        max_turn: 3
  - name: a
    steps:
      - success_criteria: nothing to do
  - name: b
    steps: []
  - steps:
      - goal: y
        max_turns: 0
",
    );
    assert_eq!(
        problems,
        [
            "5: error: unknown key `max_turn`",
            "8: error: a step needs a `goal` (or a `static_utterance` to say)",
            "6: error: simulation `a` is defined twice, at lines 2 and 6",
            "10: error: a simulation needs at least one step",
            "11: error: missing required key `name` (a string)",
            "13: error: `max_turns` must be a whole number of turns from 1, found 0",
        ]
    );
    assert_eq!(simulations.len(), 2);
}

/// Every file the corpus manifest marks as a valid SCRAPI simulation loads without an error,
/// with as many simulations as the manifest counts.
#[test]
fn the_corpus_simulations_load_when_present() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let mut checked = 0;
    for (path, file) in corpus.valid("scrapi-simulation") {
        let (simulations, problems) = load(&std::fs::read_to_string(&path).unwrap());
        let path = path.display();
        assert!(
            problems.iter().all(|p| !p.contains("error")),
            "{path}: {problems:?}"
        );
        assert_eq!(
            simulations.len() as u64,
            file["cases"].as_u64().unwrap(),
            "{path}"
        );
        checked += 1;
    }
    assert!(checked >= 5, "{checked} corpus simulation files");
}
