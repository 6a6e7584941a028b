//! `goldgate list`: the cases a run would play, as a listing for people (grouped by file, like
//! `cargo nextest list`) or as one JSON document for machines.
//!
//! The JSON shape is stable; keys keep this order and new keys are only ever added:
//!
//! ```json
//! {
//!   "suite": {"fingerprint": "9f0c5d1e2a3b4c5d", "cases": 8, "shard": "1/2"},
//!   "cases": [
//!     {"id": "order_status", "name": "order_status", "file": "evals/goldens/orders.yaml",
//!      "line": 3, "format": "scrapi", "tags": ["orders"], "turns": 2, "checks": 0,
//!      "shard": "1/2", "steps": null, "kind": "conversation", "tool": null}
//!   ]
//! }
//! ```
//!
//! `suite` is the report's `suite` (the selection before sharding, see [`crate::shard`]), so a
//! listing and the report of the run it announces carry the same fingerprint. `cases` are in
//! the order the run schedules them; `file` is the path as loaded, as in the report; `checks`
//! counts the checks over the whole conversation (gecx scorers, SCRAPI `expectations`,
//! Regtrace metrics); `shard` is `--shard`'s `K/N`, `null` without it; `steps` is the number
//! of steps of a SCRAPI simulation (an LLM plays the user; it has no scripted `turns`), `null`
//! for a scripted case; `kind` is `conversation`, `simulation` or `tool-test`, and `tool` the
//! tool a tool test runs (its `checks` are then its expectations).

use crate::report::console::escape;
use crate::report::markdown::escape::cut;
use crate::report::plural;
use std::collections::HashMap;
use std::io::{self, Write};

use serde::Serialize;

use crate::app::select::Selected;
use crate::model::{Case, CaseKind, Format};
use crate::shard::{Shard, SuiteId};

/// How many of a case's tags its line shows: a case may have a million, and the line is for
/// reading (`--json` has them all).
const SHOWN_TAGS: usize = 10;

/// The bytes of a tag its line shows, cut beyond with the count of characters left out.
const SHOWN_TAG_BYTES: usize = 64;

/// What `goldgate list --json` prints.
#[derive(Debug, Serialize)]
pub struct Listing {
    pub suite: SuiteId,
    pub cases: Vec<Listed>,
}

/// One case of a [`Listing`].
#[derive(Debug, Serialize)]
pub struct Listed {
    pub id: String,
    pub name: String,
    pub file: String,
    pub line: u32,
    pub format: Format,
    pub tags: Vec<String>,
    pub turns: usize,
    pub checks: usize,
    pub shard: Option<Shard>,
    /// The steps of a simulated user (SCRAPI simulations); `None`: scripted turns.
    pub steps: Option<usize>,
    /// `conversation`, `simulation` or `tool-test`.
    pub kind: CaseKind,
    /// The tool a tool test runs.
    pub tool: Option<String>,
}

impl Listing {
    pub fn of(selected: &Selected) -> Self {
        Self {
            suite: selected.suite.clone(),
            cases: selected
                .cases
                .iter()
                .map(|case| Listed::of(case, selected.suite.shard))
                .collect(),
        }
    }

    /// How many files the listed cases come from.
    pub fn file_count(&self) -> usize {
        self.groups().len()
    }

    /// The cases grouped by file, files in the order their first case comes.
    fn groups(&self) -> Vec<(&str, Vec<&Listed>)> {
        let mut groups: Vec<(&str, Vec<&Listed>)> = Vec::new();
        // Each file's place among the groups: searching them per case was quadratic in files.
        let mut index: HashMap<&str, usize> = HashMap::new();
        for case in &self.cases {
            match index.get(case.file.as_str()) {
                Some(&at) => groups[at].1.push(case),
                None => {
                    index.insert(&case.file, groups.len());
                    groups.push((&case.file, vec![case]));
                }
            }
        }
        groups
    }

    /// The listing for people: each file with its format, then one line per case with its
    /// id (and name when it differs), turns, tags and shard.
    pub fn write_human(&self, out: &mut impl Write) -> io::Result<()> {
        for (file, cases) in self.groups() {
            writeln!(out, "{} ({}):", escape(file), cases[0].format)?;
            let ids: Vec<_> = cases.iter().map(|c| escape(&c.id)).collect();
            let width = ids.iter().map(|id| id.chars().count()).max().unwrap_or(0);
            let counts: Vec<String> = cases.iter().map(|c| c.counts()).collect();
            let count_width = counts.iter().map(String::len).max().unwrap_or(0);
            for ((case, id), count) in cases.iter().zip(&ids).zip(&counts) {
                write!(out, "    {id:<width$}  {count:<count_width$}")?;
                if !case.tags.is_empty() {
                    write!(out, "  tags: {}", shown_tags(&case.tags))?;
                }
                if let Some(shard) = case.shard {
                    write!(out, "  shard {shard}")?;
                }
                if case.name != case.id {
                    write!(out, "  ({})", escape(&case.name))?;
                }
                writeln!(out)?;
            }
        }
        Ok(())
    }

    /// One line saying how much was listed, for stderr.
    pub fn summary(&self) -> String {
        let cases = self.cases.len();
        let files = self.file_count();
        let mut line = format!("{} in {}", plural(cases, "case"), plural(files, "file"));
        if let Some(shard) = self.suite.shard {
            line.push_str(&format!(
                " (shard {shard} of {} selected)",
                self.suite.cases
            ));
        }
        line
    }
}

/// The first [`SHOWN_TAGS`] tags, each cut to [`SHOWN_TAG_BYTES`], then how many more there are.
fn shown_tags(tags: &[String]) -> String {
    let mut shown: Vec<String> = tags
        .iter()
        .take(SHOWN_TAGS)
        .map(|tag| match cut(tag, SHOWN_TAG_BYTES) {
            (whole, 0) => escape(whole).into_owned(),
            (part, left) => format!("{}… ({left} more characters)", escape(part)),
        })
        .collect();
    if tags.len() > SHOWN_TAGS {
        shown.push(format!("… and {} more", tags.len() - SHOWN_TAGS));
    }
    shown.join(", ")
}

impl Listed {
    /// `2 turns` or `1 turn, 3 checks`.
    fn counts(&self) -> String {
        let mut text = match (&self.tool, self.steps) {
            (Some(tool), _) => format!("tool {tool}"),
            (None, Some(steps)) => format!("simulated user, {}", plural(steps, "step")),
            (None, None) => plural(self.turns, "turn"),
        };
        if self.checks > 0 {
            text.push_str(", ");
            text.push_str(&plural(self.checks, "check"));
        }
        text
    }

    fn of(case: &Case, shard: Option<Shard>) -> Self {
        let tool = case
            .turns
            .iter()
            .find_map(|t| Some(t.executed_tool()?.tool.clone()));
        // A tool test's checks are its one turn's expectations.
        let checks = match tool {
            Some(_) => case.turns.iter().map(|t| t.expectations.len()).sum(),
            None => case.checks.len(),
        };
        Self {
            id: case.id.clone(),
            name: case.name.clone(),
            file: case.location.file.to_string_lossy().into_owned(),
            line: case.location.line,
            format: case.format,
            tags: case.tags.clone(),
            turns: case.turns.len(),
            checks,
            shard,
            steps: case.simulated_user.as_ref().map(Vec::len),
            kind: case.kind(),
            tool,
        }
    }
}
