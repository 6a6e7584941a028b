//! `goldgate calibrate`'s flags.

use std::path::PathBuf;

use clap::Args;

use super::ConfigArg;
use super::values::{at_least_one, false_alarm_rate};
use goldgate::gate::adaptive::DEFAULT_MAX_REPEAT;

/// `goldgate calibrate [--baseline FILE]`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// The committed baseline whose recorded runs model the agent.
    #[arg(long, value_name = "FILE", default_value = "evals/baseline.json")]
    pub baseline: PathBuf,

    #[command(flatten)]
    pub config: ConfigArg,

    /// Thresholds from this file, over goldgate.yaml's (as `run --regression-config`).
    #[arg(long, value_name = "FILE")]
    pub regression_config: Option<PathBuf>,

    /// The false-alarm rate the gate is held to, in percent (as `run --false-alarm-rate`).
    #[arg(long, value_name = "PCT", default_value = "1", value_parser = false_alarm_rate)]
    pub false_alarm_rate: f64,

    /// Simulated pull requests for each planted change: more narrows the bounds.
    #[arg(long, value_name = "N", default_value_t = 200, value_parser = at_least_one)]
    pub prs: usize,

    /// The gated runs' `--max-repeat` (adaptive repeats up to N runs of a case).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_REPEAT as usize, value_parser = at_least_one)]
    pub max_repeat: usize,

    /// Seed of the simulation: the same seed, baseline and flags give the same figures.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,

    /// Print the figures as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}
