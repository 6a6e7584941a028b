//! `goldgate compare REPORT --baseline FILE`: the regression gate on saved reports, no agent.
//!
//! Also the gate's command-side steps that `goldgate run` shares: setting the gate up from
//! the flags and files (before anything runs, so that a typo in a threshold does not cost a
//! whole run), printing its rendering, and `--update-baseline`.

use std::io::{self, Write};
use std::path::Path;

use anyhow::Context as _;

use goldgate::config::Config;
use goldgate::exit::Exit;
use goldgate::gate::thresholds::EVAL_CONFIG_FILE;
use goldgate::gate::{Comparison, Gate, Thresholds, baseline};
use goldgate::report::json::{self, Report};

use crate::cli::{CompareArgs, GateArgs};

pub fn run(args: &CompareArgs) -> anyhow::Result<Exit> {
    // The thresholds of ./goldgate.yaml apply here as they do to `goldgate run`.
    let config = match super::run::load_config(None) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("{message}");
            eprintln!("goldgate: the config does not load; nothing was compared");
            return Ok(Exit::Error);
        }
    };
    let gate = match gate_of(&args.gate, &config) {
        Ok(Some(gate)) => gate,
        Ok(None) => {
            eprintln!("goldgate compare: --baseline FILE is required (the report to compare with)");
            return Ok(Exit::Error);
        }
        Err(exit) => return Ok(exit),
    };
    let current = match json::read_file(&args.report) {
        Ok(report) => report,
        Err(err) => {
            eprintln!("goldgate: {err}");
            return Ok(Exit::Error);
        }
    };
    let comparison = gate.compare(&current);
    if args.json {
        write_gate(&comparison, false, &mut io::stderr().lock())?;
        let mut out = io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &comparison)?;
        writeln!(out)?;
        out.flush()?;
    } else {
        let mut out = io::stdout().lock();
        write_gate(&comparison, false, &mut out)?;
        out.flush()?;
    }
    // `compare` always gates: that is all it is for.
    Ok(if comparison.regressed() {
        Exit::Failure
    } else {
        Exit::Success
    })
}

/// The gate `args` ask for: thresholds merged from every source (see
/// [`goldgate::gate::thresholds`]) and the baseline read; `None` without `--baseline`. When a
/// file does not load, says why and gives the exit status to stop with.
pub fn gate_of(args: &GateArgs, config: &Config) -> Result<Option<Gate>, Exit> {
    let Some(path) = &args.baseline else {
        if args.regression_config.is_some() {
            eprintln!("goldgate: warning: --regression-config has no effect without --baseline");
        }
        return Ok(None);
    };
    let eval_config = Path::new(EVAL_CONFIG_FILE);
    let thresholds = Thresholds::resolve(
        &config.thresholds,
        eval_config.is_file().then_some(eval_config),
        args.regression_config.as_deref(),
    )
    .map_err(|err| {
        eprintln!("{err}");
        eprintln!("goldgate: the regression thresholds do not load");
        Exit::Error
    })?;
    Gate::load(path, thresholds).map(Some).map_err(|err| {
        eprintln!("goldgate: cannot use the baseline: {err}");
        Exit::Error
    })
}

/// The gate's rendering after a blank line; says so when a regression does not decide the
/// exit status (`run` without `--fail-on-regress`).
pub fn write_gate(comparison: &Comparison, advisory: bool, out: &mut impl Write) -> io::Result<()> {
    writeln!(out)?;
    goldgate::report::gate::write(comparison, out)?;
    if advisory && comparison.regressed() {
        writeln!(
            out,
            "(without --fail-on-regress the gate does not decide the exit status; failed cases do)"
        )?;
    }
    Ok(())
}

/// `--update-baseline FILE`: `report` as the new baseline, its volatile fields left out
/// ([`baseline::for_baseline`]), written atomically. Refused (exit 2) from an interrupted run
/// or one with errors, unless `force`.
pub fn update_baseline(path: &Path, report: &Report, force: bool) -> anyhow::Result<Exit> {
    if let Some(reason) = baseline::unfit(report) {
        if !force {
            eprintln!(
                "goldgate: not updating the baseline {}: {reason} (--force writes it anyway)",
                path.display()
            );
            return Ok(Exit::Error);
        }
        eprintln!("goldgate: updating the baseline despite this (--force): {reason}");
    }
    json::write_file_atomically(path, &baseline::for_baseline(report))
        .with_context(|| format!("cannot write the baseline to {}", path.display()))?;
    eprintln!("goldgate: baseline written to {}", path.display());
    Ok(Exit::Success)
}
