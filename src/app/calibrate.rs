//! `goldgate calibrate`: what the gate of a team's own suite can see, measured. The baseline's
//! recorded runs become a model of the agent (each case's pass rate over its history, its
//! turns and latencies: [`SuiteModel`]), which is replayed as pull requests through the real
//! gate and exit rule ([`Simulation`]), unchanged and with planted regressions. An unchanged
//! agent that turns a PR red is a false alarm; a planted regression left green is a miss.
//!
//! Only the agent is modelled: the baseline's history is simulated afresh for each PR from the
//! same model (as main would have built it), and the thresholds and false-alarm rate are the
//! run's own.

use std::fmt;

use crate::exit::Exit;
use crate::gate::Gate;
use crate::gate::adaptive::DEFAULT_MAX_REPEAT;
use crate::gate::simulation::{Policy, SimulatedCase, Simulation, SuiteModel};
use crate::results::{CaseResult, Report, Status};
use crate::stats::{LatencyHistogram, rate_lower_bound, rate_upper_bound};

/// How many PRs, with what flags.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Simulated pull requests per planted change.
    pub prs: usize,
    pub seed: u64,
    /// `--max-repeat` of the gated runs (`--repeat 1`, adaptive repeats up to it).
    pub max_repeat: u32,
}

impl Default for Plan {
    fn default() -> Self {
        Self {
            prs: 200,
            seed: 1,
            max_repeat: DEFAULT_MAX_REPEAT,
        }
    }
}

/// A change planted in the modelled agent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Planted {
    /// None: every red PR is a false alarm.
    Nothing,
    /// One golden that passed on main (the steadiest) now fails every run.
    OneGoldenBroken,
    /// `count` of the steadiest goldens now wrong 30% more often.
    GoldensFlaky { count: usize },
    /// Every golden `points` percentage points more often wrong.
    PassRateDown { points: f64 },
    /// Every turn `factor` times as slow.
    Slower { factor: f64 },
}

impl fmt::Display for Planted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Planted::Nothing => write!(f, "no change (false alarms)"),
            Planted::OneGoldenBroken => write!(f, "one golden broken"),
            Planted::GoldensFlaky { count } => write!(f, "{count} goldens 30% wrong"),
            Planted::PassRateDown { points } => write!(f, "pass rate down {points} points"),
            Planted::Slower { factor } => write!(f, "every turn {factor}x slower"),
        }
    }
}

impl Planted {
    /// The changes `calibrate` measures, on a suite of `cases` cases.
    pub fn all(cases: usize) -> Vec<Planted> {
        vec![
            Planted::Nothing,
            Planted::OneGoldenBroken,
            Planted::GoldensFlaky {
                count: cases.min(5),
            },
            Planted::PassRateDown { points: 10.0 },
            Planted::Slower { factor: 1.2 },
            Planted::Slower { factor: 1.5 },
            Planted::Slower { factor: 2.0 },
        ]
    }

    /// `model` with this change, for pull request number `pr` (the golden broken moves
    /// round the steadiest ones, so that no one case decides the figure).
    fn apply(self, model: &SuiteModel, pr: usize) -> SuiteModel {
        let mut changed = model.clone();
        let steadiest = steadiest(model);
        match self {
            Planted::Nothing => {}
            Planted::OneGoldenBroken => {
                let top = steadiest_count(model).max(1);
                changed.cases[steadiest[pr % top]].pass = 0.0;
            }
            Planted::GoldensFlaky { count } => {
                for &index in steadiest.iter().take(count) {
                    changed.cases[index].pass *= 0.7;
                }
            }
            Planted::PassRateDown { points } => {
                for case in &mut changed.cases {
                    case.pass = (case.pass - points / 100.0).max(0.0);
                }
            }
            Planted::Slower { factor } => return model.slower(factor),
        }
        changed
    }
}

/// The cases' indices, steadiest first (highest pass rate; the suite's order among equals).
fn steadiest(model: &SuiteModel) -> Vec<usize> {
    let mut order: Vec<usize> = (0..model.cases.len()).collect();
    order.sort_by(|&a, &b| model.cases[b].pass.total_cmp(&model.cases[a].pass));
    order
}

/// How many cases share the best pass rate.
fn steadiest_count(model: &SuiteModel) -> usize {
    let best = model.cases.iter().map(|c| c.pass).fold(0.0, f64::max);
    model.cases.iter().filter(|c| c.pass >= best).count()
}

/// What the PRs of one planted change came to.
#[derive(Clone, Debug)]
pub struct Figure {
    pub planted: Planted,
    /// PRs that exited 1.
    pub red: usize,
    pub prs: usize,
    /// PRs the exact combined test of every case would have turned red on the same runs,
    /// alone at the whole false-alarm rate: the reference the gate's power is measured by.
    pub combined_alone: usize,
    /// The agent's calls a PR, in passes of the suite.
    pub passes: f64,
    /// The most passes of the suite any PR took.
    pub most_passes: f64,
}

impl Figure {
    /// The share of PRs that went red.
    pub fn rate(&self) -> f64 {
        self.red as f64 / self.prs.max(1) as f64
    }

