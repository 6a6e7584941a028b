//! Each case against its baseline run.
//!
//! A case that never failed on main (its one run, or every run of its history) regresses when
//! it fails in every run this PR made of it, and stays open while adaptive repeats can still
//! run it again: a break, whatever the history. Otherwise, with more than one run on a side
//! (repeats now, or repeats or history in the baseline), a case is tested: Fisher's exact test
//! of "passes less often now" on its runs, the baseline's history included. A new case that fails
//! regresses, as gecx's gate decides. A case failing now that failed on main as well, and is
//! no worse, is a known failure: listed, never a regression. A quarantined case is listed
//! apart and takes no part in the decisions.

use super::Tested;
use crate::results::{CaseFlip, CaseResult, Evidence, Report, Status, Test};
use crate::stats::{Tally, fisher_worse, worsening_interval};

/// How one case compares: worse, better or the same, and how that was found.
pub(super) enum Movement {
    Worse(CaseFlip, Tested),
    Better(CaseFlip),
    /// Fails now as it did on main, no worse.
    Known(CaseFlip),
    /// Fails now, and a quarantine entry holds it: never decided against.
    Quarantined(CaseFlip),
}

/// Every case of `current` that moved against `baseline`. A case `settled` (by key) at an
/// earlier look of adaptive repeats keeps that look's decision, so it is not tested again;
/// it is still listed when it is a known failure, newly passing or quarantined. Errored cases
/// are left out: an error of the run is not a verdict of the agent.
pub(super) fn compare(
    baseline: &Report,
    current: &Report,
    runs_left: u32,
    alpha: f64,
    settled: impl Fn(&str) -> bool,
) -> Vec<Movement> {
    let before = super::by_key(baseline);
    current
        .cases
        .iter()
        .filter(|case| case.status != Status::Error)
        .filter_map(|case| {
            let earlier = before.get(&case.key()).copied();
            if case.is_quarantined() {
                return (case.status == Status::Failed)
                    .then(|| Movement::Quarantined(flip_of(earlier, case, None)));
            }
            match movement(earlier, case, runs_left, alpha)? {
                Movement::Worse(..) if settled(&case.key()) => None,
                moved => Some(moved),
            }
        })
        .collect()
}

/// The flip of `case` against its baseline run `earlier`, not yet decided.
fn flip_of(
    earlier: Option<&CaseResult>,
    case: &CaseResult,
    pass_fraction: Option<(f64, f64)>,
) -> CaseFlip {
    CaseFlip {
        id: case.id.clone(),
        name: case.name.clone(),
        file: case.file.clone(),
        line: case.line,
        baseline: earlier.map(|c| c.status),
        current: case.status,
        pass_fraction,
        decision: Default::default(),
        evidence: None,
        quarantine: case.quarantine.clone(),
    }
}

fn movement(
    earlier: Option<&CaseResult>,
    case: &CaseResult,
    runs_left: u32,
    alpha: f64,
) -> Option<Movement> {
    let flip = |pass_fraction| flip_of(earlier, case, pass_fraction);
    let (before, now) = (earlier.map(CaseResult::tally_with_history), case.tally());
    match before {
        // Never failed on main (one run, or every run of its history) and failing in every
        // run here: a break, decided by the verdicts, open while more runs may still pass.
        // Fisher cannot decide it over few builds (5 of 5 against 0 of 5 is p = 1/252, short
        // of a suite's bar), and more history must not make a break harder to see than none.
        Some(before)
            if before.judged > 0
                && before.passed == before.judged
                && now.judged > 0
                && now.passed == 0 =>
        {
            Some(every_run_failed(before, now, runs_left, flip))
        }
        // A test needs a verdict on each side, and more than one run on one of them.
        Some(before)
            if before.judged > 0 && now.judged > 0 && (before.judged > 1 || now.judged > 1) =>
        {
            tested(before, now, runs_left, alpha, flip)
        }
        _ => by_verdict(earlier.map(|c| c.status), case.status, flip),
    }
}

