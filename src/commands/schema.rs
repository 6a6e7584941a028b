//! `goldgate schema NAME`: print the JSON Schema of goldgate.yaml, the JSON report or a golden
//! format (gecx scenario, SCRAPI golden, turn eval, tool test, simulation, Regtrace set, CES CSV
//! row) on stdout, for editors and for validating files elsewhere.

use std::io::Write;

use goldgate::exit::Exit;
use goldgate::schema;

use crate::cli::{SchemaArgs, SchemaName};

pub fn run(args: &SchemaArgs) -> anyhow::Result<Exit> {
    let text = match args.name {
        SchemaName::Config => schema::CONFIG_SCHEMA,
        SchemaName::Scenario => schema::SCENARIO_SCHEMA,
        SchemaName::ScrapiGolden => schema::SCRAPI_GOLDEN_SCHEMA,
        SchemaName::TurnEval => schema::TURN_EVAL_SCHEMA,
        SchemaName::ToolTest => schema::TOOL_TEST_SCHEMA,
        SchemaName::Simulation => schema::SIMULATION_SCHEMA,
        SchemaName::Regtrace => schema::REGTRACE_SCHEMA,
        SchemaName::CesCsv => schema::CES_CSV_SCHEMA,
        SchemaName::Report => schema::REPORT_SCHEMA,
    };
    let mut out = super::stdout();
    out.write_all(schema::indented(text).as_bytes())?;
    out.flush()?;
    Ok(Exit::Success)
}
