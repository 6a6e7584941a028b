//! `goldgate lint`: discover, load, print every problem.

use std::io::Write;
use std::path::Path;

use goldgate::exit::Exit;
use goldgate::report::lint;

use crate::cli::{LintArgs, LintFormat};

pub fn run(args: &LintArgs) -> anyhow::Result<Exit> {
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
    let Some(mut suite) = super::discover_and_load(&args.paths)? else {
        return Ok(Exit::Error);
    };
    // A config that does not load is one of the problems below; its allowances need it loaded.
    if let Ok(config) = goldgate::app::setup::load_config(args.config.path()) {
        suite.allow(&config.lint_allow);
    }
    // goldgate.yaml is checked beside the goldens: a broken quarantine or threshold would
    // otherwise surface only when a run refuses it.
    let config = goldgate::app::setup::lint_config(args.config.path(), &suite);
    suite.files.extend(config);
    let mut out = super::stdout();
    match format {
        LintFormat::Human => lint::write_human(&suite, &mut out)?,
        LintFormat::Json => lint::write_json(&suite, &mut out)?,
        LintFormat::Github => {
            // Annotations name files from the workspace, wherever lint runs in it.
            let github = goldgate::github::context::Context::from_env();
            let cwd = std::env::current_dir()?;
            let path = |file: &Path| github.workspace_path(&file.to_string_lossy(), &cwd);
            lint::write_github(&suite, &path, &mut out)?
        }
    }
    out.flush()?;
    eprintln!("goldgate lint: {}", lint::summary(&suite));
    Ok(if suite.error_count() > 0 {
        Exit::Failure
    } else {
        Exit::Success
    })
}
