//! JUnit XML for CI systems other than GitHub (GitLab, Jenkins, Buildkite) and JUnit actions.
//!
//! A sink over the JSON report, like the Markdown and the annotations: `goldgate run --junit`
//! and `goldgate report REPORT --junit` write the same XML for the same run, so a job can
//! turn a saved report (a merged one, one from another job) into JUnit. Times are the whole
//! milliseconds the report keeps; the run's wall time is not in the report, so the root
//! `testsuites` element has no `time` (readers sum the suites').
//!
//! **Valid for strict readers.** The XML validates against Jenkins' `junit-10.xsd` and Maven
//! Surefire's 3.0 schema (each `testsuite` on its own), except for two testcase attributes,
//! `file` and `line`: GitLab and action-junit-report read them, the schemas do not list them,
//! and [`Options::locations`] (`--junit-strict`) leaves them out for validating readers such as
//! Jenkins' xUnit plugin. What that takes:
//! - no `skipped` on the root (junit-10 does not allow it; quick-junit always writes it, so
//!   [`to_xml`] takes it out; readers count from the suites);
//! - a `type` on every `failure`, `error`, `flaky*` and `rerun*` element: a failure's is the
//!   category of its first failed check (`agent-text`, `tool-call`, ...), an error's is
//!   `run-error`, a repeat's `failed-run` or `errored-run`;
//! - text inside `skipped` (the reason; GitLab reads an empty one as a hash);
//! - no `properties` inside a testcase: the tags, the score and the repeats head `system-out`;
//! - repeats as a `stackTrace` child, never text, and in Surefire's order (failures before
//!   errors). An errored case's failed runs cannot precede its `error` element in quick-junit's
//!   order, so its error text names them instead.
//!
//! **Where it points.** One `testsuite` per golden file; one `testcase` per case with `name` =
//! the case id. The file is the report's: its path from the project root ([`crate::project`]),
//! so that GitLab links it and actions find it whatever path the goldens were given as, and
//! JUnit and JSON name every file alike. The suite's `name` and every testcase's `classname` are that path with
//! `.` replaced by `_`: Jenkins splits a classname at its last dot (so `orders.yaml` would break
//! its tree), and dorny/test-reporter shows a classname that differs from its suite's name as
//! one more group level. A failed case's `line` is its first failed check's, an errored case's
//! its first errored check or turn, so that annotating readers point at the expectation that
//! failed rather than at the case's first line.
//!
//! A failure's message is one line naming the first failed expectation; its body holds every
//! failing turn with expected vs actual; `system-out` holds the transcript. quick-junit drops
//! ANSI escapes and control characters that XML cannot carry.
//!
//! With `--repeat`, a case stays one testcase (readers keep only one of duplicate names): its
//! other runs that failed or errored are `flakyFailure` / `flakyError` elements when the case
//! passed, `rerunFailure` / `rerunError` when it did not (its shown run is the failure
//! itself), as Jenkins and the JUnit actions read them. The report keeps only each run's
//! status, so those elements say which run it was (`run 2 of 5 failed`); the details are those
//! of the run the case shows.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;
use std::time::Duration;

use quick_junit::{
    NonSuccessKind, Property, Report as JunitReport, SerializeError, TestCase, TestCaseStatus,
    TestRerun, TestSuite,
};

use crate::report::console::{case_details, escape, shown_run};
use crate::report::summary::RunFinding;
use crate::report::{Standing, Summary};
use crate::results::{CaseResult, CheckCategory, Report, Status, millis};

mod not_run;
pub use not_run::not_run_xml;

/// Whether the XML carries locations.
#[derive(Clone, Debug)]
pub struct Options {
    /// Testcase `file` and `line` attributes (on by default; off with `--junit-strict`).
    pub locations: bool,
}

