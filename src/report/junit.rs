//! JUnit XML for CI systems other than GitHub (GitLab, Jenkins, Buildkite) and JUnit actions.
//!
//! A sink over the JSON report, like the Markdown and the annotations: `goldgate run --junit`
//! and `goldgate report REPORT --junit` write the same XML for the same run, so a job can
//! turn a saved report (a merged one, one from another job) into JUnit. Times are the whole
//! milliseconds the report keeps; the run's wall time is not in the report, so the root
//! `testsuites` element has no `time` (readers sum the suites').
//!
//! The mapping suits all the common readers (see STACK.md, "JUnit"): one `testsuite` per golden
//! file; one `testcase` per case with `name` = the case id and `classname` = the file path with
//! `.` replaced by `_` (Jenkins splits a classname at its last dot, so `orders.yaml` would
//! break its tree), plus `file` and `line` attributes for annotating readers. A failure's
//! message is one line naming the first failed expectation; its body holds every failing turn
//! with expected vs actual; `system-out` holds the transcript. quick-junit drops ANSI escapes
//! and control characters that XML cannot carry.
//!
//! With `--repeat`, a case stays one testcase (readers keep only one of duplicate names): its
//! other runs that failed or errored are `flakyFailure` / `flakyError` elements when the case
//! passed, `rerunFailure` / `rerunError` when it did not (its shown run is the failure
//! itself), as Jenkins and the JUnit actions read them; a `repeats` property counts the runs.
//! The report keeps only each run's status, so those elements say which run it was
//! (`run 2 of 5 failed`); the details are those of the run the case shows.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;
use std::time::Duration;

use quick_junit::{
    NonSuccessKind, Report as JunitReport, SerializeError, TestCase, TestCaseStatus, TestRerun,
    TestSuite,
};

use crate::report::console::{case_details, escape, shown_run};
use crate::results::{CaseResult, Report, Status, millis};

/// The JUnit report of a run's JSON report.
pub fn build(report: &Report) -> JunitReport {
    let mut suites: Vec<TestSuite> = Vec::new();
    for case in &report.cases {
        let index = match suites.iter().position(|s| s.name.as_str() == case.file) {
            Some(index) => index,
            None => {
                suites.push(TestSuite::new(case.file.as_str()));
                suites.len() - 1
            }
        };
        let suite = &mut suites[index];
        suite.add_test_case(test_case(case));
        suite.time = Some(suite.time.unwrap_or_default() + time(case.duration));
    }
    let mut junit = JunitReport::new("goldgate");
    junit.add_test_suites(suites);
    junit
}

/// Writes the XML of [`build`].
pub fn write(report: &Report, out: &mut impl Write) -> Result<(), SerializeError> {
    build(report).serialize(out)
}

/// Writes the XML of [`build`] to a file.
pub fn write_file(path: &Path, report: &Report) -> io::Result<()> {
    let xml = build(report).to_string().map_err(io::Error::other)?;
    std::fs::write(path, xml)
}

/// A time as the saved report has it (whole milliseconds), so that a report read back from its
/// file gives the same XML as the one in memory.
fn time(duration: Duration) -> Duration {
    Duration::from_millis(millis::of(&duration))
}

fn test_case(case: &CaseResult) -> TestCase {
    let mut test = TestCase::new(case.id.as_str(), status(case));
    test.set_classname(case.file.replace('.', "_"))
        .set_time(time(case.duration))
        .set_system_out(transcript(case));
    test.extra.insert("file".into(), case.file.as_str().into());
    test.extra
        .insert("line".into(), case.line.to_string().into());
    test.add_properties(case.tags.iter().map(|tag| ("tag", tag.as_str())));
    test.add_property(("score", format!("{:.3}", case.score).as_str()));
    if let Some(repeats) = &case.repeats {
        let runs = format!(
            "{} of {} passed, {} needed",
            repeats.passed,
            repeats.runs.len(),
            repeats.min_pass
        );
        test.add_property(("repeats", runs.as_str()));
    }
    test
}

