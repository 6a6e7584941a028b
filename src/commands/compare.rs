//! `goldgate compare REPORT --baseline FILE`: the regression gate on saved reports, no agent.

use std::io::{self, Write};

use goldgate::app::publish::DEFAULT_SUITE;
use goldgate::exit::Exit;
use goldgate::report::{Summary, gate};
use goldgate::results::Policy;
use goldgate::results::json;

use crate::cli::CompareArgs;

pub fn run(args: &CompareArgs) -> anyhow::Result<Exit> {
    if args.gate.fail_on_regress {
        eprintln!(
            "goldgate compare: --fail-on-regress is what compare always does (it exits 1 on a \
             regression); drop the flag, or add --fail-on-inconclusive to fail on undecided \
             comparisons too"
        );
        return Ok(Exit::Error);
    }
    // The thresholds of the config apply here as they do to `goldgate run`.
    let Ok(config) = super::load_config(args.config.path(), "compared") else {
        return Ok(Exit::Error);
    };
    let gate = match super::gate_of(&args.gate, &config) {
        Ok(Some(gate)) => gate,
        Ok(None) => {
            eprintln!("goldgate compare: --baseline FILE is required (the report to compare with)");
            return Ok(Exit::Error);
        }
        Err(_) => return Ok(Exit::Error),
    };
    let mut report = match json::read_file(&args.report) {
        Ok(report) => report,
        Err(err) => {
            eprintln!("goldgate: {err}");
            return Ok(Exit::Error);
        }
    };
    let gate = gate.fitted(&report);
    // Cases of another suite read as new or missing: say so, as `merge` does for shards.
    if let Some(difference) = gate.baseline.suite.difference(&report.suite) {
        eprintln!(
            "goldgate compare: warning: the baseline {} and {} are reports of different suites: {difference}",
            gate.baseline_name,
            args.report.display()
        );
    }
    report.gate = Some(gate.compare(&report));
    // `compare` always gates: that is all it is for. The report's cases were judged when it
    // ran; whether it could be judged at all still counts.
    report.policy = Policy {
        fail_on_regress: true,
        fail_on_inconclusive: args.gate.fail_on_inconclusive,
    };
    let summary = Summary::new(&report, DEFAULT_SUITE);
    if args.json {
        gate::write_after_table(&summary, &mut io::stderr().lock())?;
        let mut out = super::stdout();
        serde_json::to_writer_pretty(&mut out, &report.gate)?;
        writeln!(out)?;
        out.flush()?;
    } else {
        let mut out = super::stdout();
        gate::write_after_table(&summary, &mut out)?;
        out.flush()?;
    }
    Ok(report.exit())
}
