//! The results of a run: one typed model, built by the runner and the scorers, read by the
//! gate, `merge` and every sink, and written as is by the JSON sink (it is the JSON report,
//! and a committed report is the baseline).
//!
//! Because the baseline is committed and reviewed in diffs, the serialized form is kept stable
//! and quiet: keys in struct order, every key always present (`null` when absent), statuses
//! as lowercase words, durations as whole milliseconds, paths as the user gave them, and no
//! timestamps or host names. [`SCHEMA_VERSION`] changes when a field changes meaning or goes
//! away, so that a reader can refuse a baseline it would misread.

mod aggregates;
mod clip;
mod comparison;
mod cost;
mod history;
pub mod json;
mod mask;
mod method;
pub mod millis;
mod repeats;
mod reply;
#[cfg(feature = "schema")]
pub mod schema;
mod scope;
mod sight;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod verdict;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use aggregates::{Aggregates, Counts, Percentiles, RateLimitWaits, ToolLatency, ratio};
pub use clip::{Cut, ITEMS_KEPT, char_start_before};
pub use comparison::{
    CaseFlip, CasesCombined, Comparison, DEFAULT_FALSE_ALARM_RATE, Decision, Evidence, Measure,
    MetricDelta, Test, Threshold, Unit, beyond,
};
pub use cost::{Budget, JudgeUsage, Spending};
pub use history::{Samples, TurnTimes};
pub use mask::mask_reply;
pub use method::Method;
pub use repeats::{Repeats, pass_hat_k};
pub use scope::{Scope, ScopeReason};
pub use sight::{MetricSight, Sight};
pub use verdict::{FloorResult, Policy, Verdict};

use crate::model::{Case, CaseKind, Format};
use crate::shard::SuiteId;
use crate::transcript::{Reply, Usage};

/// The version of the report format written by this build.
pub const SCHEMA_VERSION: u32 = 1;

/// The verdict of one check, turn or case. Ordered from best to worst so that the status of a
/// whole is the maximum of its parts (skipped parts do not count). Written as a lowercase word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Skipped,
    Passed,
    Failed,
    /// The run could not judge: the agent was unreachable, timed out, or a judge failed.
    Error,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Error => "error",
            Status::Skipped => "skipped",
        }
    }

    /// The status of a whole from its parts: the worst part, skipped only when all are.
    pub fn combine(parts: impl IntoIterator<Item = Status>) -> Status {
        parts.into_iter().fold(Status::Skipped, Status::max)
    }

    /// Failed, or could not be judged: what reports list and annotate.
    pub fn is_bad(self) -> bool {
        matches!(self, Status::Failed | Status::Error)
    }

    /// Passed or failed: a verdict was reached.
    pub fn is_judged(self) -> bool {
        matches!(self, Status::Passed | Status::Failed)
    }
}

/// What a check is about. Labels are for people and may change; this is for machines: the
/// aggregates are computed from it, so that they can be recomputed from a saved report alone
/// (`goldgate merge`). Written as a kebab-case word; a new variant is a new word, never a
/// renamed one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum CheckCategory {
    /// A turn's expected agent text, or a scorer over the messages (`message-contains`,
    /// `message-matches-regex`, `final-message-equals`).
    AgentText,
    /// The agent had to say nothing (`# silent`, SCRAPI's UNEXPECTED RESPONSE).
    Silence,
    /// An expected tool call: a turn's, or the `tool-called` and `tool-called-with-input`
    /// scorers. Tool-call accuracy counts these.
    ToolCall,
    /// A call no expectation asked for, or the `no-tool-called` scorer.
    UnexpectedToolCall,
    /// The graded `tool-call-accuracy` scorer.
    ToolCallAccuracy,
    ToolResponse,
    Transfer,
    /// `handoff-triggered`, `no-handoff`.
    Handoff,
    /// `error-code`, `no-error`: what the agent reported as its own error.
    AgentError,
    /// `latency-p50-under`, `latency-p95-under`.
    Latency,
    /// `llm-judge-not-hallucinating`. The hallucination rate counts these.
    Hallucination,
    /// `llm-judge-helpfulness`.
    Helpfulness,
    /// `llm-judge-tone-matches`.
    Tone,
    /// A free-text criterion an LLM judge checks (SCRAPI `expectations`).
    Criterion,
    /// A graded Regtrace metric.
    Metric,
    /// A check on a directly executed tool's result (SCRAPI tool tests).
    ToolResult,
}

