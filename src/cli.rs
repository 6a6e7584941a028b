//! Command-line definitions only: raw flags, parsed by clap. `main.rs` turns them into calls.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use values::false_alarm_rate;

mod calibrate;
mod request;
mod run;
pub mod subset;
mod values;

pub use calibrate::CalibrateArgs;
pub use run::RunArgs;
const AFTER_HELP: &str = "\
Exit codes (every command):
  0  everything passed (warnings allowed)
  1  a test failed, a lint error was found, or a regression threshold tripped
  2  the run could not be judged: bad arguments, unreadable files, no agent

Formats: SCRAPI golden YAML (conversations:), SCRAPI simulations (evals:), turn evals and tool tests
(tests:), CES golden CSV (display_name,turn_index,action_type), gecx *.scenario.yaml (id/when/then),
Regtrace golden sets (test_cases:) and regtrace.config.yaml.";

/// Gate pull requests on conversation tests for AI agents.
///
/// goldgate finds golden conversations and scenarios in a repository, plays them against the
/// agent under test, scores every turn, compares the run with a committed baseline and
/// reports to the terminal, JSON, JUnit and GitHub.
#[derive(Debug, Parser)]
#[command(name = "goldgate", version, about, long_about, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Discover, run, score and report: the main job.
    #[command(visible_alias = "eval")]
    Run(Box<RunArgs>),
    /// Check golden files without calling any agent; every problem, with file and line.
    ///
    /// Directories are walked (honouring .gitignore) for *.scenario.yaml, *.scenario.ts,
    /// YAML under goldens/ or named *.golden.yaml, *.golden.csv or CSV under goldens/, and
    /// regtrace.config.yaml with the golden sets it lists. Files named here are read whatever
    /// their name, the format told from their content.
    ///
    /// Each problem prints as `file:line: error|warning [CODE] field: message (hint)`. Codes
    /// E001-E011 are SCRAPI's linter rules; G100 and above are goldgate's own.
    Lint(LintArgs),
    /// Apply the regression gate to a saved report against a baseline; no agent is called.
    ///
    /// The gate always decides the exit code: 1 only for a regression beyond noise (with
    /// --fail-on-inconclusive, also for a comparison still undecided), as in a gated run.
    Compare(CompareArgs),
    /// Measure what the gate can see on your own suite: false alarms and the power to catch
    /// planted regressions.
    ///
    /// The baseline's recorded runs (each golden's pass rate over its history, its turns and
    /// latencies) model the agent, which is replayed as pull requests through the real gate
    /// and exit rule with the default flags: unchanged, then with one golden broken, five
    /// goldens 30% wrong, the pass rate 10 points down, and every turn 1.2x, 1.5x and 2x
    /// slower. Prints the share of PRs each turns red, with its one-sided 95% bound, and the
    /// agent calls a PR costs. Exits 1 when the unchanged agent went red more often than the
    /// false-alarm rate allows beyond noise. No agent is called.
    Calibrate(CalibrateArgs),
    /// Join shard reports (`run --shard K/N`) into one report, aggregates recomputed.
    Merge(MergeArgs),
    /// Render outputs (JUnit, HTML, Markdown, PR comment) from a saved JSON report.
    ///
    /// Lets a trusted workflow comment on a pull request for an untrusted one (forks): the
    /// untrusted job uploads its report, the trusted one runs `goldgate report REPORT --comment`.
    Report(ReportArgs),
    /// List the cases a run would play, by file, without calling any agent.
    ///
    /// Takes `run`'s paths and selection flags (`--filter`, `--name`, `--shard`, `--changed-since`)
    /// and selects exactly as `run` does. `--json` prints one JSON document (docs/reference.md).
    List(ListArgs),
    /// Convert a golden file to SCRAPI YAML, CES CSV or gecx scenario YAML.
    ///
    /// Every construct with a counterpart in the target converts; each one without is a warning
    /// naming its file and line, never dropped silently. The output is written atomically and
    /// never over the input.
    Convert(ConvertArgs),
    /// Print the JSON Schema of a file kind: goldgate.yaml, the report, or a golden format.
    #[command(after_help = goldgate::schema::KINDS_HELP)]
    Schema(SchemaArgs),
    /// Start testing your own agent: write a commented goldgate.yaml, one golden and a GitHub
    /// workflow.
    ///
    /// The workflow gates pull requests against evals/baseline.json and, on main, updates the
    /// baseline and commits it back, which keeps the history the gate needs to tell noise from
    /// a regression. Nothing is ever overwritten: when one of the files exists, nothing is
    /// written.
    Init(InitArgs),
}

