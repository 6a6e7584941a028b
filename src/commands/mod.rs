//! One module per subcommand: turn parsed flags into library calls, print, pick the exit code.
//! What more than one command needs is in the library ([`goldgate::app`]) or here, never in
//! another command.

pub mod calibrate;
pub mod compare;
pub mod convert;
pub mod files;
pub mod init;
pub mod lint;
pub mod list;
pub mod merge;
pub mod report;
pub mod run;
pub mod schema;

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use goldgate::app::baseline::{self, Update};
use goldgate::app::publish::{self, DEFAULT_SUITE, Refusal};
use goldgate::app::regate;
use goldgate::app::request::GateRequest;
use goldgate::app::setup::{self, LoadError};
use goldgate::app::subset;
use goldgate::config::Config;
use goldgate::exit::Exit;
use goldgate::gate::Gate;
use goldgate::load::Suite;
use goldgate::report::Summary;
use goldgate::results::{Policy, Report};

use goldgate::report::lint as problems;

use crate::cli::ConfigArg;

/// Colour when writing to a terminal and `NO_COLOR` is not set (https://no-color.org).
/// Standard output that a reader may close early (`goldgate run | head`, a log collector that
/// exits): once the pipe is gone, what is printed is dropped and the command goes on, so that
/// its reports are still written and its exit code is still the verdict.
pub struct Stdout {
    closed: bool,
}

/// Standard output, tolerant of a closed pipe (see [`Stdout`]).
pub fn stdout() -> Stdout {
    Stdout { closed: false }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        match io::stdout().lock().write(buf) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(buf.len())
            }
            other => other,
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        match io::stdout().lock().flush() {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            other => other,
        }
    }
}

