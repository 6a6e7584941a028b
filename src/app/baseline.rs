//! `--update-baseline FILE`: a report as the new committed baseline.

use std::path::Path;

use crate::gate::baseline;
use crate::results::Report;
use crate::results::json;

/// What became of `--update-baseline`.
#[derive(Debug)]
pub enum Update {
    /// Written; its history spans this many builds (1: this run alone).
    Written { builds: u32 },
    /// Written although unfit, as `--force` asked; the reason it was unfit.
    Forced(String),
    /// Not written: the reason.
    Refused(String),
}

/// Whether a new baseline keeps the history of the one it replaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum History {
    /// Fold the previous baseline's history in ([`baseline::fold_history`]).
    Keep,
    /// Start over from this run (`--no-history`).
    Restart,
}

/// Writes `report` as the baseline at `path`, its volatile fields left out
/// ([`baseline::for_baseline`]) and, with [`History::Keep`], the history of the baseline
/// already at `path` folded in, atomically. Refused from an interrupted run or one with
/// errors, unless `force`; refused too when the file at `path` is not a baseline this build
/// can read (its history would be lost), unless `history` is [`History::Restart`]. An I/O
/// error names the file.
pub fn update(
    path: &Path,
    report: &Report,
    force: bool,
    history: History,
) -> anyhow::Result<Update> {
    let unfit = baseline::unfit(report);
    if let (Some(reason), false) = (&unfit, force) {
        return Ok(Update::Refused(reason.clone()));
    }
    let mut new = baseline::for_baseline(report);
    let mut builds = 1;
    if history == History::Keep && path.exists() {
        let previous = json::read_file(path).map_err(|e| {
            anyhow::anyhow!(
                "cannot fold the history of the baseline at {} into the new one: {e} \
                 (pass --no-history to start the history over)",
                path.display()
            )
        })?;
        builds = baseline::fold_history(&mut new, &previous);
    }
    json::write_file_atomically(path, &new)
        .map_err(|e| anyhow::anyhow!("cannot write the baseline to {}: {e}", path.display()))?;
    Ok(match unfit {
        Some(reason) => Update::Forced(reason),
        None => Update::Written { builds },
    })
}
