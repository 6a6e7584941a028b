//! Which loaded cases a command plays: `--filter` (tag expressions, any of them), `--exclude`
//! (none of these tags), `--name` (a glob over the
//! id or the name), then the cases a change or a saved report names (`run --changed-since`,
//! `run --rerun`), then `--shard K/N`. `run` and `list` both call [`select`], so that the list
//! is what a run with the same flags then plays.

use std::collections::HashSet;
use std::sync::Arc;

use globset::GlobBuilder;

use super::tags::TagExpr;
use crate::load::Suite;
use crate::model::Case;
use crate::shard::{Shard, SuiteId, case_key};

/// The selection flags, parsed.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Tag expressions ([`TagExpr`]): a case matching any of them is selected; none selects
    /// every case.
    pub filters: Vec<TagExpr>,
    /// Tags: a case with any of them is left out, whatever the filters say.
    pub excludes: Vec<String>,
    /// A glob matched against the case id and the case name.
    pub name: Option<String>,
    /// Only the cases with these keys ([`crate::shard::key`]), among those the flags above
    /// select: the goldens a change touched, the failures of a saved report. None selected
    /// is no error: nothing changed.
    pub keys: Option<HashSet<String>>,
    pub shard: Option<Shard>,
}

impl Selection {
    /// `--filter`, `--exclude` or `--name` chose part of the suite.
    pub fn narrows(&self) -> bool {
        !self.filters.is_empty() || !self.excludes.is_empty() || self.name.is_some()
    }
}

/// The cases selected, in load order.
#[derive(Debug)]
pub struct Selected {
    /// The cases of this shard (all selected cases without a shard).
    pub cases: Vec<Arc<Case>>,
    /// The suite they belong to: every case selected before sharding, so that the shards of one
    /// suite share it.
    pub suite: SuiteId,
    /// How many cases the tag and name flags selected before [`Selection::keys`] narrowed
    /// them: the suite a change selected from.
    pub considered: usize,
}

impl Selected {
    /// A note for people when the shard holds none of the selected cases (not an error: with
    /// more shards than cases some are empty).
    pub fn empty_shard_note(&self) -> Option<String> {
        let shard = self.suite.shard?;
        self.cases.is_empty().then(|| {
            format!(
                "shard {shard} holds none of the {} selected cases",
                self.suite.cases
            )
        })
    }
}

/// Why nothing can be selected.
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    #[error("--name: {0}")]
    Glob(#[from] globset::Error),
    #[error("no case matches the --filter / --exclude / --name given ({loaded} cases loaded)")]
    NoMatch { loaded: usize },
    #[error(
        "the {files} golden file(s) found hold no case goldgate can run (their warnings above say why)"
    )]
    NoCases { files: usize },
    #[error(
        "--rerun: {report} is a report of other cases than those selected ({difference}): \
         replaying its failures would not judge the goldens given; nothing was run\nhint: give \
         the paths, --filter, --exclude and --name the report was run with"
    )]
    OtherSuite { report: String, difference: String },
}

/// The cases of `suite` that `selection` picks; an error when the filters match nothing.
pub fn select(suite: &Suite, selection: &Selection) -> Result<Selected, SelectError> {
    let name = match &selection.name {
        Some(glob) => Some(GlobBuilder::new(glob).build()?.compile_matcher()),
        None => None,
    };
    let cases: Vec<Arc<Case>> = suite
        .files
        .iter()
        .flat_map(|f| &f.cases)
        .filter(|c| {
            selection.filters.is_empty() || selection.filters.iter().any(|f| f.matches(&c.tags))
        })
        .filter(|c| !c.tags.iter().any(|t| selection.excludes.contains(t)))
        .filter(|c| {
            name.as_ref()
                .is_none_or(|m| m.is_match(&c.id) || m.is_match(&c.name))
        })
        .map(Arc::clone)
        .collect();
    // A suite of no file at all is a run whose cases come from elsewhere (a CX Agent Studio
    // app's own evaluations): there was nothing to match.
    if cases.is_empty() && !suite.files.is_empty() {
        return Err(match suite.case_count() {
            0 => SelectError::NoCases {
                files: suite.files.len(),
            },
            loaded => SelectError::NoMatch { loaded },
        });
    }
    let considered = cases.len();
    let cases: Vec<Arc<Case>> = match &selection.keys {
        Some(keys) => cases
            .into_iter()
            .filter(|c| keys.contains(&case_key(c)))
            .collect(),
        None => cases,
    };
    let suite_id = SuiteId::of(cases.iter().map(|c| c.as_ref()), selection.shard);
    let cases = match selection.shard {
        Some(shard) => cases
            .into_iter()
            .filter(|c| shard.contains_case(c))
            .collect(),
        None => cases,
    };
    Ok(Selected {
        cases,
        suite: suite_id,
        considered,
    })
}
