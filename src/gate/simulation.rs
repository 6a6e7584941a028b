//! Simulated pull requests: seeded agents played through the real gate, to measure its
//! false-alarm rate and power (the calibration tests) and the agent calls each policy spends
//! (the `gate` benchmark). Only the agent is simulated: reports, tests, Holm, adaptive looks
//! and joins are the ones a real run uses.

use std::collections::HashSet;

use fastrand::Rng;

use super::adaptive::{self, Schedule};
use super::baseline::fold_history;
use super::{Gate, Thresholds};
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
        let comparison = now.gate.as_ref().expect("set above");
        Outcome {
            regressed: comparison.regressed(),
            latency_regressed: comparison
                .tripped()
                .any(|m| m.threshold.unit() == crate::results::Unit::Percent),
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
    // These tests report their figures for the README: printing is their point.
    #![allow(clippy::print_stdout)]

    use super::{Outcome, Policy, SimulatedAgent, Simulation};

    const PRS: usize = 100;
    const FIXED: Policy = Policy::Fixed {
        runs: 5,
        min_pass: 3,
    };
    const ADAPTIVE: Policy = Policy::Adaptive { max_repeat: 5 };

    /// `PRS` pull requests of `now`, 20 cases, against a baseline of `before` that keeps the
    /// history of 4 builds of main, each run with `--repeat 5`.
    fn prs(seed: u64, before: SimulatedAgent, now: SimulatedAgent, policy: Policy) -> Vec<Outcome> {
        let mut simulation = Simulation::new(20, seed);
        (0..PRS)
            .map(|_| {
                let gate = simulation.gate(before, 5, 4);
                simulation.gated_run(&gate, now, policy)
            })
            .collect()
    }

    fn count(outcomes: &[Outcome], what: impl Fn(&Outcome) -> bool) -> usize {
        outcomes.iter().filter(|o| what(o)).count()
    }

    fn mean_calls(outcomes: &[Outcome]) -> f64 {
        outcomes.iter().map(|o| o.calls as f64).sum::<f64>() / outcomes.len() as f64
    }

    #[test]
    fn an_unchanged_flaky_agent_rarely_trips_and_one_failing_half_the_time_always_does() {
        let half = SimulatedAgent {
            pass: 0.5,
            ..SimulatedAgent::FLAKY
        };
        let mut calls = Vec::new();
        for (name, policy) in [("--repeat 5", FIXED), ("adaptive", ADAPTIVE)] {
            let unchanged = prs(1, SimulatedAgent::FLAKY, SimulatedAgent::FLAKY, policy);
            let broken = prs(2, SimulatedAgent::FLAKY, half, policy);
            calls.push((mean_calls(&unchanged), mean_calls(&broken)));
            let alarms = count(&unchanged, |o| o.regressed);
            let caught = count(&broken, |o| o.regressed);
            println!(
                "{name}: 10%-flaky unchanged: {alarms}/{PRS} false alarms, {:.1} calls a PR; \
                 failing 50%: caught {caught}/{PRS}, {:.1} calls a PR",
                mean_calls(&unchanged),
                mean_calls(&broken)
            );
            assert!(alarms <= 2, "{name}: {alarms} false alarms");
            assert_eq!(caught, PRS, "{name}");
        }
        at_most_half(&calls);
    }

    /// Adaptive repeats spend at most half the calls of `--repeat 5`, in each scenario.
    fn at_most_half(calls: &[(f64, f64)]) {
        let (fixed, adaptive) = (calls[0], calls[1]);
        assert!(adaptive.0 <= fixed.0 / 2.0, "{calls:?}");
        assert!(adaptive.1 <= fixed.1 / 2.0, "{calls:?}");
    }

    #[test]
    fn unchanged_latency_rarely_trips_and_twice_as_slow_always_does() {
        let steady = SimulatedAgent {
            pass: 1.0,
            ..SimulatedAgent::FLAKY
        };
        let slow = SimulatedAgent {
            median_ms: 800.0,
            ..steady
        };
        let mut calls = Vec::new();
        for (name, policy) in [("--repeat 5", FIXED), ("adaptive", ADAPTIVE)] {
            let unchanged = prs(3, steady, steady, policy);
            let slower = prs(4, steady, slow, policy);
            calls.push((mean_calls(&unchanged), mean_calls(&slower)));
            let alarms = count(&unchanged, |o| o.latency_regressed);
            let caught = count(&slower, |o| o.latency_regressed);
            println!(
                "{name}: log-normal latency unchanged: {alarms}/{PRS} false alarms, {:.1} calls \
                 a PR; twice as slow: caught {caught}/{PRS}, {:.1} calls a PR",
                mean_calls(&unchanged),
                mean_calls(&slower)
            );
            assert!(alarms <= 2, "{name}: {alarms} false alarms");
            assert_eq!(caught, PRS, "{name}");
        }
        at_most_half(&calls);
    }
}
