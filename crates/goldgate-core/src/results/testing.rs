//! Hand-made results, for the unit tests of the modules that read them, here and in goldgate
//! (its [dev-dependencies] turn the `testing` feature on). Never in a release build.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::{CaseResult, Report, Status, TurnResult};
use crate::model::{Case, Format, Location};

/// A case of one run in `file`, with `status` and no turns.
pub fn case(file: &str, id: &str, status: Status) -> CaseResult {
    let location = Location::new(&Arc::from(Path::new(file)), 3, 1);
    let mut case = Case::named(id.to_owned(), Format::ScrapiGolden, location);
    case.name = format!("{id} name");
    CaseResult {
        status,
        score: if status == Status::Passed { 1.0 } else { 0.0 },
        duration: Duration::from_millis(12),
        error: (status == Status::Error).then(|| "timed out".to_owned()),
        ..CaseResult::of(&case)
    }
}

/// Turn `index` (from 1), passed, that took `ms` milliseconds.
pub fn timed_turn(index: usize, ms: f64) -> TurnResult {
    TurnResult::timed(index, Duration::from_secs_f64(ms / 1000.0))
}

/// The report of a run of `cases`.
pub fn report(cases: Vec<CaseResult>) -> Report {
    Report {
        goldgate_version: "0.0.0".to_owned(),
        agent: "test agent".to_owned(),
        agent_log: Some("pid 42 started".to_owned()),
        ..Report::of_cases(cases)
    }
}
