//! Results of cases the run's agent cannot play: listed with every check skipped and the
//! reason, so that a report says what did not run and why instead of leaving it out.

use crate::model::{Case, ExpectationKind};
use crate::results::{CaseResult, CheckCategory, CheckResult, Status, TurnResult};
use crate::score::tool_result;

/// A tool test with an agent that cannot run tools directly.
pub(super) fn tool_test(case: &Case, agent: &str) -> CaseResult {
    let reason = format!(
        "a tool test runs the tool through CX Agent Studio's executeTool: it needs `agent: ces`, \
         and this run's agent is {agent}"
    );
    let turns = case
        .turns
        .iter()
        .map(|turn| {
            let mut checks: Vec<CheckResult> = turn
                .expectations
                .iter()
                .filter_map(|e| match &e.kind {
                    ExpectationKind::ToolResult(check) => {
                        let (label, expected) = tool_result::describe(check);
                        let at = (label, CheckCategory::ToolResult);
                        Some(CheckResult::skipped(at, e.location.line, expected, &reason))
                    }
                    _ => None,
                })
                .collect();
            if checks.is_empty() {
                // Still one line that says why, for a test that only asks the tool to run.
                let tool = turn.executed_tool().map(|e| e.tool.as_str());
                let label = format!("tool {} runs", tool.unwrap_or_default());
                let at = (label, CheckCategory::ToolResult);
                checks.push(CheckResult::skipped(
                    at,
                    turn.location.line,
                    String::new(),
                    &reason,
                ));
            }
            TurnResult {
                index: turn.index,
                line: turn.location.line,
                status: Status::Skipped,
                input: super::describe_inputs(&turn.inputs),
                attempts: 0,
                error: None,
                reply: None,
                cut: None,
                latency: None,
                ttft: None,
                checks,
            }
        })
        .collect();
    CaseResult {
        turns,
        ..CaseResult::of(case)
    }
}

/// A case the run never started (it was stopped first, `at_budget` or by a signal): no turn,
/// the reason as its error, so that every report lists it rather than counting a stopped run
/// as a short green one.
pub fn not_run(case: &Case, at_budget: bool) -> CaseResult {
    let why = if at_budget {
        "not run: the run reached its budget before this case started"
    } else {
        "not run: the run was stopped (Ctrl-C, SIGTERM, SIGHUP) before this case started"
    };
    CaseResult {
        error: Some(why.to_owned()),
        ..CaseResult::of(case)
    }
}