/// The JUnit report of a run's JSON report.
pub fn build(summary: &Summary, options: &Options) -> JunitReport {
    let report = summary.report;
    let mut suites: Vec<TestSuite> = Vec::new();
    // Each suite's place: searching the suites per case was quadratic in files.
    let mut places: HashMap<String, usize> = HashMap::new();
    for case in &report.cases {
        // The report's own name, so that JUnit and JSON agree on every file.
        let path = &case.file;
        let name = classname(path);
        let index = match places.get(&name) {
            Some(&index) => index,
            None => {
                suites.push(TestSuite::new(name.as_str()));
                places.insert(name, suites.len() - 1);
                suites.len() - 1
            }
        };
        let suite = &mut suites[index];
        suite.add_test_case(test_case(
            case,
            path,
            summary.standing(case),
            options.locations,
        ));
        suite.time = Some(suite.time.unwrap_or_default() + time(case.duration));
    }
    suites.extend(run_failures_suite(summary, options));
    // A reader that counts failures cannot tell a failure the gate excused from one that
    // failed the run: every suite carries the verdict the exit code stands for.
    for suite in &mut suites {
        suite.add_property(Property::new("goldgate.verdict", summary.verdict.name()));
        let exit = summary.exit.code().to_string();
        suite.add_property(Property::new("goldgate.exit", exit.as_str()));
        suite.add_property(Property::new(
            "goldgate.headline",
            summary.headline.as_str(),
        ));
    }
    // A stopped run must not read green in a reader that only counts failures: every suite
    // says so (the cases that never ran are there, skipped with why).
    if report.incomplete {
        let why = match report.budget.filter(|b| b.reached) {
            Some(budget) => format!(
                "true: the run reached its budget of {} before every case ran",
                crate::transcript::dollars(budget.limit_usd)
            ),
            None => "true: the run was stopped before every case ran".to_owned(),
        };
        for suite in &mut suites {
            suite.add_property(Property::new("goldgate.incomplete", why.as_str()));
        }
    }
    if report.incomplete || report.budget.is_some_and(|b| b.reached) {
        suites.push(incomplete_suite(report));
    }
    // Part of the suite (`--changed-since`, `--rerun`): a green JUnit of two cases must not
    // read as a green run of all of them.
    if let Some(scope) = &report.scope {
        for suite in &mut suites {
            suite.add_property(Property::new("goldgate.scope", scope.describe().as_str()));
        }
    }
    let mut junit = JunitReport::new("goldgate");
    junit.add_test_suites(suites);
    junit
}

/// One suite with one errored testcase for a stopped run: readers that count only failures
/// and errors (and show skips as a pass) must not read it as green.
fn incomplete_suite(report: &Report) -> TestSuite {
    let not_run = report
        .cases
        .iter()
        .filter(|c| c.status == Status::Skipped && c.turns.is_empty())
        .count();
    let why = match report.budget.filter(|b| b.reached) {
        Some(budget) => format!(
            "the run reached its budget of {}",
            crate::transcript::dollars(budget.limit_usd)
        ),
        None => "the run was interrupted".to_owned(),
    };
    let message = format!("goldgate: run incomplete: {why}; {not_run} cases not run");
    let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
    status.set_type("incomplete").set_message(message.as_str());
    let mut test = TestCase::new("run incomplete", status);
    // Surefire's schema wants both: a classname to group it, a time (nothing of it ran).
    test.set_classname("goldgate").set_time(Duration::ZERO);
    let mut suite = TestSuite::new("goldgate");
    suite.add_test_case(test);
    suite
}

/// One `goldgate` suite with a failed testcase per finding that fails the run with no case
/// to point at ([`Summary::run_findings`]: a floor, a tripped threshold): a reader that counts
/// failures must not read a red run as `failures="0"`. None when nothing of the kind fails it.
fn run_failures_suite(summary: &Summary, options: &Options) -> Option<TestSuite> {
    let failures: Vec<RunFinding> = (summary.run_findings().into_iter())
        .filter(|f| f.blocks)
        .collect();
    if failures.is_empty() {
        return None;
    }
    let mut suite = TestSuite::new("goldgate");
    for finding in failures {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
        status
            .set_type(finding.kind.name())
            .set_message(finding.message.as_str());
        let mut test = TestCase::new(finding.title.as_str(), status);
        test.set_classname("goldgate").set_time(Duration::ZERO);
        if let (true, Some((file, line))) = (options.locations, &finding.place) {
            test.extra.insert("file".into(), file.as_str().into());
            test.extra.insert("line".into(), line.to_string().into());
        }
        suite.add_test_case(test);
    }
    Some(suite)
}

/// The XML of [`build`], valid for the schemas as the module doc says.
pub fn to_xml(summary: &Summary, options: &Options) -> Result<String, SerializeError> {
    let junit = build(summary, options);
    let xml = junit.to_string()?;
    Ok(without_root_skipped(xml, junit.skipped))
}

/// Writes the XML of [`build`].
pub fn write(
    summary: &Summary,
    options: &Options,
    out: &mut impl Write,
) -> Result<(), SerializeError> {
    out.write_all(to_xml(summary, options)?.as_bytes())
        .map_err(SerializeError::from)
}

