//! `goldgate report REPORT`: the JUnit XML, the HTML page and the GitHub outputs of a saved JSON report, so
//! that a trusted job can publish for an untrusted one. It exits as the run did (see
//! [`goldgate::results::Report::exit`]).

use goldgate::app::publish::{Channels, Publish, publish};
use goldgate::app::regate::Mode;
use goldgate::exit::Exit;

use super::files::ReportFiles;
use crate::cli::ReportArgs;

pub fn run(args: &ReportArgs) -> anyhow::Result<Exit> {
    let gate = (args.gate.request(), &args.config);
    let (regate, mut report) =
        match super::regate_saved(gate, Mode::IfAsked, "report", &args.report) {
            Ok(both) => both,
            Err(exit) => return Ok(exit),
        };
    let summary = regate.apply(&mut report, &args.report.display().to_string());
    let failed = ReportFiles {
        junit: args.junit.as_deref(),
        junit_strict: args.junit_strict,
        html: args.html.as_deref(),
        ..ReportFiles::default()
    }
    .write(&summary);
    super::publish(false, |annotations| {
        publish(
            &Publish {
                summary: &summary,
                report_path: Some(&args.report),
                channels: Channels {
                    suite: summary.suite.clone(),
                    markdown: args.github.markdown.as_deref(),
                    comment: args.github.comment,
                    secrets: Default::default(),
                },
            },
            annotations,
        )
    })?;
    // A file that could not be written is lost: the outputs cannot count as complete.
    for error in &failed {
        eprintln!("goldgate: error: {error:#}");
    }
    Ok(if failed.is_empty() {
        summary.exit
    } else {
        Exit::Error
    })
}
