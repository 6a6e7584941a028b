//! `goldgate merge REPORT... -o FILE`: read shard reports, join them, write the result
//! atomically, and exit as a run of the whole suite would have (see
//! [`goldgate::results::Report::exit`]); 2 when the reports cannot be merged.

use std::io::Write;

use goldgate::exit::Exit;
use goldgate::merge;

use super::files::ReportFiles;
use crate::cli::MergeArgs;

pub fn run(args: &MergeArgs) -> anyhow::Result<Exit> {
    let parts: Result<Vec<_>, _> = args.reports.iter().map(|p| merge::read_part(p)).collect();
    let merged = match parts.and_then(merge::merge) {
        Ok(merged) => merged,
        Err(err) => {
            eprintln!("goldgate merge: {err}");
            return Ok(Exit::Error);
        }
    };
    let report = &merged.report;
    let failed = ReportFiles {
        json: Some(&args.output),
        ..ReportFiles::default()
    }
    .write(report);
    if let Some(error) = failed.into_iter().next() {
        return Err(error);
    }
    let counts = &report.aggregates.cases;
    let mut out = super::stdout();
    writeln!(
        out,
        "goldgate merge: {} reports, {} of {} cases ({} passed, {} failed, {} errors, {} skipped) -> {}",
        args.reports.len(),
        report.cases.len(),
        report.suite.cases,
        counts.passed,
        counts.failed,
        counts.errors,
        counts.skipped,
        args.output.display()
    )?;
    out.flush()?;
    if !merged.missing_shards.is_empty() {
        let missing: Vec<String> = merged
            .missing_shards
            .iter()
            .map(|s| s.to_string())
            .collect();
        eprintln!(
            "goldgate merge: no report for shard {}: the merged report is incomplete",
            missing.join(", ")
        );
    }
    Ok(report.exit())
}
