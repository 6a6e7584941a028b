//! A run of a suite, whole: the agent started, the cases played (with the repeats the gate
//! asks for), quarantine applied, the baseline compared, the floors checked and the
//! credentials masked. A front end resolves a [`RunPlan`] from its flags and config, calls
//! [`play`], and gets the [`Report`] every sink reads; it shows progress and notices as it
//! likes, and prints nothing of the library's own.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use crate::agent::Agent;
use crate::agent::connect::{self, StandIn};
use crate::config::AgentConfig;
use crate::config::quarantine::{self, Date};
use crate::gate::Gate;
use crate::gate::adaptive::{self, Schedule};
use crate::merge;
use crate::model::{Case, Floor};
use crate::results::{Budget, FloorResult, Policy, Report, Scope};
use crate::run::{self, Event, OnEvent, Repeat, RunOptions, Stop};
use crate::score::Grader;
use crate::shard::{self, SuiteId};

/// Everything a run needs, resolved once from the front end's flags, env and config.
pub struct RunPlan {
    /// The cases to play (this shard's, when sharded).
    pub cases: Vec<Arc<Case>>,
    /// The suite they belong to (every case selected before sharding).
    pub suite: SuiteId,
    pub repeat: Repeat,
    /// With a gate: the most runs adaptive repeats may give a case
    /// ([`adaptive::DEFAULT_MAX_REPEAT`] when not chosen).
    pub max_repeat: Option<u32>,
    /// The agent under test; none when every turn has its reply recorded in its golden.
    pub agent: Option<AgentConfig>,
    pub grader: Grader,
    pub options: RunOptions,
    /// The baseline and thresholds the run is compared with.
    pub gate: Option<Gate>,
    pub quarantine: Vec<quarantine::Entry>,
    pub floors: Vec<Floor>,
    /// What decides the exit code.
    pub policy: Policy,
    /// Errored cases the run may have before it cannot pass.
    pub max_errors: usize,
    /// Part of the suite only, and why (`--changed-since`, `--rerun`): the report says so.
    pub scope: Option<Scope>,
    /// `--rerun`: the saved report the cases played are merged into before the gate looks
    /// ([`merge::rerun`]).
    pub rerun_into: Option<Report>,
}

/// How many unused quarantine entries a warning names; the rest it counts (a config of
/// thousands would otherwise print thousands of lines).
pub const UNUSED_QUARANTINE_SHOWN: usize = 5;

/// Something the run found worth telling, beside its report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// The agent could not be started: every case fails with this.
    AgentNotStarted(String),
    /// Quarantine entries that name no case of the run: the first few
    /// ([`UNUSED_QUARANTINE_SHOWN`]), and how many in all.
    UnusedQuarantine {
        shown: Vec<quarantine::Entry>,
        count: usize,
    },
    /// The baseline is a report of another suite: its cases read as new or missing.
    OtherSuite {
        baseline: String,
        difference: String,
    },
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::AgentNotStarted(why) => f.write_str(why),
            Notice::UnusedQuarantine { shown, count } => {
                let listed: Vec<String> = shown
                    .iter()
                    .map(|e| format!("`{}` ({} line {})", e.case, e.file.display(), e.line))
                    .collect();
                let listed = listed.join(", ");
                match count - shown.len() {
                    0 if *count == 1 => write!(
                        f,
                        "warning: quarantine entry {listed} names no case of this run"
                    ),
                    0 => write!(
                        f,
                        "warning: {count} quarantine entries name no case of this run: {listed}"
                    ),
                    more => write!(
                        f,
                        "warning: {count} quarantine entries name no case of this run: {listed}, and {more} more"
                    ),
                }
            }
            Notice::OtherSuite {
                baseline,
                difference,
            } => write!(
                f,
                "warning: the baseline {baseline} is a report of another suite: {difference}"
            ),
        }
    }
}

/// A `--rerun` whose agent is not its saved report's: a report of both would mean neither.
/// Found once the agent has started, before any case plays (turns may be billed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OtherAgent {
    /// The saved report's agent, as it names it.
    pub saved: String,
    /// This run's, masked as a report names it.
    pub now: String,
}

/// Plays `plan` to its complete, masked report. `stop` ends it early (the report then says
/// it is incomplete); `on_event` hears every case start and finish, and the runs adaptive
/// repeats add; `notice` hears what [`Notice`] lists.
pub async fn play(
    plan: RunPlan,
    stop: &Stop,
    on_event: OnEvent,
    notice: &(dyn Fn(Notice) + Sync),
) -> Result<Report, OtherAgent> {
    let agent = start_agent(plan.agent.as_ref(), &plan.options, stop, notice).await;
    if let Some(other) = other_agent(&plan, agent.as_ref()) {
        agent.shutdown().await;
        return Err(other);
    }
    let mut plan = with_held_cases(plan, agent.as_ref()).await;
    let grader = Arc::new(plan.grader.clone());
    let played = run::run_repeated(
        plan.cases.clone(),
        plan.repeat,
        Arc::clone(&agent),
        Arc::clone(&grader),
        &plan.options,
        stop,
        Arc::clone(&on_event),
    )
    .await;
    let mut report = played.report;
    if let Some(saved) = plan.rerun_into.take() {
        report = merge::rerun::merged(saved, report);
    }
    // Before the gate looks: a quarantined case takes no part in its decisions.
    let unused = quarantine::apply(&plan.quarantine, &mut report.cases, Date::today());
    if !unused.is_empty() {
        notice(Notice::UnusedQuarantine {
            count: unused.len(),
            shown: unused
                .into_iter()
                .take(UNUSED_QUARANTINE_SHOWN)
                .cloned()
                .collect(),
        });
    }
    if let Some(gate) = &plan.gate {
        report.gate =
            Some(settle(gate, &mut report, &plan, (&agent, &grader), stop, &on_event).await);
    }
    // Before the reports: no agent process outlives the run, even one ignoring SIGTERM.
    agent.shutdown().await;
    complete(&mut report, plan, notice);
    Ok(report)
}

