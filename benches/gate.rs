//! What a pull request shows, and what it costs: red pull requests (exit 1 of `goldgate run
//! --baseline F --fail-on-regress`) and agent calls per pull request, for the default flags
//! (adaptive repeats up to `DEFAULT_MAX_REPEAT`, 8) against a fixed `--repeat 5 --min-pass 3`, at the same 1%
//! false-alarm rate.
//!
//! It plays [`goldgate::gate::simulation`]'s seeded agents through the real gate and the real
//! exit rule: 20 one-turn cases, a baseline kept by 4 builds of main with the default flags,
//! 200 pull requests per agent. Goal: no red pull request for an unchanged agent beyond the
//! 1% rate, every broken one red, and the defaults spending at most half the calls of the
//! fixed policy on an unchanged agent (ratio <= 0.5; a broken one earns more runs: 0.55 for
//! one wrong half the time, with up to 8). Run with `cargo bench --bench gate`.

// A benchmark reports its figures: printing is its point.
#![allow(clippy::print_stdout)]

use goldgate::exit::Exit;
use goldgate::gate::adaptive::DEFAULT_MAX_REPEAT;
use goldgate::gate::simulation::{Policy, SimulatedCase, Simulation, SuiteModel};

const PRS: usize = 200;

/// Red pull requests (false alarms for an unchanged agent, catches for a broken one) and mean
/// calls a PR.
fn measure(seed: u64, before: &SuiteModel, now: &SuiteModel, policy: Policy) -> (usize, f64) {
    let mut simulation = Simulation::new(seed);
    let mut calls = 0;
    let mut tripped = 0;
    for _ in 0..PRS {
        let gate = simulation.gate(before, 1, 4);
        let outcome = simulation.gated_run(&gate, now, policy);
        calls += outcome.calls;
        tripped += usize::from(outcome.exit == Exit::Failure);
    }
    (tripped, calls as f64 / PRS as f64)
}

fn main() {
    let twenty = |case| SuiteModel::uniform(20, case);
    let flaky = twenty(SimulatedCase::FLAKY);
    let half = twenty(SimulatedCase {
        pass: 0.5,
        ..SimulatedCase::FLAKY
    });
    let steady = twenty(SimulatedCase {
        pass: 1.0,
        ..SimulatedCase::FLAKY
    });
    let slow = steady.slower(2.0);
    let agents = [
        ("unchanged, 10% flaky", &flaky, &flaky, "red"),
        ("wrong 50% of the time", &flaky, &half, "red"),
        ("unchanged latency", &steady, &steady, "red"),
        ("twice as slow", &steady, &slow, "red"),
    ];
    println!("{PRS} pull requests per agent, 20 cases, 1% false-alarm rate");
    println!(
        "{:<24} {:>22} {:>22} {:>8}",
        "agent", "--repeat 5", "defaults", "ratio"
    );
    for (seed, (name, before, now, what)) in (100..).zip(agents) {
        let fixed = measure(
            seed,
            before,
            now,
            Policy::Fixed {
                runs: 5,
                min_pass: 3,
            },
        );
        let adaptive = measure(
            seed,
            before,
            now,
            Policy::Adaptive {
                max_repeat: DEFAULT_MAX_REPEAT,
            },
        );
        println!(
            "{name:<24} {:>22} {:>22} {:>8.2}",
            format!("{:.1} calls, {} {what}", fixed.1, fixed.0),
            format!("{:.1} calls, {} {what}", adaptive.1, adaptive.0),
            adaptive.1 / fixed.1
        );
    }
}
