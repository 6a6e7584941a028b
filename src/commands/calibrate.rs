//! `goldgate calibrate [--baseline FILE]`: the gate's false alarms and power on the user's own
//! suite, measured by replaying the baseline's recorded runs (see
//! [`goldgate::app::calibrate`]).

use std::io::Write;

use goldgate::app::calibrate::{self, Calibration, Plan, Planted};
use goldgate::app::setup;
use goldgate::exit::Exit;
use serde_json::json;

use crate::cli::CalibrateArgs;

pub fn run(args: &CalibrateArgs) -> anyhow::Result<Exit> {
    let Ok(config) = super::load_config(args.config.path(), "calibrated") else {
        return Ok(Exit::Error);
    };
    let gate = match setup::gate(
        Some(&args.baseline),
        args.regression_config.as_deref(),
        args.false_alarm_rate,
        &config,
    ) {
        Ok(Some(gate)) => gate,
        Ok(None) | Err(_) if !args.baseline.exists() => {
            eprintln!(
                "goldgate calibrate: the baseline {} does not exist\nhint: name the committed \
                 baseline with --baseline FILE, or write one with `goldgate run \
                 --update-baseline {}`",
                args.baseline.display(),
                args.baseline.display()
            );
            return Ok(Exit::Error);
        }
        Ok(None) => return Ok(Exit::Error),
        Err(message) => {
            eprintln!("goldgate: {message}");
            return Ok(Exit::Error);
        }
    };
    let plan = Plan {
        prs: args.prs,
        seed: args.seed,
        max_repeat: u32::try_from(args.max_repeat).unwrap_or(u32::MAX),
    };
    let total = calibrate::Planted::all(0).len();
    let mut done = 0;
    let progress = |figure: &calibrate::Figure| {
        done += 1;
        eprintln!(
            "goldgate calibrate: [{done}/{total}] {}: {} of {} PRs red",
            figure.planted, figure.red, figure.prs
        );
    };
    let calibration = match calibrate::calibrate(&gate, &plan, progress) {
        Ok(calibration) => calibration,
        Err(err) => {
            eprintln!("goldgate calibrate: {err}");
            return Ok(Exit::Error);
        }
    };
    let mut out = super::stdout();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &as_json(&calibration))?;
        writeln!(out)?;
    } else {
        write_table(&mut out, &gate.baseline_name, &calibration)?;
    }
    out.flush()?;
    Ok(calibration.exit())
}

fn write_table(
    out: &mut impl Write,
    baseline: &str,
    calibration: &Calibration,
) -> std::io::Result<()> {
    writeln!(
        out,
        "Calibration of {baseline}: {} cases modelled from their runs and {} build(s) of history;\n\
         {} simulated PRs per change, --repeat 1 --max-repeat {}, false-alarm rate {}%",
        calibration.cases,
        calibration.builds,
        calibration.figures.first().map_or(0, |f| f.prs),
        calibration.max_repeat,
        calibration.false_alarm_rate * 100.0,
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "{:<32} {:>9} {:>8} {:>16} {:>14} {:>11}",
        "planted change", "red PRs", "share", "95% bound", "combined test", "passes/PR"
    )?;
    for figure in &calibration.figures {
        let bound = match figure.planted {
            Planted::Nothing => format!("at most {:.1}%", figure.bound() * 100.0),
            _ => format!("at least {:.1}%", figure.bound() * 100.0),
        };
        writeln!(
            out,
            "{:<32} {:>9} {:>7.1}% {:>16} {:>13.1}% {:>11.2}",
            figure.planted.to_string(),
            format!("{}/{}", figure.red, figure.prs),
            figure.rate() * 100.0,
            bound,
            figure.combined_alone as f64 / figure.prs.max(1) as f64 * 100.0,
            figure.passes,
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "red PRs: exit 1 of `goldgate run --baseline F --fail-on-regress`; no change: false alarms, \
         the rest: the power to catch it. combined test: the exact combined test of every case \
         alone on the same runs. passes/PR: the agent's calls, in passes of the suite."
    )?;
    match calibration.exit() {
        Exit::Success => writeln!(
            out,
            "Result: the false-alarm promise holds on this suite (exit 0)"
        ),
        _ => writeln!(
            out,
            "Result: the unchanged agent went red more often than {}% beyond noise (exit 1)",
            calibration.false_alarm_rate * 100.0
        ),
    }
}

fn as_json(calibration: &Calibration) -> serde_json::Value {
    let figures: Vec<serde_json::Value> = calibration
        .figures
        .iter()
        .map(|f| {
            json!({
                "planted": f.planted.to_string(),
                "red": f.red,
                "prs": f.prs,
                "rate": f.rate(),
                "bound": f.bound(),
                "bound_is": if f.planted == Planted::Nothing { "upper" } else { "lower" },
                "combined_alone": f.combined_alone,
                "passes_per_pr": f.passes,
                "most_passes": f.most_passes,
            })
        })
        .collect();
    json!({
        "cases": calibration.cases,
        "builds": calibration.builds,
        "false_alarm_rate": calibration.false_alarm_rate,
        "max_repeat": calibration.max_repeat,
        "figures": figures,
    })
}
