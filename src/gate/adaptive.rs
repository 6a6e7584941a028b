//! Adaptive repeats (`--max-repeat N`): run every case `--repeat` times, look, and rerun only
//! what the gate cannot decide yet, doubling the runs of those cases at each look up to N.
//!
//! The looks are planned before the first run ([`Schedule`]), and the false-alarm rate is
//! shared between them ([`Schedule::share`], the report's `alpha_share`), so
//! looking several times cannot raise it. At each look:
//! - a metric, or the combined test of every case, that is `inconclusive` reruns every case:
//!   those tests count complete rounds only, so that the cases rerun for their own sake cannot
//!   weigh on them;
//! - once the gate has tripped nothing is rerun: more runs cannot undo a regression;
//! - otherwise the `inconclusive` cases are rerun, and every other case is settled: its
//!   decision at this look stands, and it leaves the later looks' tests. Stopping a case only
//!   removes chances to reject, so no stopping rule raises the false-alarm rate.

use std::collections::{HashMap, HashSet};
use std::future::Future;

use super::Gate;
use crate::results::{CaseFlip, CaseResult, Comparison, Decision, JudgeUsage, Report};

/// The most runs a case gets when a gated run leaves its decision open and `--max-repeat` is
/// not given. With the looks `1, 2, 4, 8` and the bars of [`worth_a_round`], an unchanged
/// agent costs about 2.3 passes of the suite, while a subtle change (five goldens a little
/// worse) reaches the last look, and its eight runs a case, most of the time: five runs a case
/// held too little evidence to catch it half the time (the simulation in
/// [`super::simulation`] measures both).
pub const DEFAULT_MAX_REPEAT: u32 = 8;

/// The runs every case has had by each look: `repeat`, doubling, then `max_repeat`
/// (`1, 2, 4, 8` for `--max-repeat 8`, `1, 2, 5` for 5): few looks, since each takes a share of
/// the false-alarm rate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    runs: Vec<u32>,
}

impl Schedule {
    /// The looks for `--repeat repeat --max-repeat max_repeat` (one look when `max_repeat`
    /// is not above `repeat`).
    pub fn new(repeat: u32, max_repeat: u32) -> Self {
        let mut runs = vec![repeat.max(1)];
        // Doubling while there is room to double twice more; then straight to the most.
        while let Some(&last) = runs
            .last()
            .filter(|&&last| last.saturating_mul(4) <= max_repeat)
        {
            runs.push(last * 2);
        }
        if runs.last().is_some_and(|&last| last < max_repeat) {
            runs.push(max_repeat);
        }
        Self { runs }
    }

    /// The runs each case has had by each look, ascending.
    pub fn runs(&self) -> &[u32] {
        &self.runs
    }

    /// The share of the false-alarm rate look `index` (from 0) spends: [`EARLY_SHARE`] for
    /// each look before the last, the rest for the last. The shares add up to 1, so the looks
    /// together keep the rate (Bonferroni). The early looks stop a clear break and choose what
    /// to run again; a subtle change (five goldens a little worse) shows only on the last
    /// look's complete rounds, so that look keeps nearly the whole rate.
    pub fn share(&self, index: usize) -> f64 {
        let last = self.runs.len() - 1;
        match index.cmp(&last) {
            std::cmp::Ordering::Less => EARLY_SHARE,
            std::cmp::Ordering::Equal => 1.0 - EARLY_SHARE * last as f64,
            std::cmp::Ordering::Greater => 0.0,
        }
    }
}

/// The share of the false-alarm rate each look before the last spends (see
/// [`Schedule::share`]): a hundredth. A break is decided by its verdicts, which spend no rate,
/// so the early looks need little; the simulation of a mixed suite (`super::simulation`)
/// caught diffuse regressions more often with them at a hundredth each than at a fortieth.
pub const EARLY_SHARE: f64 = 0.01;

/// Where the gate stands at one look.
#[derive(Clone, Debug, Default)]
pub struct Look {
    /// More runs each case may still get.
    pub runs_left: u32,
    /// Cases (by key) settled at an earlier look, with the flip they settled on (`None`:
    /// clear).
    pub settled: HashMap<String, Option<CaseFlip>>,
}

impl Look {
    /// The only look, or the last: nothing more will run.
    pub fn last() -> Self {
        Self::default()
    }
}

/// What to run again after a look.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rerun {
    /// Every decision is settled.
    Nothing,
    /// A metric is open: every case, a complete round.
    All,
    /// These cases (by key) are open.
    Cases(HashSet<String>),
}

/// The p-value at or below which an open metric, or the combined test, is worth another round
/// of every case after each look (the last bar for any later look): `1/2`, `1/5`, `3/40`.
/// The metrics are tested on complete rounds, and a round costs every case, the later ones
/// more (1, 2, then 4 passes of the suite with the looks `1, 2, 4, 8`), so the bars tighten
/// as the rounds grow: an unchanged suite then costs about 2.3 passes, within the 2.5 the
/// gate promises, while a regression that leans the right way at each look reaches the last
/// most of the time. (Latency is held to them too, since the rank-sum test sees a whole
/// distribution move from the first round.)
const ROUND_BARS: [f64; 3] = [0.5, 0.2, 0.075];