/// The rerun's saved report and `agent` disagree on the agent. A rerun that replays nothing
/// asks no agent: there is no agent to tell apart.
fn other_agent(plan: &RunPlan, agent: &dyn Agent) -> Option<OtherAgent> {
    let saved = plan
        .rerun_into
        .as_ref()
        .filter(|_| !plan.cases.is_empty())?;
    let now = plan.options.secrets.mask(&agent.describe()).into_owned();
    (saved.agent != now).then(|| OtherAgent {
        saved: saved.agent.clone(),
        now,
    })
}

/// Reruns what `gate` leaves open, as adaptive repeats do: the comparison once settled.
async fn settle(
    gate: &Gate,
    report: &mut Report,
    plan: &RunPlan,
    (agent, grader): (&Arc<dyn Agent>, &Arc<Grader>),
    stop: &Stop,
    on_event: &OnEvent,
) -> crate::results::Comparison {
    // With a baseline, open decisions get more runs by default: the gate's power rests on them.
    let runs = plan.repeat.runs();
    let most = plan
        .max_repeat
        .unwrap_or(adaptive::DEFAULT_MAX_REPEAT.max(runs));
    let rerun = |keys: Option<HashSet<String>>, more: u32| {
        let chosen: Vec<Arc<Case>> = plan
            .cases
            .iter()
            .filter(|c| {
                keys.as_ref()
                    .is_none_or(|k| k.contains(&shard::case_key(c)))
            })
            .cloned()
            .collect();
        on_event(Event::RunsAdded {
            runs: chosen.len() * more as usize,
        });
        let (agent, grader, on_event) =
            (Arc::clone(agent), Arc::clone(grader), Arc::clone(on_event));
        let options = &plan.options;
        async move {
            let repeat = Repeat::new(more, Some(1)).unwrap_or(Repeat::ONCE);
            run::run_repeated(chosen, repeat, agent, grader, options, stop, on_event)
                .await
                .report
        }
    };
    let schedule = Schedule::new(runs, most);
    adaptive::settle(gate, report, &schedule, plan.repeat.min_pass(), rerun).await
}

/// What the report learns once played: its suite, allowance of errors and policy, and the
/// floors; then its credentials are masked, the last change
/// before any sink or the baseline reads it.
fn complete(report: &mut Report, plan: RunPlan, notice: &(dyn Fn(Notice) + Sync)) {
    report.suite = plan.suite;
    report.scope = plan.scope;
    report.max_errors = plan.max_errors;
    report.budget = plan.options.pricing.budget.map(|limit_usd| Budget {
        limit_usd,
        reached: plan.options.spend.budget_reached(),
    });
    report.policy = plan.policy;
    // The comparison itself was settled with the runs (see `settle`).
    if let Some(gate) = &plan.gate
        && let Some(difference) = gate.baseline.suite.difference(&report.suite)
    {
        notice(Notice::OtherSuite {
            baseline: gate.baseline_name.clone(),
            difference,
        });
    }
    report.floors = plan
        .floors
        .iter()
        .map(|floor| FloorResult::check(floor, report))
        .collect();
    report.mask(&plan.options.secrets);
}

/// The plan with the cases the agent holds itself (CX Agent Studio evaluations chosen in
/// goldgate.yaml, with no local file): this shard's share; unsharded, counted in the suite.
async fn with_held_cases(mut plan: RunPlan, agent: &dyn Agent) -> RunPlan {
    let Some(evaluations) = agent.evaluations() else {
        return plan;
    };
    let held = evaluations.existing().await;
    match plan.suite.shard {
        None if !held.is_empty() => {
            let all = plan.cases.iter().map(|c| c.as_ref()).chain(&held);
            plan.suite = SuiteId {
                name: plan.suite.name.take(),
                ..SuiteId::of(all, None)
            };
            plan.cases.extend(held.into_iter().map(Arc::new));
        }
        None => {}
        Some(shard) => {
            let mine = held.into_iter().filter(|c| shard.contains_case(c));
            plan.cases.extend(mine.map(Arc::new));
        }
    }
    plan
}

/// The agent under test, started; one that does not start fails every case with why (the
/// reports are still written: a run with no reports looks like a run that never happened).
/// Start-up may take minutes (a build): a stop ends it like a run.
async fn start_agent(
    config: Option<&AgentConfig>,
    options: &RunOptions,
    stop: &Stop,
    notice: &(dyn Fn(Notice) + Sync),
) -> Arc<dyn Agent> {
    let Some(config) = config else {
        return Arc::new(StandIn::NoAgent);
    };
    tokio::select! {
        agent = connect::connect_masking(config, &options.secrets) => agent.unwrap_or_else(|why| {
            notice(Notice::AgentNotStarted(why.clone()));
            Arc::new(StandIn::NotStarted(why))
        }),
        () = stop.scheduling.cancelled() => Arc::new(StandIn::Interrupted),
    }
}
