//! Each case against its baseline run.
//!
//! With more than one run on a side (repeats now, or repeats or history in the baseline), a
//! case is tested: Fisher's exact test of "passes less often now" on its runs, the baseline's
//! history included. With one run a side and no history nothing can tell a flaky case from
//! a regression, and the verdicts decide as gecx's gate does: a case that passed, or is new,
//! and fails now regresses; the comparison says so in its notes.

use super::Tested;
use crate::results::{CaseFlip, CaseResult, Evidence, Report, Status, Test};
use crate::stats::{Tally, fisher_worse, worsening_interval};

/// How one case compares: worse, better or the same, and how that was found.
pub(super) enum Movement {
    Worse(CaseFlip, Tested),
    Better(CaseFlip),
}

/// Every case of `current` that moved against `baseline`, of those `include` keeps (by key).
/// Errored cases are left out: an error of the run is not a verdict of the agent.
pub(super) fn compare(
    baseline: &Report,
    current: &Report,
    runs_left: u32,
    alpha: f64,
    include: impl Fn(&str) -> bool,
) -> Vec<Movement> {
    let before = super::by_key(baseline);
    current
        .cases
        .iter()
        .filter(|case| case.status != Status::Error)
        .filter_map(|case| {
            let key = case.key();
            if !include(&key) {
                return None;
            }
            let earlier = before.get(&key).copied();
            movement(earlier, case, runs_left, alpha)
        })
        .collect()
}

fn movement(
    earlier: Option<&CaseResult>,
    case: &CaseResult,
    runs_left: u32,
    alpha: f64,
) -> Option<Movement> {
    let flip = |pass_fraction| CaseFlip {
        id: case.id.clone(),
        name: case.name.clone(),
        file: case.file.clone(),
        line: case.line,
        baseline: earlier.map(|c| c.status),
        current: case.status,
        pass_fraction,
        decision: Default::default(),
        evidence: None,
    };
    let (before, now) = (earlier.map(CaseResult::tally_with_history), case.tally());
    match before {
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
        return None;
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
    });
    let tested = Tested {
        p_value: Some(p_value),
        worse: true,
        open: false,
        reachable: fisher_worse(before, extreme).is_some_and(|p| p <= alpha),
    };
    Some(Movement::Worse(made, tested))
}

fn by_verdict(
    before: Option<Status>,
    now: Status,
    flip: impl Fn(Option<(f64, f64)>) -> CaseFlip,
) -> Option<Movement> {
    match now {
        // Only the same failure in the baseline excuses one now: a case that passed, was new,
        // errored or was skipped then was not known to fail.
        Status::Failed if before != Some(Status::Failed) => {
            let mut made = flip(None);
            made.evidence = Some(Evidence {
                test: Test::Verdicts,
                p_value: None,
                adjusted_p: None,
                effect: None,
                interval: None,
                samples: (u64::from(before.is_some()), 1),
            });
            let tested = Tested {
                p_value: None,
                worse: true,
                open: false,
                reachable: true,
            };
            Some(Movement::Worse(made, tested))
        }
        Status::Passed if before == Some(Status::Failed) => Some(Movement::Better(flip(None))),
        _ => None,
    }
}
