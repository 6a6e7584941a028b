//! A run of part of the suite: the goldens a change touched (`run --changed-since REF`, see
//! [`super::changes`]) or the failures of a saved report (`run --rerun REPORT`, see
//! [`crate::merge::rerun`]). What is decided here: which cases (by key) the selection keeps,
//! what the report says of it ([`Scope`]), and what the gate compares.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::changes::{self, Affected};
use super::select::{self, SelectError, Selected, Selection};
use crate::config::{AgentConfig, Config};
use crate::gate::Gate;
use crate::load::Suite;
use crate::merge::rerun;
use crate::results::{Report, Scope, ScopeReason, Status};
use crate::shard::case_key;

/// Which part of the suite was asked for.
#[derive(Clone, Debug)]
pub enum Subset {
    /// `--changed-since REF`.
    ChangedSince(String),
    /// `--rerun REPORT --only ...`: the saved report, and the statuses to replay.
    Rerun { report: PathBuf, only: Vec<Status> },
}

/// The part of the suite a run plays, resolved.
#[derive(Debug)]
pub struct Narrowed {
    /// The cases to keep (see [`super::select::Selection::keys`]); `None`: all of them.
    pub keys: Option<HashSet<String>>,
    reason: ScopeReason,
    /// `--changed-since`: the files changed, as git names them (relative to the repository).
    changed: HashSet<String>,
    /// `--rerun`: the saved report the replays merge into.
    pub saved: Option<Report>,
}

/// What resolving a subset reads: the suite loaded, the config, the agent under test, and the
/// directory relative paths start from.
pub struct Context<'a> {
    pub suite: &'a Suite,
    pub config: &'a Config,
    pub agent: Option<&'a AgentConfig>,
    pub cwd: &'a Path,
}

/// Why the part of the suite asked for cannot be played: the run stops (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum SubsetError {
    #[error(transparent)]
    Changes(#[from] changes::ChangesError),
    #[error("--rerun: {0}")]
    Rerun(#[from] crate::results::json::ReadError),
    #[error(
        "--rerun: {} names cases that are not among the goldens loaded: {}\nhint: give the paths the report was run with; a golden renamed or removed since needs a run of its own",
        report.display(),
        gone.join(", ")
    )]
    Gone { report: PathBuf, gone: Vec<String> },
    #[error(
        "--rerun: {} holds the case {key} more than once: it is no report goldgate wrote (edited, or joined by hand); nothing was run\nhint: rerun from the report of one run, or of `goldgate merge`",
        report.display()
    )]
    Duplicated { report: PathBuf, key: String },
    #[error("cannot read the current directory: {0}")]
    Cwd(std::io::Error),
    #[error(transparent)]
    Select(#[from] SelectError),
}

/// Resolves `subset`: runs git, or reads the saved report and checks its cases still load.
pub fn narrow(subset: &Subset, context: &Context) -> Result<Narrowed, SubsetError> {
    match subset {
        Subset::ChangedSince(since) => {
            let changes = changes::since(since, context.cwd)?;
            let affected =
                changes.affected(context.suite, context.config, context.agent, context.cwd);
            let (keys, whole, affecting_nothing) = match affected {
                Affected::All(because) => (None, because, Vec::new()),
                Affected::Cases {
                    keys,
                    affecting_nothing,
                } => (Some(keys), Vec::new(), affecting_nothing),
            };
            Ok(Narrowed {
                keys,
                changed: changes.files.into_iter().collect(),
                reason: ScopeReason::ChangedSince {
                    since: changes.since,
                    merge_base: changes.merge_base,
                    whole_suite_because: whole,
                    affecting_nothing,
                },
                saved: None,
            })
        }
        Subset::Rerun { report, only } => {
            let saved = crate::results::json::read_file(report)?;
            if let Some(key) = rerun::duplicated(&saved) {
                return Err(SubsetError::Duplicated {
                    report: report.clone(),
                    key,
                });
            }
            let keys = rerun::to_replay(&saved, only);
            let loaded: HashSet<String> = context
                .suite
                .files
                .iter()
                .flat_map(|f| f.cases.iter().map(|c| case_key(c)))
                .collect();
            let mut gone: Vec<String> = keys.difference(&loaded).cloned().collect();
            if !gone.is_empty() {
                gone.sort();
                return Err(SubsetError::Gone {
                    report: report.clone(),
                    gone,
                });
            }
            Ok(Narrowed {
                keys: Some(keys),
                reason: ScopeReason::Rerun {
                    report: report.display().to_string(),
                    only: only.clone(),
                },
                changed: HashSet::new(),
                saved: Some(saved),
            })
        }
    }
}

impl Narrowed {
    /// What the report says of the selection made: `selected` out of the cases the other
    /// flags left. A rerun's merged report covers the saved report's cases, of which those
    /// replayed; a saved report of part of the suite stays one.
    pub fn scope(&self, selected: &Selected) -> Scope {
        let saved_scope = self.saved.as_ref().and_then(|s| s.scope.as_ref());
        if let Some(scope) = saved_scope.filter(|s| s.is_partial()) {
            return scope.clone();
        }
        let total = match &self.saved {
            Some(saved) => saved.cases.len(),
            None => selected.considered,
        };
        Scope {
            reason: self.reason.clone(),
            selected: selected.suite.cases,
            total,
        }
    }

