//! The JSON Schemas of the golden formats (`goldgate schema scrapi-golden|turn-eval|tool-test|
//! simulation|regtrace|ces-csv`) agree with goldgate's loaders: every real file of the shared
//! corpus that its own tool loads, and every fixture goldgate accepts, validates against its
//! schema; the bad fixtures whose lint error a schema can express (an unknown key, a wrong type,
//! a missing required key, a value outside an enum) fail it too; and the command prints exactly
//! the checked-in file.

use crate::common;
use std::fs;
use std::path::{Path, PathBuf};

use jsonschema::Validator;
use serde_json::{Map, Value};

/// Every golden-format schema, by its `goldgate schema` name.
const NAMES: [&str; 6] = [
    "scrapi-golden",
    "turn-eval",
    "tool-test",
    "simulation",
    "regtrace",
    "ces-csv",
];

/// The corpus manifest's `format` of each kind goldgate loads, and its schema.
const CORPUS_KINDS: [(&str, &str); 5] = [
    ("scrapi-golden", "scrapi-golden"),
    ("scrapi-turn-eval", "turn-eval"),
    ("scrapi-tool-test", "tool-test"),
    ("scrapi-simulation", "simulation"),
    ("regtrace-set", "regtrace"),
];

/// Bad fixtures whose lint error is one a schema can express, with the schema and why it
/// refuses the file. The others (parse errors, duplicate keys or names, regular expressions
/// that do not compile, rules across rows or files) are left to `goldgate lint`.
const BAD: &[(&str, &str, &str)] = &[
    (
        "scrapi-agent-type.yaml",
        "scrapi-golden",
        "E007: `agent` a mapping, a number in a list, a boolean",
    ),
    (
        "scrapi-control-characters.yaml",
        "scrapi-golden",
        "G100/E011: unknown key `agnet\\nreply`, `$matchType` outside the enum",
    ),
    (
        "scrapi-empty-conversations.yaml",
        "scrapi-golden",
        "E002: `conversations` empty (minItems 1)",
    ),
    (
        "scrapi-exported-bad.json",
        "scrapi-golden",
        "G100/G102: unknown `evaluationExpectation`, `userInputs`; `event.event` missing",
    ),
    (
        "scrapi-missing-required.yaml",
        "scrapi-golden",
        "G102: no `conversation`, no `turns`, no `action`",
    ),
    (
        "scrapi-unknown-keys.yaml",
        "scrapi-golden",
        "G100: unknown keys `common_session_parameter`, `tag`",
    ),
    (
        "scrapi-unknown-matchtype.yaml",
        "scrapi-golden",
        "E011/G101: `$matchType` outside the enum, or a number",
    ),
    (
        "scrapi-wrong-types.yaml",
        "scrapi-golden",
        "G101: parameters a list of strings, expectations a string, tags a mapping",
    ),
    (
        "regtrace-bad-weight.yaml",
        "regtrace",
        "G111/G101: `weight` 0, negative, a string (exclusiveMinimum 0)",
    ),
    (
        "regtrace-empty-test-cases.yaml",
        "regtrace",
        "G111: `test_cases` empty (minItems 1)",
    ),
    (
        "regtrace-missing-keys.yaml",
        "regtrace",
        "G102: no `description`, `author`, `system_prompt`",
    ),
    (
        "regtrace-rag-without-context.yaml",
        "regtrace",
        "G102/G111: a `rag` case without `context`, or with no documents",
    ),
    (
        "regtrace-thresholds.yaml",
        "regtrace",
        "G101/G111/G107: `thresholds` null, 90, key `regresion`",
    ),
    (
        "regtrace-unknown-keys.yaml",
        "regtrace",
        "G100: unknown keys `owner`, `sytem_prompt`, `wieght`",
    ),
    (
        "regtrace-unknown-metric.yaml",
        "regtrace",
        "G107/G111: metric outside the enum, `metrics` empty",
    ),
    (
        "regtrace-wrong-types.yaml",
        "regtrace",
        "G101/G107: `version` a number, `interaction_type` outside the enum, `tags` a string",
    ),
    (
        "ces-unknown-action.csv",
        "ces-csv",
        "G107: `action_type` outside the enum",
    ),
    (
        "ces-unknown-column.csv",
        "ces-csv",
        "G100: unknown columns `Text_Content`, `tool_nme`",
    ),
    (
        "ces-turn-index.csv",
        "ces-csv",
        "G101: `turn_index` `two` is not a positive integer",
    ),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn schema(name: &str) -> Validator {
    let text = fs::read_to_string(root().join(format!("schemas/{name}.schema.json"))).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::draft202012::new(&schema)
        .unwrap_or_else(|e| panic!("{name}: not a usable schema: {e}"))
}

/// The documents of a file as the schema sees them: a YAML or JSON file is one document; a
/// CSV is one object per row, keyed by its header's named columns.
fn documents(path: &Path) -> Vec<Value> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path.to_string_lossy();
    if name.ends_with(".json") {
        vec![serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))]
    } else if name.ends_with(".csv") {
        csv_rows(&text)
    } else {
        vec![serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))]
    }
}

