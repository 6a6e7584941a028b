//! `goldgate run`: the flags into a request, which the library resolves into a plan
//! ([`goldgate::app::plan`]); the plan played with progress shown, then the reports.

use goldgate::app::plan::{self, Inputs, PlanError, Resolved};
use goldgate::app::publish::{self, Refusal};
use goldgate::app::request::Env;
use goldgate::app::session::OtherAgent;
use goldgate::exit::Exit;
use goldgate::secrets::Secrets;

use crate::cli::RunArgs;

mod dry_run;
mod finish;
mod play;
mod progress;

pub fn run(args: &RunArgs) -> anyhow::Result<Exit> {
    // The run's wall time, agent start-up included: what the user waited for.
    let started = std::time::Instant::now();
    let checked = match plan::check(args.request()) {
        Ok(checked) => checked,
        Err(error) => return fail(args, &error),
    };
    let config = match super::load_config(args.suite.config.path(), "run") {
        Ok(config) => config,
        Err(refusal) => return refuse(args, &refusal),
    };
    let gate = match checked.request.gate.gate(&config) {
        Ok(gate) => gate,
        Err(error) => return fail(args, &error.into()),
    };
    let suite = match super::load_goldens(&args.suite.paths, &config, "run")? {
        Ok(suite) => suite,
        Err(refusal) => return refuse(args, &refusal),
    };
    let inputs = Inputs {
        config: &config,
        gate,
        suite: &suite,
    };
    let resolved = match plan::resolve(&checked, inputs, &Env::from_process()) {
        Ok(resolved) => resolved,
        Err(error) => return fail(args, &error),
    };
    for note in &resolved.notes {
        eprintln!("goldgate: {note}");
    }
    if args.dry_run {
        return dry_run::print(&resolved.plan, &config);
    }
    let Resolved { plan, narrowed, .. } = resolved;
    let secrets = plan.options.secrets.clone();
    let report = match play::play(plan)? {
        Ok(report) => report,
        Err(OtherAgent { saved, now }) => {
            eprintln!("goldgate: {}", PlanError::OtherAgent { saved, now });
            return Ok(Exit::Error);
        }
    };
    let exit = finish::finish(args, &report, started.elapsed(), secrets, narrowed);
    // The process ends with this run: freeing every case, turn and transcript one by one takes
    // milliseconds the user waits for, and the system takes the memory back at once.
    std::mem::forget((report, suite));
    exit
}

/// Stops the run before it plays anything, saying why: exit 2.
fn fail(args: &RunArgs, error: &PlanError) -> anyhow::Result<Exit> {
    let message = error.to_string();
    eprintln!("goldgate: {message}");
    refuse(args, &Refusal::new(&message))
}

/// A run that stopped before it played anything (why is said already) tells GitHub too: the
/// sticky comment and the step summary say so instead of keeping the last run's verdict, and
/// the goldens' problems are annotated on their lines. Exit 2.
fn refuse(args: &RunArgs, refusal: &Refusal) -> anyhow::Result<Exit> {
    if let Some(error) = finish::report_files(args).write_not_run(refusal) {
        eprintln!("goldgate: error: {error:#}");
    }
    let shard = (args.selection.common.shard.as_deref()).and_then(|text| text.parse().ok());
    super::publish(args.json && args.output.is_none(), |annotations| {
        let channels = finish::channels(args, Secrets::new());
        publish::publish_refusal(refusal, shard, &channels, annotations)
    })?;
    Ok(Exit::Error)
}
