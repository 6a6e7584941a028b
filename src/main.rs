//! The `goldgate` binary: parse arguments, call the library, map the outcome to an exit code.

mod cli;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command, LintArgs, LintFormat};
use goldgate::discover::{self, Rules};
use goldgate::exit::Exit;
use goldgate::load;
use goldgate::report::lint;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let exit = match cli.command {
        Command::Lint(args) => run_lint(&args),
        Command::Run(_)
        | Command::Compare(_)
        | Command::Merge(_)
        | Command::Report(_)
        | Command::Convert(_)
        | Command::Schema(_) => {
            eprintln!("goldgate: this command is not yet available in this version");
            Ok(Exit::Error)
        }
    };
    match exit {
        Ok(exit) => ExitCode::from(exit.code()),
        Err(err) if is_broken_pipe(&err) => ExitCode::from(Exit::Success.code()),
        Err(err) => {
            eprintln!("goldgate: error: {err:#}");
            ExitCode::from(Exit::Error.code())
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.downcast_ref::<io::Error>()
        .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
}

fn run_lint(args: &LintArgs) -> anyhow::Result<Exit> {
    let format = if args.json {
        LintFormat::Json
    } else {
        args.format.unwrap_or_else(|| {
            if std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true") {
                LintFormat::Github
            } else {
                LintFormat::Human
            }
        })
    };
    let found = discover::discover(&args.paths, &Rules::default())?;
    if found.is_empty() {
        eprintln!(
            "goldgate: no golden files found under {}",
            args.paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        );
        eprintln!("hint: goldgate looks for *.scenario.yaml, goldens/**/*.yaml, *.golden.csv and regtrace.config.yaml");
        return Ok(Exit::Error);
    }
    let suite = load::load(&found);
    let mut out = io::stdout().lock();
    match format {
        LintFormat::Human => lint::write_human(&suite, &mut out)?,
        LintFormat::Json => lint::write_json(&suite, &mut out)?,
        LintFormat::Github => lint::write_github(&suite, &mut out)?,
    }
    out.flush()?;
    eprintln!("goldgate lint: {}", lint::summary(&suite));
    Ok(if suite.error_count() > 0 { Exit::Failure } else { Exit::Success })
}
