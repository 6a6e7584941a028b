//! `--update-baseline FILE`: a report as the new committed baseline.

use std::collections::HashSet;
use std::path::Path;

use crate::gate::baseline;
use crate::results::json;
use crate::results::{CaseResult, Report};

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

/// How `--update-baseline` was asked for.
#[derive(Clone, Copy, Debug)]
pub struct Asked {
    /// `--force`: written even when unfit, saying why it was.
    pub force: bool,
    pub history: History,
    /// The selection flags (`--filter`, `--exclude`, `--name`) chose part of the suite.
    pub narrowed: bool,
}

/// Writes `report` as the baseline at `path`, its volatile fields left out
/// ([`baseline::for_baseline`]) and, with [`History::Keep`], the history of the baseline
/// already at `path` folded in, atomically. Refused, unless forced, from an interrupted run,
/// one with errors or part of the suite, and from a run narrowed by the selection flags that
/// leaves out cases of the baseline at `path` (a baseline of its own selection, such as a smoke
/// suite's, is written). Refused too when the file at `path` is not a baseline this build can
/// read (its history would be lost), unless `history` is [`History::Restart`]. An I/O error
/// names the file.
pub fn update(path: &Path, report: &Report, asked: Asked) -> anyhow::Result<Update> {
    let Asked {
        force,
        history,
        narrowed,
    } = asked;
    let dropping = || narrowed.then(|| drops_cases(path, report)).flatten();
    let unfit = baseline::unfit(report).or_else(dropping);
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

/// Why `report`, of the cases the selection flags chose, must not replace the baseline at
/// `path`: the baseline's cases it did not run would go, and their history with them.
fn drops_cases(path: &Path, report: &Report) -> Option<String> {
    let previous = json::read_file(path).ok()?;
    let ran: HashSet<String> = report.cases.iter().map(CaseResult::key).collect();
    let dropped = previous
        .cases
        .iter()
        .filter(|c| !ran.contains(&c.key()))
        .count();
    (dropped > 0).then(|| {
        format!(
            "the run played the cases --filter, --exclude or --name chose, and {dropped} of the \
             baseline's {} cases are not among them: they would be dropped, with their history",
            previous.cases.len()
        )
    })
}
