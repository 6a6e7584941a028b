//! `goldgate compare REPORT --baseline FILE`: the regression gate on saved reports, no agent.

use std::io::{self, Write};

use goldgate::app::regate::Mode;
use goldgate::exit::Exit;
use goldgate::report::gate;
use goldgate::results::json;

use crate::cli::CompareArgs;

pub fn run(args: &CompareArgs) -> anyhow::Result<Exit> {
    let regate = match super::regate((&args.gate, &args.config), Mode::Always, "compare") {
        Ok(regate) => regate,
        Err(exit) => return Ok(exit),
    };
    let mut report = match json::read_file(&args.report) {
        Ok(report) => report,
        Err(err) => {
            eprintln!("goldgate: {err}");
            return Ok(Exit::Error);
        }
    };
    let summary = regate.apply(&mut report, &args.report.display().to_string());
    if args.json {
        gate::write_after_table(&summary, &mut io::stderr().lock())?;
        let mut out = super::stdout();
        serde_json::to_writer_pretty(&mut out, &summary.report.gate)?;
        writeln!(out)?;
        out.flush()?;
    } else {
        let mut out = super::stdout();
        gate::write_after_table(&summary, &mut out)?;
        out.flush()?;
    }
    Ok(summary.exit)
}