/// The runs of a repeated case that failed or errored, but the one shown as the case's own
/// failure (see the module doc).
fn reruns(case: &CaseResult) -> Vec<TestRerun> {
    let Some(repeats) = &case.repeats else {
        return Vec::new();
    };
    let shown = shown_run(case);
    let count = repeats.runs.len();
    repeats
        .runs
        .iter()
        .enumerate()
        .filter(|&(index, _)| Some(index) != shown)
        .filter_map(|(index, status)| {
            let (kind, ended) = match status {
                Status::Failed => (NonSuccessKind::Failure, "failed"),
                Status::Error => (NonSuccessKind::Error, "errored"),
                Status::Passed | Status::Skipped => return None,
            };
            let mut rerun = TestRerun::new(kind);
            rerun.set_message(format!("run {} of {count} {ended}", index + 1));
            Some(rerun)
        })
        .collect()
}

fn status(case: &CaseResult) -> TestCaseStatus {
    let (kind, message) = match case.status {
        Status::Passed => {
            let mut status = TestCaseStatus::success();
            status.add_reruns(reruns(case));
            return status;
        }
        Status::Skipped => {
            let mut status = TestCaseStatus::skipped();
            let reason = case.all_checks().find_map(|c| c.reason.as_deref());
            status.set_message(escape(reason.unwrap_or("no check could be judged")));
            return status;
        }
        Status::Failed => (NonSuccessKind::Failure, failure_message(case)),
        Status::Error => (NonSuccessKind::Error, error_message(case)),
    };
    // Readers that show only the body (GitLab) still see the verdict on its first line.
    let message = escape(&message);
    let mut status = TestCaseStatus::non_success(kind);
    status
        .set_description(format!("{message}\n{}", case_details(case)))
        .set_message(message)
        .add_reruns(reruns(case));
    status
}

/// The first failed expectation, on one line: `label: expected …, got …`.
fn failure_message(case: &CaseResult) -> String {
    case.all_checks()
        .find(|c| c.status == Status::Failed)
        .map_or_else(
            || "failed".to_owned(),
            |c| format!("{}: expected {}, got {}", c.label, c.expected, c.actual),
        )
}

/// The error of the run that stopped the case, wherever it was recorded.
fn error_message(case: &CaseResult) -> String {
    case.error
        .iter()
        .chain(case.turns.iter().filter_map(|t| t.error.as_ref()))
        .next()
        .cloned()
        .or_else(|| {
            case.all_checks()
                .find(|c| c.status == Status::Error)
                .map(|c| format!("{}: {}", c.label, c.reason.as_deref().unwrap_or("error")))
        })
        .unwrap_or_else(|| "error".to_owned())
}

/// What was said, turn by turn: the user side, the agent's text, its tool calls, transfers,
/// handoffs and errors.
fn transcript(case: &CaseResult) -> String {
    let mut out = String::new();
    for turn in &case.turns {
        let _ = writeln!(out, "turn {} ({}:{})", turn.index, case.file, turn.line);
        let _ = writeln!(out, "user: {}", turn.input);
        if let Some(reply) = &turn.reply {
            for message in &reply.messages {
                match &message.agent {
                    Some(agent) => {
                        let _ = writeln!(out, "agent ({agent}): {}", message.text);
                    }
                    None => {
                        let _ = writeln!(out, "agent: {}", message.text);
                    }
                }
            }
            for call in &reply.tool_calls {
                let _ = write!(out, "tool call: {} {}", call.name, call.args);
                if let Some(response) = &call.response {
                    let _ = write!(out, " -> {response}");
                }
                out.push('\n');
            }
            if let Some(transfer) = &reply.transfer {
                let _ = writeln!(out, "transfer: {}", transfer.agent);
            }
            if let Some(handoff) = &reply.handoff {
                let _ = writeln!(out, "handoff: {}", handoff.status);
            }
            if let Some(error) = &reply.error {
                let _ = writeln!(out, "agent error: {}: {}", error.code, error.message);
            }
        }
        if let Some(error) = &turn.error {
            let _ = writeln!(out, "error: {error}");
        }
    }
    out
}
