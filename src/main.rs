//! The `goldgate` binary: parse arguments, call the library, map the outcome to an exit code.

mod cli;
mod commands;

use std::io;
use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};
use goldgate::exit::Exit;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let exit = match cli.command {
        Command::Lint(args) => commands::lint::run(&args),
        Command::List(args) => commands::list::run(&args),
        Command::Run(args) => commands::run::run(&args),
        Command::Merge(args) => commands::merge::run(&args),
        Command::Compare(args) => commands::compare::run(&args),
        Command::Report(args) => commands::report::run(&args),
        Command::Schema(args) => commands::schema::run(&args),
        Command::Convert(args) => commands::convert::run(&args),
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
