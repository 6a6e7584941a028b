//! `goldgate report REPORT`: the JUnit XML, the HTML page and the GitHub outputs of a saved JSON report, so
//! that a trusted job can publish for an untrusted one. It exits as the run did (see
//! [`goldgate::results::Report::exit`]).

use goldgate::app::publish::{Channels, DEFAULT_SUITE, Publish, publish, suite_name};
use goldgate::exit::Exit;
use goldgate::report::Summary;
use goldgate::results::json;

use super::files::ReportFiles;
use crate::cli::ReportArgs;

pub fn run(args: &ReportArgs) -> anyhow::Result<Exit> {
    let mut report = match json::read_file(&args.report) {
        Ok(report) => report,
        Err(err) => {
            eprintln!("goldgate: {err}");
            return Ok(Exit::Error);
        }
    };
    if let Err(exit) = super::regate(&mut report, &args.gate, &args.config, "report") {
        return Ok(exit);
    }
    let suite = suite_name(args.config.path()).unwrap_or_else(|| DEFAULT_SUITE.to_owned());
    let summary = Summary::new(&report, &suite);
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
                    suite,
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
