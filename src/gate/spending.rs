//! Cost and tokens per conversation (`costIncreasePct`, `tokensIncreasePct`) against the
//! baseline: each conversation both runs had is its own pair, since conversations differ far
//! more from each other than a change of the agent moves one. The sign test asks whether more
//! of them now cost more than their baseline figure times the limit than less; the change
//! shown is that of the mean over the conversations of each run.

use super::{Look, Tested, beyond};
use crate::results::{CaseResult, Evidence, Measure, MetricDelta, Test};
use crate::stats::sign_worse;

/// The per-conversation test of `delta`'s threshold; `None` when no conversation has the
/// measure on both sides (the values then decide).
pub(super) fn per_conversation(look: Look<'_>, delta: &mut MetricDelta) -> Option<Tested> {
    let Look {
        gate,
        current,
        alpha,
        ..
    } = look;
    let dollars = delta.threshold.measure() == Measure::Dollars;
    let pairs = super::paired(gate, current, |case: &CaseResult, _| {
        if dollars {
            case.cost_per_run()
        } else {
            case.tokens_per_run()
        }
    });
    let ratio_limit = 1.0 + delta.limit / 100.0;
    if pairs.is_empty() {
        return None;
    }
    let (worse, better) = pairs.iter().fold((0, 0), |(w, b), &(before, now)| {
        let allowed = before * ratio_limit;
        (w + u64::from(now > allowed), b + u64::from(now < allowed))
    });
    let (p_value, best_p_value) = sign_worse(worse, better).unwrap_or((1.0, 1.0));
    let change = delta.change.unwrap_or_default();
    let worse_than_limit = beyond(change, delta.limit);
    delta.evidence = Some(Evidence {
        test: Test::Sign,
        p_value: Some(p_value),
        adjusted_p: None,
        effect: delta.change,
        interval: None,
        samples: (pairs.len() as u64, pairs.len() as u64),
        detectable: None,
    });
    Some(Tested {
        p_value: Some(p_value),
        worse: worse_than_limit,
        open: false,
        // More runs make each conversation's figure steadier, not the pairs more numerous:
        // too few conversations to reach the bar leave the run's Holm family (Tarone).
        reachable: best_p_value <= alpha,
        min_p: best_p_value,
    })
}
