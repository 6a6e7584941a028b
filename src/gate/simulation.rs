//! Simulated pull requests: seeded agents played through the real gate, to measure what a
//! pull request shows (the exit code of `goldgate run --baseline F --fail-on-regress`: red
//! for an unchanged agent is a false alarm, green for a broken one a miss) and the agent calls
//! each policy spends (the calibration tests, and the `gate` benchmark). Only the agent is
//! simulated: reports, tests, Holm, adaptive looks, joins and the exit rule are the ones a
//! real run uses.

use std::collections::HashSet;

use fastrand::Rng;

use super::adaptive::{self, Schedule};
use super::baseline::fold_history;
use super::{Gate, Thresholds};
use crate::exit::Exit;
use crate::results::testing::{case, report};
use crate::results::{CaseResult, Report, Status};
use crate::shard;
use crate::stats::sim::{bernoulli, log_normal};

/// An agent as the simulation plays it: every case passes a run with the same chance, and
/// each turn's latency is log-normal.
#[derive(Clone, Copy, Debug)]
pub struct SimulatedAgent {
    pub pass: f64,
    /// Median latency, milliseconds.
    pub median_ms: f64,
    /// Log-scale standard deviation of the latency (0.5 is typical of LLM agents).
    pub sigma: f64,
}

impl SimulatedAgent {
    /// The flaky agent: 10% of answers wrong, latency median 400 ms, sigma 0.5.
    pub const FLAKY: SimulatedAgent = SimulatedAgent {
        pass: 0.9,
        median_ms: 400.0,
        sigma: 0.5,
    };
}

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
    /// Runs of a case the agent played.
    pub calls: u64,
}

/// A suite of `cases` one-turn cases.
#[derive(Clone, Debug)]
pub struct Simulation {
    keys: Vec<String>,
    rng: Rng,
}

impl Simulation {
    pub fn new(cases: usize, seed: u64) -> Self {
        Self {
            keys: (0..cases).map(|i| format!("c{i:03}")).collect(),
            rng: Rng::with_seed(seed),
        }
    }

    /// The report of `agent` playing the cases in `only` (all when `None`) `runs` times each.
    pub fn play(
        &mut self,
        agent: SimulatedAgent,
        only: Option<&HashSet<String>>,
        runs: u32,
        min_pass: u32,
    ) -> Report {
        let mut latencies = Vec::new();
        let mut cases = Vec::new();
        for id in &self.keys {
            if only.is_some_and(|only| !only.contains(&shard::key("sim.yaml", id))) {
                continue;
            }
            let mut of_case: Vec<CaseResult> = (0..runs)
                .map(|_| {
                    latencies.push(log_normal(&mut self.rng, agent.median_ms, agent.sigma));
                    let passed = bernoulli(&mut self.rng, agent.pass);
                    case(
                        "sim.yaml",
                        id,
                        if passed {
                            Status::Passed
                        } else {
                            Status::Failed
                        },
                    )
                })
                .collect();
            let joined = if runs == 1 {
                of_case.pop()
            } else {
                CaseResult::from_runs(of_case, runs, min_pass)
            };
            cases.extend(joined);
        }
        let mut played = report(cases);
        played.samples.builds = 1;
        latencies
            .into_iter()
            .for_each(|ms| played.samples.latency.record(ms));
        played
    }

    /// The gate of a baseline kept by `--update-baseline` over `builds` builds of main, each
    /// of which ran `agent` with `--repeat runs`.
    pub fn gate(&mut self, agent: SimulatedAgent, runs: u32, builds: u32) -> Gate {
        let mut baseline = self.play(agent, None, runs, runs);
        for _ in 1..builds {
            let mut next = self.play(agent, None, runs, runs);
            fold_history(&mut next, &baseline);
            baseline = next;
        }
        Gate::new("baseline.json".to_owned(), baseline, Thresholds::default())
    }

