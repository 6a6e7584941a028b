//! Every case's runs against its baseline's, combined into one test ([`combined_worse`]):
//! several cases each a little worse (five goldens that never failed now failing a third of
//! the time) add up where no case alone is beyond noise.
//!
//! It counts the complete rounds of this run, as the pass rate does: every case run as often,
//! so that the reruns of the cases that failed cannot weigh on it, and the sizes it tests are
//! the ones a look planned. Cases settled at an earlier look keep their runs in it; quarantined
//! and errored cases stay out, as they do of each case's test.

use super::{Gate, Tested};
use crate::results::{CaseResult, CasesCombined, Evidence, Report, Status, Test};
use crate::stats::{Tally, combined_min_p, combined_worse};

/// The combined test looks worse when its statistic lies above its median under "nothing
/// changed": it then stays open while runs are left, and `adaptive` may give it a round.
const LOOKS_WORSE: f64 = 0.5;

/// The combined test of `current`'s cases against the gate's baseline, with `runs_left` more
/// runs each may still get and `alpha` the rate the run may spend; `None` when no case could
/// move.
pub(super) fn compare(
    gate: &Gate,
    current: &Report,
    runs_left: u32,
    alpha: f64,
) -> Option<(CasesCombined, Tested)> {
    let rounds = super::metrics::rounds(current);
    let strata: Vec<(Tally, Tally)> = super::paired(
        gate,
        current,
        |case: &CaseResult, baseline| match baseline {
            true => Some(case.tally_with_history()),
            false if case.status == Status::Error => None,
            false => Some(case.tally_of_first(rounds)),
        },
    );
    let test = combined_worse(&strata)?;
    let (before, now) = strata
        .iter()
        .fold((Tally::default(), Tally::default()), |(b, n), &(cb, cn)| {
            (b + cb, n + cn)
        });
    let effect = before
        .fraction()
        .zip(now.fraction())
        .map(|(b, n)| (b - n) * 100.0);
    // Every case failing each run left as well: the most these runs could still show.
    let extreme: Vec<(Tally, Tally)> = strata
        .iter()
        .map(|&(b, n)| (b, Tally::new(0, n.judged.saturating_add(runs_left))))
        .collect();
    let line = CasesCombined {
        cases: test.cases as u64,
        decision: Default::default(),
        evidence: Evidence {
            test: Test::Combined,
            p_value: Some(test.p_value),
            adjusted_p: None,
            effect,
            interval: None,
            samples: (u64::from(before.judged), u64::from(now.judged)),
            detectable: None,
        },
    };
    let tested = Tested {
        p_value: Some(test.p_value),
        worse: test.p_value <= LOOKS_WORSE,
        open: false,
        reachable: combined_min_p(&extreme) <= alpha,
        min_p: combined_min_p(&strata),
    };
    Some((line, tested))
}
