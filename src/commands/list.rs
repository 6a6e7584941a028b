//! `goldgate list`: what `run` would play with the same paths and selection flags, without
//! calling any agent.

use std::io::Write;

use goldgate::app::list::Listing;
use goldgate::app::select::{Selected, Selection};
use goldgate::app::subset::{self, Subset};
use goldgate::config::Config;
use goldgate::exit::Exit;
use goldgate::load::Suite;
use goldgate::report::console;

use crate::cli::ListArgs;

pub fn run(args: &ListArgs) -> anyhow::Result<Exit> {
    let selection = match super::selection_of(&args.selection.common) {
        Ok(selection) => selection,
        Err(message) => return Ok(fail(&message)),
    };
    // Loaded to refuse what `run` refuses (a config that does not load), and for what
    // `--changed-since` makes every case depend on.
    let Ok(config) = super::load_config(args.suite.config.path(), "listed") else {
        return Ok(Exit::Error);
    };
    let Ok(suite) = super::load_goldens(&args.suite.paths, &config, "listed")? else {
        return Ok(Exit::Error);
    };
    let selected = match chosen(args, &suite, &config, selection) {
        Ok(selected) => selected,
        Err(message) => return Ok(fail(&message)),
    };
    if let Some(note) = selected.empty_shard_note() {
        eprintln!("goldgate: {note}");
    }
    if subset::chooses_app_evaluations(&config) {
        eprintln!(
            "goldgate: a run also plays the app's evaluations chosen in goldgate.yaml \
             (agent.ces.platform.evaluations): the platform names them when the run starts"
        );
    }
    let listing = Listing::of(&selected);
    let mut out = super::stdout();
    if args.json {
        // Rendered first, so that a closed pipe is an io::Error that main recognises.
        let text = serde_json::to_string_pretty(&listing)?;
        writeln!(out, "{text}")?;
    } else {
        listing.write_human(&mut out)?;
    }
    out.flush()?;
    eprintln!("goldgate list: {}", listing.summary());
    Ok(Exit::Success)
}

/// The cases `selection` picks, narrowed as `run --changed-since` narrows them (the config's
/// agent: `list` takes no agent flags), through the function `run` chooses with; the
/// selection said on stderr.
fn chosen(
    args: &ListArgs,
    suite: &Suite,
    config: &Config,
    selection: Selection,
) -> Result<Selected, String> {
    let changed = (args.selection.changed_since.clone()).map(Subset::ChangedSince);
    let chosen = subset::choose_cases(
        (suite, config),
        config.agent.as_ref(),
        selection,
        changed.as_ref(),
        None,
    )?;
    if let Some(scope) = &chosen.scope {
        eprintln!("goldgate: {}", console::escape(&scope.describe()));
    }
    Ok(chosen.selected)
}

fn fail(message: &str) -> Exit {
    eprintln!("goldgate: {message}");
    Exit::Error
}
