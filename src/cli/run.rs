//! `goldgate run`'s flags: the agent, execution, outputs and the LLM judge, beside the suite,
//! selection, gate and GitHub flags it shares with other commands.

use std::path::PathBuf;

use clap::Args;
use goldgate::config::RunSettings;
use goldgate::llm::cache;

use super::values::{at_least_one, from_run_settings, parse_duration, parse_usd};
use super::{GithubArgs, HTML_HELP, OptInGateArgs, SuiteArgs, subset};

/// `goldgate run`: discover, play, score, report.
///
/// The agent comes from `goldgate.yaml` (in the current directory, or `--config`), or from
/// `--agent-url` / `--agent-cmd`. Flags override the file's `run:` settings.
#[derive(Debug, Args)]
#[command(after_help = RUN_AFTER_HELP)]
pub struct RunArgs {
    #[command(flatten)]
    pub suite: SuiteArgs,

    #[command(flatten)]
    pub selection: subset::RunSelectionArgs,

    /// Test the agent at this `http://` or `https://` URL (the HTTP protocol), instead of the
    /// config's agent; when the config's agent is an HTTP template, only its URL is replaced
    /// [env: GOLDGATE_AGENT_URL, which --agent-cmd overrides too].
    #[arg(
        long,
        value_name = "URL",
        help_heading = "Agent",
        conflicts_with = "agent_cmd"
    )]
    pub agent_url: Option<String>,

    /// Test this command (JSON lines on stdin/stdout), instead of the config's agent.
    #[arg(long, value_name = "CMD", help_heading = "Agent")]
    pub agent_cmd: Option<String>,

    /// Time a command agent may take to answer its start-up ping, building included, timed
    /// apart from the turns [default: 10m, or the config's `startup_timeout`].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, help_heading = "Agent")]
    pub startup_timeout: Option<std::time::Duration>,

    #[arg(
        long,
        value_name = "N",
        help_heading = "Execution",
        value_parser = at_least_one,
        help = from_run_settings("Conversations with the agent at once", RunSettings::default().concurrency)
    )]
    pub concurrency: Option<usize>,

    #[arg(
        long,
        value_name = "DURATION",
        value_parser = parse_duration,
        help_heading = "Execution",
        help = from_run_settings(
            "Time allowed for one turn's complete reply, e.g. `30s`, `500ms`",
            format_args!("{}s", RunSettings::default().timeout.as_secs_f64())
        )
    )]
    pub timeout: Option<std::time::Duration>,

    #[arg(
        long,
        value_name = "N",
        help_heading = "Execution",
        help = from_run_settings(
            "Retries of a turn after a connection error, a 5xx or a 429",
            RunSettings::default().retries
        )
    )]
    pub retries: Option<u32>,

    /// The most a request waits on rate limits in all (a 429 or 503 with `Retry-After`); a
    /// server asking for more than is left ends the turn at once as an error. Such waits do
    /// not count against --retries [default: 5m].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, help_heading = "Execution")]
    pub rate_limit_wait: Option<std::time::Duration>,

    /// Do not fail a turn for tool calls the golden does not list.
    #[arg(long, help_heading = "Execution")]
    pub allow_extra_tool_calls: bool,

    /// Record every case's transcript in DIR, to replay later with `agent: { replay: DIR }`.
    #[arg(long, value_name = "DIR", help_heading = "Execution")]
    pub record: Option<PathBuf>,

    /// Ask the judge every time: neither read nor write the judge cache (wins over --cache-dir).
    #[arg(long, help_heading = "Judge")]
    pub no_cache: bool,

    #[arg(
        help = format!(
            "Keep the judge's answers in DIR [env: GOLDGATE_CACHE_DIR] [default: {}]",
            cache::DEFAULT_DIR
        ),
        long,
        value_name = "DIR",
        help_heading = "Judge"
    )]
    pub cache_dir: Option<PathBuf>,

    /// Print the JSON report on stdout (the table goes to stderr), or into --output.
    #[arg(long, help_heading = "Output")]
    pub json: bool,

    /// Write the JSON report to FILE.
    #[arg(long, short = 'o', value_name = "FILE", help_heading = "Output")]
    pub output: Option<PathBuf>,

    /// Write JUnit XML to FILE (one testsuite per golden file, one testcase per case).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub junit: Option<PathBuf>,

    #[arg(long, value_name = "FILE", help_heading = "Output", long_help = HTML_HELP)]
    /// Write the HTML report to FILE: one self-contained page to open in a browser or keep as
    /// a CI artifact.
    pub html: Option<PathBuf>,

    /// Leave testcase `file` and `line` out of the JUnit XML: they are outside Jenkins' and
    /// Surefire's schemas, which strict validators (Jenkins' xUnit plugin) enforce. GitLab and
    /// action-junit-report read them to link and annotate the failing line.
    #[arg(long, requires = "junit", help_heading = "Output")]
    pub junit_strict: bool,

    /// Run each case N times, in independent sessions.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        help_heading = "Execution"
    )]
    pub repeat: u32,

    /// With --repeat: a case passes when at least K of its runs pass [default: all N].
    #[arg(long, value_name = "K", help_heading = "Execution")]
    pub min_pass: Option<u32>,

    /// With --baseline: adaptive repeats. Run each case --repeat times, then rerun only what
    /// the gate cannot decide yet (a case that looks worse but could be noise; every case
    /// when a metric is undecided), doubling the runs up to N per case. On by default with a
    /// baseline, up to 8 runs a case (or --repeat, when higher); `--max-repeat 1` turns it off.
    #[arg(
        long,
        value_name = "N",
        requires = "baseline",
        value_parser = clap::value_parser!(u32).range(1..),
        help_heading = "Execution"
    )]
    pub max_repeat: Option<u32>,

    /// Stop scheduling cases once the run has spent USD dollars (the agent's replies, judges
    /// and simulated users, at the price table's or `prices:` prices). The cases in flight
    /// finish; every report is written, marked incomplete with what was spent, and goldgate
    /// exits 2. Overrides `run.budget` in goldgate.yaml.
    #[arg(long, value_name = "USD", value_parser = parse_usd, help_heading = "Execution")]
    pub budget: Option<f64>,

    /// Print what the run would play (cases, agent requests, judge questions at most, and
    /// the cost by the `--baseline`'s cost per case) and call nothing: no agent, no model.
    #[arg(long, help_heading = "Execution")]
    pub dry_run: bool,

    /// Errors of the run tolerated before exiting 2.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        help_heading = "Execution"
    )]
    pub max_errors: usize,

    /// Write the report as the new baseline to FILE (atomically, stable key order).
    #[arg(long, value_name = "FILE", help_heading = "Regression gate")]
    pub update_baseline: Option<PathBuf>,

    /// With --update-baseline: write even from an incomplete run or one with errors.
    #[arg(long, requires = "update_baseline", help_heading = "Regression gate")]
    pub force: bool,

    /// With --update-baseline: start the baseline's history over instead of folding in the
    /// previous baseline's (per-case runs and latencies of the last 20 builds).
    #[arg(long, requires = "update_baseline", help_heading = "Regression gate")]
    pub no_history: bool,

    #[command(flatten)]
    pub gate: OptInGateArgs,

    #[command(flatten)]
    pub github: GithubArgs,
}

const RUN_AFTER_HELP: &str = "\
Examples:
  goldgate run evals/                                  agent from ./goldgate.yaml
  goldgate run --agent-url http://127.0.0.1:8080/turn evals/
  goldgate run --agent-cmd './my-agent --stdio' --filter P0 --junit junit.xml
  goldgate run --json --output report.json evals/

Exit codes: 0 all passed; 1 a case failed; 2 a file does not load, the agent errored or
was unreachable, or the run was interrupted.";
