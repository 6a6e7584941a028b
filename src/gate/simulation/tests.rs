//! What pull requests show, measured: the figures docs/gate.md quotes.

// These tests report their figures for docs/gate.md: printing is their point.
#![allow(clippy::print_stdout)]

use super::{Flakiness, Outcome, Policy, SimulatedCase, Simulation, SuiteModel};
use crate::exit::Exit;
use crate::gate::adaptive::DEFAULT_MAX_REPEAT;

const PRS: usize = 100;
/// `--repeat 5 --min-pass 3 --max-repeat 5`: five runs, no adaptive ones on top.
const FIXED: Policy = Policy::Fixed {
    runs: 5,
    min_pass: 3,
};
/// The default flags: one run, adaptive repeats up to [`DEFAULT_MAX_REPEAT`].
const DEFAULT: Policy = Policy::Adaptive {
    max_repeat: DEFAULT_MAX_REPEAT,
};

/// How main keeps the baseline: `builds` builds, each run `--repeat runs`.
#[derive(Clone, Copy)]
struct Main {
    runs: u32,
    builds: u32,
}

/// Main with the default flags, four builds of history.
const FOUR_BUILDS: Main = Main { runs: 1, builds: 4 };
/// Main with the default flags, ten builds of history.
const TEN_BUILDS: Main = Main {
    runs: 1,
    builds: 10,
};