/// Each row of a CSV as an object of its cells; columns with a blank header are left out, as
/// goldgate ignores them.
fn csv_rows(text: &str) -> Vec<Value> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(|h| h.trim().to_owned())
        .collect();
    reader
        .records()
        .map(|record| {
            let record = record.unwrap();
            let row: Map<String, Value> = header
                .iter()
                .zip(record.iter())
                .filter(|(name, _)| !name.is_empty())
                .map(|(name, cell)| (name.clone(), Value::String(cell.to_owned())))
                .collect();
            Value::Object(row)
        })
        .collect()
}

/// Why the documents of `path` do not validate, one line per error; empty when they do.
fn problems(validator: &Validator, path: &Path) -> String {
    let mut out = String::new();
    for (index, document) in documents(path).iter().enumerate() {
        for error in validator.iter_errors(document) {
            out += &format!("  [{index}] {}: {error}\n", error.instance_path());
        }
    }
    out
}

/// Validates each file against its schema and fails with every file that does not.
fn assert_valid(files: &[(PathBuf, &str)]) {
    let mut failures = String::new();
    for (path, name) in files {
        let found = problems(&schema(name), path);
        if !found.is_empty() {
            failures += &format!("{} ({name}):\n{found}", path.display());
        }
    }
    assert!(
        failures.is_empty(),
        "files goldgate loads fail their schema:\n{failures}"
    );
}

#[test]
fn every_corpus_file_its_tool_loads_validates_against_its_schema() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let mut checked: Vec<(PathBuf, &str)> = Vec::new();
    for (kind, name) in CORPUS_KINDS {
        let files = corpus.valid(kind);
        assert!(!files.is_empty(), "the manifest lists no valid {kind} file");
        checked.extend(files.into_iter().map(|(path, _)| (path, name)));
    }
    eprintln!("{} corpus files checked", checked.len());
    assert_valid(&checked);
}

#[test]
fn every_fixture_goldgate_accepts_validates_against_its_schema() {
    let mut checked: Vec<(PathBuf, &str)> = Vec::new();
    let kinds: [(&str, &[&str], &str); 6] = [
        ("fixtures/scrapi", &[".yaml", ".json"], "scrapi-golden"),
        ("examples/suite/goldens", &[".yaml"], "scrapi-golden"),
        ("fixtures/regtrace/golden-sets", &[".yaml"], "regtrace"),
        (
            "examples/suite/regtrace/golden-sets",
            &[".yaml"],
            "regtrace",
        ),
        ("fixtures/ces", &[".csv"], "ces-csv"),
        ("examples/suite/goldens", &[".csv"], "ces-csv"),
    ];
    for (dir, suffixes, name) in kinds {
        checked.extend(
            common::files_ending(&root().join(dir), suffixes)
                .into_iter()
                .map(|path| (path, name)),
        );
    }
    checked.push((
        root().join("fixtures/regtrace/recorded-outputs.yaml"),
        "regtrace",
    ));
    assert_valid(&checked);
}