/// Writes the XML of [`build`] to a file.
pub fn write_file(path: &Path, summary: &Summary, options: &Options) -> io::Result<()> {
    let xml = to_xml(summary, options).map_err(io::Error::other)?;
    crate::atomic::write(path, |out| out.write_all(xml.as_bytes()))
}

/// quick-junit writes `skipped` on the root `testsuites`, which junit-10.xsd does not allow:
/// this takes it out of the root's start tag (the first tag, so nothing else is touched).
fn without_root_skipped(xml: String, skipped: usize) -> String {
    let attribute = format!(" skipped=\"{skipped}\"");
    let Some(start) = xml.find("<testsuites") else {
        return xml;
    };
    let end = start + xml[start..].find('>').unwrap_or(0);
    match xml[start..end].find(&attribute) {
        Some(at) => {
            let at = start + at;
            format!("{}{}", &xml[..at], &xml[at + attribute.len()..])
        }
        None => xml,
    }
}

/// A path as a classname (and a suite name): its dots made underscores, so that Jenkins does
/// not take `.yaml` for a class.
fn classname(path: &str) -> String {
    path.replace('.', "_")
}

/// A time as the saved report has it (whole milliseconds), so that a report read back from its
/// file gives the same XML as the one in memory.
fn time(duration: Duration) -> Duration {
    Duration::from_millis(millis::of(&duration))
}

fn test_case(case: &CaseResult, path: &str, standing: Standing, locations: bool) -> TestCase {
    let mut test = TestCase::new(case.id.as_str(), status(case, path, standing));
    test.set_classname(classname(path))
        .set_time(time(case.duration))
        .set_system_out(format!("{}{}", about(case), transcript(case, path)));
    if locations {
        test.extra.insert("file".into(), path.into());
        test.extra
            .insert("line".into(), case_line(case).to_string().into());
    }
    test
}

/// The line a reader should point at: a failed case's first failed check, an errored case's
/// first errored check or turn, else the case's own line (a line 0, which a check without a
/// place of its own has, never wins).
pub fn case_line(case: &CaseResult) -> u32 {
    let at = |line: u32| (line > 0).then_some(line);
    let found = match case.status {
        Status::Failed => case
            .all_checks()
            .filter(|c| c.status == Status::Failed)
            .find_map(|c| at(c.line)),
        Status::Error => case
            .turns
            .iter()
            .find_map(|turn| {
                if turn.error.is_some() {
                    at(turn.line)
                } else {
                    turn.checks
                        .iter()
                        .filter(|c| c.status == Status::Error)
                        .find_map(|c| at(c.line))
                }
            })
            .or_else(|| {
                case.checks
                    .iter()
                    .filter(|c| c.status == Status::Error)
                    .find_map(|c| at(c.line))
            }),
        Status::Passed | Status::Skipped => None,
    };
    found.unwrap_or(case.line)
}

/// What testcase properties would carry, where every schema allows it: the head of
/// `system-out`.
fn about(case: &CaseResult) -> String {
    let mut out = String::new();
    if !case.tags.is_empty() {
        let _ = writeln!(out, "tags: {}", case.tags.join(", "));
    }
    let _ = writeln!(out, "score: {:.3}", case.score);
    if let Some(repeats) = &case.repeats {
        let _ = writeln!(out, "repeats: {repeats}");
    }
    out
}

/// The runs of a repeated case that failed or errored, but the one shown as the case's own
/// failure, failures first (Surefire's order). An errored case lists only its errored runs:
/// see the module doc, and [`unlisted_runs`].
fn reruns(case: &CaseResult) -> Vec<TestRerun> {
    let mut reruns: Vec<(NonSuccessKind, String)> = other_runs(case)
        .filter(|&(kind, _)| !(case.status == Status::Error && kind == NonSuccessKind::Failure))
        .collect();
    reruns.sort_by_key(|(kind, _)| *kind == NonSuccessKind::Error);
    reruns
        .into_iter()
        .map(|(kind, message)| {
            let mut rerun = TestRerun::new(kind);
            rerun
                .set_type(match kind {
                    NonSuccessKind::Failure => "failed-run",
                    NonSuccessKind::Error => "errored-run",
                })
                .set_stack_trace(message.as_str())
                .set_message(message);
            rerun
        })
        .collect()
}

