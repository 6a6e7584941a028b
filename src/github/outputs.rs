//! A step's results for the rest of the workflow: its outputs (`$GITHUB_OUTPUT`) and its
//! summary (`$GITHUB_STEP_SUMMARY`, shown on the run's page).
//!
//! Both files are appended to, never replaced: other commands of the same step may have
//! written to them already.

use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::Path;

use crate::report::Summary;

/// The outputs of a run, as the action exposes them.
#[derive(Clone, Debug, PartialEq)]
pub struct Outputs {
    /// Cases passed / judged, in percent with one decimal; empty when no case was judged.
    pub pass_rate: Option<f64>,
    pub passed: usize,
    pub failed: usize,
    /// The gate tripped (always false without a baseline).
    pub regressed: bool,
    /// What the run came to, as the exit code says it: `pass`, `failed`, `regressed`,
    /// `inconclusive` or `error`.
    pub verdict: &'static str,
    /// The exit code the verdict stands for: 0, 1 or 2.
    pub exit: u8,
    /// The verdict in words, as every other output opens with it; empty for a run that
    /// played nothing.
    pub headline: String,
    /// Comparisons the gate left undecided.
    pub undecided: usize,
    /// US dollars known to have been spent; `None` when no cost is known.
    pub cost_usd: Option<f64>,
    /// The JSON report written, if any.
    pub report: Option<String>,
}

impl Outputs {
    pub fn of(summary: &Summary, report_path: Option<&Path>) -> Self {
        let report = summary.report;
        Self {
            pass_rate: report.aggregates.pass_rate,
            passed: report.aggregates.cases.passed,
            failed: report.aggregates.cases.failed,
            regressed: report.gate.as_ref().is_some_and(|g| g.regressed()),
            verdict: summary.verdict.name(),
            exit: summary.exit.code(),
            headline: summary.headline.clone(),
            undecided: report.gate.as_ref().map_or(0, |g| g.undecided_count()),
            cost_usd: report.spending().total.usd(),
            report: report_path.map(|p| p.display().to_string()),
        }
    }

    /// A run that played nothing: no figures, and the verdict every run that could not be
    /// judged gives.
    pub fn not_run() -> Self {
        Self {
            pass_rate: None,
            passed: 0,
            failed: 0,
            regressed: false,
            verdict: "error",
            exit: crate::exit::Exit::Error.code(),
            headline: String::new(),
            undecided: 0,
            cost_usd: None,
            report: None,
        }
    }

    /// `name=value` lines in the file format of `$GITHUB_OUTPUT`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let pass_rate = self
            .pass_rate
            .map(|r| format!("{:.1}", r * 100.0))
            .unwrap_or_default();
        for (name, value) in [
            ("pass-rate", pass_rate),
            ("passed", self.passed.to_string()),
            ("failed", self.failed.to_string()),
            ("regressed", self.regressed.to_string()),
            ("verdict", self.verdict.to_owned()),
            ("exit", self.exit.to_string()),
            ("headline", self.headline.clone()),
            ("undecided", self.undecided.to_string()),
            (
                "cost",
                self.cost_usd
                    .map(|usd| format!("{usd:.6}"))
                    .unwrap_or_default(),
            ),
            ("report", self.report.clone().unwrap_or_default()),
        ] {
            entry(&mut out, name, &value);
        }
        out
    }

    /// Appends the outputs to the `$GITHUB_OUTPUT` file at `path`.
    pub fn append_to(&self, path: &Path) -> io::Result<()> {
        append(path, &self.render())
    }
}

/// Appends `markdown` to the `$GITHUB_STEP_SUMMARY` file at `path`.
pub fn append_summary(path: &Path, markdown: &str) -> io::Result<()> {
    append(path, markdown)
}

/// One output. A value with a line break (a path can hold one) takes the multi-line form,
/// with a delimiter that cannot occur in it.
fn entry(out: &mut String, name: &str, value: &str) {
    if !value.contains(['\n', '\r']) {
        let _ = writeln!(out, "{name}={value}");
        return;
    }
    let mut delimiter = String::from("GOLDGATE_EOF");
    while value.contains(&delimiter) {
        let _ = write!(delimiter, "_{:08x}", fastrand::u32(..));
    }
    let _ = writeln!(out, "{name}<<{delimiter}\n{value}\n{delimiter}");
}

fn append(path: &Path, text: &str) -> io::Result<()> {
    // Looked at before opening: a FIFO would block the open past any signal.
    crate::atomic::file_or_none(path)?;
    let mut file = OpenOptions::new().create(true).append(true).open(path)?;
    file.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        file.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_use_the_file_format_of_github_output() {
        let outputs = Outputs {
            pass_rate: Some(0.875),
            passed: 7,
            failed: 1,
            regressed: false,
            verdict: "pass",
            exit: 0,
            headline: "all 8 cases passed".to_owned(),
            undecided: 0,
            cost_usd: Some(0.4203),
            report: Some("odd\nname.json".to_owned()),
        };
        let text = outputs.render();
        assert!(text.starts_with(
            "pass-rate=87.5\npassed=7\nfailed=1\nregressed=false\nverdict=pass\nexit=0\nheadline=all 8 cases passed\nundecided=0\ncost=0.420300\nreport<<GOLDGATE_EOF\nodd\nname.json\nGOLDGATE_EOF\n"
        ), "{text}");
    }
}
