//! `goldgate compare REPORT --baseline FILE`: the regression gate on saved reports, no agent.

use std::io::{self, Write};

use goldgate::app::regate::Mode;
use goldgate::exit::Exit;
use goldgate::report::gate;

use crate::cli::CompareArgs;

pub fn run(args: &CompareArgs) -> anyhow::Result<Exit> {
    let gate = (args.gate.request(), &args.config);
    let (regate, mut report) =
        match super::regate_saved(gate, Mode::Always, "compare", &args.report) {
            Ok(both) => both,
            Err(exit) => return Ok(exit),
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