/// `prs` pull requests of `now` against a baseline of `before` kept by `main`, each with a
/// baseline of its own.
fn prs(
    seed: u64,
    prs: usize,
    (before, main): (&SuiteModel, Main),
    now: &SuiteModel,
    policy: Policy,
) -> Vec<Outcome> {
    let mut simulation = Simulation::new(seed);
    (0..prs)
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

/// Pull requests the exact combined test alone, on the same runs, would have shown red.
fn combined_alone(outcomes: &[Outcome]) -> usize {
    outcomes.iter().filter(|o| o.combined_alone).count()
}

fn mean_calls(outcomes: &[Outcome]) -> f64 {
    outcomes.iter().map(|o| o.calls as f64).sum::<f64>() / outcomes.len() as f64
}

/// The 20 one-turn cases of the first figures, all behaving as `case`.
fn twenty(case: SimulatedCase) -> SuiteModel {
    SuiteModel::uniform(20, case)
}

/// `PRS` pull requests of a 10%-flaky agent unchanged (seed `seed`), then of one failing
/// half the time (`seed + 1`), against `main`'s baseline of the flaky one.
fn unchanged_and_broken(seed: u64, main: Main, policy: Policy) -> [Vec<Outcome>; 2] {
    let flaky = twenty(SimulatedCase::FLAKY);
    let half = twenty(SimulatedCase {
        pass: 0.5,
        ..SimulatedCase::FLAKY
    });
    [(seed, &flaky), (seed + 1, &half)]
        .map(|(seed, now)| prs(seed, PRS, (&flaky, main), now, policy))
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
    // The 1% rate, and noise: 4 of 100 or more has a chance under 2% at the rate.
    assert!(false_alarms <= 3, "{false_alarms} red PRs");
    assert_eq!(caught, PRS);
    // Half the agent calls of `--repeat 5` (100 a PR) at most, unchanged; a broken agent
    // may take every run adaptive repeats allow.
    let most = f64::from(20 * DEFAULT_MAX_REPEAT);
    assert!(mean_calls(&unchanged) <= 50.0, "{}", mean_calls(&unchanged));
    assert!(mean_calls(&broken) <= most, "{}", mean_calls(&broken));
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
    let steady = twenty(SimulatedCase {
        pass: 1.0,
        ..SimulatedCase::FLAKY
    });
    let slow = steady.slower(2.0);
    let unchanged = prs(5, PRS, (&steady, FOUR_BUILDS), &steady, DEFAULT);
    let slower = prs(6, PRS, (&steady, FOUR_BUILDS), &slow, DEFAULT);
    let (false_alarms, caught) = (red(&unchanged), red(&slower));
    println!(
        "default flags, 4-build baseline: log-normal latency unchanged: {false_alarms}/{PRS} \
         red, {:.1} calls a PR; twice as slow: {caught}/{PRS} red, {:.1} calls a PR",
        mean_calls(&unchanged),
        mean_calls(&slower)
    );
    assert!(false_alarms <= 1, "{false_alarms} red PRs");
    // Case by case, each of 20 cases has one latency now: 99 of 100 at this seed.
    assert!(caught >= PRS - 2, "{caught} red PRs");
    let red = slower.iter().filter(|o| o.exit == Exit::Failure);
    assert!(red.clone().all(|o| o.latency_regressed));
}

/// The suite: 60 two-turn goldens, 36 stable, 15 slightly flaky (5% wrong), 9 known
/// flaky (30% wrong); every other one a ~100 ms greeting, the rest ~600 ms order lookups.
fn mixed_suite() -> SuiteModel {
    SuiteModel::mixed(
        &[
            (Flakiness::Stable, 36),
            (Flakiness::SlightlyFlaky, 15),
            (Flakiness::KnownFlaky, 9),
        ],
        2,
    )
    .fast_and_slow(100.0, 600.0)
}

/// One planted change of the mixed suite: what it is called, the suite now, and the share of
/// pull requests the gate shows red (within these bounds: a guard of what it reaches now, on
/// few pull requests; the goals, and the figures over 1,000, are in docs/gate.md).
struct Planted {
    name: &'static str,
    now: SuiteModel,
    red: std::ops::RangeInclusive<f64>,
}

fn planted() -> Vec<Planted> {
    let suite = mixed_suite();
    let stable = Flakiness::Stable.pass();
    vec![
        Planted {
            name: "unchanged",
            now: suite.clone(),
            red: 0.0..=0.02,
        },
        Planted {
            name: "one stable golden always wrong",
            now: suite.with_some(1, stable, 0.0),
            red: 1.0..=1.0,
        },
        // Goal: at least half (53% over 1,000 PRs).
        Planted {
            name: "5 stable goldens now 30% wrong",
            now: suite.with_some(5, stable, 0.7),
            red: 0.35..=1.0,
        },
        // Goal: at least 90% (91% over 1,000 PRs).
        Planted {
            name: "the slightly flaky quarter 5% -> 25% wrong",
            now: suite.with_all(Flakiness::SlightlyFlaky.pass(), 0.75),
            red: 0.8..=1.0,
        },
        Planted {
            name: "one stable golden now 50% wrong",
            now: suite.with_some(1, stable, 0.5),
            red: 0.0..=0.5,
        },
        // Goal: at least 80%, fast and slow cases mixed.
        Planted {
            name: "every turn 1.5x slower",
            now: suite.slower(1.5),
            red: 0.8..=1.0,
        },
    ]
}

/// Each planted change of the mixed suite, `prs` pull requests with the default flags against
/// a 10-build baseline: the gate's red share within its bounds, the combined test alone
/// printed beside it, and the calls an unchanged pull request makes.
fn mixed_suite_figures(prs_each: usize, seed: u64) {
    let suite = mixed_suite();
    let passes = suite.cases.len() as f64;
    let mut missed = Vec::new();
    for (offset, planted) in (0..).zip(planted()) {
        let outcomes = prs(
            seed + offset,
            prs_each,
            (&suite, TEN_BUILDS),
            &planted.now,
            DEFAULT,
        );
        let (gate, alone) = (red(&outcomes), combined_alone(&outcomes));
        let share = gate as f64 / prs_each as f64;
        let calls = mean_calls(&outcomes);
        println!(
            "mixed suite, default flags, 10-build baseline, {}: {gate}/{prs_each} red \
             (combined test alone on the same runs: {alone}/{prs_each}), {calls:.1} calls a PR \
             ({:.2} passes)",
            planted.name,
            calls / passes
        );
        if !planted.red.contains(&share) {
            missed.push(format!("{}: {gate}/{prs_each} red", planted.name));
        }
        assert!(
            outcomes
                .iter()
                .all(|o| o.most_runs <= DEFAULT_MAX_REPEAT as usize)
        );
        if planted.name == "unchanged" && calls / passes > 2.5 {
            missed.push(format!("unchanged: {calls} calls a PR"));
        }
    }
    assert!(missed.is_empty(), "{missed:?}");
}

#[test]
fn mixed_suite_default_flags_meet_the_targets() {
    mixed_suite_figures(60, 40);
}

#[test]
#[ignore = "figures for docs/gate.md"]
fn mixed_suite_default_flags_figures() {
    mixed_suite_figures(200, 140);
}

#[test]
#[ignore = "figures for docs/gate.md"]
fn mixed_suite_unchanged_false_alarms_over_many_prs() {
    let suite = mixed_suite();
    let outcomes = prs(240, 1000, (&suite, TEN_BUILDS), &suite, DEFAULT);
    let (gate, alone) = (red(&outcomes), combined_alone(&outcomes));
    println!(
        "mixed suite unchanged, default flags, 10-build baseline: {gate}/1000 red (combined test \
         alone on the same runs: {alone}/1000), {:.1} calls a PR",
        mean_calls(&outcomes)
    );
    // 1% plus three standard errors.
    assert!(gate <= 19, "{gate}/1000");
}

/// The two diffuse changes, whose goals (half, and 90%) are close enough to what the gate
/// reaches that 200 pull requests cannot tell: 1,000 each.
#[test]
#[ignore = "figures for docs/gate.md"]
fn mixed_suite_diffuse_changes_over_many_prs() {
    let suite = mixed_suite();
    let diffuse = (900..).zip(planted()).filter(|(_, planted)| {
        planted.name.starts_with("5 stable") || planted.name.starts_with("the slightly")
    });
    for (seed, planted) in diffuse {
        let outcomes = prs(seed, 1000, (&suite, TEN_BUILDS), &planted.now, DEFAULT);
        println!(
            "mixed suite, default flags, 10-build baseline, {}: {}/1000 red (combined test \
             alone on the same runs: {}/1000), {:.2} passes a PR",
            planted.name,
            red(&outcomes),
            combined_alone(&outcomes),
            mean_calls(&outcomes) / suite.cases.len() as f64
        );
    }
}
