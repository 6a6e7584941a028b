//! Command-line definitions only: raw flags, parsed by clap. `main.rs` turns them into calls.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

const AFTER_HELP: &str = "\
Exit codes (every command):
  0  everything passed (warnings allowed)
  1  a test failed, a lint error was found, or a regression threshold tripped
  2  the run could not be judged: bad arguments, unreadable files, no agent

Formats: SCRAPI golden YAML (conversations:), CES golden CSV (display_name,turn_index,action_type),
gecx *.scenario.yaml (id/when/then), Regtrace golden sets (test_cases:) and regtrace.config.yaml.";

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
    Run(PendingArgs),
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
    /// Apply the regression gate to a saved report against a baseline.
    Compare(PendingArgs),
    /// Join shard reports into one.
    Merge(PendingArgs),
    /// Render outputs (JUnit, Markdown, PR comment) from a saved JSON report.
    Report(PendingArgs),
    /// Convert between SCRAPI YAML, CES CSV and scenario YAML.
    Convert(PendingArgs),
    /// Print the JSON Schema of a file kind (config, report, scenario).
    Schema(PendingArgs),
}

/// Arguments of a command that later releases fill in; accepted so that `--help` lists it.
#[derive(Debug, Args)]
pub struct PendingArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub rest: Vec<String>,
}

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
