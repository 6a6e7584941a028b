//! Which part of its suite a report covers when the run was asked for less than every case:
//! `run --changed-since REF` (the goldens a change touched) or `run --rerun REPORT` (the failed
//! or errored cases of a saved report, replayed and merged into it). Every sink says it in the
//! same words ([`Scope::describe`]), so that a green PR comment over two cases never reads as
//! a green run of the whole suite.

use serde::{Deserialize, Serialize};

use super::Status;

/// How many cases were selected out of how many, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Scope {
    pub reason: ScopeReason,
    /// The cases played: selected by the change, or replayed from the saved report.
    pub selected: usize,
    /// The cases the other selection flags (`--filter`, `--exclude`, `--name`) left: the
    /// suite the selection was made from.
    pub total: usize,
}

/// Why those cases.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "by", rename_all = "kebab-case")]
pub enum ScopeReason {
    /// `--changed-since REF`: the goldens whose files changed between the merge base of REF
    /// and HEAD and the working tree (uncommitted and untracked files included).
    ChangedSince {
        /// REF, as given.
        since: String,
        /// The commit compared with: the merge base of REF and HEAD.
        merge_base: String,
        /// The changed files that may affect any golden (the config, the agent's prompt,
        /// tools or program, an `affects:` path, or a file that is neither a golden nor
        /// matched by `affects_nothing:`), relative to the repository: when any is, every
        /// case is selected. Empty when only goldens decided.
        whole_suite_because: Vec<String>,
        /// The changed files matched by an `affects_nothing:` glob, which selected no case.
        /// Absent from older reports.
        #[serde(default)]
        affecting_nothing: Vec<String>,
    },
    /// `--rerun REPORT`: the cases of a saved report that ended so, replayed and merged into
    /// it. The report then covers the whole suite again.
    Rerun {
        /// The saved report, as given.
        report: String,
        /// The statuses replayed: `failed`, `error`.
        only: Vec<Status>,
    },
}

impl Scope {
    /// For people, the same in every output: `2 of 6 goldens selected: changed since
    /// origin/main`, `all 6 goldens selected: goldgate.yaml changed since origin/main`,
    /// `2 of 6 goldens replayed: failed or errored in report.json`.
    pub fn describe(&self) -> String {
        let (selected, total) = (self.selected, self.total);
        match &self.reason {
            ScopeReason::ChangedSince {
                since,
                whole_suite_because,
                ..
            } if !whole_suite_because.is_empty() => format!(
                "all {total} goldens selected: {} changed since {since}",
                some_of(whole_suite_because)
            ),
            ScopeReason::ChangedSince {
                since,
                affecting_nothing,
                ..
            } => {
                let rest = match affecting_nothing.len() {
                    0 => String::new(),
                    1 => format!("; {} matches affects_nothing", affecting_nothing[0]),
                    _ => format!("; {} match affects_nothing", some_of(affecting_nothing)),
                };
                let goldens = if selected == 0 {
                    "none changed"
                } else {
                    "changed"
                };
                format!("{selected} of {total} goldens selected: {goldens} since {since}{rest}")
            }
            ScopeReason::Rerun { report, only } => {
                let words: Vec<&str> = only
                    .iter()
                    .map(|s| match s {
                        Status::Error => "errored",
                        other => other.name(),
                    })
                    .collect();
                format!(
                    "{selected} of {total} goldens replayed: {} in {report}, merged into it",
                    words.join(" or ")
                )
            }
        }
    }
}

/// The first three of `files`, and how many more: `a, b, c and 2 more`.
fn some_of(files: &[String]) -> String {
    let shown: Vec<&str> = files.iter().take(3).map(String::as_str).collect();
    match files.len() - shown.len() {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

impl Scope {
    /// Only part of the suite ran, so the report stands for that part alone: a baseline made
    /// of it would drop the rest, and the gate compares the cases selected only.
    pub fn is_partial(&self) -> bool {
        matches!(self.reason, ScopeReason::ChangedSince { .. }) && self.selected < self.total
    }
}

#[cfg(test)]
mod tests {
    use super::{Scope, ScopeReason};
    use crate::results::Status;

    fn names(files: &[&str]) -> Vec<String> {
        files.iter().map(|s| (*s).to_owned()).collect()
    }

    fn changed(because: &[&str], selected: usize) -> Scope {
        changed_beside(because, &[], selected)
    }

    fn changed_beside(because: &[&str], affecting_nothing: &[&str], selected: usize) -> Scope {
        Scope {
            reason: ScopeReason::ChangedSince {
                since: "origin/main".into(),
                merge_base: "abc".into(),
                whole_suite_because: names(because),
                affecting_nothing: names(affecting_nothing),
            },
            selected,
            total: 6,
        }
    }

    #[test]
    fn every_output_says_what_was_selected_and_why() {
        let part = changed(&[], 2);
        assert_eq!(
            part.describe(),
            "2 of 6 goldens selected: changed since origin/main"
        );
        assert!(part.is_partial());
        let whole = changed(&["goldgate.yaml", "a", "b", "c"], 6);
        assert_eq!(
            whole.describe(),
            "all 6 goldens selected: goldgate.yaml, a, b and 1 more changed since origin/main"
        );
        assert!(!whole.is_partial());
        // A run that played nothing says which rule left every golden out.
        assert_eq!(
            changed_beside(&[], &["README.md", "docs/a.md"], 0).describe(),
            "0 of 6 goldens selected: none changed since origin/main; README.md, docs/a.md \
             match affects_nothing"
        );
        assert_eq!(
            changed_beside(&[], &["README.md"], 2).describe(),
            "2 of 6 goldens selected: changed since origin/main; README.md matches affects_nothing"
        );
        let rerun = Scope {
            reason: ScopeReason::Rerun {
                report: "report.json".into(),
                only: vec![Status::Failed, Status::Error],
            },
            selected: 2,
            total: 6,
        };
        assert_eq!(
            rerun.describe(),
            "2 of 6 goldens replayed: failed or errored in report.json, merged into it"
        );
        assert!(!rerun.is_partial());
    }
}