/// [`GateArgs`] and `--fail-on-regress`, for `run`, `report` and `merge`, whose gate decides
/// the exit code only when asked. `compare`'s always does: it has no such flag to offer.
#[derive(Debug, Args)]
pub struct OptInGateArgs {
    /// Let the gate decide the exit code: 1 only for a regression beyond noise (a threshold
    /// tripped; a case that passed on main failing beyond noise, or in every run when the
    /// baseline holds one run; a new case failing). Known failures (failing on main too),
    /// quarantined cases and undecided comparisons are reported, never fail the run.
    #[arg(long, requires = "baseline", help_heading = "Regression gate")]
    pub fail_on_regress: bool,

    #[command(flatten)]
    pub gate: GateArgs,
}

/// The regression gate's flags, shared by `run`, `report`, `merge` and `compare`.
#[derive(Debug, Args)]
pub struct GateArgs {
    /// A previous JSON report to compare with (the committed baseline).
    #[arg(long, value_name = "FILE", help_heading = "Regression gate")]
    pub baseline: Option<PathBuf>,

    /// When the gate decides the exit code (always in `compare`, elsewhere when asked to): also
    /// exit 1 when a comparison is still undecided after the adaptive repeats (inconclusive,
    /// or not enough runs).
    #[arg(long, requires = "baseline", help_heading = "Regression gate")]
    pub fail_on_inconclusive: bool,

    /// Thresholds from this file (JSON or YAML: `regressionThresholds` or top-level keys),
    /// over goldgate.yaml's `thresholds` and gecx's eval.config.json.
    #[arg(long, value_name = "FILE", help_heading = "Regression gate")]
    pub regression_config: Option<PathBuf>,

    /// The most often, in percent, an unchanged agent may trip the gate, over the whole
    /// suite. Lower means fewer false alarms and more runs needed to show a real regression.
    #[arg(
        long,
        value_name = "PCT",
        // In percent, as typed: the library's default is a fraction.
        default_value_t = 100.0 * goldgate::app::request::DEFAULT_FALSE_ALARM_RATE,
        value_parser = false_alarm_rate,
        help_heading = "Regression gate"
    )]
    pub false_alarm_rate: f64,
}

/// `--config FILE`: the one declaration of it, flattened into every command that reads
/// goldgate.yaml, so that all of them find and name the config alike.
#[derive(Debug, Args)]
pub struct ConfigArg {
    /// The config file: the agent, thresholds, judge and the rest (default: ./goldgate.yaml
    /// when it exists). A file named here must exist and load.
    #[arg(long = "config", value_name = "FILE", env = "GOLDGATE_CONFIG")]
    pub path: Option<PathBuf>,
}

impl ConfigArg {
    pub fn path(&self) -> Option<&std::path::Path> {
        self.path.as_deref()
    }
}

/// Where the goldens and the config are, shared by `run` and `list` so that both load alike.
#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// Files or directories holding goldens and scenarios.
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,

    #[command(flatten)]
    pub config: ConfigArg,
}

/// Which cases are played, shared by `run` and `list` so that both select alike.
#[derive(Debug, Args)]
pub struct SelectionArgs {
    /// Only cases with this tag, or matching this tag expression: tags joined by `and`, `or`,
    /// `not` and parentheses, e.g. `P0 and not slow` (repeatable: any of them).
    #[arg(long = "filter", value_name = "EXPR", help_heading = "Selection")]
    pub filters: Vec<String>,

