//! `goldgate merge`: shard reports (`run --shard K/N --output`) joined into the report one run
//! of the whole suite would have written.
//!
//! Reports are joined only when they are parts of one suite: the same report schema, the same
//! agent, and the same suite fingerprint (the same cases selected before sharding, see
//! [`crate::shard`]), split the same way, each shard once, each case once. Anything else is
//! refused with the two files named, because a merged report of two different suites would
//! gate a pull request on numbers that mean nothing.
//!
//! The merged report's aggregates are recomputed from its cases, which are ordered by file,
//! line and id. It is incomplete when a part is, or when a shard is missing; it then covers
//! fewer cases than the suite (`suite.cases` says how many there are).

pub mod rerun;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::results::Aggregates;
use crate::results::json::ReadError;
use crate::results::{Budget, JudgeUsage, RateLimitWaits, Unmeasured};
use crate::results::{CaseResult, Report, SCHEMA_VERSION, Samples};
use crate::shard::{self, Shard, SuiteId};

/// One report to merge, with the file it came from (for messages).
#[derive(Clone, Debug)]
pub struct Part {
    pub path: PathBuf,
    pub report: Report,
}

/// The merged report, and the shards that were not given.
#[derive(Clone, Debug)]
pub struct Merged {
    pub report: Report,
    pub missing_shards: Vec<Shard>,
    /// The runs the shards' adaptive repeats played, as their gates recorded them: facts of
    /// the run, in the merged cases, which a gate of the whole keeps though it joins none of
    /// the shards' comparisons.
    pub extra_runs: u64,
}

/// Why reports cannot be merged. Every message names the files concerned.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error("nothing to merge")]
    Empty,
    #[error("{} and {} are reports of different suites: {difference}", first.display(), other.display())]
    DifferentSuites {
        first: PathBuf,
        other: PathBuf,
        difference: String,
    },
    #[error("{} and {} both cover {what}", first.display(), other.display())]
    Overlap {
        first: PathBuf,
        other: PathBuf,
        what: String,
    },
    #[error("case {key} is in both {} and {}", first.display(), other.display())]
    DuplicateCase {
        key: String,
        first: PathBuf,
        other: PathBuf,
    },
    #[error(
        "the reports hold {found} cases but their suite has {expected}: they were not made by the same sharding (edited, or another goldgate)"
    )]
    Count { found: usize, expected: usize },
}

/// Reads the report at `path` as a part.
pub fn read_part(path: &Path) -> Result<Part, MergeError> {
    Ok(Part {
        path: path.to_owned(),
        report: crate::results::json::read_file(path)?,
    })
}

/// Joins `parts` (see the module doc).
pub fn merge(parts: Vec<Part>) -> Result<Merged, MergeError> {
    let first = parts.first().ok_or(MergeError::Empty)?;
    for other in &parts[1..] {
        same_suite(first, other)?;
    }
    let missing_shards = check_shards(&parts)?;
    let found = distinct_cases(&parts)?;
    let incomplete = !missing_shards.is_empty() || parts.iter().any(|part| part.report.incomplete);
    let expected = first.report.suite.cases;
    if !incomplete && found != expected {
        return Err(MergeError::Count { found, expected });
    }
    let report = joined(&parts, incomplete);
    // The shards share their floors; the whole suite is what must clear them.
    let floors = first
        .report
        .floors
        .iter()
        .map(|f| f.recheck(&report))
        .collect();
    let report = Report { floors, ..report };
    let extra_runs = (parts.iter())
        .filter_map(|p| p.report.gate.as_ref())
        .map(|gate| gate.extra_runs)
        .sum();
    Ok(Merged {
        report,
        missing_shards,
        extra_runs,
    })
}

/// How many cases the parts hold, each in one part only.
fn distinct_cases(parts: &[Part]) -> Result<usize, MergeError> {
    let mut owner: HashMap<String, &Path> = HashMap::new();
    for part in parts {
        for case in &part.report.cases {
            let key = shard::key(&case.file, &case.id);
            if let Some(first) = owner.insert(key.clone(), &part.path) {
                return Err(MergeError::DuplicateCase {
                    key,
                    first: first.to_owned(),
                    other: part.path.clone(),
                });
            }
        }
    }
    Ok(owner.len())
}

/// Each shard ran under its own budget: the run's is their sum, reached when any was.
fn budget(parts: &[Part]) -> Option<Budget> {
    parts
        .iter()
        .filter_map(|p| p.report.budget)
        .reduce(|a, b| Budget {
            limit_usd: a.limit_usd + b.limit_usd,
            reached: a.reached || b.reached,
        })
}

