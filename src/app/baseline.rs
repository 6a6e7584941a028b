//! `--update-baseline FILE`: a report as the new committed baseline.

use std::path::Path;

use crate::gate::baseline;
use crate::results::Report;
use crate::results::json;

/// What became of `--update-baseline`.
#[derive(Debug)]
pub enum Update {
    Written,
    /// Written although unfit, as `--force` asked; the reason it was unfit.
    Forced(String),
    /// Not written: the reason.
    Refused(String),
}

/// Writes `report` as the baseline at `path`, its volatile fields left out
/// ([`baseline::for_baseline`]), atomically. Refused from an interrupted run or one with
/// errors, unless `force`. An I/O error names the file.
pub fn update(path: &Path, report: &Report, force: bool) -> anyhow::Result<Update> {
    let unfit = baseline::unfit(report);
    if let (Some(reason), false) = (&unfit, force) {
        return Ok(Update::Refused(reason.clone()));
    }
    let mut committed = baseline::for_baseline(report);
    // Timings of the run's surroundings, not of the agent's answers: they would change on every
    // update and make the baseline's diff noisy. (Kept here rather than in `for_baseline`,
    // which belongs to the gate.)
    committed.aggregates.agent_startup = None;
    committed.aggregates.rate_limits.clear();
    json::write_file_atomically(path, &committed)
        .map_err(|e| anyhow::anyhow!("cannot write the baseline to {}: {e}", path.display()))?;
    Ok(match unfit {
        Some(reason) => Update::Forced(reason),
        None => Update::Written,
    })
}
