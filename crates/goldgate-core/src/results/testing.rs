//! Hand-made results, for the unit tests of the modules that read them and for the gate's
//! simulations ([`crate::gate::simulation`]).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::{Aggregates, CaseResult, Report, SCHEMA_VERSION, Samples, Status, TurnResult};
use crate::model::{Case, Format, Location};
use crate::shard::SuiteId;

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

/// The report of a run of `cases`.
/// Turn `index` (from 1), passed, that took `ms` milliseconds.
pub fn timed_turn(index: usize, ms: f64) -> TurnResult {
    TurnResult {
        index,
        line: 1,
        status: Status::Passed,
        input: String::new(),
        attempts: 1,
        error: None,
        reply: None,
        cut: None,
        latency: Some(Duration::from_secs_f64(ms / 1000.0)),
        ttft: None,
        checks: Vec::new(),
    }
}

pub fn report(cases: Vec<CaseResult>) -> Report {
    Report {
        budget: None,
        schema_version: SCHEMA_VERSION,
        goldgate_version: "0.0.0".to_owned(),
        agent: "test agent".to_owned(),
        suite: SuiteId::of([], None),
        scope: None,
        judges: Vec::new(),
        judge_usage: Vec::new(),
        incomplete: false,
        max_errors: 0,
        policy: Default::default(),
        agent_log: Some("pid 42 started".to_owned()),
        agent_startup: None,
        rate_limits: Vec::new(),
        aggregates: Aggregates::of(&cases),
        unmeasured: Vec::new(),
        samples: Samples::default(),
        alpha_share: 1.0,
        gate: None,
        floors: Vec::new(),
        cases,
    }
}