/// One report of the parts' cases, ordered, with their aggregates recomputed and their run
/// facts combined; without floors, which are rechecked against it.
fn joined(parts: &[Part], incomplete: bool) -> Report {
    let base = &parts[0].report;
    let mut cases: Vec<CaseResult> = parts
        .iter()
        .flat_map(|p| p.report.cases.iter().cloned())
        .collect();
    cases.sort_by(|a, b| (&a.file, a.line, &a.id).cmp(&(&b.file, b.line, &b.id)));
    let logs = agent_logs(parts);
    let mut unmeasured: Vec<Unmeasured> = Vec::new();
    for u in parts.iter().flat_map(|p| &p.report.unmeasured) {
        if !unmeasured.iter().any(|known| known.metric == u.metric) {
            unmeasured.push(u.clone());
        }
    }
    let mut merged = Report {
        schema_version: SCHEMA_VERSION,
        goldgate_version: base.goldgate_version.clone(),
        agent: base.agent.clone(),
        suite: SuiteId {
            shard: None,
            ..base.suite.clone()
        },
        scope: base.scope.clone(),
        judges: judges(parts),
        judge_usage: JudgeUsage::sum(parts.iter().flat_map(|p| &p.report.judge_usage)),
        incomplete,
        budget: budget(parts),
        // The shards of one run share their flags: the most lenient allowance is kept.
        max_errors: parts
            .iter()
            .map(|p| p.report.max_errors)
            .max()
            .unwrap_or_default(),
        policy: base.policy,
        agent_log: (!logs.is_empty()).then(|| logs.join("\n")),
        // Shards start their agents side by side: the slowest start-up is the run's.
        agent_startup: parts.iter().filter_map(|p| p.report.agent_startup).max(),
        rate_limits: RateLimitWaits::sum(parts.iter().flat_map(|p| &p.report.rate_limits)),
        aggregates: Aggregates::of(&[]),
        unmeasured,
        samples: parts.iter().fold(Samples::default(), |mut all, p| {
            all.merge(&p.report.samples);
            all.builds = all.builds.max(p.report.samples.builds);
            all
        }),
        alpha_share: parts
            .iter()
            .map(|p| p.report.alpha_share)
            .fold(1.0, f64::min),
        // A comparison belongs to one run against one baseline: a merged report has none.
        gate: None,
        floors: Vec::new(),
        cases,
    };
    merged.aggregate();
    merged
}

/// Every judge any part names, once, in the order first named.
fn judges(parts: &[Part]) -> Vec<String> {
    let mut judges: Vec<String> = Vec::new();
    for judge in parts.iter().flat_map(|p| &p.report.judges) {
        if !judges.contains(judge) {
            judges.push(judge.clone());
        }
    }
    judges
}

/// Each part's agent log, headed by the file it came from.
fn agent_logs(parts: &[Part]) -> Vec<String> {
    parts
        .iter()
        .filter_map(|p| {
            let log = p.report.agent_log.as_ref()?;
            Some(format!("[goldgate] from {}\n{log}", p.path.display()))
        })
        .collect()
}

fn same_suite(first: &Part, other: &Part) -> Result<(), MergeError> {
    let (a, b) = (&first.report, &other.report);
    let difference = if let Some(difference) = a.suite.difference(&b.suite) {
        difference
    } else if a.agent != b.agent {
        format!("agents `{}` and `{}`", a.agent, b.agent)
    } else if a.policy != b.policy {
        // Taking either one's would make the merged verdict hang on the order of the files.
        format!(
            "gate policies {} and {}: run every shard with the same --fail-on-regress and \
             --fail-on-inconclusive",
            policy_flags(a),
            policy_flags(b)
        )
    } else {
        return Ok(());
    };
    Err(MergeError::DifferentSuites {
        first: first.path.clone(),
        other: other.path.clone(),
        difference,
    })
}

/// The flags a report's gate policy was set by, in words.
fn policy_flags(report: &Report) -> String {
    let policy = report.policy;
    let flags: Vec<&str> = [
        (policy.fail_on_regress, "--fail-on-regress"),
        (policy.fail_on_inconclusive, "--fail-on-inconclusive"),
    ]
    .into_iter()
    .filter_map(|(set, flag)| set.then_some(flag))
    .collect();
    match flags.is_empty() {
        true => "(no flag)".to_owned(),
        false => format!("({})", flags.join(" ")),
    }
}

/// Every shard at most once, all of one split; returns the shards not given.
fn check_shards(parts: &[Part]) -> Result<Vec<Shard>, MergeError> {
    let overlap = |first: &Part, other: &Part, what: String| MergeError::Overlap {
        first: first.path.clone(),
        other: other.path.clone(),
        what,
    };
    let mut seen: Vec<(Shard, &Part)> = Vec::new();
    for part in parts {
        let Some(shard) = part.report.suite.shard else {
            // A report of the whole suite overlaps any other report of it.
            return match parts.iter().find(|p| !std::ptr::eq(*p, part)) {
                Some(other) => Err(overlap(part, other, "the whole suite".to_owned())),
                None => Ok(Vec::new()),
            };
        };
        if let Some((seen_shard, first)) = seen.first()
            && seen_shard.count() != shard.count()
        {
            let what = format!(
                "parts of one suite split two ways ({seen_shard} and {shard}): some cases are in both"
            );
            return Err(overlap(first, part, what));
        }
        if let Some((_, first)) = seen.iter().find(|(s, _)| *s == shard) {
            return Err(overlap(first, part, format!("shard {shard}")));
        }
        seen.push((shard, part));
    }
    let count = seen.first().map_or(0, |(s, _)| s.count());
    Ok((1..=count)
        .filter_map(|k| Shard::new(k, count).ok())
        .filter(|s| !seen.iter().any(|(seen, _)| seen == s))
        .collect())
}
