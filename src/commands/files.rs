//! The report files a command writes (`run`, `report`, `merge`): one step, so that each is
//! written the same way, each whatever became of the others, atomically.

use std::path::Path;

use anyhow::Context as _;

use goldgate::app::publish::Refusal;
use goldgate::diagnostic::Diagnostic;
use goldgate::report::Summary;
use goldgate::report::{html, junit};
use goldgate::results::json;

/// Which files to write; `None` leaves one out.
#[derive(Default)]
pub struct ReportFiles<'a> {
    pub json: Option<&'a Path>,
    pub junit: Option<&'a Path>,
    /// `--junit-strict`: no file or line attributes, for readers that refuse them.
    pub junit_strict: bool,
    pub html: Option<&'a Path>,
}

impl ReportFiles<'_> {
    /// Writes every file asked for; the ones that could not be written.
    pub fn write(&self, summary: &Summary) -> Vec<anyhow::Error> {
        let report = summary.report;
        let mut failed = Vec::new();
        if let Some(path) = self.json {
            failed.extend(
                json::write_file_atomically(path, report)
                    .with_context(|| format!("cannot write the JSON report to {}", path.display()))
                    .err(),
            );
        }
        if let Some(path) = self.junit {
            let options = junit::Options {
                locations: !self.junit_strict,
            };
            failed.extend(
                junit::write_file(path, summary, &options)
                    .with_context(|| format!("cannot write JUnit XML to {}", path.display()))
                    .err(),
            );
        }
        if let Some(path) = self.html {
            failed.extend(
                html::write_file(path, summary)
                    .with_context(|| format!("cannot write the HTML report to {}", path.display()))
                    .err(),
            );
        }
        failed
    }

    /// For a run that played nothing: only the JUnit, whose readers must see the error (see
    /// [`junit::not_run_xml`]). No JSON or HTML report: a report of no cases could be taken
    /// for a passing run, or become a baseline.
    pub fn write_not_run(&self, refusal: &Refusal) -> Option<anyhow::Error> {
        let path = self.junit?;
        let options = junit::Options {
            locations: !self.junit_strict,
        };
        let cwd = std::env::current_dir().unwrap_or_default();
        let name = |d: &Diagnostic| goldgate::project::name(&d.location.file, &cwd);
        let problems = &refusal.problems;
        let reason = (refusal.reason.as_str(), refusal.details.as_str());
        let written = junit::not_run_xml(reason, problems, &name, &options)
            .map_err(std::io::Error::other)
            .and_then(|xml| goldgate::atomic::write(path, |out| out.write_all(xml.as_bytes())));
        written
            .with_context(|| format!("cannot write JUnit XML to {}", path.display()))
            .err()
    }
}
