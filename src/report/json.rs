//! The JSON report: the machine-readable record of a run, and the baseline the gate compares
//! against (`--update-baseline` writes this same report).
//!
//! Because the baseline is committed and reviewed in diffs, the format is kept stable and
//! quiet: keys in struct order, every key always present (`null` when absent), statuses as
//! lowercase words, durations as whole milliseconds, paths as the user gave them, and no
//! timestamps or host names. [`SCHEMA_VERSION`] changes when a field changes meaning or goes
//! away, so that a reader can refuse a baseline it would misread.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::agent::protocol::{Handoff, Message, ReplyError, ToolCall, Transfer, Usage};
use crate::gate::Comparison;
use crate::metrics::{Aggregates, millis};
use crate::outcome::{
    CaseResult, CheckCategory, CheckResult, Repeats, RunResult, Status, TurnResult,
};
use crate::score::JudgeUsage;
use crate::shard::SuiteId;

/// The version of the report format written by this build.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Report {
    pub schema_version: u32,
    pub goldgate_version: String,
    /// The agent under test, as it describes itself (never a secret).
    pub agent: String,
    /// Which cases this report covers: the suite's fingerprint and size, and the shard.
    pub suite: SuiteId,
    /// The judges configured (empty: LLM-judge checks were skipped).
    pub judges: Vec<String>,
    /// What each judge that answered cost: calls to its provider, answers read from the judge
    /// cache, tokens. Absent from reports older than the judges.
    #[serde(default)]
    pub judge_usage: Vec<JudgeUsage>,
    /// Stopped early: some cases never ran.
    pub incomplete: bool,
    /// What a command agent wrote on stderr (its last 64 KiB), for debugging errors.
    pub agent_log: Option<String>,
    pub aggregates: Aggregates,
    /// The comparison with `--baseline`; `null` without one.
    pub gate: Option<Comparison>,
    pub cases: Vec<CaseReport>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CaseReport {
    pub id: String,
    pub name: String,
    /// The golden file, as the user named or discovery found it (relative when they were).
    /// Text rather than a path so that a name that is not UTF-8 cannot fail the report.
    pub file: String,
    pub line: u32,
    /// The format it was written in: `scrapi`, `ces-csv`, `scenario`, `regtrace`.
    pub format: String,
    pub tags: Vec<String>,
    pub weight: f64,
    pub status: Status,
    /// In `0..=1`.
    pub score: f64,
    #[serde(rename = "duration_ms", with = "millis")]
    #[schemars(with = "u64")]
    pub duration: Duration,
    /// The error of the run that stopped the case.
    pub error: Option<String>,
    pub usage: Usage,
    /// With `--repeat N`: how the case's independent runs went; `null` for a single run.
    pub repeats: Option<RepeatsReport>,
    pub turns: Vec<TurnReport>,
    /// Checks over the whole conversation.
    pub checks: Vec<CheckReport>,
}

/// The runs of one case under `--repeat N --min-pass K`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RepeatsReport {
    /// Each finished run's status, in the order they were scheduled.
    pub runs: Vec<Status>,
    pub passed: u32,
    /// K: the case passes when at least this many runs pass.
    pub min_pass: u32,
    /// passed / runs.
    pub pass_fraction: f64,
    /// The estimated chance that K independent runs all pass: `C(passed, K) / C(runs, K)`
    /// (see [`crate::outcome::pass_hat_k`]).
    pub pass_hat_k: f64,
    /// The runs disagree.
    pub flaky: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TurnReport {
    /// 1-based.
    pub index: usize,
    pub line: u32,
    pub status: Status,
    pub input: String,
    pub attempts: u32,
    pub error: Option<String>,
    /// What the agent did; `null` when the turn could not be played.
    pub reply: Option<ReplyReport>,
    #[serde(rename = "latency_ms", with = "millis::option")]
    #[schemars(with = "Option<u64>")]
    pub latency: Option<Duration>,
    #[serde(rename = "ttft_ms", with = "millis::option")]
    #[schemars(with = "Option<u64>")]
    pub ttft: Option<Duration>,
    pub checks: Vec<CheckReport>,
}

/// The agent's reply, with every field present.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReplyReport {
    /// All agent text, messages joined by a newline.
    pub text: String,
    pub messages: Vec<Message>,
    pub tool_calls: Vec<ToolCall>,
    pub transfer: Option<Transfer>,
    pub handoff: Option<Handoff>,
    pub error: Option<ReplyError>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CheckReport {
    pub label: String,
    /// What the check is about (`agent-text`, `tool-call`, `hallucination`, ...): the
    /// aggregates are computed from it.
    pub category: CheckCategory,
    pub line: u32,
    pub status: Status,
    pub expected: String,
    pub actual: String,
    /// How it was judged: `exact`, `local-similarity`, `judge:anthropic/claude-sonnet-4-6`,
    /// `none`.
    pub method: String,
    pub score: Option<f64>,
    pub reason: Option<String>,
}

/// The report of a run of (a shard of) `suite`, its aggregates computed from its own cases.
pub fn build(result: &RunResult, suite: &SuiteId) -> Report {
    let cases: Vec<CaseReport> = result.cases.iter().map(case_report).collect();
    Report {
        schema_version: SCHEMA_VERSION,
        goldgate_version: env!("CARGO_PKG_VERSION").to_owned(),
        agent: result.agent.clone(),
        suite: suite.clone(),
        agent_log: result.agent_log.clone(),
        judges: result.judges.clone(),
        judge_usage: result.judge_usage.clone(),
        incomplete: result.incomplete,
        aggregates: Aggregates::of(&cases),
        gate: None,
        cases,
    }
}

