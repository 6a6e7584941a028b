//! Loading what a command needs before it does anything: the config, the goldens, the gate.
//! Each step fails with a message that names the file, before any agent is called.

use std::path::{Path, PathBuf};

use crate::config::eval_config::EvalConfig;
use crate::config::{self, Config};
use crate::diagnostic::{Code, Position};
use crate::discover::{self, Rules};
use crate::gate::{Gate, Thresholds};
use crate::load::{self, Suite};

/// The config at `path`, else `./goldgate.yaml` when it exists, else the defaults. Every
/// command that gates (`run`, `compare`, `report`) reads its thresholds from it.
/// gecx's `eval.config.json` beside it is read here too, once for every use of it.
pub fn load_config(path: Option<&Path>) -> Result<Config, String> {
    let default = PathBuf::from(config::DEFAULT_FILE);
    let mut config = match path {
        Some(path) => Config::load(path).map_err(|e| e.to_string())?,
        None if default.is_file() => Config::load(&default).map_err(|e| e.to_string())?,
        None => Config::default(),
    };
    config.eval_config = EvalConfig::in_current_dir()
        .map_err(|e| e.to_string())?
        .unwrap_or_default();
    Ok(config)
}

/// The config file as `goldgate lint` checks it, with its problems: every error `run` would
/// refuse it for, and a warning for each quarantine entry past its date. `None` when there is
/// no config to check (none given, no `./goldgate.yaml`).
pub fn lint_config(path: Option<&Path>, suite: &Suite) -> Option<crate::formats::LoadedFile> {
    let default = PathBuf::from(config::DEFAULT_FILE);
    let path = path.or_else(|| default.is_file().then_some(default.as_path()))?;
    let file: std::sync::Arc<Path> = std::sync::Arc::from(path);
    let diagnostics = match Config::load(path) {
        Err(error) => error.diagnostics,
        Ok(config) => {
            let today = config::quarantine::Date::today();
            let mut diags = crate::diagnostic::Diagnostics::new(&file);
            for entry in config.quarantine.iter().filter(|e| today > e.expires) {
                diags
                    .at(Position::new(entry.line, 1))
                    .warning(
                        Code::G111,
                        format!(
                            "the quarantine of `{}` expired on {}: the case blocks again",
                            entry.case, entry.expires
                        ),
                    )
                    .field("quarantine")
                    .hint("fix the case, or give the entry a later `expires` with a reason");
            }
            let cases: Vec<(String, &str)> = (suite.files.iter())
                .flat_map(|f| &f.cases)
                .map(|case| (crate::shard::case_key(case), case.id.as_str()))
                .collect();
            for entry in config::quarantine::naming_none(&config.quarantine, &cases) {
                diags
                    .at(Position::new(entry.line, 1))
                    .warning(
                        Code::G112,
                        format!("the quarantine entry `{}` names no case of the goldens checked", entry.case),
                    )
                    .field("quarantine")
                    .hint("name a case as `file#id` (the file as reports name it) or by its id; a case of goldens not checked here is not counted");
            }
            diags.items
        }
    };
    let mut loaded = crate::formats::LoadedFile::problems(file, None, diagnostics);
    loaded.sort_diagnostics();
    Some(loaded)
}

/// Why no suite was loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(
        "no golden files found under {paths}{overlooked}\nhint: goldgate looks for *.scenario.yaml, goldens/**/*.yaml, SCRAPI tool tests in evals/tool_tests/*.yaml, *.golden.yaml, *.golden.csv and regtrace.config.yaml; a file named on the command line is read whatever its name"
    )]
    NothingFound {
        paths: String,
        /// A note per file that looks like a golden out of place, each on its own line.
        overlooked: String,
    },
    #[error(transparent)]
    Discover(#[from] discover::DiscoverError),
    #[error("cannot read the current directory: {0}")]
    Cwd(std::io::Error),
    #[error(transparent)]
    TooLarge(#[from] crate::formats::memory::TooLarge),
}

/// Finds and loads the goldens under `paths` (problems in them are in the suite's
/// diagnostics, not errors here), each case's file named as reports name it
/// ([`Suite::name_for_reports`]).
pub fn discover_and_load(paths: &[PathBuf]) -> Result<Suite, LoadError> {
    let discovered = discover::discover(paths, &Rules::default())?;
    if discovered.found.is_empty() {
        let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        let overlooked: String = (discovered.overlooked.iter())
            .map(|o| format!("\nnote: {}:{} looks like a golden, but is not where goldgate looks for one (a goldens/ folder, or named *.golden.yaml / *.golden.csv)", o.path.display(), o.line))
            .collect();
        return Err(LoadError::NothingFound {
            paths: names.join(", "),
            overlooked,
        });
    }
    let mut suite = load::load(&discovered.found)?;
    suite.overlooked = discovered.overlooked.iter().map(load::overlooked).collect();
    suite.name_for_reports(&std::env::current_dir().map_err(LoadError::Cwd)?);
    Ok(suite)
}

/// Why the gate cannot be set up: the run stops before anything is played.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    #[error("the regression thresholds do not load\n{0}")]
    Thresholds(config::ConfigError),
    #[error("cannot use the baseline: {0}")]
    Baseline(crate::results::json::ReadError),
}

/// The gate against `baseline`: thresholds merged from every source (see
/// [`crate::config::thresholds`]) and the baseline read; `None` without a baseline. Set up
/// before anything runs, so that a typo in a threshold does not cost a whole run.
pub fn gate(
    baseline: Option<&Path>,
    regression_config: Option<&Path>,
    false_alarm_rate: f64,
    config: &Config,
) -> Result<Option<Gate>, GateError> {
    let Some(path) = baseline else {
        return Ok(None);
    };
    let thresholds = Thresholds::resolve(
        &config.thresholds,
        &config.eval_config.thresholds,
        regression_config,
    )
    .map_err(GateError::Thresholds)?;
    let gate = Gate::load(path, thresholds).map_err(GateError::Baseline)?;
    Ok(Some(Gate {
        false_alarm_rate,
        ..gate
    }))
}
