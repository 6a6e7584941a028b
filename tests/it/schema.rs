//! The JSON Schemas in schemas/: the report's stays what its types generate, `goldgate schema`
//! prints each one, and real documents are judged by them as goldgate's loaders judge them.
//!
//! The config and scenario schemas are written by hand, so the tests hold them to the loaders:
//! every document in the fixtures (good and broken), and every single turn and scorer cut out
//! of them, must be accepted by the schema exactly when goldgate accepts it.

use crate::common;
use std::fs;
use std::path::{Path, PathBuf};

use jsonschema::Validator;
use serde_json::{Value, json};

fn validator(schema: &Value) -> Validator {
    jsonschema::draft202012::new(schema).unwrap_or_else(|e| panic!("not a usable schema: {e}"))
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

/// Why `document` is invalid, one line per error; empty when it is valid.
fn errors(validator: &Validator, document: &Value) -> String {
    validator
        .iter_errors(document)
        .map(|e| format!("  {}: {e}\n", e.instance_path()))
        .collect()
}

/// How the loader and the schema judged a document they disagree on.
fn disagreement(document: impl std::fmt::Display, loader: &str, problems: &str) -> String {
    let schema = if problems.is_empty() {
        " valid\n".to_owned()
    } else {
        format!("\n{problems}")
    };
    format!("{document}\n  goldgate: {loader}\n  schema:{schema}")
}

fn yaml_file(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_checked_in_report_schema_is_the_generated_one() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/report.schema.json");
    let generated =
        serde_json::to_string_pretty(&goldgate::results::schema::report_schema()).unwrap() + "\n";
    if std::env::var_os("GOLDGATE_BLESS").is_some_and(|v| v == "1") {
        fs::write(&path, &generated).unwrap();
        return;
    }
    let checked_in = fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "schemas/report.schema.json is out of date with the report's types: run this \
         test with GOLDGATE_BLESS=1 and commit the result"
    );
}

