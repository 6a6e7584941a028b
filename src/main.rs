//! The `goldgate` binary: parse arguments, call the library, map the outcome to an exit code.

/// `eprintln!` for the whole binary, ignoring a failed write: std's panic when stderr is a
/// closed pipe (`goldgate run ... 2>&1 | head`) would end the run with 134 instead of the
/// verdict's exit code. Defined before the modules, so it shadows std's there.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod allocator;
mod cli;
mod commands;

use std::io;
use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};
use goldgate::exit::Exit;

#[global_allocator]
static ALLOCATOR: allocator::Split = allocator::Split;

fn main() -> ExitCode {
    give_large_buffers_back();
    fail_writes_past_a_file_size_limit();
    exit_2_on_a_bug();
    let cli = Cli::parse();
    let exit = match cli.command {
        Command::Lint(args) => commands::lint::run(&args),
        Command::List(args) => commands::list::run(&args),
        Command::Run(args) => commands::run::run(&args),
        Command::Merge(args) => commands::merge::run(&args),
        Command::Compare(args) => commands::compare::run(&args),
        Command::Calibrate(args) => commands::calibrate::run(&args),
        Command::Report(args) => commands::report::run(&args),
        Command::Schema(args) => commands::schema::run(&args),
        Command::Convert(args) => commands::convert::run(&args),
        Command::Init(args) => commands::init::run(&args),
    };
    match exit {
        Ok(exit) => ExitCode::from(exit.code()),
        // Only a write the command did not expect to fail gets here: say so, never pass.
        Err(err) if is_broken_pipe(&err) => ExitCode::from(Exit::Error.code()),
        Err(err) => {
            eprintln!("goldgate: error: {err:#}");
            ExitCode::from(Exit::Error.code())
        }
    }
}

/// glibc serves a block freed past its mmap threshold from the heap the next time, raising
/// that threshold up to 32 MiB: a run reading replies of megabytes then keeps every one it
/// freed, per thread's arena. A fixed threshold maps each large buffer (those
/// [`allocator::Split`] hands to glibc) and gives it back.
fn give_large_buffers_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter, before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, allocator::LARGE as libc::c_int);
    }
}

/// A file-size limit (`ulimit -f`, a quota) would kill the process mid-report with SIGXFSZ;
/// ignored, the write fails with EFBIG instead, like a full disk: the report is not renamed
/// into place, and goldgate says which file and exits 2.
fn fail_writes_past_a_file_size_limit() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to SIG_IGN before any thread starts installs no
    // handler code and touches no Rust state.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// Release builds abort on a panic: a bug then ends the run with exit 2 (never a pass) and a
/// line saying what happened, instead of SIGABRT's status 134 after Rust's bare message.
fn exit_2_on_a_bug() {
    if cfg!(panic = "abort") {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            report(info);
            eprintln!(
                "goldgate: internal error: this is a bug in goldgate, please report it; the run \
                 stopped before its reports were written"
            );
            std::process::exit(i32::from(Exit::Error.code()));
        }));
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.downcast_ref::<io::Error>()
        .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
}
