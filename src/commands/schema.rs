//! `goldgate schema NAME`: print the JSON Schema of goldgate.yaml, the JSON report or a golden
//! format (gecx scenario, SCRAPI golden, turn eval, tool test, simulation, Regtrace set, CES CSV
//! row) on stdout, for editors and for validating files elsewhere.

use std::io::Write;

use goldgate::exit::Exit;
use goldgate::schema;

use crate::cli::{SchemaArgs, SchemaName};

/// The help after `goldgate schema --help`'s options: the kinds, and how editors use them.
pub const AFTER_HELP: &str = "\
Kinds: config (goldgate.yaml), report (the JSON report and baseline), scenario (gecx
*.scenario.yaml), scrapi-golden (SCRAPI platform goldens, hand-written or exported), turn-eval,
tool-test and simulation (SCRAPI's other eval files), regtrace (a Regtrace golden set) and
ces-csv (one row of a CX Agent Studio golden CSV, keyed by column; it documents the columns
and cannot be attached to a CSV file). The same files are under schemas/.

For completion and inline errors in editors that use yaml-language-server (VS Code's YAML
extension, Neovim, Helix...), save a schema and name it on a YAML file's first line:
  goldgate schema scrapi-golden > schemas/scrapi-golden.schema.json
  # yaml-language-server: $schema=../schemas/scrapi-golden.schema.json";

pub fn run(args: &SchemaArgs) -> anyhow::Result<Exit> {
    let report;
    let text = match args.name {
        SchemaName::Config => schema::CONFIG_SCHEMA,
        SchemaName::Scenario => schema::SCENARIO_SCHEMA,
        SchemaName::ScrapiGolden => schema::SCRAPI_GOLDEN_SCHEMA,
        SchemaName::TurnEval => schema::TURN_EVAL_SCHEMA,
        SchemaName::ToolTest => schema::TOOL_TEST_SCHEMA,
        SchemaName::Simulation => schema::SIMULATION_SCHEMA,
        SchemaName::Regtrace => schema::REGTRACE_SCHEMA,
        SchemaName::CesCsv => schema::CES_CSV_SCHEMA,
        SchemaName::Report => {
            // The same text as schemas/report.schema.json, which is written from this output.
            report = serde_json::to_string_pretty(&schema::report_schema())? + "\n";
            &report
        }
    };
    let mut out = super::stdout();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(Exit::Success)
}
