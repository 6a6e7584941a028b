//! Simulated pull requests: seeded agents played through the real gate, to measure what a
//! pull request shows (the exit code of `goldgate run --baseline F --fail-on-regress`: red
//! for an unchanged agent is a false alarm, green for a broken one a miss) and the agent calls
//! each policy spends (the calibration tests, and the `gate` benchmark). Only the agent is
//! simulated, case by case as a [`SuiteModel`] says: reports, tests, Holm, adaptive looks,
//! joins and the exit rule are the ones a real run uses.

mod model;

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use fastrand::Rng;

use super::adaptive::{self, Schedule};
use super::baseline::fold_history;
use super::{Gate, Thresholds};
use crate::exit::Exit;
use crate::model::{Case, Format, Location};
use crate::results::{CaseResult, Report, Status, TurnResult, TurnTimes};
use crate::stats::sim::{bernoulli, log_normal};

pub use model::{Flakiness, SimulatedCase, SuiteModel};

/// How a pull request is gated.
#[derive(Clone, Copy, Debug)]
pub enum Policy {
    /// `--repeat runs --min-pass min_pass`.
    Fixed { runs: u32, min_pass: u32 },
    /// `--repeat 1 --max-repeat max_repeat`.
    Adaptive { max_repeat: u32 },
}

/// What one gated pull request came to.
#[derive(Clone, Copy, Debug)]
pub struct Outcome {
    /// The exit code the pull request shows: 1 is red.
    pub exit: Exit,
    pub regressed: bool,
    /// A latency threshold regressed.
    pub latency_regressed: bool,
    /// The exact combined test of every case, alone at the gate's whole false-alarm rate (no
    /// Holm, no share between looks), on the runs the gate last looked at: the reference the
    /// gate's power is measured against.
    pub combined_alone: bool,
    /// Runs of a case the agent played.
    pub calls: u64,
    /// The most runs any case had.
    pub most_runs: usize,
}

/// A seeded player of suites.
#[derive(Clone, Debug)]
pub struct Simulation {
    rng: Rng,
}

impl Simulation {
    pub fn new(seed: u64) -> Self {
        Self {
            rng: Rng::with_seed(seed),
        }
    }

    /// The report of `model` playing the cases in `only` (all when `None`) `runs` times each.
    pub fn play(
        &mut self,
        model: &SuiteModel,
        only: Option<&HashSet<String>>,
        runs: u32,
        min_pass: u32,
    ) -> Report {
        let mut latencies = Vec::new();
        let mut cases = Vec::new();
        for (index, simulated) in model.cases.iter().enumerate() {
            if only.is_some_and(|only| !only.contains(&SuiteModel::key(index))) {
                continue;
            }
            let location = Location::new(&Arc::from(Path::new(SuiteModel::FILE)), 1, 1);
            let case = Case::named(SuiteModel::id(index), Format::ScrapiGolden, location);
            let mut of_case: Vec<CaseResult> = (0..runs)
                .map(|_| {
                    let turns: Vec<TurnResult> = (1..=simulated.turns as usize)
                        .map(|index| {
                            let ms =
                                log_normal(&mut self.rng, simulated.median_ms, simulated.sigma);
                            latencies.push(ms);
                            TurnResult::timed(index, Duration::from_secs_f64(ms / 1000.0))
                        })
                        .collect();
                    let status = if bernoulli(&mut self.rng, simulated.pass) {
                        Status::Passed
                    } else {
                        Status::Failed
                    };
                    // Each case keeps its turns' times, as a real run's does: the gate compares
                    // latency case by case.
                    CaseResult {
                        status,
                        score: if status == Status::Passed { 1.0 } else { 0.0 },
                        turn_times: TurnTimes::of(&turns),
                        turns,
                        ..CaseResult::of(&case)
                    }
                })
                .collect();
            let joined = if runs == 1 {
                of_case.pop()
            } else {
                CaseResult::from_runs(of_case, runs, min_pass)
            };
            cases.extend(joined);
        }
        let mut played = Report::of_cases(cases);
        played.samples.builds = 1;
        latencies
            .into_iter()
            .for_each(|ms| played.samples.latency.record(ms));
        played
    }

    /// The gate of a baseline kept by `--update-baseline` over `builds` builds of main, each
    /// of which ran `model` with `--repeat runs`.
    pub fn gate(&mut self, model: &SuiteModel, runs: u32, builds: u32) -> Gate {
        let mut baseline = self.play(model, None, runs, runs);
        for _ in 1..builds {
            let mut next = self.play(model, None, runs, runs);
            fold_history(&mut next, &baseline);
            baseline = next;
        }
        Gate::new("baseline.json".to_owned(), baseline, Thresholds::default())
    }

    /// One pull request of `model` gated under `policy`.
    pub fn gated_run(&mut self, gate: &Gate, model: &SuiteModel, policy: Policy) -> Outcome {
        let (mut now, comparison) = match policy {
            Policy::Fixed { runs, min_pass } => {
                let now = self.play(model, None, runs, min_pass);
                let comparison = gate.compare(&now);
                (now, comparison)
            }
            Policy::Adaptive { max_repeat } => {
                let mut now = self.play(model, None, 1, 1);
                let schedule = Schedule::new(1, max_repeat);
                let comparison = block_on(adaptive::settle(
                    gate,
                    &mut now,
                    &schedule,
                    1,
                    |only, runs| std::future::ready(self.play(model, only.as_ref(), runs, runs)),
                ));
                (now, comparison)
            }
        };
        let calls = now.cases.iter().map(|c| c.runs() as u64).sum();
        let most_runs = now.cases.iter().map(CaseResult::runs).max().unwrap_or(0);
        let combined_alone = comparison
            .combined
            .as_ref()
            .and_then(|c| c.evidence.p_value)
            .is_some_and(|p| p <= gate.false_alarm_rate);
        now.gate = Some(comparison);
        now.policy = crate::results::Policy {
            fail_on_regress: true,
            fail_on_inconclusive: false,
        };
        let comparison = now.gate.as_ref().expect("set above");
        Outcome {
            exit: now.exit(),
            regressed: comparison.regressed(),
            latency_regressed: comparison
                .tripped()
                .any(|m| m.threshold.measure() == crate::results::Measure::Milliseconds),
            combined_alone,
            calls,
            most_runs,
        }
    }
}

/// Runs a future whose every await is ready (the simulation's plays are).
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime needs no resources")
        .block_on(future)
}

#[cfg(test)]
mod tests;
