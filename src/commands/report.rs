//! `goldgate report REPORT`: the JUnit XML, the HTML page and the GitHub outputs of a saved JSON report, so
//! that a trusted job can publish for an untrusted one. It exits as the run did (see
//! [`goldgate::results::Report::exit`]).

use goldgate::app::publish::{Channels, Publish, publish};
use goldgate::app::regate::Mode;
use goldgate::exit::Exit;
use goldgate::results::json;

use super::files::ReportFiles;
use crate::cli::ReportArgs;

pub fn run(args: &ReportArgs) -> anyhow::Result<Exit> {
    let regate = match super::regate((&args.gate, &args.config), Mode::IfAsked, "report") {
        Ok(regate) => regate,
        Err(exit) => return Ok(exit),
    };
    let mut report = match json::read_file(&args.report) {
        Ok(report) => report,
        Err(err) => {
            eprintln!("goldgate: {err}");
            return Ok(Exit::Error);
        }
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