    /// Leave out cases with this tag, whatever --filter says (repeatable).
    #[arg(long = "exclude", value_name = "TAG", help_heading = "Selection")]
    pub excludes: Vec<String>,

    /// Only cases whose id or name matches this glob, e.g. `order_*`.
    #[arg(long, value_name = "GLOB", help_heading = "Selection")]
    pub name: Option<String>,

    /// Only shard K of N (e.g. `2/3`); cases are split by a stable hash of their file and id.
    #[arg(long, value_name = "K/N", help_heading = "Selection")]
    pub shard: Option<String>,
}

/// Where and how a run or a saved report is published on GitHub.
#[derive(Debug, Args)]
pub struct GithubArgs {
    /// Create or update the one sticky PR comment for this suite (needs GITHUB_TOKEN with
    /// `pull-requests: write`; on a fork's PR the run says why it did not comment).
    #[arg(long, help_heading = "GitHub")]
    pub comment: bool,

    /// Write the Markdown summary to FILE (it also goes to $GITHUB_STEP_SUMMARY when set).
    #[arg(long, value_name = "FILE", help_heading = "GitHub")]
    pub markdown: Option<PathBuf>,
}

/// `goldgate convert FILE --to FORMAT -o OUT`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The golden file to convert (any of the four formats, told from its content).
    pub file: PathBuf,

    /// The format to write.
    #[arg(long, value_enum)]
    pub to: ConvertTo,

    /// Where to write. For several cases converted to scenarios, a directory that receives one
    /// `<id>.scenario.yaml` per case.
    #[arg(long, short = 'o', value_name = "OUT")]
    pub output: PathBuf,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ConvertTo {
    /// A SCRAPI golden (`conversations:`).
    Scrapi,
    /// A CES golden CSV.
    CesCsv,
    /// gecx `*.scenario.yaml`, one per case.
    Scenario,
}

/// `goldgate list [PATH...]`.
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub suite: SuiteArgs,

    #[command(flatten)]
    pub selection: subset::ListSelectionArgs,

    /// Print one JSON document on stdout instead of the listing.
    #[arg(long)]
    pub json: bool,
}

/// `goldgate compare REPORT --baseline FILE`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The JSON report of the run to judge.
    pub report: PathBuf,

    #[command(flatten)]
    pub config: ConfigArg,

    #[command(flatten)]
    pub gate: GateArgs,

    /// Print the comparison as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `goldgate merge REPORT... -o FILE`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Shard reports of one suite.
    #[arg(required = true, num_args = 1..)]
    pub reports: Vec<PathBuf>,

    /// Where to write the merged report.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: PathBuf,

    /// The gate over the merged report, as `goldgate run` has it. Shards gated with
    /// `--fail-on-regress` need it here too: a comparison belongs to one run against one
    /// baseline, so the shards' own are not joined, and the merged report is gated anew.
    #[command(flatten)]
    pub gate: OptInGateArgs,

    #[command(flatten)]
    pub config: ConfigArg,
}

/// `goldgate report REPORT [--junit F] [--html F] [--markdown F] [--comment]`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A JSON report written by `goldgate run --output`.
    pub report: PathBuf,

    /// Write JUnit XML to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Leave testcase `file` and `line` out of the JUnit XML (see `goldgate run --help`).
    #[arg(long, requires = "junit")]
    pub junit_strict: bool,

    #[arg(long, value_name = "FILE", long_help = HTML_HELP)]
    /// Write the HTML report to FILE (see `goldgate run --help`).
    pub html: Option<PathBuf>,

    /// The gate against a baseline, as `goldgate run` has it: the deltas in the Markdown and
    /// the comment, and with --fail-on-regress the exit code.
    #[command(flatten)]
    pub gate: OptInGateArgs,

    #[command(flatten)]
    pub config: ConfigArg,

    #[command(flatten)]
    pub github: GithubArgs,
}

