//! One module per subcommand: turn parsed flags into library calls, print, pick the exit code.

pub mod compare;
pub mod lint;
pub mod merge;
pub mod report;
pub mod run;
pub mod schema;

use std::io::IsTerminal;
use std::path::PathBuf;

use goldgate::discover::{self, Rules};
use goldgate::load::{self, Suite};

/// Colour when writing to a terminal and `NO_COLOR` is not set (https://no-color.org).
pub fn use_color(stream: &impl IsTerminal) -> bool {
    stream.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Finds and loads the goldens under `paths`; `None` (after saying so) when there are none.
pub fn discover_and_load(paths: &[PathBuf]) -> anyhow::Result<Option<Suite>> {
    let found = discover::discover(paths, &Rules::default())?;
    if found.is_empty() {
        let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        eprintln!("goldgate: no golden files found under {}", names.join(", "));
        eprintln!(
            "hint: goldgate looks for *.scenario.yaml, goldens/**/*.yaml, *.golden.yaml, *.golden.csv and regtrace.config.yaml"
        );
        return Ok(None);
    }
    Ok(Some(load::load(&found)))
}