/// One expectation or case-level check, judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CheckResult {
    /// What was checked, for people: `agent text`, `tool call lookup_order`, `no-handoff`.
    pub label: String,
    /// What the check is about (`agent-text`, `tool-call`, `hallucination`, ...): the
    /// aggregates are computed from it.
    pub category: CheckCategory,
    /// Where the expectation was written, in the case's file.
    pub line: u32,
    pub status: Status,
    pub expected: String,
    pub actual: String,
    /// How it was judged: `exact`, `local-similarity`, `judge:anthropic/claude-sonnet-4-6`,
    /// `none`.
    pub method: Method,
    /// A graded score in `0..=1` where the method gives one.
    pub score: Option<f64>,
    /// Why it failed or was skipped.
    pub reason: Option<String>,
}

impl CheckResult {
    /// A check that was not judged, saying why (its case could not be played).
    pub fn skipped(
        (label, category): (String, CheckCategory),
        line: u32,
        expected: String,
        reason: &str,
    ) -> CheckResult {
        CheckResult {
            label,
            category,
            line,
            status: Status::Skipped,
            expected,
            actual: String::new(),
            method: Method::None,
            score: None,
            reason: Some(reason.to_owned()),
        }
    }
}

/// One turn of a case, played and judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TurnResult {
    /// 1-based.
    pub index: usize,
    pub line: u32,
    pub status: Status,
    /// The user side of the turn, as text for reports.
    pub input: String,
    /// How many attempts the turn took (1 when the first one answered).
    pub attempts: u32,
    /// The error of the run that stopped this turn.
    pub error: Option<String>,
    /// What the agent did; `null` when the turn could not be played. Written with every
    /// field present and the text of all messages joined (see [`reply`]).
    #[serde(with = "reply::report")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<reply::ReplyRecord>"))]
    pub reply: Option<Reply>,
    /// What the report left out of the reply (see [`Cut`]); absent when nothing was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<Cut>,
    #[serde(rename = "latency_ms", with = "millis::option")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<u64>"))]
    pub latency: Option<Duration>,
    #[serde(rename = "ttft_ms", with = "millis::option")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<u64>"))]
    pub ttft: Option<Duration>,
    pub checks: Vec<CheckResult>,
}

/// One case: its identity, verdict, turns and conversation-level checks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CaseResult {
    pub id: String,
    pub name: String,
    /// The golden file, relative to its project root with `/` separators
    /// (`goldgate::project`): the same whatever directory goldgate ran in. Text rather than a
    /// path so that a name that is not UTF-8 cannot fail the report.
    pub file: String,
    pub line: u32,
    /// The format it was written in: `scrapi`, `ces-csv`, `scenario`, `regtrace`.
    pub format: Format,
    /// `conversation`, `simulation` or `tool-test`. Absent from older reports: conversation.
    #[serde(default)]
    pub kind: CaseKind,
    pub tags: Vec<String>,
    pub weight: f64,
    pub status: Status,
    /// Share of passed checks, in `0..=1` (the mean metric score for graded cases).
    pub score: f64,
    #[serde(rename = "duration_ms", with = "millis")]
    #[cfg_attr(feature = "schema", schemars(with = "u64"))]
    pub duration: Duration,
    /// The error of the run that stopped the case; for a skipped case that ran (a simulation
    /// whose expectations could not be graded), why it could not be judged.
    pub error: Option<String>,
    pub usage: Usage,
    /// With `--repeat N`: how the case's independent runs went; `null` for a single run.
    pub repeats: Option<Repeats>,
    pub turns: Vec<TurnResult>,
    /// Checks over the whole conversation.
    pub checks: Vec<CheckResult>,
    /// In a baseline: the case's runs in earlier builds of main, oldest first (see
    /// `goldgate::gate::baseline`); empty in the report of a run.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Vec<serde_json::Value>"))]
    pub history: Vec<crate::stats::Tally>,
    /// Every turn's latency and TTFT of every run of the case (a conversation's), which the
    /// gate compares case by case; in a baseline, those of the recent builds of main. Absent
    /// from older reports and for cases that timed nothing.
    #[serde(default, skip_serializing_if = "TurnTimes::is_empty")]
    pub turn_times: TurnTimes,
    /// The quarantine entry naming this case (`quarantine:` in goldgate.yaml), if any: while
    /// it runs, the case is reported but never fails the run.
    #[serde(default)]
    pub quarantine: Option<Quarantine>,
}

