//! Cases an agent runs and scores itself ([`crate::agent::evaluations`], CX Agent Studio's
//! platform mode): handed over in one batch, within `--timeout` for the whole batch, and
//! stopped at the first Ctrl-C. Their results join the report as played cases' do.

use std::sync::Arc;

use super::{Event, OnEvent, RunOptions, Stop};
use crate::agent::evaluations::{Bounds, Evaluations};
use crate::model::Case;
use crate::results::{CaseResult, Status};

/// Each of `cases` run `runs` times by `evaluations`: (case index, run, result), and whether
/// the batch ended before every run was played.
pub(super) async fn play(
    evaluations: &dyn Evaluations,
    cases: &[Arc<Case>],
    runs: usize,
    (options, stop): (&RunOptions, &Stop),
    on_event: &OnEvent,
) -> (Vec<(usize, usize, CaseResult)>, bool) {
    for case in cases {
        on_event(Event::CaseStarted { case });
    }
    let bounds = Bounds {
        timeout: options.timeout,
        stop: &stop.scheduling,
    };
    let runs = u32::try_from(runs).unwrap_or(u32::MAX);
    let mut evaluated = evaluations.evaluate(cases, runs, bounds).await;
    for (index, _, result) in &mut evaluated.results {
        if let Some(why) = super::unproven_pass(&cases[*index], result.status) {
            result.status = Status::Skipped;
            result.error = Some(why);
        }
        result.clip(&options.secrets);
        on_event(Event::CaseFinished {
            case: &cases[*index],
            status: result.status,
        });
    }
    (evaluated.results, evaluated.incomplete)
}
