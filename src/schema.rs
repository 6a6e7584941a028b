//! The JSON Schemas of the files goldgate reads and writes, for `goldgate schema NAME` and for
//! editors (`# yaml-language-server: $schema=...`).
//!
//! The report's schema is generated from its Rust types ([`crate::results::json::Report`] and
//! everything in it, `goldgate_core::results::schema`), so that it cannot say something the
//! code does not do; it is checked in as `schemas/report.schema.json`, embedded from there, and
//! a test fails when the two drift apart. goldgate.yaml
//! and the golden formats (gecx scenarios, SCRAPI goldens, turn evals, tool tests and
//! simulations, Regtrace sets, CES CSV rows) are read by hand-written walkers (every problem reported with its line,
//! which serde cannot do), so there are no types to generate from: their schemas are written by
//! hand in `schemas/`, embedded here, and tested against the example files, fixtures and the
//! shared corpus (tests/it/schema.rs, tests/it/format_schemas.rs).
//!
//! Each is embedded without its indentation (build.rs): [`indented`] gives it back as written.

/// `goldgate.yaml` (see [`crate::config`]).
pub const CONFIG_SCHEMA: &str = include_str!(concat!(env!("OUT_DIR"), "/config.schema.json"));

/// A gecx `*.scenario.yaml` (see [`crate::formats::gecx`]).
pub const SCENARIO_SCHEMA: &str = include_str!(concat!(env!("OUT_DIR"), "/scenario.schema.json"));

/// A SCRAPI platform golden, hand-written or exported (see [`crate::formats::scrapi`]).
pub const SCRAPI_GOLDEN_SCHEMA: &str =
    include_str!(concat!(env!("OUT_DIR"), "/scrapi-golden.schema.json"));

/// A SCRAPI turn-eval file (see [`crate::formats::scrapi::turn_eval`]).
pub const TURN_EVAL_SCHEMA: &str = include_str!(concat!(env!("OUT_DIR"), "/turn-eval.schema.json"));

/// A SCRAPI tool-test file (see [`crate::formats::scrapi::tool_test`]).
pub const TOOL_TEST_SCHEMA: &str = include_str!(concat!(env!("OUT_DIR"), "/tool-test.schema.json"));

/// A SCRAPI simulation file (see [`crate::formats::scrapi::simulation`]).
pub const SIMULATION_SCHEMA: &str =
    include_str!(concat!(env!("OUT_DIR"), "/simulation.schema.json"));

/// A Regtrace golden set (see [`crate::formats::regtrace`]).
pub const REGTRACE_SCHEMA: &str = include_str!(concat!(env!("OUT_DIR"), "/regtrace.schema.json"));

/// One row of a CX Agent Studio golden CSV, as an object keyed by column (see
/// [`crate::formats::ces_csv`]): a CSV has no JSON form, so this documents the columns and the
/// values they take rather than validating a file.
pub const CES_CSV_SCHEMA: &str = include_str!(concat!(env!("OUT_DIR"), "/ces-csv.schema.json"));

/// The JSON report written by `--output` and `--update-baseline`, of this build's
/// [`crate::results::SCHEMA_VERSION`]: generated from the report's types
/// (`goldgate_core::results::schema`) and checked in.
pub const REPORT_SCHEMA: &str = include_str!(concat!(env!("OUT_DIR"), "/report.schema.json"));

/// A schema as checked in under `schemas/`: indented by two spaces, with a final newline.
pub fn indented(schema: &str) -> String {
    let value: serde_json::Value =
        serde_json::from_str(schema).expect("build.rs embeds each schema as valid JSON");
    let mut text = serde_json::to_string_pretty(&value).expect("a JSON value serializes");
    text.push('\n');
    text
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
