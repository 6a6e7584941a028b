//! The JUnit of a run that stopped before it played anything (a golden or the config that does
//! not load, a bad flag), so that a reader of the file sees an error there, never a missing
//! file or the one an earlier run left: a JUnit action that gates the job would read either as
//! nothing failed.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Report as JunitReport, TestCase, TestCaseStatus, TestSuite};

use super::{Options, classname, without_root_skipped};
use crate::diagnostic::{Diagnostic, Severity};

/// The testcase type of every error here: nothing was played.
const NOT_RUN: &str = "not-run";

/// One testsuite per golden file with an error, its one testcase (`loads`) in error at the
/// first error's line, every problem of the file below it; the `reason` and `details` alone
/// (one `goldgate` suite, one `run` testcase) when no golden has an error. `path` names a
/// problem's file as reports do.
pub fn not_run_xml(
    (reason, details): (&str, &str),
    problems: &[Diagnostic],
    path: &dyn Fn(&Diagnostic) -> String,
    options: &Options,
) -> Result<String, quick_junit::SerializeError> {
    let mut suites: Vec<TestSuite> = Vec::new();
    let mut files: Vec<(String, Vec<&Diagnostic>)> = Vec::new();
    for problem in problems {
        let file = path(problem);
        match files.iter_mut().find(|(name, _)| *name == file) {
            Some((_, found)) => found.push(problem),
            None => files.push((file, vec![problem])),
        }
    }
    for (file, found) in &files {
        let Some(first) = found.iter().find(|d| d.severity == Severity::Error) else {
            continue;
        };
        let lines: Vec<String> = found.iter().map(|d| d.line_naming(file)).collect();
        let mut test = TestCase::new("loads", error(&first.line_naming(file), &lines.join("\n")));
        // Surefire's schema wants a time: nothing ran.
        test.set_classname(classname(file)).set_time(Duration::ZERO);
        if options.locations {
            test.extra.insert("file".into(), file.as_str().into());
            test.extra
                .insert("line".into(), first.location.line.to_string().into());
        }
        let mut suite = TestSuite::new(classname(file));
        suite.add_test_case(test);
        suites.push(suite);
    }
    if suites.is_empty() {
        let mut test = TestCase::new("run", error(reason, details));
        test.set_classname("goldgate").set_time(Duration::ZERO);
        let mut suite = TestSuite::new("goldgate");
        suite.add_test_case(test);
        suites.push(suite);
    }
    let mut junit = JunitReport::new("goldgate");
    junit.add_test_suites(suites);
    let xml = junit.to_string()?;
    Ok(without_root_skipped(xml, junit.skipped))
}

fn error(message: &str, description: &str) -> TestCaseStatus {
    let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
    status
        .set_type(NOT_RUN)
        .set_message(message)
        .set_description(description);
    status
}