fn tested(
    before: Tally,
    now: Tally,
    runs_left: u32,
    alpha: f64,
    flip: impl Fn(Option<(f64, f64)>) -> CaseFlip,
) -> Option<Movement> {
    let fractions = before.fraction().zip(now.fraction());
    let (b, n) = fractions?;
    // Compared in integers, so that 3/5 against 6/10 is not a change.
    let (worse, better) = {
        let (lhs, rhs) = (
            u64::from(now.passed) * u64::from(before.judged),
            u64::from(before.passed) * u64::from(now.judged),
        );
        (lhs < rhs, lhs > rhs)
    };
    if better {
        let beyond_chance = fisher_worse(now, before).is_some_and(|p| p <= alpha);
        return beyond_chance.then(|| Movement::Better(flip(fractions)));
    }
    if !worse {
        let made = flip(fractions);
        return (made.current == Status::Failed).then_some(Movement::Known(made));
    }
    let p_value = fisher_worse(before, now)?;
    let extreme = Tally {
        passed: 0,
        judged: now.judged.saturating_add(runs_left),
    };
    let mut made = flip(fractions);
    made.evidence = Some(Evidence {
        test: Test::Fisher,
        p_value: Some(p_value),
        adjusted_p: None,
        effect: Some((b - n) * 100.0),
        interval: worsening_interval(before, now, 1.0 - 2.0 * alpha)
            .map(|i| (i.lo * 100.0, i.hi * 100.0)),
        samples: (u64::from(before.judged), u64::from(now.judged)),
        detectable: None,
    });
    let tested = Tested {
        p_value: Some(p_value),
        worse: true,
        open: false,
        reachable: fisher_worse(before, extreme).is_some_and(|p| p <= alpha),
        // Every run passing on main and failing here: the most extreme table these sizes
        // allow, whatever the outcome.
        min_p: fisher_worse(
            Tally {
                passed: before.judged,
                judged: before.judged,
            },
            Tally {
                passed: 0,
                judged: now.judged,
            },
        )
        .unwrap_or(0.0),
    };
    Some(Movement::Worse(made, tested))
}

/// A case that passed each of its `before.judged` runs on main, failing in each of its
/// `now.judged` runs here: a regression by verdict, open while more runs are left to pass it.
fn every_run_failed(
    before: Tally,
    now: Tally,
    runs_left: u32,
    flip: impl Fn(Option<(f64, f64)>) -> CaseFlip,
) -> Movement {
    let mut made = flip((before.judged > 1 || now.judged > 1).then_some((1.0, 0.0)));
    made.evidence = Some(by_verdicts(before.judged, now.judged));
    let tested = Tested {
        p_value: None,
        worse: true,
        open: runs_left > 0,
        reachable: true,
        min_p: 0.0,
    };
    Movement::Worse(made, tested)
}

/// The evidence of a flip decided by verdicts: runs on main (0 for a new case) and here.
fn by_verdicts(before: u32, now: u32) -> Evidence {
    Evidence {
        test: Test::Verdicts,
        p_value: None,
        adjusted_p: None,
        effect: None,
        interval: None,
        samples: (u64::from(before), u64::from(now)),
        detectable: None,
    }
}

fn by_verdict(
    before: Option<Status>,
    now: Status,
    flip: impl Fn(Option<(f64, f64)>) -> CaseFlip,
) -> Option<Movement> {
    match now {
        Status::Failed if before == Some(Status::Failed) => Some(Movement::Known(flip(None))),
        // Only the same failure in the baseline excuses one now: a case that was new, errored
        // or was skipped then was not known to fail (one that passed is `every_run_failed`).
        Status::Failed => {
            let mut made = flip(None);
            made.evidence = Some(by_verdicts(u32::from(before.is_some()), 1));
            let tested = Tested {
                p_value: None,
                worse: true,
                open: false,
                reachable: true,
                min_p: 0.0,
            };
            Some(Movement::Worse(made, tested))
        }
        Status::Passed if before == Some(Status::Failed) => Some(Movement::Better(flip(None))),
        _ => None,
    }
}