pub fn use_color(stream: &impl IsTerminal) -> bool {
    stream.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Finds and loads the goldens under `paths`; `None` (after saying so) when there are none.
pub fn discover_and_load(paths: &[PathBuf]) -> anyhow::Result<Option<Suite>> {
    Ok(discover_and_load_or(paths, false)?.ok())
}

/// [`discover_and_load`], where finding no golden file is an empty suite when `none_is_fine`
/// (the run has cases of its own: a CX Agent Studio app's evaluations chosen in the config).
fn discover_and_load_or(
    paths: &[PathBuf],
    none_is_fine: bool,
) -> anyhow::Result<Result<Suite, Refusal>> {
    match setup::discover_and_load(paths) {
        Ok(suite) => Ok(Ok(suite)),
        Err(LoadError::NothingFound { .. }) if none_is_fine => Ok(Ok(Suite::default())),
        // Said as a refusal, so that a run still writes the JUnit file that tells its readers.
        Err(err @ (LoadError::NothingFound { .. } | LoadError::TooLarge(_))) => {
            eprintln!("goldgate: {err}");
            Ok(Err(Refusal::new(&err.to_string())))
        }
        Err(err) => Err(err.into()),
    }
}

/// The goldens under `paths`, their problems printed but for the warnings `config` allows;
/// refused when errors leave nothing to play, or nothing was found and the config chooses no
/// app evaluations ([`subset::chooses_app_evaluations`]): then nothing was `done`. `run` and
/// `list` share it, so that `list` refuses exactly what `run` refuses.
pub fn load_goldens(
    paths: &[PathBuf],
    config: &Config,
    done: &str,
) -> anyhow::Result<Result<Suite, Refusal>> {
    let none_is_fine = subset::chooses_app_evaluations(config);
    load_goldens_from(paths, config, done, none_is_fine)
}

fn load_goldens_from(
    paths: &[PathBuf],
    config: &Config,
    done: &str,
    none_is_fine: bool,
) -> anyhow::Result<Result<Suite, Refusal>> {
    let mut suite = match discover_and_load_or(paths, none_is_fine)? {
        Ok(suite) => suite,
        Err(refusal) => return Ok(Err(refusal)),
    };
    suite.allow(&config.lint_allow);
    if suite.warning_count() + suite.error_count() > 0 {
        // Buffered: stderr is not, and a suite may have a problem per case.
        let mut err = io::BufWriter::new(io::stderr().lock());
        problems::write_human(&suite, &mut err)?;
        err.flush()?;
    }
    if suite.error_count() > 0 {
        let reason = format!(
            "the goldens do not load ({}); nothing was {done}",
            problems::summary(&suite)
        );
        eprintln!("goldgate: {reason} (see `goldgate lint`)");
        return Ok(Err(Refusal {
            reason,
            details: String::new(),
            problems: (suite.reported())
                .flat_map(|f| f.diagnostics.iter().cloned())
                .collect(),
        }));
    }
    Ok(Ok(suite))
}

/// The config of `--config` (or `GOLDGATE_CONFIG`, or ./goldgate.yaml); refused after saying
/// why it does not load and that `nothing` was done.
pub fn load_config(path: Option<&Path>, nothing: &str) -> Result<Config, Refusal> {
    setup::load_config(path).map_err(|message| {
        let reason = format!("the config does not load; nothing was {nothing}");
        eprintln!("{message}");
        eprintln!("goldgate: {reason}");
        Refusal {
            reason,
            details: message,
            problems: Vec::new(),
        }
    })
}

/// What the gate flags ask of a saved report (`report`, `merge`, `compare`: see
/// [`regate::Mode`]): the baseline with the config's thresholds, the policy and the suite's
/// name, set up before the report is read; [`Regate::apply`] then gates it through the
/// library's one re-gate step.
pub struct Regate {
    gate: Option<Gate>,
    policy: Option<Policy>,
    suite: String,
    command: &'static str,
}

/// The re-gate step of `report` and `compare`, and the saved report it applies to: exit 2,
/// said on stderr, when either cannot be had.
pub fn regate_saved(
    gate: (GateRequest, &ConfigArg),
    mode: regate::Mode,
    command: &'static str,
    report: &Path,
) -> Result<(Regate, Report), Exit> {
    let regate = regate(gate, mode, command)?;
    let report = goldgate::results::json::read_file(report).map_err(|err| {
        eprintln!("goldgate: {err}");
        Exit::Error
    })?;
    Ok((regate, report))
}

/// [`Regate`] from the gate's flags (`request`); `Err` (exit 2) once the reason is printed.
pub fn regate(
    (request, config): (GateRequest, &ConfigArg),
    mode: regate::Mode,
    command: &'static str,
) -> Result<Regate, Exit> {
    let said = |error: &dyn std::fmt::Display| {
        eprintln!("goldgate {command}: {error}");
        Exit::Error
    };
    let policy = regate::policy(&request, mode).map_err(|e| said(&e))?;
    if let Some(note) = request.unused() {
        eprintln!("goldgate {command}: {note}");
    }
    let gate = match &request.baseline {
        None => None,
        // The thresholds of the config apply, as they do to `run`.
        Some(_) => {
            let nothing = match mode {
                regate::Mode::Always => "compared",
                regate::Mode::IfAsked => "written",
            };
            let config = load_config(config.path(), nothing).map_err(|_| Exit::Error)?;
            request.gate(&config).map_err(|e| said(&e))?
        }
    };
    Ok(Regate {
        gate,
        policy,
        suite: publish::suite_name(config.path()).unwrap_or_else(|| DEFAULT_SUITE.to_owned()),
        command,
    })
}

impl Regate {
    /// `report` (called `name` in warnings) gated, and its summary.
    pub fn apply<'r>(self, report: &'r mut Report, name: &str) -> Summary<'r> {
        let played = regate::played(report);
        self.apply_played(report, name, played)
    }

    /// [`Regate::apply`] to a report whose adaptive repeats played `played` runs that its own
    /// gate does not record (a merged report's, played in its shards).
    pub fn apply_played<'r>(self, report: &'r mut Report, name: &str, played: u64) -> Summary<'r> {
        let gate = (self.gate, played);
        let regated = regate::regate(report, gate, self.policy, (name, &self.suite));
        for note in &regated.notes {
            eprintln!("goldgate {}: {note}", self.command);
        }
        regated.summary
    }
}

/// `--update-baseline FILE`, saying what happened; exit 2 when refused.
pub fn update_baseline(
    path: &Path,
    report: &Report,
    asked: baseline::Asked,
) -> anyhow::Result<Exit> {
    let shown = path.display();
    match baseline::update(path, report, asked)? {
        Update::Refused(reason) => {
            eprintln!(
                "goldgate: not updating the baseline {shown}: {reason} (--force writes it anyway)"
            );
            return Ok(Exit::Error);
        }
        Update::Forced(reason) => {
            eprintln!("goldgate: updating the baseline despite this (--force): {reason}")
        }
        Update::Written { builds: 1 } => {}
        Update::Written { builds } => {
            eprintln!("goldgate: the baseline's history now spans {builds} builds");
        }
    }
    eprintln!("goldgate: baseline written to {shown}");
    Ok(Exit::Success)
}

/// Publishes to GitHub through `publish` ([`goldgate::app::publish::publish`] or
/// [`goldgate::app::publish::publish_refusal`]): annotations on stdout, or on stderr when
/// stdout carries the JSON report; notes on stderr.
pub fn publish(
    stdout_is_json: bool,
    publish: impl FnOnce(&mut dyn Write) -> anyhow::Result<Vec<String>>,
) -> anyhow::Result<()> {
    let notes = if stdout_is_json {
        publish(&mut io::stderr().lock())?
    } else {
        publish(&mut stdout())?
    };
    for note in notes {
        eprintln!("goldgate: {note}");
    }
    Ok(())
}