fn case_report(result: &CaseResult) -> CaseReport {
    let case = &result.case;
    CaseReport {
        id: case.id.clone(),
        name: case.name.clone(),
        file: case.location.file.to_string_lossy().into_owned(),
        line: case.location.line,
        format: case.format.name().to_owned(),
        tags: case.tags.clone(),
        weight: case.weight,
        status: result.status,
        score: result.score,
        duration: result.duration,
        error: result.error.clone(),
        usage: result.usage,
        repeats: result.repeats.as_ref().map(repeats_report),
        turns: result.turns.iter().map(turn_report).collect(),
        checks: result.checks.iter().map(check_report).collect(),
    }
}

fn repeats_report(repeats: &Repeats) -> RepeatsReport {
    RepeatsReport {
        runs: repeats.runs.iter().map(|r| r.status).collect(),
        passed: repeats.passed(),
        min_pass: repeats.min_pass,
        pass_fraction: repeats.pass_fraction(),
        pass_hat_k: repeats.pass_hat_k(),
        flaky: repeats.flaky(),
    }
}

fn turn_report(turn: &TurnResult) -> TurnReport {
    let exchange = turn.exchange.as_ref();
    TurnReport {
        index: turn.index,
        line: turn.location.line,
        status: turn.status,
        input: turn.input.clone(),
        attempts: turn.attempts,
        error: turn.error.clone(),
        reply: exchange.map(|e| ReplyReport {
            text: e.reply.text(),
            messages: e.reply.messages.clone(),
            tool_calls: e.reply.tool_calls.clone(),
            transfer: e.reply.transfer.clone(),
            handoff: e.reply.handoff.clone(),
            error: e.reply.error.clone(),
        }),
        latency: exchange.map(|e| e.latency),
        ttft: exchange.and_then(|e| e.ttft),
        checks: turn.checks.iter().map(check_report).collect(),
    }
}

fn check_report(check: &CheckResult) -> CheckReport {
    CheckReport {
        label: check.label.clone(),
        category: check.category,
        line: check.location.line,
        status: check.status,
        expected: check.expected.clone(),
        actual: check.actual.clone(),
        method: check.method.describe(),
        score: check.score,
        reason: check.reason.clone(),
    }
}

/// Why a saved report (a baseline, a report given to `compare`) cannot be used. Each names
/// the file.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{}: cannot read the report: {error}", path.display())]
    Io { path: PathBuf, error: io::Error },
    #[error("{}: not a goldgate JSON report: {error}", path.display())]
    Parse {
        path: PathBuf,
        error: serde_json::Error,
    },
    #[error(
        "{}: a report of schema version {found}; this goldgate reads version {SCHEMA_VERSION} (write it again with this version)",
        path.display()
    )]
    Version { path: PathBuf, found: u64 },
}

/// Reads a report written by [`write`], refusing another schema version before it could be
/// misread.
pub fn read_file(path: &Path) -> Result<Report, ReadError> {
    #[derive(Deserialize)]
    struct Versioned {
        schema_version: u64,
    }
    let parse_error = |error| ReadError::Parse {
        path: path.to_path_buf(),
        error,
    };
    let text = fs::read_to_string(path).map_err(|error| ReadError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    let found = serde_json::from_str::<Versioned>(&text)
        .map_err(parse_error)?
        .schema_version;
    if found != u64::from(SCHEMA_VERSION) {
        return Err(ReadError::Version {
            path: path.to_path_buf(),
            found,
        });
    }
    serde_json::from_str(&text).map_err(parse_error)
}

/// Pretty JSON with a trailing newline.
pub fn write(report: &Report, out: &mut impl Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    out.write_all(b"\n")
}

/// Writes the report to `path` so that a reader never sees half of it: into a new file in the
/// same directory (a rename cannot cross file systems), flushed to disk, then renamed over
/// `path`. On failure the old file is left as it was.
pub fn write_file_atomically(path: &Path, report: &Report) -> io::Result<()> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a file path: {}", path.display()),
        )
    })?;
    let (temp_path, file) = create_temp(dir, &name.to_string_lossy())?;
    let written = write_and_sync(file, report).and_then(|()| fs::rename(&temp_path, path));
    if written.is_err() {
        // Best effort: the error that matters is the one returned.
        let _ = fs::remove_file(&temp_path);
    }
    written
}

/// A new file next to the target, with a name no other writer picks.
fn create_temp(dir: &Path, name: &str) -> io::Result<(PathBuf, File)> {
    let mut attempts = 0;
    loop {
        let candidate = dir.join(format!(
            ".{name}.{}.{:08x}.tmp",
            std::process::id(),
            fastrand::u32(..)
        ));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(file) => return Ok((candidate, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 16 => attempts += 1,
            Err(e) => return Err(e),
        }
    }
}

fn write_and_sync(file: File, report: &Report) -> io::Result<()> {
    let mut out = BufWriter::new(file);
    write(report, &mut out)?;
    out.into_inner().map_err(|e| e.into_error())?.sync_all()
}
