//! `goldgate list`: what `run` would play with the same paths and selection flags, without
//! calling any agent.

use std::io::Write;

use goldgate::app::list::Listing;
use goldgate::app::plan::{self, Choice, Inputs};
use goldgate::app::request::Env;
use goldgate::app::subset;
use goldgate::exit::Exit;

use crate::cli::ListArgs;

pub fn run(args: &ListArgs) -> anyhow::Result<Exit> {
    let checked = match plan::check(args.request()) {
        Ok(checked) => checked,
        Err(error) => return Ok(fail(&error)),
    };
    // Loaded to refuse what `run` refuses (a config that does not load), and for what
    // `--changed-since` makes every case depend on.
    let Ok(config) = super::load_config(args.suite.config.path(), "listed") else {
        return Ok(Exit::Error);
    };
    let Ok(suite) = super::load_goldens(&args.suite.paths, &config, "listed")? else {
        return Ok(Exit::Error);
    };
    // The cases `run` plays with the same flags, chosen by the function `run` resolves its
    // plan with (the agent under test as `run` finds it without agent flags).
    let inputs = Inputs {
        config: &config,
        // `list` takes no gate flags: no baseline to fit to the cases.
        gate: None,
        suite: &suite,
    };
    let Choice { chosen, notes } = match plan::choose(&checked, inputs, &Env::from_process()) {
        Ok(choice) => choice,
        Err(error) => return Ok(fail(&error)),
    };
    for note in &notes {
        eprintln!("goldgate: {note}");
    }
    if subset::chooses_app_evaluations(&config) {
        eprintln!(
            "goldgate: a run also plays the app's evaluations chosen in goldgate.yaml \
             (agent.ces.platform.evaluations): the platform names them when the run starts"
        );
    }
    let listing = Listing::of(&chosen.selected);
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

fn fail(error: &plan::PlanError) -> Exit {
    eprintln!("goldgate: {error}");
    Exit::Error
}