/// A case a team has said must not block, with who owns it, why, and until when.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Quarantine {
    pub owner: String,
    pub reason: String,
    /// The last day it holds, `YYYY-MM-DD`.
    pub expires: String,
    /// The date has passed: the case blocks again, and reports say so.
    pub expired: bool,
}

impl Quarantine {
    /// For people: `quarantined until 2026-12-31 by @maria: flaky upstream`, or that it
    /// expired and blocks again.
    pub fn describe(&self) -> String {
        let state = if self.expired {
            format!("quarantine expired {} (blocks again)", self.expires)
        } else {
            format!("quarantined until {}", self.expires)
        };
        format!("{state}, owner {}: {}", self.owner, self.reason)
    }
}

impl TurnResult {
    /// Turn `index` (from 1), passed, that took `latency`, with nothing else recorded: a
    /// simulated turn.
    pub fn timed(index: usize, latency: Duration) -> TurnResult {
        TurnResult {
            index,
            line: 1,
            status: Status::Passed,
            input: String::new(),
            attempts: 1,
            error: None,
            reply: None,
            cut: None,
            latency: Some(latency),
            ttft: None,
            checks: Vec::new(),
        }
    }
}

impl CaseResult {
    /// `case` as a result knows it (id, name, file, line, format, tags, weight), with nothing
    /// played or judged yet: skipped, no turns, no checks.
    pub fn of(case: &Case) -> CaseResult {
        CaseResult {
            id: case.id.clone(),
            name: case.name.clone(),
            file: case.location.file.to_string_lossy().into_owned(),
            line: case.location.line,
            format: case.format,
            kind: case.kind(),
            tags: case.tags.clone(),
            weight: case.weight,
            status: Status::Skipped,
            score: 0.0,
            duration: Duration::ZERO,
            error: None,
            usage: Usage::default(),
            repeats: None,
            turns: Vec::new(),
            checks: Vec::new(),
            history: Vec::new(),
            turn_times: TurnTimes::default(),
            quarantine: None,
        }
    }

    /// Quarantined by an entry that has not expired: it never fails the run.
    pub fn is_quarantined(&self) -> bool {
        self.quarantine.as_ref().is_some_and(|q| !q.expired)
    }

    /// The quarantine entry that named the case and has expired: it blocks again, and the
    /// reports say why.
    pub fn expired_quarantine(&self) -> Option<&Quarantine> {
        self.quarantine.as_ref().filter(|q| q.expired)
    }

    /// The key the case is matched by across reports: its file (normalised) and id
    /// ([`crate::shard::key`]).
    pub fn key(&self) -> String {
        crate::shard::key(&self.file, &self.id)
    }

    /// Every check of the case, turn checks first.
    pub fn all_checks(&self) -> impl Iterator<Item = &CheckResult> {
        self.turns
            .iter()
            .flat_map(|t| &t.checks)
            .chain(&self.checks)
    }

    /// A conversation, scripted or simulated: its turns count towards turn latency, TTFT and
    /// deflection. A tool test's one execution is not a turn of a conversation: its latency is
    /// reported apart ([`Aggregates::tool_latency`]) and never gated.
    pub fn is_conversation(&self) -> bool {
        self.kind != CaseKind::ToolTest
    }

    /// Whether the case ended without a hand-off to a person: `None` when it does not count
    /// towards deflection (not a conversation, or the agent never answered). The one rule the
    /// aggregates and the gate's deflection test both read.
    pub fn deflected(&self) -> Option<bool> {
        let played = self.turns.iter().any(|t| t.reply.is_some());
        let handed_off = self
            .turns
            .iter()
            .any(|t| t.reply.as_ref().is_some_and(|r| r.handoff().is_some()));
        (self.is_conversation() && played).then_some(!handed_off)
    }

    /// Why the case was not judged: its error, else the first reason a check gives.
    pub fn skip_reason(&self) -> Option<&str> {
        self.error
            .as_deref()
            .or_else(|| self.all_checks().find_map(|c| c.reason.as_deref()))
    }

