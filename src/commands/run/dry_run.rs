//! `goldgate run --dry-run`: prints what [`goldgate::app::dry_run`] works out, on stdout, and
//! exits 0 having called nothing.

use std::io::Write;

use goldgate::app::dry_run::{self, DryRun};
use goldgate::app::session::RunPlan;
use goldgate::config::Config;
use goldgate::exit::Exit;
use goldgate::transcript::dollars;

/// Prints the dry run of the plan's cases; the judge counts when it is configured and has
/// its key.
pub fn print(plan: &RunPlan, config: &Config) -> anyhow::Result<Exit> {
    let judge = plan.grader.judge.is_some();
    let votes = config.judge.as_ref().filter(|_| judge).map(|j| j.votes);
    let baseline = plan.gate.as_ref().map(|g| &g.baseline);
    let dry = dry_run::estimate(&plan.cases, plan.repeat.runs(), votes, baseline);
    let mut out = super::super::stdout();
    write(&dry, &mut out)?;
    out.flush()?;
    Ok(Exit::Success)
}

fn write(dry: &DryRun, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "Dry run: nothing was called.")?;
    let each = match dry.runs {
        1 => String::new(),
        n => format!(" ({n} runs each)"),
    };
    writeln!(out, "Cases: {}{each}", dry.cases)?;
    writeln!(out, "Agent requests: {}", dry.agent_calls)?;
    if dry.simulations > 0 {
        writeln!(
            out,
            "Simulations: {} (their turns are the simulated user's: not counted above)",
            dry.simulations
        )?;
    }
    match dry.judge_calls {
        Some(n) => writeln!(
            out,
            "Judge questions: at most {n} (fewer from the judge cache)"
        )?,
        None => writeln!(
            out,
            "Judge questions: none (no judge: semantic matches use local similarity)"
        )?,
    }
    let Some(cost) = &dry.cost else {
        return writeln!(
            out,
            "Expected cost: unknown without --baseline (the estimate reads its cost per case)"
        );
    };
    let judges = cost.judges_usd.map_or("unknown".to_owned(), dollars);
    let left_out = match cost.unknown {
        0 => String::new(),
        n => format!(
            "; {n} of {} cases have no cost in it and are left out",
            dry.cases
        ),
    };
    // What is left out makes the figure a floor, never the estimate.
    let floor = if cost.unknown > 0 || cost.judges_usd.is_none() {
        "at least "
    } else {
        ""
    };
    writeln!(
        out,
        "Expected cost: {floor}{} (agent {}, judges {judges}), by the baseline's cost per \
         case{left_out}",
        dollars(cost.agent_usd + cost.judges_usd.unwrap_or(0.0)),
        dollars(cost.agent_usd),
    )
}