/// `goldgate init [--agent KIND] [DIR]`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The project's root (where goldgate.yaml goes).
    #[arg(default_value = ".")]
    pub dir: PathBuf,

    /// The kind of agent under test.
    #[arg(long, value_enum, default_value = "http")]
    pub agent: InitAgent,

    /// The action the workflow uses, `OWNER/REPO@REF` (a release tag, or a commit SHA to pin).
    /// Default: goldgate/goldgate at the commit this goldgate was built from (its release tag
    /// when built from a release).
    #[arg(long, value_name = "REF")]
    pub action: Option<String>,

    /// The GitHub secret the workflow passes to the agent and goldgate: with `--agent http`
    /// also sent as `Authorization: Bearer ${NAME}`; with a model or CES agent, the secret
    /// holding its key or token.
    #[arg(long, value_name = "NAME", value_parser = values::env_name)]
    pub secret: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InitAgent {
    /// An HTTP endpoint speaking goldgate's turn protocol.
    Http,
    /// A program reading JSON lines on stdin.
    Command,
    /// An OpenAI model with a system prompt.
    Openai,
    /// An Anthropic model with a system prompt.
    Anthropic,
    /// A Gemini model with a system prompt.
    Gemini,
    /// A CX Agent Studio app.
    Ces,
}

/// `goldgate schema NAME`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Which file kind.
    #[arg(value_enum)]
    pub name: SchemaName,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SchemaName {
    /// goldgate.yaml.
    Config,
    /// The JSON report (which is also the baseline).
    Report,
    /// A gecx `*.scenario.yaml`.
    Scenario,
    /// A SCRAPI platform golden (`evals/goldens/*.yaml`), hand-written or exported.
    ScrapiGolden,
    /// A SCRAPI turn-eval file (`conversations:` or `tests:` of `{type, value}` checks).
    TurnEval,
    /// A SCRAPI tool-test file (`tests:` of `tool`, `args`, `expectations`).
    ToolTest,
    /// A SCRAPI simulation file (`evals:` of simulated-user `steps`).
    Simulation,
    /// A Regtrace golden set (`golden-sets/*.yaml`).
    Regtrace,
    /// One row of a CX Agent Studio golden CSV, keyed by column: documents the columns.
    CesCsv,
}

/// The long help of `--html`; clap wraps its paragraphs to the terminal.
const HTML_HELP: &str = "\
Write the HTML report to FILE: one self-contained page (no network, nothing to install) to \
open in a browser or keep as a CI artifact.

It shows the verdict and the regression gate's evidence (each threshold's metric in the \
baseline and now, its limit, whether it tripped; the cases newly failing, newly passing or not \
run), the aggregates, a latency histogram and the rates against the baseline; then every case, \
filterable by status, tag, file and text and sortable by column. Click a case for its \
transcript turn by turn: the input, the agent's reply, and each check's expected and actual \
text with the differing words highlighted and the method that judged it; repeated cases show \
each run and whether they are flaky.

Agent text is shown as text only: a Content-Security-Policy lets nothing but the page's own \
script and style run, and nothing load. Written atomically.

  goldgate run --output report.json --html report.html evals/
  goldgate report report.json --baseline baseline.json --html report.html";

#[derive(Debug, Args)]
pub struct LintArgs {
    /// Files or directories to check.
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,

    /// Output format. Defaults to `github` when GITHUB_ACTIONS=true, else `human`.
    #[arg(long, value_enum, env = "GOLDGATE_LINT_FORMAT")]
    pub format: Option<LintFormat>,

    /// Shorthand for `--format json`.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    #[command(flatten)]
    pub config: ConfigArg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LintFormat {
    /// `file:line: error [CODE] message`, one per line.
    Human,
    /// One JSON document with every file and problem.
    Json,
    /// GitHub Actions `::error file=...,line=...::` annotations.
    Github,
}
