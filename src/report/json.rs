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
use crate::metrics::{Aggregates, millis};
use crate::outcome::{CaseResult, CheckResult, RunResult, Status, TurnResult};

/// The version of the report format written by this build.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema_version: u32,
    pub goldgate_version: String,
    /// The agent under test, as it describes itself (never a secret).
    pub agent: String,
    /// The judges configured (empty: LLM-judge checks were skipped).
    pub judges: Vec<String>,
    /// Stopped early: some cases never ran.
    pub incomplete: bool,
    /// What a command agent wrote on stderr (its last 64 KiB), for debugging errors.
    pub agent_log: Option<String>,
    pub aggregates: Aggregates,
    pub cases: Vec<CaseReport>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepeatsReport {
    /// Each run's status, in the order they ran.
    pub runs: Vec<Status>,
    pub passed: u32,
    /// K: the case passes when at least this many runs pass.
    pub min_pass: u32,
    /// passed / runs.
    pub pass_fraction: f64,
    /// The estimated chance that K runs in a row all pass.
    pub pass_hat_k: f64,
    /// The runs disagree.
    pub flaky: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    pub latency: Option<Duration>,
    #[serde(rename = "ttft_ms", with = "millis::option")]
    pub ttft: Option<Duration>,
    pub checks: Vec<CheckReport>,
}

/// The agent's reply, with every field present.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplyReport {
    /// All agent text, messages joined by a newline.
    pub text: String,
    pub messages: Vec<Message>,
    pub tool_calls: Vec<ToolCall>,
    pub transfer: Option<Transfer>,
    pub handoff: Option<Handoff>,
    pub error: Option<ReplyError>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    pub label: String,
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

/// The report of a run.
pub fn build(result: &RunResult, aggregates: &Aggregates) -> Report {
    Report {
        schema_version: SCHEMA_VERSION,
        goldgate_version: env!("CARGO_PKG_VERSION").to_owned(),
        agent: result.agent.clone(),
        agent_log: result.agent_log.clone(),
        judges: result.judges.clone(),
        incomplete: result.incomplete,
        aggregates: aggregates.clone(),
        cases: result.cases.iter().map(case_report).collect(),
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
        repeats: None,
        turns: result.turns.iter().map(turn_report).collect(),
        checks: result.checks.iter().map(check_report).collect(),
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
        line: check.location.line,
        status: check.status,
        expected: check.expected.clone(),
        actual: check.actual.clone(),
        method: check.method.describe(),
        score: check.score,
        reason: check.reason.clone(),
    }
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
