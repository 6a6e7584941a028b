//! `run`'s selection flags: those `list` shares, and the two that play part of the suite,
//! `--changed-since REF` (which `list` takes too) and `--rerun REPORT`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::SelectionArgs;

/// Which cases `run` plays.
#[derive(Debug, Args)]
pub struct RunSelectionArgs {
    #[command(flatten)]
    pub common: SelectionArgs,

    /// Only the goldens whose files changed since REF (the merge base of REF and HEAD) when
    /// every other changed file matches `affects_nothing:` in goldgate.yaml; all of them when
    /// anything else changed (the agent's source, the config, an `affects:` path).
    #[arg(
        long,
        value_name = "REF",
        help_heading = "Selection",
        long_help = CHANGED_SINCE_HELP
    )]
    pub changed_since: Option<String>,

    /// Replay the failed and errored cases of a saved JSON report and merge the results into
    /// it.
    #[arg(
        long,
        value_name = "REPORT",
        help_heading = "Selection",
        conflicts_with_all = ["changed_since", "max_repeat"],
        long_help = RERUN_HELP
    )]
    pub rerun: Option<PathBuf>,

    /// With --rerun: replay only the failed cases, or only the errored ones [default: both].
    #[arg(
        long,
        value_enum,
        value_name = "STATUS",
        requires = "rerun",
        help_heading = "Selection"
    )]
    pub only: Option<RerunOnly>,
}

/// Which cases `list` lists: those `run` would play with the same flags.
#[derive(Debug, Args)]
pub struct ListSelectionArgs {
    #[command(flatten)]
    pub common: SelectionArgs,

    /// Only the goldens `run --changed-since REF` would play (see `goldgate run --help`).
    #[arg(long, value_name = "REF", help_heading = "Selection")]
    pub changed_since: Option<String>,
}

/// Which cases of a saved report `--rerun` replays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RerunOnly {
    /// The cases that failed: their new runs are added to the old ones.
    Failed,
    /// The cases that ended in an error of the run: replaced by their replay.
    Errored,
}

const CHANGED_SINCE_HELP: &str = "\
Only the goldens whose files changed since REF: a pull request pays for what it touched.

The change is what `git diff --name-only REF...HEAD` lists (from the merge base of REF and \
HEAD, so commits that landed on the base since do not count), plus uncommitted and untracked \
files. Only goldens are selected when every changed file is a golden or matches a glob of \
`affects_nothing:` in goldgate.yaml (docs, say); any other change plays every case, since \
goldgate cannot tell what it affects (the config, the agent's prompt, tools or source). A path \
matching a glob of `affects:` plays every case even where `affects_nothing:` matches too (an \
agent's prompt kept as Markdown).

The gate compares the selected cases only: the baseline's other cases are neither missing \
nor counted, and every report says `N of M goldens selected: changed since REF`. Nothing \
selected is a pass with nothing run. A run of part of the suite cannot become the baseline. \
An unknown REF, or a directory outside a git repository, exits 2; in a shallow clone, fetch \
the base first (actions/checkout with `fetch-depth: 0`).

  goldgate run --changed-since origin/main --baseline baseline.json evals/
  goldgate run --changed-since HEAD~1 evals/";

const RERUN_HELP: &str = "\
Replay the failed and errored cases of a saved JSON report (`run --output`) and merge the \
results into it: the other cases stay as they were, and the usual outputs (--output, \
--junit, --markdown, --comment, the gate with --baseline) are written from the merged report.

An errored case is an error of the run, not a verdict: its replay replaces it. A failed case \
keeps its failure: the replay's runs are added to its runs, so it passes only when all its \
runs together meet the share --min-pass asked (every run, without --repeat), and the gate \
tests every run. Rerun a failure with --repeat N to give the gate the runs to tell a flaky \
case from a broken one. The agent must be the report's.

  goldgate run --output report.json evals/
  goldgate run --rerun report.json --only errored -o report.json evals/
  goldgate run --rerun report.json --repeat 3 --baseline base.json -o report.json evals/";