    /// One pull request of `agent` gated under `policy`.
    pub fn gated_run(&mut self, gate: &Gate, agent: SimulatedAgent, policy: Policy) -> Outcome {
        let (mut now, comparison) = match policy {
            Policy::Fixed { runs, min_pass } => {
                let now = self.play(agent, None, runs, min_pass);
                let comparison = gate.compare(&now);
                (now, comparison)
            }
            Policy::Adaptive { max_repeat } => {
                let mut now = self.play(agent, None, 1, 1);
                let schedule = Schedule::new(1, max_repeat);
                let comparison = block_on(adaptive::settle(
                    gate,
                    &mut now,
                    &schedule,
                    1,
                    |only, runs| std::future::ready(self.play(agent, only.as_ref(), runs, runs)),
                ));
                (now, comparison)
            }
        };
        let calls = now.cases.iter().map(|c| c.runs() as u64).sum();
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
            calls,
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
mod tests {
    // These tests report their figures for docs/gate.md: printing is their point.
    #![allow(clippy::print_stdout)]

    use super::{Outcome, Policy, SimulatedAgent, Simulation};
    use crate::exit::Exit;

    const PRS: usize = 100;
    /// `--repeat 5 --min-pass 3 --max-repeat 5`: five runs, no adaptive ones on top.
    const FIXED: Policy = Policy::Fixed {
        runs: 5,
        min_pass: 3,
    };
    /// The default flags: one run, adaptive repeats up to 5.
    const DEFAULT: Policy = Policy::Adaptive { max_repeat: 5 };

    /// How main keeps the baseline: `builds` builds, each run `--repeat runs`.
    #[derive(Clone, Copy)]
    struct Main {
        runs: u32,
        builds: u32,
    }

    /// Main with the default flags, four builds of history.
    const FOUR_BUILDS: Main = Main { runs: 1, builds: 4 };

    /// `PRS` pull requests of `now`, 20 one-turn cases, against a baseline of `before` kept
    /// by `main`.
    fn prs(
        seed: u64,
        (before, main): (SimulatedAgent, Main),
        now: SimulatedAgent,
        policy: Policy,
    ) -> Vec<Outcome> {
        let mut simulation = Simulation::new(20, seed);
        (0..PRS)
            .map(|_| {
                let gate = simulation.gate(before, main.runs, main.builds);
                simulation.gated_run(&gate, now, policy)
            })
            .collect()
    }

    /// Pull requests shown red: exit 1. None may exit 2 (nothing here fails to run).
    fn red(outcomes: &[Outcome]) -> usize {
        assert!(outcomes.iter().all(|o| o.exit != Exit::Error));
        outcomes.iter().filter(|o| o.exit == Exit::Failure).count()
    }

    fn mean_calls(outcomes: &[Outcome]) -> f64 {
        outcomes.iter().map(|o| o.calls as f64).sum::<f64>() / outcomes.len() as f64
    }

    const HALF: SimulatedAgent = SimulatedAgent {
        pass: 0.5,
        ..SimulatedAgent::FLAKY
    };

    /// `PRS` pull requests of a 10%-flaky agent unchanged (seed `seed`), then of one failing
    /// half the time (`seed + 1`), against `main`'s baseline of the flaky one.
    fn unchanged_and_broken(seed: u64, main: Main, policy: Policy) -> [Vec<Outcome>; 2] {
        let before = (SimulatedAgent::FLAKY, main);
        [(seed, SimulatedAgent::FLAKY), (seed + 1, HALF)]
            .map(|(seed, now)| prs(seed, before, now, policy))
    }

    #[test]
    fn default_flags_a_flaky_agent_unchanged_is_green_and_one_failing_half_the_time_red() {
        let [unchanged, broken] = unchanged_and_broken(1, FOUR_BUILDS, DEFAULT);
        let (false_alarms, caught) = (red(&unchanged), red(&broken));
        println!(
            "default flags, 4-build baseline: 10%-flaky unchanged: {false_alarms}/{PRS} red, \
             {:.1} calls a PR; failing 50%: {caught}/{PRS} red, {:.1} calls a PR",
            mean_calls(&unchanged),
            mean_calls(&broken)
        );
        assert!(false_alarms <= 1, "{false_alarms} red PRs");
        assert_eq!(caught, PRS);
        // Half the agent calls of `--repeat 5` (100 a PR) at most.
        assert!(mean_calls(&unchanged) <= 50.0, "{}", mean_calls(&unchanged));
        assert!(mean_calls(&broken) <= 50.0, "{}", mean_calls(&broken));
    }

    #[test]
    fn repeat_5_min_pass_3_against_a_one_run_baseline() {
        let main = Main { runs: 5, builds: 1 };
        let [unchanged, broken] = unchanged_and_broken(3, main, FIXED);
        let (false_alarms, caught) = (red(&unchanged), red(&broken));
        println!(
            "--repeat 5 --min-pass 3, one-run baseline: 10%-flaky unchanged: \
             {false_alarms}/{PRS} red; failing 50%: {caught}/{PRS} red"
        );
        assert!(false_alarms <= 1, "{false_alarms} red PRs");
        assert_eq!(caught, PRS);
    }

    #[test]
    fn default_flags_unchanged_latency_is_green_and_twice_as_slow_red() {
        let steady = SimulatedAgent {
            pass: 1.0,
            ..SimulatedAgent::FLAKY
        };
        let slow = SimulatedAgent {
            median_ms: 800.0,
            ..steady
        };
        let unchanged = prs(5, (steady, FOUR_BUILDS), steady, DEFAULT);
        let slower = prs(6, (steady, FOUR_BUILDS), slow, DEFAULT);
        let (false_alarms, caught) = (red(&unchanged), red(&slower));
        println!(
            "default flags, 4-build baseline: log-normal latency unchanged: {false_alarms}/{PRS} \
             red, {:.1} calls a PR; twice as slow: {caught}/{PRS} red, {:.1} calls a PR",
            mean_calls(&unchanged),
            mean_calls(&slower)
        );
        assert!(false_alarms <= 1, "{false_alarms} red PRs");
        assert_eq!(caught, PRS);
        assert!(slower.iter().all(|o| o.latency_regressed));
    }
}
