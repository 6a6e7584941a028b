//! SCRAPI turn evals (`conversations|tests` with `{type, value}` expectations) run by
//! `goldgate run` against a loopback HTTP agent: each operator passes on the behaviour it
//! describes and fails on the wrong one, SCRAPI's own examples (../shared/corpus) get the
//! verdicts their files describe, and broken files are lint errors with line and hint.

use crate::common;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;

use axum::Json;
use serde_json::{Value, json};

/// Answers by what the user sent, as the agent the corpus files describe would.
async fn agent(Json(request): Json<Value>) -> Json<Value> {
    let input = &request["input"];
    let text = input["text"].as_str().unwrap_or_default();
    let event = input["event"].as_str().unwrap_or_default();
    let order = |id: &str| {
        json!({"name": "lookup_order", "args": {"order_id": id},
               "response": {"result": {"status": "shipped", "eta": "April 18"}}})
    };
    Json(match (text, event) {
        (_, "welcome") => json!({"messages": [{"text": "Welcome to Acme! How can I help?"}]}),
        // Calls the tool only when the variable the test sets arrived with the turn.
        ("What's the status of order ORD-12345?", _) => {
            if input["variables"]["order_12345_status"] == "shipped" {
                json!({"messages": [{"text": "It has shipped."}], "tool_calls": [order("ORD-12345")]})
            } else {
                json!({"messages": [{"text": "Which order?"}]})
            }
        }
        ("Check order ORD-12345 please", _) | ("It's ORD-12345", _) => json!({
            "messages": [{"text": "Your order has shipped."}],
            "tool_calls": [order("ORD-12345"), {"name": "log_event", "args": {}}]}),
        ("Check order ORD-99999 please", _) => json!({
            "messages": [{"text": "Your order has shipped."}],
            "tool_calls": [order("ORD-99999")]}),
        ("I want to dispute a charge on my bill", _) => {
            json!({"transfer": {"agent": "projects/p/locations/l/apps/a/agents/billing-agent"}})
        }
        ("I want to check my order", _) => {
            json!({"messages": [{"text": "Sure, what is your Order ID?"}]})
        }
        ("Thank you!", _) => json!({"messages": [
            {"text": "You're very welcome!"}, {"text": " Let me know if you need anything else. "}]}),
        _ => json!({"messages": [{"text": "I did not get that."}]}),
    })
}

/// `goldgate run --agent-url ADDR TARGET` in `dir`: exit code, report and everything printed.
fn run(dir: &Path, addr: SocketAddr, target: &Path) -> (Option<i32>, Value, String) {
    let mut command = common::command_in(dir);
    command.args(["run", "--agent-url", &format!("http://{addr}/turn")]);
    command.arg(target);
    let (out, report) = common::run_with_report(&mut command, &dir.join("report.json"));
    (out.code, report, out.stdout + &out.stderr)
}

/// Writes `text` as `name` in a fresh directory and [`run`]s it against the loopback agent.
fn run_new(name: &str, text: &str) -> (Option<i32>, Value, String) {
    let addr = common::serve_turn(agent, ());
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), name, text);
    run(dir.path(), addr, &dir.path().join(name))
}

