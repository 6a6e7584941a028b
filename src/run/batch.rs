//! A batch of case runs: spawned at most `concurrency` at once, each case a task of its own,
//! then joined into one report (a case's runs into one result).

use std::future::Future;
use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::{Event, OnEvent, Repeat, RunOptions, Stop};
use crate::agent::Agent;
use crate::limit::{Limiter, Limits};
use crate::model::Case;
use crate::results::{Aggregates, CaseResult, Report, SCHEMA_VERSION, Samples, TurnTimes};
use crate::score::Grader;
use crate::shard::SuiteId;

/// What plays the runs of a batch of cases: the agent, its limiter, the grader, the options.
pub(super) struct Players {
    pub agent: Arc<dyn Agent>,
    pub limiter: Arc<Limiter>,
    pub grader: Arc<Grader>,
    pub options: Arc<RunOptions>,
    pub on_event: OnEvent,
}

impl Players {
    /// Plays `runs` runs of each case: (case index, run, result), in the order they finish.
    /// Each case is a task of its own, so that scoring spreads over the runtime's threads.
    /// At most `concurrency` cases talk to the agent at once (each holds a place until its
    /// conversation is over); as many more wait for a place, so that the next case's first
    /// request goes out as soon as a conversation ends, while that case is still being
    /// graded. None starts once scheduling stops.
    pub async fn play(
        &self,
        cases: &[Arc<Case>],
        runs: usize,
        stop: &Stop,
    ) -> Vec<(usize, usize, CaseResult)> {
        // Case-major, so that the runs of the first cases start first.
        let mut units = cases
            .iter()
            .enumerate()
            .flat_map(|(index, case)| (0..runs).map(move |run| (index, run, Arc::clone(case))));
        let concurrency = self.options.concurrency.max(1);
        let places = Arc::new(Semaphore::new(concurrency));
        let mut in_flight = JoinSet::new();
        let mut results = Vec::new();
        loop {
            let stopped = || stop.scheduling.is_cancelled() || self.options.spend.budget_reached();
            while in_flight.len() < 2 * concurrency && !stopped() {
                let Some(unit) = units.next() else {
                    break;
                };
                in_flight.spawn(self.task(unit, Arc::clone(&places), stop.clone()));
            }
            match in_flight.join_next().await {
                Some(Ok((index, run, Some(result)))) => results.push((index, run, result)),
                // It never got a place: scheduling stopped first.
                Some(Ok((_, _, None))) => {}
                // A bug in a case's task is a bug of the run: not hidden as a missing case.
                Some(Err(failed)) if failed.is_panic() => {
                    std::panic::resume_unwind(failed.into_panic())
                }
                // Never aborted: the set lives until every task is joined.
                Some(Err(_)) => {}
                None => break,
            }
        }
        results
    }

    /// One run of one case, as a task: `None` when scheduling stopped before it had a place.
    fn task(
        &self,
        (index, run, case): (usize, usize, Arc<Case>),
        places: Arc<Semaphore>,
        stop: Stop,
    ) -> impl Future<Output = (usize, usize, Option<CaseResult>)> + Send + 'static {
        let (agent, options) = (Arc::clone(&self.agent), Arc::clone(&self.options));
        let (limiter, on_event) = (Arc::clone(&self.limiter), Arc::clone(&self.on_event));
        // Each run is its own sample for the judge too (its cache keys the run).
        let grader = self
            .grader
            .for_repeat(u32::try_from(run).unwrap_or(u32::MAX));
        async move {
            let place = tokio::select! {
                biased;
                () = stop.scheduling.cancelled() => None,
                place = places.acquire_owned() => place.ok(),
            };
            // The budget is looked at once a case could start: what the cases before it
            // spent is known by then.
            let Some(place) = place.filter(|_| options.spend.may_start(&options.pricing, &grader))
            else {
                return (index, run, None);
            };
            on_event(Event::CaseStarted { case: &case });
            let asked = (agent.as_ref(), limiter.as_ref());
            let played =
                super::run_case(Arc::clone(&case), (asked, place), &grader, &options, &stop);
            let result = crate::net::holding_large_replies(played).await;
            on_event(Event::CaseFinished {
                case: &case,
                status: result.status,
            });
            (index, run, Some(result))
        }
    }

    /// The report of `cases` from the `results` of their runs: (index into `cases`, run,
    /// result), sorted by case and run.
    pub fn report(
        &self,
        cases: &[Arc<Case>],
        mut results: Vec<(usize, usize, CaseResult)>,
        repeat: Repeat,
        limits: &Limits,
    ) -> Report {
        let mut samples = Samples {
            builds: 1,
            ..Samples::default()
        };
        let mut ran = vec![false; cases.len()];
        for (index, _, case) in &mut results {
            ran[*index] = true;
            samples.record(case);
            // Every run's times, before the runs of a case are joined into the one shown.
            if case.is_conversation() {
                case.turn_times = TurnTimes::of(&case.turns);
            }
        }
        let mut joined = join_runs(results, repeat);
        // The cases a stopped run never started are listed too, skipped with why.
        let at_budget = self.options.spend.budget_reached();
        joined.extend(
            cases
                .iter()
                .zip(ran)
                .filter(|(_, ran)| !ran)
                .map(|(c, _)| super::skipped::not_run(c, at_budget)),
        );
        let mut report = Report {
            schema_version: SCHEMA_VERSION,
            goldgate_version: env!("CARGO_PKG_VERSION").to_owned(),
            agent: self.agent.describe(),
            suite: SuiteId::of(cases.iter().map(|c| c.as_ref()), None),
            scope: None,
            judges: self.grader.judges(),
            judge_usage: super::spend::priced_usage(
                self.grader.judge_usage(),
                &self.options.pricing.prices,
            ),
            incomplete: false,
            budget: None,
            max_errors: 0,
            policy: Default::default(),
            agent_log: self.agent.diagnostics(),
            agent_startup: self.agent.startup(),
            rate_limits: limits.waits(),
            aggregates: Aggregates::of(&[]),
            unmeasured: self.agent.unmeasured(),
            samples,
            alpha_share: 1.0,
            gate: None,
            floors: Vec::new(),
            cases: joined,
        };
        report.aggregate();
        report
    }
}

/// One result per case from its runs (sorted by case, then run): see [`CaseResult::from_runs`].
fn join_runs(results: Vec<(usize, usize, CaseResult)>, repeat: Repeat) -> Vec<CaseResult> {
    let mut joined = Vec::with_capacity(results.len());
    let mut results = results.into_iter().peekable();
    while let Some((index, _, first)) = results.next() {
        if repeat.runs == 1 {
            joined.push(first);
            continue;
        }
        let mut of_case = vec![first];
        while let Some((_, _, next)) = results.next_if(|(i, _, _)| *i == index) {
            of_case.push(next);
        }
        joined.extend(CaseResult::from_runs(of_case, repeat.runs, repeat.min_pass));
    }
    joined
}