#[test]
fn the_schema_command_prints_each_checked_in_schema() {
    for name in ["config", "report", "scenario"] {
        let output = common::command().args(["schema", name]).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "goldgate schema {name}");
        let printed = String::from_utf8(output.stdout).unwrap();
        let file = fs::read_to_string(format!("schemas/{name}.schema.json")).unwrap();
        assert!(
            printed == file,
            "goldgate schema {name} prints something else than schemas/{name}.schema.json"
        );
        let schema = json_of(&printed);
        assert!(
            jsonschema::meta::is_valid(&schema),
            "{name}: not a valid JSON Schema: {:?}",
            jsonschema::meta::validate(&schema).err()
        );
        assert_eq!(
            schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{name}"
        );
    }
    let output = common::command()
        .args(["schema", "baseline"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    common::assert_contains(&stderr, &["config, report, scenario"]);
}

/// Real reports of the example suite validate, including one with repeats, a shard and a gate
/// that found a flipped case; a damaged one does not.
#[test]
fn reports_of_a_real_run_validate_against_the_report_schema() {
    let schema = validator(&goldgate::results::schema::report_schema());
    let agent = common::support_agent();
    let dir = tempfile::tempdir().unwrap();
    let (first, baseline, second) = (
        dir.path().join("first.json"),
        dir.path().join("baseline.json"),
        dir.path().join("second.json"),
    );
    common::Outcome::of(
        common::command()
            .args(["run", "examples/suite", "--agent-cmd"])
            .arg(&agent)
            .arg("--output")
            .arg(&first),
    )
    .exits(0);
    let first_report = json_of(&fs::read_to_string(&first).unwrap());
    assert_eq!(errors(&schema, &first_report), "");

    // A baseline in which the first case failed, in it and in the 20 runs of its history:
    // it passes both runs now, beyond chance, so the gate reports a flip.
    let mut old = first_report.clone();
    old["cases"][0]["status"] = json!("failed");
    old["cases"][0]["history"] = json!([{"passed": 0, "judged": 20}]);
    assert_eq!(errors(&schema, &old), "");
    fs::write(&baseline, old.to_string()).unwrap();
    common::Outcome::of(
        common::command()
            // One look, at the whole rate: the flip is beyond chance at 1%.
            .args(["run", "examples/suite", "--repeat", "2", "--min-pass", "1"])
            .args(["--max-repeat", "2", "--shard", "1/1", "--agent-cmd"])
            .arg(&agent)
            .arg("--baseline")
            .arg(&baseline)
            .arg("--output")
            .arg(&second),
    )
    .exits(0);
    let report = json_of(&fs::read_to_string(&second).unwrap());
    assert_eq!(report["suite"]["shard"], "1/1");
    assert!(report["cases"][0]["repeats"].is_object(), "{report:#}");
    assert_eq!(
        report["gate"]["newly_passing"].as_array().map(Vec::len),
        Some(1)
    );
    assert!(report["cases"][0]["turns"][0]["reply"].is_object());
    assert_eq!(errors(&schema, &report), "");

    for (pointer, damage) in [
        ("/cases/0/status", json!("passd")),
        ("/cases/0/turns/0/latency_ms", json!("12ms")),
        ("/suite/shard", json!("0/3")),
        ("/gate/metrics/0/threshold", json!("passRateDrop")),
        ("/schema_version", json!(2)),
    ] {
        let mut damaged = report.clone();
        *damaged.pointer_mut(pointer).unwrap() = damage;
        assert!(
            !schema.is_valid(&damaged),
            "{pointer} damaged still validates"
        );
    }
    let mut damaged = report;
    damaged.as_object_mut().unwrap().remove("aggregates");
    assert!(
        !schema.is_valid(&damaged),
        "a report without aggregates validates"
    );
}

#[test]
fn every_gecx_fixture_validates_and_broken_ones_do_not() {
    let schema = validator(&json_of(goldgate::schema::SCENARIO_SCHEMA));
    let good = [
        common::files_ending(
            Path::new("fixtures/gecx"),
            &[".scenario.yaml", ".scenario.yml"],
        ),
        common::files_ending(Path::new("examples/suite/scenarios"), &[".scenario.yaml"]),
    ];
    for path in good.iter().flatten() {
        let problems = errors(&schema, &yaml_file(path));
        assert!(problems.is_empty(), "{}:\n{problems}", path.display());
    }
    // Every broken fixture that is YAML at all (not the duplicate key or the truncated one).
    let broken: Vec<PathBuf> = common::files_ending(Path::new("fixtures/bad"), &[".scenario.yaml"])
        .into_iter()
        .filter(|p| {
            !p.to_string_lossy().contains("duplicate") && !p.to_string_lossy().contains("truncated")
        })
        .collect();
    assert!(broken.len() >= 8, "{broken:?}");
    for path in &broken {
        assert!(
            !schema.is_valid(&yaml_file(path)),
            "{} validates",
            path.display()
        );
    }
}

/// Every scenario fixture, good and bad, and each of its turns and scorers alone in an
/// otherwise valid scenario.
fn scenario_documents() -> Vec<Value> {
    let sources: Vec<PathBuf> = [
        common::files_ending(
            Path::new("fixtures/gecx"),
            &[".scenario.yaml", ".scenario.yml"],
        ),
        common::files_ending(Path::new("fixtures/bad"), &[".scenario.yaml"]),
    ]
    .concat();
    // Each document, and whether it gets a fresh id: ids must stay unique across the files,
    // as lint checks the suite, while a missing, blank or mistyped id must stay as it is.
    let mut documents: Vec<(Value, bool)> = Vec::new();
    for path in &sources {
        let text = fs::read_to_string(path).unwrap();
        let Ok(whole) = serde_saphyr::from_str::<Value>(&text) else {
            continue; // Not YAML: the schema has nothing to judge.
        };
        for list in ["when", "then"] {
            for item in whole[list].as_array().into_iter().flatten() {
                let mut document =
                    json!({"when": [{"user": "hi"}], "then": [{"scorer": "no-error"}]});
                document[list] = json!([item]);
                documents.push((document, true));
            }
        }
        let fresh_id = whole["id"].as_str().is_some_and(|id| !id.trim().is_empty());
        documents.push((whole, fresh_id));
    }
    for (index, (document, fresh_id)) in documents.iter_mut().enumerate() {
        if *fresh_id {
            document["id"] = json!(format!("case-{index}"));
        }
    }
    documents
        .into_iter()
        .map(|(document, _)| document)
        .collect()
}

/// Every scenario fixture, and each of its turns and scorers alone in an otherwise valid
/// scenario, is accepted by the schema exactly when `goldgate lint` finds no error in it. A
/// regex that does not compile is the one thing the schema cannot see.
#[test]
fn the_scenario_schema_agrees_with_the_loader() {
    let schema = validator(&json_of(goldgate::schema::SCENARIO_SCHEMA));
    let documents = scenario_documents();
    let dir = tempfile::tempdir().unwrap();
    for (index, document) in documents.iter().enumerate() {
        // JSON is YAML: the loader reads these files as it reads any scenario.
        let file = dir.path().join(format!("{index:03}.scenario.yaml"));
        fs::write(file, serde_json::to_string_pretty(document).unwrap()).unwrap();
    }
    let output = common::command()
        .arg("lint")
        .arg("--json")
        .arg(dir.path())
        .output()
        .unwrap();
    let lint = json_of(&String::from_utf8_lossy(&output.stdout));
    let linted = lint["files"].as_array().unwrap();
    assert_eq!(linted.len(), documents.len(), "lint checked every document");
    let mut disagreements = String::new();
    let (mut valid, mut invalid) = (0, 0);
    for file in linted {
        let name = Path::new(file["path"].as_str().unwrap())
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let index: usize = name.trim_end_matches(".scenario").parse().unwrap();
        let codes: Vec<&str> = file["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["severity"] == "error")
            .map(|d| d["code"].as_str().unwrap())
            .collect();
        if codes.contains(&"G104") {
            continue;
        }
        let document = &documents[index];
        let problems = errors(&schema, document);
        match (codes.is_empty(), problems.is_empty()) {
            (true, true) => valid += 1,
            (false, false) => invalid += 1,
            (true, false) => disagreements += &disagreement(document, "loads it", &problems),
            (false, true) => disagreements += &disagreement(document, &codes.join(", "), ""),
        }
    }
    assert_eq!(disagreements, "", "the schema and the loader disagree");
    assert!(
        valid >= 30 && invalid >= 25,
        "{valid} valid, {invalid} invalid documents"
    );
}

/// goldgate.yaml documents that `Config::load` accepts, besides examples/goldgate.yaml.
const GOOD_CONFIGS: &[&str] = &[
    "version: 1\n",
    "agent: { http: { url: 'http://127.0.0.1:8080/turn', headers: { Authorization: 'Bearer ${T}', X-Id: 7 } } }",
    "agent: { http: { url: 'http://127.0.0.1:8080/chat/{{session}}', method: put, headers: { X-Turn: '{{turn}}' }, body: { q: '{{text}}', n: 1, v: ['{{variables}}'] }, response: { text: $.reply, tool_calls: '$.tools[*]', tool_name: $.fn, tool_args: $.args, transfer: $.to, session: $.sid }, stream: sse, cookies: true } }",
    "agent: { http: { url: '${AGENT_URL}/turn' } }",
    "agent: { http: { url: 'http://127.0.0.1:8080/chat', body: '{\"q\": \"{{text}}\", \"turn\": {{turn}}}', response: { text: $ } } }",
    "agent: { command: ['./agent', --stdio, 1] }",
    "agent: { command: './agent --stdio' }",
    "agent: { command: { argv: ./agent, processes: 4 } }",
    "agent: { replay: transcripts/ }",
    "agent: { anthropic: { model: claude, temperature: 0.2, max_tool_rounds: 3, system_prompt: You are a support agent., base_url: 'http://127.0.0.1:9/${X}' } }",
    "agent: { gemini: {} }",
    "agent: { ces: { app: projects/p/locations/us/apps/a } }",
    "agent: { ces: { app: projects/p/locations/us/apps/a, deployment: d1, entry_agent: projects/p/locations/us/apps/a/agents/root, base_url: 'http://127.0.0.1:9', api_version: v1beta, quota_project: p } }",
    "judge: { provider: openai, model: gpt, votes: 3, similarity_pass: 2.5, base_url: 'http://127.0.0.1:9' }",
    "simulator: { provider: gemini, model: flash, base_url: 'http://127.0.0.1:9/${X}' }",
    "judge: { provider: openai }\nsimulator: { provider: anthropic }",
    "run: { concurrency: 2, timeout: 500ms, retries: 0, allow_extra_tool_calls: true }",
    "run: { timeout: 30 }",
    "run: { timeout: ' 1.5 m' }",
    "run: { timeout: .5h, retries: 20 }",
    "thresholds: { passRateDropPp: 0, deflectionDropPp: 5, p95LatencyIncreasePct: 20.5, ttftP95IncreasePct: 20, hallucinationRateIncreasePp: 2 }",
];

/// goldgate.yaml documents that `Config::load` refuses.
const BROKEN_CONFIGS: &[&str] = &[
    "agent: { http: { url: 'http://x' }, command: [x] }",
    "agent: { htp: { url: 'http://x' } }",
    "agent: {}",
    "agent: { http: { headers: { A: b } } }",
    "agent: { http: { url: 'http://x', headers: [A] } }",
    "agent: { http: { url: [x] } }",
    "agent: { http: { url: 'http://x', body: { q: '{{text}}' } } }",
    "agent: { http: { url: 'http://x', response: { tool_calls: $.t } } }",
    "agent: { http: { url: 'http://x', response: { text: $.t }, stream: websocket } }",
    "agent: { http: { url: 'http://x', response: { text: $.t }, cookies: 'yes' } }",
    "agent: { http: { url: 'http://x', response: { text: $.t }, method: Post } }",
    "agent: { command: [] }",
    "agent: { command: '  ' }",
    "agent: { command: { processes: 2 } }",
    "agent: { command: { argv: [x], processes: 0 } }",
    "agent: { command: { argv: [x], procs: 2 } }",
    "agent: { replay: { dir: x } }",
    "agent: { openai: { temperature: 3 } }",
    "agent: { openai: { max_tool_rounds: 0 } }",
    "agent: { openai: { modle: x } }",
    "agent: { ces: {} }",
    "agent: { ces: { app: my-app } }",
    "agent: { ces: { app: projects/p/locations/us/apps/a, api_version: v2 } }",
    "agent: { ces: { app: projects/p/locations/us/apps/a, deploymnet: d } }",
    "agent: { openai: null }",
    "judge: { model: x }",
    "judge: { provider: claude }",
    "judge: { provider: anthropic, votes: 2 }",
    "judge: { provider: anthropic, similarity_pass: 5 }",
    "simulator: { model: x }",
    "simulator: { provider: antropic }",
    "simulator: { provider: openai, votes: 3 }",
    "run: { concurrency: 0 }",
    "run: { timeout: 5 parsecs }",
    "run: { timeout: -1 }",
    "run: { timeout: true }",
    "run: { retries: 21 }",
    "run: { retries: '2' }",
    "run: { allow_extra_tool_calls: 'yes' }",
    "run: null",
    "thresholds: { passRateDrop: 1 }",
    "thresholds: { deflectionDropPp: -1 }",
    "thresholds: { deflectionDropPp: five }",
    "agents: { http: { url: 'http://x' } }",
    "agent: { http: { url: 'localhost:8080/turn' } }",
    "agent: { http: { url: 8080 } }",
    "agent: { openai: { model: gpt, base_url: 'localhost:11434/v1' } }",
    "judge: { provider: openai, model: gpt, base_url: '127.0.0.1:9' }",
    "agent: { ces: { app: projects/p/locations/us/apps/a, base_url: 'ces.googleapis.com' } }",
    "[agent]",
];

/// goldgate.yaml documents, good and bad, are accepted by the schema exactly when
/// `Config::load` accepts them.
#[test]
fn the_config_schema_agrees_with_the_loader() {
    let schema = validator(&json_of(goldgate::schema::CONFIG_SCHEMA));
    let examples = fs::read_to_string("examples/goldgate.yaml").unwrap();
    let documents = [&[examples.as_str()], GOOD_CONFIGS, BROKEN_CONFIGS].concat();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("goldgate.yaml");
    let mut disagreements = String::new();
    let (mut valid, mut invalid) = (0, 0);
    for text in documents {
        fs::write(&path, text).unwrap();
        let loaded = goldgate::config::Config::load(&path);
        let document: Value = serde_saphyr::from_str(text).unwrap();
        let problems = errors(&schema, &document);
        match (&loaded, problems.is_empty()) {
            (Ok(_), true) => valid += 1,
            (Err(_), false) => invalid += 1,
            (Ok(_), false) => disagreements += &disagreement(text, "loads it", &problems),
            (Err(e), true) => disagreements += &disagreement(text, &e.to_string(), ""),
        }
    }
    assert_eq!(disagreements, "", "the schema and the loader disagree");
    assert_eq!(
        (valid, invalid),
        (1 + GOOD_CONFIGS.len(), BROKEN_CONFIGS.len())
    );
    // An empty goldgate.yaml is a valid config.
    assert!(schema.is_valid(&Value::Null));
}