fn want(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

const OPERATORS: &str = r#"config:
  modality: TEXT
tests:
  - name: contains_ignores_case
    event: welcome
    expectations:
      - type: contains
        value: "welcome to acme"
      - type: no_tools_called
  - name: contains_missing
    event: welcome
    expectations:
      - type: contains
        value: "Goodbye"
  - name: equals_joined_trimmed
    user: "Thank you!"
    expectations:
      - type: equals
        value: "You're very welcome! Let me know if you need anything else."
  - name: equals_wrong
    user: "Thank you!"
    expectations:
      - type: equals
        value: "You're welcome."
  - name: tool_input_subset_extra_calls_allowed
    user: "Check order ORD-12345 please"
    expectations:
      - type: tool_called
        value: lookup_order
      - type: tool_input
        value: { order_id: "ORD-12345" }
      - type: tool_output
        value: { lookup_order: { result: { status: shipped } } }
  - name: tool_output_key_exists
    user: "Check order ORD-12345 please"
    expectations:
      - type: tool_output
        value: { lookup_order: {} }
  - name: tool_input_wrong
    user: "Check order ORD-99999 please"
    expectations:
      - type: tool_input
        value: { order_id: "ORD-12345" }
  - name: no_tools_but_called
    user: "Check order ORD-12345 please"
    expectations:
      - type: no_tools_called
  - name: tool_not_called
    event: welcome
    expectations:
      - type: tool_called
        value: lookup_order
  - name: transfer_by_resource_suffix
    user: "I want to dispute a charge on my bill"
    expectations:
      - type: agent_transfer
        value: billing-agent
  - name: transfer_wrong
    user: "I want to dispute a charge on my bill"
    expectations:
      - type: agent_transfer
        value: sales-agent
  - name: variables_reach_the_agent
    user: "What's the status of order ORD-12345?"
    variables: { order_12345_status: shipped }
    expectations:
      - type: tool_called
        value: lookup_order
  - name: fuzzy_match_same_meaning
    event: welcome
    expectations:
      - type: fuzzy_match
        value: "Welcome to Acme, how can I help you?"
  - name: fuzzy_match_other_meaning
    event: welcome
    expectations:
      - type: fuzzy_match
        value: "Your refund of forty dollars was processed yesterday."
  - name: multi_turn
    turns:
      - turn: ask
        user: "I want to check my order"
        expectations:
          - type: contains
            value: "order id"
      - turn: give
        user: "It's ORD-12345"
        expectations:
          - type: tool_called
            value: lookup_order
"#;

#[test]
fn each_operator_passes_on_its_behaviour_and_fails_on_the_wrong_one() {
    let (code, report, out) = run_new("operators.yaml", OPERATORS);
    assert_eq!(
        common::case_statuses(&report),
        want(&[
            ("contains_ignores_case", "passed"),
            ("contains_missing", "failed"),
            ("equals_joined_trimmed", "passed"),
            ("equals_wrong", "failed"),
            ("tool_input_subset_extra_calls_allowed", "passed"),
            ("tool_output_key_exists", "passed"),
            ("tool_input_wrong", "failed"),
            ("no_tools_but_called", "failed"),
            ("tool_not_called", "failed"),
            ("transfer_by_resource_suffix", "passed"),
            ("transfer_wrong", "failed"),
            ("variables_reach_the_agent", "passed"),
            ("fuzzy_match_same_meaning", "passed"),
            ("fuzzy_match_other_meaning", "failed"),
            ("multi_turn", "passed"),
        ]),
        "{out}"
    );
    assert_eq!(code, Some(1), "{out}");
    // A failed check says what was expected and what came back.
    let case = common::case(&report, "equals_wrong");
    let check = &case["turns"][0]["checks"][0];
    assert_eq!(check["expected"], "You're welcome.", "{case}");
    assert_eq!(
        check["actual"], "You're very welcome! Let me know if you need anything else.",
        "{case}"
    );
    // fuzzy_match is goldgate's semantic comparison: here, with no judge, local similarity.
    let fuzzy = common::case(&report, "fuzzy_match_same_meaning");
    assert_eq!(
        fuzzy["turns"][0]["checks"][0]["method"], "local-similarity",
        "{fuzzy}"
    );
}

#[test]
fn free_text_expectations_are_judge_criteria_skipped_without_a_judge() {
    let (_, report, out) = run_new(
        "judged.yaml",
        "conversations:\n  - conversation: polite\n    event: welcome\n    expectations:\n      - The agent greets the user politely\n      - type: contains\n        value: Welcome\n",
    );
    let case = &report["cases"][0];
    assert_eq!(case["turns"][0]["checks"][0]["status"], "passed", "{out}");
    let criterion = &case["checks"][0];
    assert_eq!(criterion["label"], "criterion", "{case}");
    assert_eq!(criterion["status"], "skipped", "{case}");
}

/// The corpus folder of SCRAPI's files, when this checkout has it.
fn corpus() -> Option<std::path::PathBuf> {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/scrapi");
    if corpus.is_dir() {
        Some(corpus)
    } else {
        eprintln!("no ../shared/corpus: skipped");
        None
    }
}

#[test]
fn scrapi_doc_examples_pass_against_the_agent_they_describe() {
    let Some(corpus) = corpus() else { return };
    let addr = common::serve_turn(agent, ());
    let dir = tempfile::tempdir().unwrap();
    let single = corpus.join("doc-snippets/docs__guides__evaluation__turn-evals.md.L75-L102.yaml");
    let (code, report, out) = run(dir.path(), addr, &single);
    assert_eq!(
        common::case_statuses(&report),
        want(&[
            ("order_lookup_triggers_tool", "passed"),
            ("welcome_message_check", "passed"),
            ("tool_receives_correct_order_id", "passed"),
            ("billing_transfers_to_billing_agent", "passed"),
        ]),
        "{out}"
    );
    assert_eq!(code, Some(0), "{out}");

    let multi = corpus.join("doc-snippets/docs__guides__evaluation__turn-evals.md.L110-L123.yaml");
    let (code, report, out) = run(dir.path(), addr, &multi);
    assert_eq!(
        common::case_statuses(&report),
        want(&[("order_id_collection_flow", "passed")]),
        "{out}"
    );
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(report["cases"][0]["turns"].as_array().unwrap().len(), 2);
}

#[test]
fn scrapi_example_with_historical_contexts_is_refused_as_scrapi_refuses_it() {
    let Some(corpus) = corpus() else { return };
    let dir = tempfile::tempdir().unwrap();
    let example = corpus.join("examples/evals/turn_eval_example.yaml");
    let out = common::goldgate(dir.path(), &["lint", example.to_str().unwrap()]);
    let text = out.stdout + &out.stderr;
    assert_eq!(out.code, Some(1), "{text}");
    common::assert_contains(
        &text,
        &[
            ":80: error [G108]",
            ":96: error [G108]",
            "6 cases: 2 errors",
        ],
    );
}

#[test]
fn broken_files_are_lint_errors_with_line_and_did_you_mean() {
    let (_dir, out) = common::lint_new(
        "broken.yaml",
        "tests:\n  - name: a\n    usr: hello\n    expectations:\n      - type: contians\n        value: x\n      - type: tool_input\n        value: lookup_order\n      - type: equals\n  - name: a\n    event: welcome\n    expectations:\n      - type: fuzy_match\n        value: hi\n",
    );
    let err = &(out.stdout + &out.stderr);
    assert_eq!(out.code, Some(1), "{err}");
    common::assert_contains(
        err,
        &[
            // One problem, not two: the typo says it was the required key.
            "broken.yaml:3: error [G100] tests[0].usr: unknown key `usr` (did you mean `user`? It is required.)",
            "broken.yaml:5: error [G107] tests[0].expectations[0].type: unknown expectation type `contians` (did you mean `contains`?)",
            "broken.yaml:8: error [G101] tests[0].expectations[1].value: a `tool_input` expectation's `value` is a mapping",
            "broken.yaml:9: error [G102] tests[0].expectations[2].value: a `equals` expectation needs a text `value`",
            "broken.yaml:10: error [G103] tests[1].name: test `a` is defined twice",
            "broken.yaml:13: error [G107] tests[1].expectations[0].type: unknown expectation type `fuzy_match` (did you mean `fuzzy_match`?)",
        ],
    );
    common::assert_lacks(err, &["a turn needs `user`"]);
}