    /// The gate over the cases the report will hold: those selected by a change, and the
    /// baseline's cases of a golden file the change deleted or renamed, which did not run and
    /// are reported missing; the saved report's own for a rerun.
    pub fn gate(&self, gate: Gate) -> Gate {
        match (&self.saved, &self.keys) {
            (Some(saved), _) => gate.fitted(saved),
            (None, Some(keys)) => {
                let mut kept = keys.clone();
                let gone = gate.baseline.cases.iter().filter(|case| {
                    let file = crate::shard::key(&case.file, "");
                    self.changed.contains(file.trim_end_matches('#'))
                });
                kept.extend(gone.map(|case| case.key()));
                gate.only(&kept)
            }
            (None, None) => gate,
        }
    }
}

impl Narrowed {
    /// Refuses a `--rerun` report of other cases than `selection` picks from `suite`: its
    /// suite fingerprint must be theirs (taken before sharding, as the report's was), or for a
    /// report of part of the suite (`--changed-since`), its cases must be among them.
    /// Otherwise its passes would stand for goldens never judged.
    fn of_the_selection(self, suite: &Suite, selection: &Selection) -> Result<Self, SelectError> {
        let (Some(saved), ScopeReason::Rerun { report, .. }) = (&self.saved, &self.reason) else {
            return Ok(self);
        };
        let whole = Selection {
            shard: None,
            ..selection.clone()
        };
        let selected = select::select(suite, &whole)?;
        let keys: HashSet<String> = selected.cases.iter().map(|c| case_key(c)).collect();
        let partial = saved.scope.as_ref().is_some_and(|s| s.is_partial());
        let difference = if partial {
            let other = saved.cases.iter().find(|c| !keys.contains(&c.key()));
            other.map(|c| format!("its case {} is not among them", c.key()))
        } else {
            saved.suite.difference(&selected.suite)
        };
        match difference {
            Some(difference) => Err(SelectError::OtherSuite {
                report: report.clone(),
                difference,
            }),
            None => Ok(self),
        }
    }
}

/// The gate of a run whose selection flags chose part of a suite the baseline holds more of:
/// over the chosen cases only, as for `--changed-since`, so that the others are not missing
/// and the pooled latencies of the whole suite are not compared with a few cases' (which
/// would measure the choice, not the agent). A baseline of the selection itself (a smoke
/// suite's) is kept whole.
fn over_the_chosen(gate: Gate, suite: &Suite, selection: &Selection) -> Result<Gate, SelectError> {
    let whole = Selection {
        shard: None,
        ..selection.clone()
    };
    let chosen: HashSet<String> = select::select(suite, &whole)?
        .cases
        .iter()
        .map(|case| case_key(case))
        .collect();
    let holds_more = gate
        .baseline
        .cases
        .iter()
        .any(|c| !chosen.contains(&c.key()));
    Ok(if holds_more { gate.only(&chosen) } else { gate })
}

/// What a run plays: the cases selected, what the report says of them, the gate over them,
/// and for a rerun the saved report they merge into.
#[derive(Debug)]
pub struct Chosen {
    pub selected: Selected,
    pub scope: Option<Scope>,
    pub gate: Option<Gate>,
    pub saved: Option<Report>,
}

/// The cases `run` plays and `list` lists: `selection`, narrowed by `subset`
/// (`--changed-since`, `--rerun`) as it affects `agent`, with `gate` over what the report will
/// hold. Both commands choose through this one function (by way of
/// [`super::plan::choose`]), so that `list` shows what `run` plays.
pub fn choose_cases(
    (suite, config): (&Suite, &Config),
    agent: Option<&AgentConfig>,
    selection: Selection,
    subset: Option<&Subset>,
    gate: Option<Gate>,
) -> Result<Chosen, SubsetError> {
    let narrowed = match subset {
        Some(subset) => {
            let cwd = std::env::current_dir().map_err(SubsetError::Cwd)?;
            let context = Context {
                suite,
                config,
                agent,
                cwd: &cwd,
            };
            Some(narrow(subset, &context)?)
        }
        None => None,
    };
    Ok(choose(suite, selection, narrowed, gate)?)
}

/// Whether `config` plays evaluations that live in a CX Agent Studio app
/// (`agent.ces.platform.evaluations`): cases enough without a local golden, which the platform
/// names only when a run starts.
pub fn chooses_app_evaluations(config: &Config) -> bool {
    matches!(
        &config.agent,
        Some(AgentConfig::Ces(ces)) if ces.platform.as_ref().is_some_and(|p| p.existing.is_some())
    )
}

/// The cases `selection` picks from `suite`, narrowed to `narrowed` (`--changed-since`,
/// `--rerun`) when given, with `gate` over what the report will hold.
fn choose(
    suite: &Suite,
    selection: Selection,
    narrowed: Option<Narrowed>,
    gate: Option<Gate>,
) -> Result<Chosen, SelectError> {
    let gate = match gate {
        Some(gate) if selection.narrows() => Some(over_the_chosen(gate, suite, &selection)?),
        gate => gate,
    };
    let Some(mut narrowed) = narrowed
        .map(|n| n.of_the_selection(suite, &selection))
        .transpose()?
    else {
        return Ok(Chosen {
            selected: select::select(suite, &selection)?,
            scope: None,
            gate,
            saved: None,
        });
    };
    let selection = Selection {
        keys: narrowed.keys.clone(),
        ..selection
    };
    let selected = select::select(suite, &selection)?;
    Ok(Chosen {
        scope: Some(narrowed.scope(&selected)),
        gate: gate.map(|g| narrowed.gate(g)),
        saved: narrowed.saved.take(),
        selected,
    })
}
