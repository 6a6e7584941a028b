//! `goldgate list`: what `run` would play with the same paths and selection flags, without
//! calling any agent.

use std::io::Write;

use goldgate::app::list::Listing;
use goldgate::app::select;
use goldgate::exit::Exit;

use crate::cli::ListArgs;

pub fn run(args: &ListArgs) -> anyhow::Result<Exit> {
    let selection = match super::selection_of(&args.selection) {
        Ok(selection) => selection,
        Err(message) => return Ok(fail(&message)),
    };
    // Loaded only to refuse what `run` refuses: a config that does not load.
    if super::load_config(args.suite.config.path(), "listed").is_none() {
        return Ok(Exit::Error);
    }
    let Some(suite) = super::load_goldens(&args.suite.paths, "listed")? else {
        return Ok(Exit::Error);
    };
    let selected = match select::select(&suite, &selection) {
        Ok(selected) => selected,
        Err(err) => return Ok(fail(&err.to_string())),
    };
    if let Some(note) = selected.empty_shard_note() {
        eprintln!("goldgate: {note}");
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

fn fail(message: &str) -> Exit {
    eprintln!("goldgate: {message}");
    Exit::Error
}