/// The failed runs of an errored case, which [`reruns`] leaves out.
fn unlisted_runs(case: &CaseResult) -> Vec<String> {
    if case.status != Status::Error {
        return Vec::new();
    }
    other_runs(case)
        .filter(|&(kind, _)| kind == NonSuccessKind::Failure)
        .map(|(_, message)| message)
        .collect()
}

/// Each run of a repeated case that failed or errored, but the shown one, in run order.
fn other_runs(case: &CaseResult) -> impl Iterator<Item = (NonSuccessKind, String)> + '_ {
    let shown = shown_run(case);
    let runs = case.repeats.as_ref().map_or(&[][..], |r| &r.runs[..]);
    let count = runs.len();
    runs.iter()
        .enumerate()
        .filter(move |&(index, _)| Some(index) != shown)
        .filter_map(move |(index, status)| {
            let (kind, ended) = match status {
                Status::Failed => (NonSuccessKind::Failure, "failed"),
                Status::Error => (NonSuccessKind::Error, "errored"),
                Status::Passed | Status::Skipped => return None,
            };
            Some((kind, format!("run {} of {count} {ended}", index + 1)))
        })
}

fn status(case: &CaseResult, path: &str, standing: Standing) -> TestCaseStatus {
    let (kind, ty, message) = match case.status {
        Status::Passed => {
            let mut status = TestCaseStatus::success();
            status.add_reruns(reruns(case));
            return status;
        }
        Status::Skipped => {
            let mut status = TestCaseStatus::skipped();
            // The case's own reason first: a skipped simulation's passed steps carry reasons too.
            let reason = case.error.as_deref().or_else(|| {
                case.all_checks()
                    .filter(|c| c.status == Status::Skipped)
                    .find_map(|c| c.reason.as_deref())
            });
            let reason = escape(reason.unwrap_or("no check could be judged"));
            status
                .set_description(reason.as_ref())
                .set_message(reason.as_ref());
            return status;
        }
        Status::Failed => (
            NonSuccessKind::Failure,
            failure_type(case),
            failure_message(case),
        ),
        Status::Error => (
            NonSuccessKind::Error,
            "run-error".to_owned(),
            error_message(case),
        ),
    };
    // A failure that did not fail the run says so first: a reader shows it red all the same.
    let message = match standing {
        Standing::Excused(excuse) => format!("not blocking ({}): {message}", excuse.describe()),
        _ => message,
    };
    // Readers that show only the body (GitLab) still see the verdict on its first line.
    let message = escape(&message);
    // The details name the file as the rest of the XML does.
    let located = CaseResult {
        file: path.to_owned(),
        ..case.clone()
    };
    let mut body = format!("{message}\n{}", case_details(&located));
    for run in unlisted_runs(case) {
        let _ = writeln!(body, "  {run}");
    }
    let mut status = TestCaseStatus::non_success(kind);
    status
        .set_description(body)
        .set_message(message)
        .set_type(ty)
        .add_reruns(reruns(case));
    status
}

/// The category of the first failed check (`agent-text`, `tool-call`, ...): what kind of
/// expectation failed, as the report's machines know it.
fn failure_type(case: &CaseResult) -> String {
    case.all_checks()
        .find(|c| c.status == Status::Failed)
        .map_or_else(|| "failure".to_owned(), |c| category_name(c.category))
}

/// A category as the JSON report writes it.
fn category_name(category: CheckCategory) -> String {
    serde_json::to_value(category)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "failure".to_owned())
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
fn transcript(case: &CaseResult, path: &str) -> String {
    let mut out = String::new();
    for turn in &case.turns {
        let _ = writeln!(out, "turn {} ({path}:{})", turn.index, turn.line);
        let _ = writeln!(out, "user: {}", turn.input);
        if let Some(reply) = &turn.reply {
            reply.write_lines(&mut out);
        }
        if let Some(cut) = &turn.cut {
            let _ = writeln!(out, "{cut}");
        }
        if let Some(error) = &turn.error {
            let _ = writeln!(out, "error: {error}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_roots_skipped_count_goes() {
        let xml = "<?xml?>\n<testsuites name=\"goldgate\" tests=\"2\" skipped=\"1\" failures=\"0\">\n<testsuite name=\"a\" skipped=\"1\">".to_owned();
        assert_eq!(
            without_root_skipped(xml, 1),
            "<?xml?>\n<testsuites name=\"goldgate\" tests=\"2\" failures=\"0\">\n<testsuite name=\"a\" skipped=\"1\">"
        );
    }
}
