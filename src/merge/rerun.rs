//! `run --rerun REPORT`: the failed or errored cases of a saved report, replayed, merged back
//! into it. The rest of the report stays as it was, and the merged report is what one run
//! would have written, so that it gates and serves as a baseline like any other.
//!
//! The two statuses merge differently, because only one of them is a verdict of the agent:
//! - **errored**: an error of the run (a timeout, a 5xx) says nothing about the agent, so
//!   the replay takes the case's place, whole.
//! - **failed**: a failure is evidence, and throwing it away for a second try would pass a
//!   broken case on its lucky run. The replay's runs are added to the case's
//!   ([`CaseResult::join`], as adaptive repeats add theirs): the case passes only when its
//!   runs together meet the share of passes `--min-pass` asked of the first ones (all of them
//!   without `--repeat`), it is flaky when they disagree, and the gate tests every run.
//!
//! A replayed case that did not run (the rerun was stopped) keeps its saved result, and the
//! merged report is incomplete when either was.

use std::collections::{HashMap, HashSet};

use crate::results::{CaseResult, JudgeUsage, RateLimitWaits, Report, Status};

/// The keys ([`CaseResult::key`]) of `report`'s cases whose status is one of `only`.
pub fn to_replay(report: &Report, only: &[Status]) -> HashSet<String> {
    report
        .cases
        .iter()
        .filter(|case| only.contains(&case.status))
        .map(CaseResult::key)
        .collect()
}

/// The first case key `report` holds twice, if any: a report goldgate writes holds each case
/// once, and a duplicate carried into the merged report would count one case twice.
pub fn duplicated(report: &Report) -> Option<String> {
    let mut seen = HashSet::new();
    report
        .cases
        .iter()
        .map(CaseResult::key)
        .find(|key| !seen.insert(key.clone()))
}

/// `saved` with the cases of `replayed` merged in (see the module doc). The agent is the
/// replay's, so that a caller can tell when it is not the saved report's.
pub fn merged(mut saved: Report, replayed: Report) -> Report {
    let stopped = replayed.incomplete;
    let mut replays: HashMap<String, CaseResult> = replayed
        .cases
        .into_iter()
        .filter(|case| !(stopped && case.status == Status::Skipped))
        .map(|case| (case.key(), case))
        .collect();
    for case in &mut saved.cases {
        let Some(replay) = replays.remove(&case.key()) else {
            continue;
        };
        if case.status == Status::Failed {
            // The share K of N the first runs had to meet: all of one run.
            let (runs, min_pass) = case.repeats.as_ref().map_or((1, 1), |r| {
                (u32::try_from(r.runs.len()).unwrap_or(u32::MAX), r.min_pass)
            });
            case.join(replay, runs, min_pass);
        } else {
            let history = std::mem::take(&mut case.history);
            *case = CaseResult { history, ..replay };
        }
    }
    saved.samples.merge(&replayed.samples);
    saved.judge_usage = JudgeUsage::sum(saved.judge_usage.iter().chain(&replayed.judge_usage));
    saved.rate_limits = RateLimitWaits::sum(saved.rate_limits.iter().chain(&replayed.rate_limits));
    saved.incomplete |= stopped;
    saved.agent = replayed.agent;
    saved.agent_log = replayed.agent_log.or(saved.agent_log);
    saved.aggregate();
    // Judged again by the caller, against the cases as they now stand.
    saved.gate = None;
    saved
}

#[cfg(test)]
mod tests {
    use super::{duplicated, merged, to_replay};
    use crate::results::testing::{case, report};
    use crate::results::{CaseResult, Status};

    fn with(id: &str, status: Status) -> CaseResult {
        case("goldens/a.yaml", id, status)
    }

    #[test]
    fn an_error_is_replaced_and_a_failure_joined() {
        let saved = report(vec![
            with("ok", Status::Passed),
            with("broken", Status::Failed),
            with("glitch", Status::Error),
        ]);
        let keys = to_replay(&saved, &[Status::Failed, Status::Error]);
        assert_eq!(keys.len(), 2);
        assert_eq!(to_replay(&saved, &[Status::Error]).len(), 1);
        let replayed = report(vec![
            with("broken", Status::Passed),
            with("glitch", Status::Passed),
        ]);
        let merged = merged(saved, replayed);
        let status = |id: &str| merged.cases.iter().find(|c| c.id == id).unwrap().status;
        assert_eq!(status("ok"), Status::Passed);
        assert_eq!(status("glitch"), Status::Passed);
        // One failure and one pass: not all of its runs passed, so it still fails, flaky.
        assert_eq!(status("broken"), Status::Failed);
        let broken = merged.cases.iter().find(|c| c.id == "broken").unwrap();
        let repeats = broken.repeats.as_ref().unwrap();
        assert_eq!(repeats.runs, [Status::Failed, Status::Passed]);
        assert!(repeats.flaky);
        assert_eq!(merged.aggregates.cases.passed, 2);
        assert_eq!(merged.aggregates.cases.errors, 0);
        assert!(merged.gate.is_none());
    }

    #[test]
    fn a_case_held_twice_is_found() {
        let once = report(vec![with("a", Status::Failed), with("b", Status::Failed)]);
        assert_eq!(duplicated(&once), None);
        let twice = report(vec![
            with("a", Status::Failed),
            with("b", Status::Passed),
            with("a", Status::Passed),
        ]);
        assert_eq!(duplicated(&twice).as_deref(), Some("goldens/a.yaml#a"));
    }

    #[test]
    fn a_case_a_stopped_replay_never_ran_keeps_its_result() {
        let saved = report(vec![with("glitch", Status::Error)]);
        let mut replayed = report(vec![with("glitch", Status::Skipped)]);
        replayed.incomplete = true;
        let merged = merged(saved, replayed);
        assert_eq!(merged.cases[0].status, Status::Error);
        assert!(merged.incomplete);
    }
}