    /// `file:line`, for people.
    pub fn location(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

/// Everything a run produced: the JSON report, and the baseline the gate compares against.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Report {
    pub schema_version: u32,
    pub goldgate_version: String,
    /// The agent under test, as it describes itself (never a secret).
    pub agent: String,
    /// Which cases this report covers: the suite's fingerprint and size, and the shard.
    pub suite: SuiteId,
    /// Part of the suite only, and why (`--changed-since`, `--rerun`); `null`: every case.
    #[serde(default)]
    pub scope: Option<Scope>,
    /// The judges configured (empty: LLM-judge checks were skipped).
    pub judges: Vec<String>,
    /// What each judge that answered cost: calls to its provider, answers read from the judge
    /// cache, tokens. Absent from reports older than the judges.
    #[serde(default)]
    pub judge_usage: Vec<JudgeUsage>,
    /// Stopped early: some cases never ran.
    pub incomplete: bool,
    /// The most the run could spend (`--budget`), and whether it stopped there. Absent
    /// without a budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// How many cases may end in an error of the run before the run itself is an error
    /// (`--max-errors`), so that every command reading this report exits as the run did.
    /// Absent from older reports: 0.
    #[serde(default)]
    pub max_errors: usize,
    /// What decides the exit code besides the errors (`--fail-on-regress`,
    /// `--fail-on-inconclusive`), so that every command reading this report exits as the run
    /// did. Absent from older reports: failing cases decide.
    #[serde(default)]
    pub policy: Policy,
    /// What a command agent wrote on stderr (its last 64 KiB), for debugging errors.
    pub agent_log: Option<String>,
    /// How long the agent took to start and answer its start-up ping (command agents), timed
    /// apart from every turn's latency. Absent from older reports.
    #[serde(rename = "agent_startup_ms", default, with = "millis::option")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<u64>"))]
    pub agent_startup: Option<Duration>,
    /// Each endpoint (the agent, a judge provider) that answered 429 or 503: how often, and how
    /// long its requests were paused for it. Empty when none did; absent from older reports.
    #[serde(default)]
    pub rate_limits: Vec<RateLimitWaits>,
    pub aggregates: Aggregates,
    /// The metrics this run could not measure, and why (an agent that cannot report a
    /// handoff has no deflection rate): left out of `aggregates`, so that a threshold on one
    /// reads "not measured", never "unchanged". Absent from older reports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmeasured: Vec<Unmeasured>,
    /// The latencies the gate's tests compare (every turn of every run).
    #[serde(default)]
    pub samples: Samples,
    /// The share of the gate's false-alarm rate that its decisions on this report spend: 1,
    /// or with adaptive repeats (`--max-repeat`) the share of the last look made (the looks
    /// share the rate: a fortieth for each look before the last, the rest for the last).
    #[serde(default = "whole")]
    pub alpha_share: f64,
    /// The comparison with `--baseline`; `null` without one.
    pub gate: Option<Comparison>,
    /// The floors the whole run had to clear (`floors:`, Regtrace's `quality_gates`), checked.
    #[serde(default)]
    pub floors: Vec<FloorResult>,
    pub cases: Vec<CaseResult>,
}

fn whole() -> f64 {
    1.0
}

/// A metric a run could not measure, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Unmeasured {
    /// The threshold whose metric it is.
    pub metric: Threshold,
    /// For people: `the agent cannot report a handoff (...)`.
    pub why: String,
}

impl Report {
    /// A report of `cases` alone, as a simulation plays them (`goldgate calibrate`): no
    /// agent, judges, budget, scope or gate; the aggregates computed from the cases.
    pub fn of_cases(cases: Vec<CaseResult>) -> Report {
        Report {
            schema_version: SCHEMA_VERSION,
            goldgate_version: String::new(),
            agent: String::new(),
            suite: SuiteId::of([], None),
            scope: None,
            judges: Vec::new(),
            judge_usage: Vec::new(),
            budget: None,
            incomplete: false,
            max_errors: 0,
            policy: Policy::default(),
            agent_log: None,
            agent_startup: None,
            rate_limits: Vec::new(),
            aggregates: Aggregates::of(&cases),
            unmeasured: Vec::new(),
            samples: Samples::default(),
            alpha_share: 1.0,
            gate: None,
            floors: Vec::new(),
            cases,
        }
    }

    /// Why `metric` was not measured in this run, when the run knows.
    pub fn why_unmeasured(&self, metric: Threshold) -> Option<&str> {
        self.unmeasured
            .iter()
            .find(|u| u.metric == metric)
            .map(|u| u.why.as_str())
    }

    /// The cases that ended in an error of the run.
    pub fn errored(&self) -> impl Iterator<Item = &CaseResult> {
        self.cases.iter().filter(|c| c.status == Status::Error)
    }

    /// More cases errored than `max_errors` allows.
    pub fn too_many_errors(&self) -> bool {
        self.errored().count() > self.max_errors
    }
}
