//! What `run` and `list` were asked, as plain data: one field per flag, as typed (a flag left
//! out is `None`), with no parser behind it. [`super::plan::resolve`] turns a request, the
//! config and the environment ([`Env`]) into the run's plan; a front end only fills these in.

use std::path::PathBuf;
use std::time::Duration;

use crate::results::Status;

/// Everything `run` was asked (`list` asks [`Request::paths`], [`Request::config`] and
/// [`Request::selection`] only, and leaves the rest at its default).
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// Files or directories holding goldens.
    pub paths: Vec<PathBuf>,
    /// `--config` (or `GOLDGATE_CONFIG`, which every command reads alike): the suite's name.
    pub config: Option<PathBuf>,
    pub selection: SelectionRequest,
    pub agent: AgentRequest,
    pub execution: Execution,
    pub judge: JudgeRequest,
    pub gate: GateRequest,
    /// The files the run writes (`--output`, `--junit`, `--markdown`, `--html`,
    /// `--update-baseline`), each checked writable before anything is played.
    pub writes: Vec<Output>,
}

/// A file the run writes, and the flag that asked for it (errors name the flag).
#[derive(Clone, Debug)]
pub struct Output {
    pub flag: &'static str,
    pub path: PathBuf,
}

/// Which cases are played: `--filter`, `--exclude`, `--name`, `--shard`, `--changed-since`,
/// `--rerun` with `--only`.
#[derive(Clone, Debug, Default)]
pub struct SelectionRequest {
    /// Tag expressions, as typed.
    pub filters: Vec<String>,
    pub excludes: Vec<String>,
    pub name: Option<String>,
    /// `K/N`, as typed.
    pub shard: Option<String>,
    pub changed_since: Option<String>,
    pub rerun: Option<RerunRequest>,
}

/// `--rerun REPORT --only STATUS`.
#[derive(Clone, Debug)]
pub struct RerunRequest {
    pub report: PathBuf,
    /// The statuses to replay (`--only`; both failed and errored when not given).
    pub only: Vec<Status>,
}

/// The agent the flags name: `--agent-url`, `--agent-cmd`, `--startup-timeout`.
#[derive(Clone, Debug, Default)]
pub struct AgentRequest {
    pub url: Option<String>,
    pub command: Option<String>,
    pub startup_timeout: Option<Duration>,
}

/// How the cases are played.
#[derive(Clone, Debug)]
pub struct Execution {
    pub concurrency: Option<usize>,
    pub timeout: Option<Duration>,
    pub retries: Option<u32>,
    /// `--rate-limit-wait`.
    pub rate_limit_wait: Option<Duration>,
    pub allow_extra_tool_calls: bool,
    /// `--record DIR`.
    pub record: Option<PathBuf>,
    pub repeat: u32,
    pub min_pass: Option<u32>,
    pub max_repeat: Option<u32>,
    /// `--budget USD`.
    pub budget: Option<f64>,
    pub max_errors: usize,
}

impl Default for Execution {
    fn default() -> Self {
        Self {
            concurrency: None,
            timeout: None,
            retries: None,
            rate_limit_wait: None,
            allow_extra_tool_calls: false,
            record: None,
            repeat: 1,
            min_pass: None,
            max_repeat: None,
            budget: None,
            max_errors: 0,
        }
    }
}

/// `--no-cache`, `--cache-dir`.
#[derive(Clone, Debug, Default)]
pub struct JudgeRequest {
    pub no_cache: bool,
    pub cache_dir: Option<PathBuf>,
}

/// The regression gate's flags, shared by `run`, `compare`, `merge` and `report`.
#[derive(Clone, Debug)]
pub struct GateRequest {
    pub baseline: Option<PathBuf>,
    pub fail_on_regress: bool,
    pub fail_on_inconclusive: bool,
    pub regression_config: Option<PathBuf>,
    /// A fraction (`--false-alarm-rate 1` is 0.01).
    pub false_alarm_rate: f64,
}

impl Default for GateRequest {
    fn default() -> Self {
        Self {
            baseline: None,
            fail_on_regress: false,
            fail_on_inconclusive: false,
            regression_config: None,
            false_alarm_rate: DEFAULT_FALSE_ALARM_RATE,
        }
    }
}

/// `--false-alarm-rate` when not given: 1%.
pub const DEFAULT_FALSE_ALARM_RATE: f64 = 0.01;

/// The environment variables that stand in for a flag not given (`GOLDGATE_*`), read once so
/// that resolving a plan reads no process-wide state.
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// `GOLDGATE_AGENT_URL`, for `--agent-url`.
    pub agent_url: Option<String>,
    /// `GOLDGATE_CACHE_DIR`, for `--cache-dir`.
    pub cache_dir: Option<PathBuf>,
    /// The files GitHub has a step append to (`GITHUB_STEP_SUMMARY`, `GITHUB_OUTPUT`), by
    /// the variable that names each.
    pub github_files: Vec<(&'static str, PathBuf)>,
}

impl Env {
    /// The variables as this process has them; an empty one counts as unset.
    pub fn from_process() -> Self {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        Self {
            agent_url: var("GOLDGATE_AGENT_URL").map(|v| v.to_string_lossy().into_owned()),
            cache_dir: var("GOLDGATE_CACHE_DIR").map(PathBuf::from),
            github_files: ["GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"]
                .into_iter()
                .filter_map(|name| Some((name, PathBuf::from(var(name)?))))
                .collect(),
        }
    }
}