/// SCRAPI's other eval kinds have no fixture files; these documents, in the shapes the loaders'
/// own tests use, stand in for them so that the schemas are checked without the corpus too.
#[test]
fn inline_turn_evals_tool_tests_and_simulations_validate() {
    let good = [
        ("turn-eval", TURN_EVAL),
        ("tool-test", TOOL_TEST),
        ("simulation", SIMULATION),
        (
            "simulation",
            "- name: bare\n  steps: [{static_utterance: Hi}]\n",
        ),
    ];
    for (name, text) in good {
        let document: Value = serde_saphyr::from_str(text).unwrap();
        let errors: Vec<String> = schema(name)
            .iter_errors(&document)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{name}:\n{text}\n{errors:#?}");
    }
    let bad = [
        (
            "turn-eval",
            "tests:\n  - name: t\n    user: hi\n    expectations: [{type: similar, value: x}]\n",
        ),
        (
            "turn-eval",
            "tests:\n  - name: t\n    expectations: [{type: contains, value: x}]\n",
        ),
        (
            "tool-test",
            "tests:\n  - name: t\n    tool: lookup\n    expectations:\n      response: [{path: $.a, operator: eq}]\n",
        ),
        ("tool-test", "tests:\n  - tool: lookup\n"),
        (
            "simulation",
            "evals:\n  - name: s\n    steps: [{goal: g, max_turns: 0}]\n",
        ),
        (
            "simulation",
            "evals:\n  - name: s\n    steps: [{gaol: g}]\n",
        ),
    ];
    for (name, text) in bad {
        let document: Value = serde_saphyr::from_str(text).unwrap();
        assert!(!schema(name).is_valid(&document), "{name} accepts:\n{text}");
    }
}

const TURN_EVAL: &str = r#"
config: {modality: text}
conversations:
  - conversation: greeting
    tags: [smoke]
    user: Hello
    variables: {tier: gold}
    expectations:
      - {type: contains, value: help}
      - {type: no_tools_called}
      - The agent greets the user.
  - conversation: two_steps
    turns:
      - {turn: ask, user: Where is my order?, expectations: [{type: tool_called, value: lookup}]}
      - {event: welcome, expectations: [{type: tool_input, value: {order_id: A-1}}]}
"#;

const TOOL_TEST: &str = r#"
tests:
  - name: lookup_finds_the_order
    tool: lookup
    args: {order_id: A-1}
    variables: {tier: gold}
    tags: tools
    expectations:
      response:
        - {path: "$.result.status", operator: equals, value: shipped}
        - {path: "$.result.items", operator: length_greater_than, value: 0}
      variables:
        - {path: "$.tier", operator: is_not_null}
"#;

const SIMULATION: &str = r#"
evals:
  - name: refund
    tags: [refunds]
    session_parameters: {tier: gold}
    steps:
      - goal: Ask for a refund of order A-1
        success_criteria: The agent starts the refund
        response_guide: Be brief
        max_turns: 4
        inject_variables: {order_id: A-1}
      - static_utterance: Thanks, that's all.
    expectations:
      - The agent confirms the refund.
      - {llmCriteria: {prompt: The agent stays polite.}}
"#;

#[test]
fn bad_fixtures_a_schema_can_express_fail_their_schema() {
    let mut accepted = Vec::new();
    for (file, name, reason) in BAD {
        let path = root().join("fixtures/bad").join(file);
        if problems(&schema(name), &path).is_empty() {
            accepted.push(format!("{file} ({name}): {reason}"));
        }
    }
    assert!(
        accepted.is_empty(),
        "schemas accept bad fixtures:\n{}",
        accepted.join("\n")
    );
}

#[test]
fn the_schema_command_prints_each_golden_format_schema() {
    for name in NAMES {
        let output = common::command().args(["schema", name]).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "goldgate schema {name}");
        let printed = String::from_utf8(output.stdout).unwrap();
        let file = fs::read_to_string(root().join(format!("schemas/{name}.schema.json"))).unwrap();
        assert!(
            printed == file,
            "goldgate schema {name} differs from schemas/{name}.schema.json"
        );
        let schema: Value = serde_json::from_str(&printed).unwrap();
        assert!(
            jsonschema::meta::is_valid(&schema),
            "{name}: not a valid JSON Schema: {:?}",
            jsonschema::meta::validate(&schema).err()
        );
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
    }
    let help = common::command()
        .args(["schema", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    for words in NAMES
        .iter()
        .copied()
        .chain(["# yaml-language-server: $schema="])
    {
        assert!(
            help.contains(words),
            "`goldgate schema --help` does not name {words}"
        );
    }
}