/// Whether a metric with p-value `p` at look `index` (from 0) is worth another round of
/// every case ([`ROUND_BARS`]). Stopping only forgoes chances to reject, so no bar can raise
/// the false-alarm rate.
pub fn worth_a_round(p: f64, index: usize) -> bool {
    p <= ROUND_BARS[index.min(ROUND_BARS.len() - 1)]
}

/// What `comparison` (made at `look`) leaves open, settling in `look` every case it does
/// not rerun.
pub fn plan(current: &Report, comparison: &Comparison, look: &mut Look, index: usize) -> Rerun {
    // The gate's verdict is what the runs are for: once it trips, more runs cannot undo it.
    if comparison.regressed() {
        return Rerun::Nothing;
    }
    let open = |decision: Decision| decision == Decision::Inconclusive;
    let promising = |decision: Decision, evidence: Option<&crate::results::Evidence>| {
        open(decision)
            && evidence
                .and_then(|e| e.p_value)
                .is_some_and(|p| worth_a_round(p, index))
    };
    // The cases combined are tested on complete rounds too: a golden that passed its one run
    // is no suspect of its own, yet its next runs are what the combined test needs.
    let combined_open = comparison
        .combined
        .as_ref()
        .is_some_and(|c| promising(c.decision, Some(&c.evidence)));
    if combined_open
        || comparison
            .metrics
            .iter()
            .any(|m| promising(m.decision, m.evidence.as_ref()))
    {
        return Rerun::All;
    }
    let reruns: HashSet<String> = comparison
        .undecided
        .iter()
        .filter(|f| open(f.decision) && !look.settled.contains_key(&f.key()))
        .map(CaseFlip::key)
        .collect();
    let flips: HashMap<String, &CaseFlip> = comparison
        .newly_failing
        .iter()
        .chain(&comparison.undecided)
        .map(|f| (f.key(), f))
        .collect();
    for case in &current.cases {
        let key = case.key();
        if !reruns.contains(&key) && !look.settled.contains_key(&key) {
            let flip = flips.get(&key).map(|&f| f.clone());
            look.settled.insert(key, flip);
        }
    }
    if reruns.is_empty() {
        Rerun::Nothing
    } else {
        Rerun::Cases(reruns)
    }
}

/// Joins `more` (further runs of some of `report`'s cases) into `report`: each case's runs,
/// the latency samples, tokens and judge usage; the aggregates recomputed. `min_pass` of
/// `repeat` runs is the share that must pass, kept as more runs come.
pub fn join(report: &mut Report, more: Report, repeat: u32, min_pass: u32) {
    let mut extra: HashMap<String, CaseResult> =
        more.cases.into_iter().map(|c| (c.key(), c)).collect();
    for case in &mut report.cases {
        if let Some(runs) = extra.remove(&case.key()) {
            case.join(runs, repeat, min_pass);
        }
    }
    report.samples.merge(&more.samples);
    report.judge_usage = JudgeUsage::sum(report.judge_usage.iter().chain(&more.judge_usage));
    report.incomplete |= more.incomplete;
    // The limits are shared by every play of the run: the latest holds all the waits.
    report.rate_limits = more.rate_limits;
    report.aggregate();
}

/// Plays adaptive repeats to the end and returns the final comparison. `report` holds the
/// first look's runs (every case run `schedule.runs()[0]` times) and gets every later run
/// joined in; `play(cases, runs)` plays the cases given by key (all when `None`) `runs` more
/// times each and returns their report. `report.alpha_share` is set to the share of the look
/// that decided.
pub async fn settle<Play, Played>(
    gate: &Gate,
    report: &mut Report,
    schedule: &Schedule,
    min_pass: u32,
    mut play: Play,
) -> Comparison
where
    Play: FnMut(Option<HashSet<String>>, u32) -> Played,
    Played: Future<Output = Report>,
{
    let runs = schedule.runs();
    let (first, last) = (runs[0], runs[runs.len() - 1]);
    let mut look = Look::default();
    let mut extra_runs = 0_u64;
    for (index, &had) in runs.iter().enumerate() {
        look.runs_left = last - had;
        report.alpha_share = schedule.share(index);
        let mut comparison = gate.compare_at(report, &look);
        let Some(&next) = runs.get(index + 1) else {
            // The last look: nothing was left to run, so it is already final.
            comparison.extra_runs = extra_runs;
            return comparison;
        };
        let which = match plan(report, &comparison, &mut look, index) {
            Rerun::Nothing => break,
            Rerun::All => None,
            Rerun::Cases(keys) => Some(keys),
        };
        let more = play(which, next - had).await;
        extra_runs += more.cases.iter().map(|c| c.runs() as u64).sum::<u64>();
        let stopped = more.incomplete;
        join(report, more, first, min_pass);
        if stopped {
            break;
        }
    }
    // Settled, or interrupted, before the last look: decided on what ran, as a last look.
    look.runs_left = 0;
    let mut comparison = gate.compare_at(report, &look);
    comparison.extra_runs = extra_runs;
    comparison
}