    /// The one-sided 95% bound the true rate of red PRs is within: above for a false-alarm
    /// rate, below for the power to catch a change.
    pub fn bound(&self) -> f64 {
        let (red, prs) = (self.red as u64, self.prs as u64);
        match self.planted {
            Planted::Nothing => rate_upper_bound(red, prs, 0.95),
            _ => rate_lower_bound(red, prs, 0.95),
        }
    }
}

/// Every figure of one calibration.
#[derive(Clone, Debug)]
pub struct Calibration {
    pub cases: usize,
    /// Builds of main the baseline's history spans (each PR's simulated baseline has as many).
    pub builds: u32,
    pub false_alarm_rate: f64,
    pub max_repeat: u32,
    pub figures: Vec<Figure>,
}

impl Calibration {
    /// More PRs of the unchanged agent went red than the promised rate allows beyond noise:
    /// the promise does not hold for this suite (exit 1).
    pub fn exit(&self) -> Exit {
        let broken = self.figures.iter().any(|f| {
            f.planted == Planted::Nothing
                && rate_lower_bound(f.red as u64, f.prs as u64, 0.95) > self.false_alarm_rate
        });
        if broken { Exit::Failure } else { Exit::Success }
    }
}

/// Why a baseline cannot be calibrated.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    #[error(
        "the baseline {0} holds no case with a verdict (passed or failed) to model\nhint: a baseline written by `goldgate run --update-baseline` after a run that judged its cases"
    )]
    NothingJudged(String),
}

/// The model of the agent that `baseline` recorded: each judged case's pass rate over its
/// runs and history, its turns, and the latency of its turns (its own samples when the
/// baseline kept them, else the suite's).
pub fn model_of(baseline: &Report) -> SuiteModel {
    let suite_latency = log_normal_fit(&baseline.samples.latency);
    let cases = baseline
        .cases
        .iter()
        .filter(|c| c.is_conversation() && c.status != Status::Error)
        .filter_map(|case| {
            let tally = case.tally_with_history();
            let pass = tally.fraction()?;
            let (median_ms, sigma) = case_latency(case).or(suite_latency).unwrap_or((1.0, 0.0));
            Some(SimulatedCase {
                pass,
                turns: u32::try_from(case.turns.len().max(1)).unwrap_or(u32::MAX),
                median_ms,
                sigma,
            })
        })
        .collect();
    SuiteModel { cases }
}

/// A case's own latency fit, where the baseline kept at least three of its turns' times.
fn case_latency(case: &CaseResult) -> Option<(f64, f64)> {
    let latency = &case.turn_times.latency;
    (latency.samples().nth(2).is_some())
        .then(|| log_normal_fit(latency))
        .flatten()
}

/// The median and log-scale spread of `histogram`'s latencies; `None` when it holds none.
fn log_normal_fit(histogram: &LatencyHistogram) -> Option<(f64, f64)> {
    let logs: Vec<f64> = histogram.samples().map(|ms| ms.max(0.1).ln()).collect();
    if logs.is_empty() {
        return None;
    }
    let n = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / n;
    let variance = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    Some((mean.exp(), variance.sqrt()))
}

/// Replays `gate`'s baseline as `plan` says, under every change of [`Planted::all`];
/// `measured` hears of each figure as it is done (a long calibration shows progress).
pub fn calibrate(
    gate: &Gate,
    plan: &Plan,
    mut measured: impl FnMut(&Figure),
) -> Result<Calibration, CalibrateError> {
    let model = model_of(&gate.baseline);
    if model.cases.is_empty() {
        return Err(CalibrateError::NothingJudged(gate.baseline_name.clone()));
    }
    let builds = gate.baseline.samples.builds.max(1);
    let runs_on_main = u32::try_from(
        gate.baseline
            .cases
            .iter()
            .map(CaseResult::runs)
            .max()
            .unwrap_or(1),
    )
    .unwrap_or(1);
    let figures = Planted::all(model.cases.len())
        .into_iter()
        .enumerate()
        .map(|(index, planted)| {
            let mut simulation = Simulation::new(plan.seed.wrapping_add(index as u64 * 7919));
            let size = model.cases.len() as f64;
            let mut figure = Figure {
                planted,
                red: 0,
                prs: plan.prs,
                combined_alone: 0,
                passes: 0.0,
                most_passes: 0.0,
            };
            for pr in 0..plan.prs {
                let simulated = simulation.gate(&model, runs_on_main, builds);
                let simulated = Gate {
                    thresholds: gate.thresholds.clone(),
                    false_alarm_rate: gate.false_alarm_rate,
                    ..simulated
                };
                let policy = Policy::Adaptive {
                    max_repeat: plan.max_repeat,
                };
                let outcome = simulation.gated_run(&simulated, &planted.apply(&model, pr), policy);
                figure.red += usize::from(outcome.exit == Exit::Failure);
                figure.combined_alone += usize::from(outcome.combined_alone);
                let passes = outcome.calls as f64 / size;
                figure.passes += passes / plan.prs as f64;
                figure.most_passes = figure.most_passes.max(passes);
            }
            measured(&figure);
            figure
        })
        .collect();
    Ok(Calibration {
        cases: model.cases.len(),
        builds,
        false_alarm_rate: gate.false_alarm_rate,
        max_repeat: plan.max_repeat,
        figures,
    })
}
