//! The JSON Schemas of the files goldgate reads and writes, for `goldgate schema NAME` and for
//! editors (`# yaml-language-server: $schema=...`).
//!
//! The report's schema is generated from its Rust types ([`crate::results::json::Report`] and
//! everything in it), so that it cannot say something the code does not do; a copy is checked
//! in as `schemas/report.schema.json` and a test fails when the two drift apart. goldgate.yaml
//! and the golden formats (gecx scenarios, SCRAPI goldens, turn evals, tool tests and
//! simulations, Regtrace sets, CES CSV rows) are read by hand-written walkers (every problem reported with its line,
//! which serde cannot do), so there are no types to generate from: their schemas are written by
//! hand in `schemas/`, embedded here, and tested against the example files, fixtures and the
//! shared corpus (tests/it/schema.rs, tests/it/format_schemas.rs).

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

use crate::results::{Report, SCHEMA_VERSION};

/// `goldgate.yaml` (see [`crate::config`]).
pub const CONFIG_SCHEMA: &str = include_str!("../schemas/config.schema.json");

/// A gecx `*.scenario.yaml` (see [`crate::formats::gecx`]).
pub const SCENARIO_SCHEMA: &str = include_str!("../schemas/scenario.schema.json");

/// A SCRAPI platform golden, hand-written or exported (see [`crate::formats::scrapi`]).
pub const SCRAPI_GOLDEN_SCHEMA: &str = include_str!("../schemas/scrapi-golden.schema.json");

/// A SCRAPI turn-eval file (see [`crate::formats::scrapi::turn_eval`]).
pub const TURN_EVAL_SCHEMA: &str = include_str!("../schemas/turn-eval.schema.json");

/// A SCRAPI tool-test file (see [`crate::formats::scrapi::tool_test`]).
pub const TOOL_TEST_SCHEMA: &str = include_str!("../schemas/tool-test.schema.json");

/// A SCRAPI simulation file (see [`crate::formats::scrapi::simulation`]).
pub const SIMULATION_SCHEMA: &str = include_str!("../schemas/simulation.schema.json");

/// A Regtrace golden set (see [`crate::formats::regtrace`]).
pub const REGTRACE_SCHEMA: &str = include_str!("../schemas/regtrace.schema.json");

/// One row of a CX Agent Studio golden CSV, as an object keyed by column (see
/// [`crate::formats::ces_csv`]): a CSV has no JSON form, so this documents the columns and the
/// values they take rather than validating a file.
pub const CES_CSV_SCHEMA: &str = include_str!("../schemas/ces-csv.schema.json");

/// The JSON report written by `--output` and `--update-baseline`, of this build's
/// [`SCHEMA_VERSION`].
pub fn report_schema() -> Value {
    // Pinned to a draft rather than schemars' default, which may move to a later one.
    let mut generated = SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<Report>();
    // A reader refuses any other version, so the schema accepts only this one.
    if let Some(version) = generated
        .pointer_mut("/properties/schema_version")
        .and_then(Value::as_object_mut)
    {
        version.insert("const".into(), SCHEMA_VERSION.into());
    }
    // What the JSON writer adds after the report's fields (see `results::json::write`).
    if let Some(properties) = generated
        .pointer_mut("/properties")
        .and_then(Value::as_object_mut)
    {
        properties.insert(
            "verdict".into(),
            serde_json::json!({
                "description": "What the run came to under its policy: `pass`, `failed`, `regressed`, `inconclusive` or `error`; the exit code follows it.",
                "enum": ["pass", "failed", "regressed", "inconclusive", "error"]
            }),
        );
        properties.insert(
            "exit".into(),
            serde_json::json!({
                "description": "The exit code this report stands for: 0, 1 or 2.",
                "enum": [0, 1, 2]
            }),
        );
    }
    // The header first, where a person opening the file looks for it; schemars' title is
    // the bare type name.
    generated.remove("title");
    generated.remove("description");
    let mut schema = Map::new();
    if let Some(draft) = generated.remove("$schema") {
        schema.insert("$schema".into(), draft);
    }
    schema.insert("title".into(), "goldgate JSON report".into());
    schema.insert(
        "description".into(),
        "A run of goldgate: every case with its turns and checks, the aggregates, and the \
         comparison with a baseline. Written by `goldgate run --output` and \
         `--update-baseline`; read back as a baseline and by `compare`, `merge` and `report`."
            .into(),
    );
    if let Value::Object(rest) = generated.to_value() {
        schema.extend(rest);
    }
    Value::Object(schema)
}

/// The help after `goldgate schema --help`'s options: the kinds, and how editors use them.
pub const KINDS_HELP: &str = "\
Kinds: config (goldgate.yaml), report (the JSON report and baseline), scenario (gecx
*.scenario.yaml), scrapi-golden (SCRAPI platform goldens, hand-written or exported), turn-eval,
tool-test and simulation (SCRAPI's other eval files), regtrace (a Regtrace golden set) and
ces-csv (one row of a CX Agent Studio golden CSV, keyed by column; it documents the columns
and cannot be attached to a CSV file). The same files are under schemas/.

For completion and inline errors in editors that use yaml-language-server (VS Code's YAML
extension, Neovim, Helix...), save a schema and name it on a YAML file's first line:
  goldgate schema scrapi-golden > schemas/scrapi-golden.schema.json
  # yaml-language-server: $schema=../schemas/scrapi-golden.schema.json";
