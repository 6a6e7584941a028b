//! `goldgate run --dry-run`: what a run would play, worked out without calling anything: the
//! cases, the agent requests, the judge questions at most, and the cost the baseline's own
//! figures give for the same cases. A dry run is read before spending money, so an unknown
//! figure is said to be unknown, never shown as zero.

use std::collections::HashMap;
use std::sync::Arc;

use crate::model::{Case, CaseKind, CheckKind, ExpectationKind, MatchType, Metric, ReplyCheck};
use crate::results::Report;
use crate::transcript::Cost;

/// What a run would do.
#[derive(Clone, Debug, PartialEq)]
pub struct DryRun {
    pub cases: usize,
    /// Runs of each case (`--repeat`; adaptive repeats may add more where the gate asks).
    pub runs: u32,
    /// Requests to the agent: each scripted turn of each run, but for replies the golden
    /// already holds.
    pub agent_calls: u64,
    /// Cases whose turns a simulated user decides: their agent requests are not counted.
    pub simulations: usize,
    /// Judge questions at most, every vote counted, before the judge cache answers any;
    /// `None` without a judge (semantic matches then use local similarity).
    pub judge_calls: Option<u64>,
    /// By the baseline, when one is given.
    pub cost: Option<Estimate>,
}

/// The cost the baseline's figures give the run.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// Each case's cost per run in the baseline, times the runs.
    pub agent_usd: f64,
    /// The baseline's judge spend per run, times the cases and runs (0 when no judge spent
    /// anything); `None` when the baseline does not know it (its judge's model had no price).
    pub judges_usd: Option<f64>,
    /// Cases the baseline has no cost for (new cases, tool tests, unpriced replies): the
    /// estimate leaves them out.
    pub unknown: usize,
}

/// The dry run of `cases`, each played `runs` times, with a judge asking `votes` times per
/// question (`None`: no judge), costed by `baseline`.
pub fn estimate(
    cases: &[Arc<Case>],
    runs: u32,
    votes: Option<u32>,
    baseline: Option<&Report>,
) -> DryRun {
    let runs64 = u64::from(runs);
    let scripted = cases.iter().filter(|c| c.kind() != CaseKind::Simulation);
    let agent_calls: u64 = scripted
        .flat_map(|c| &c.turns)
        .filter(|t| t.recorded_reply.is_none())
        .count() as u64
        * runs64;
    let questions: u64 = cases.iter().map(|c| judge_questions(c)).sum();
    DryRun {
        cases: cases.len(),
        runs,
        agent_calls,
        simulations: cases
            .iter()
            .filter(|c| c.kind() == CaseKind::Simulation)
            .count(),
        judge_calls: votes.map(|v| questions * u64::from(v) * runs64),
        cost: baseline.map(|b| cost(cases, runs, b)),
    }
}

/// The questions one run of `case` asks a judge: semantic text matches and the checks that
/// need a model (free-text criteria, the `llm-judge-*` scorers, Regtrace's judged metrics).
fn judge_questions(case: &Case) -> u64 {
    let turns = case.turns.iter().flat_map(|t| &t.expectations).filter(|e| {
        matches!(&e.kind,
            ExpectationKind::AgentText { matcher, .. } if matcher.match_type == MatchType::Semantic)
            || matches!(&e.kind, ExpectationKind::Reply(ReplyCheck::TextSimilar(_)))
    });
    let checks = case.checks.iter().filter(|check| match &check.kind {
        CheckKind::Criterion(_) => true,
        CheckKind::Scorer(scorer) => {
            crate::formats::gecx::scorers::name(scorer).starts_with("llm-judge")
        }
        CheckKind::Metric { metric, .. } => matches!(metric, Metric::Tone | Metric::Factuality),
    });
    (turns.count() + checks.count()) as u64
}

fn cost(cases: &[Arc<Case>], runs: u32, baseline: &Report) -> Estimate {
    let known: HashMap<String, f64> = (baseline.cases.iter())
        .filter_map(|c| Some((c.key(), c.cost_per_run()?)))
        .collect();
    let found: Vec<f64> = (cases.iter())
        .filter_map(|c| known.get(&crate::shard::case_key(c)).copied())
        .collect();
    // Only a wholly known figure: a lower bound would read as the estimate.
    let judges = match baseline.spending().judges {
        Cost::Known(usd) => Some(usd),
        Cost::NotReported => Some(0.0),
        Cost::Unknown | Cost::AtLeast(..) => None,
    };
    let baseline_runs: f64 = baseline.cases.iter().map(|c| c.runs() as f64).sum();
    let per_run = judges
        .filter(|_| baseline_runs > 0.0)
        .map(|usd| usd / baseline_runs);
    Estimate {
        agent_usd: found.iter().sum::<f64>() * f64::from(runs),
        judges_usd: per_run.map(|usd| usd * cases.len() as f64 * f64::from(runs)),
        unknown: cases.len() - found.len(),
    }
}
