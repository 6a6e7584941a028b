//! `goldgate merge REPORT... -o FILE [--baseline F --fail-on-regress]`: read shard reports,
//! join them, gate the whole when asked, write the result atomically, and exit as a run of the
//! whole suite would have (see [`goldgate::results::Report::exit`]); 2 when the reports cannot
//! be merged, or were gated and no baseline is given to gate the whole.

use std::io::Write;

use goldgate::app::regate::Mode;
use goldgate::exit::Exit;
use goldgate::merge;
use goldgate::report::console;
use goldgate::results::Verdict;

use super::files::ReportFiles;
use crate::cli::MergeArgs;

pub fn run(args: &MergeArgs) -> anyhow::Result<Exit> {
    let regate = match super::regate((args.gate.request(), &args.config), Mode::IfAsked, "merge") {
        Ok(regate) => regate,
        Err(exit) => return Ok(exit),
    };
    let parts: Result<Vec<_>, _> = args.reports.iter().map(|p| merge::read_part(p)).collect();
    let mut merged = match parts.and_then(merge::merge) {
        Ok(merged) => merged,
        Err(err) => {
            eprintln!("goldgate merge: {err}");
            return Ok(Exit::Error);
        }
    };
    let played = merged.extra_runs;
    let summary = regate.apply_played(&mut merged.report, "the merged report", played);
    let report = summary.report;
    let failed = ReportFiles {
        json: Some(&args.output),
        ..ReportFiles::default()
    }
    .write(&summary);
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
    // The verdict the merged report stands for, as a run of the whole suite prints it.
    console::write_verdict(&summary, &mut out)?;
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
    if summary.verdict == Verdict::Ungated {
        eprintln!(
            "goldgate merge: the shards were gated (--fail-on-regress) and a gate is not joined \
             from its parts: give merge the baseline (--baseline FILE --fail-on-regress) to gate \
             the whole run"
        );
    }
    Ok(summary.exit)
}
