//! The regression gate: a run's report against a committed baseline, under thresholds, at a
//! stated false-alarm rate.
//!
//! Thresholds keep the names and defaults of gecx (seed 002), and say how large a change
//! matters; tests say whether the runs show it beyond the noise of an LLM agent. Every
//! comparison of a run (five metrics, the cases combined, each case that looks worse) gets a
//! one-sided p-value from an exact test (`gate/metrics.rs`, `gate/combined.rs`,
//! `gate/cases.rs`); Holm's procedure over all of them keeps the chance that an unchanged
//! agent trips the gate at all within the false-alarm rate (default 1%), whatever the number
//! of cases and however they depend on each other. With adaptive repeats (`--max-repeat`) the rate is shared between planned looks
//! ([`adaptive`]).
//!
//! Each comparison ends in a [`Decision`]: `regressed` (worse by more than the limit, and
//! beyond noise: trips the gate), `inconclusive` (looks worse, could be noise, more runs could
//! tell), `not enough runs` (no result of these runs could be beyond noise) or `clear`.
//! Errors of the run are never regressions: a case that errored now is left out (the run's
//! exit is decided by `--max-errors`), and so is a metric that was not measured on both sides.
//! Cases are matched by file and id (the file compared with `./` and `\` normalised).

pub mod adaptive;
pub mod baseline;
mod cases;
mod combined;
mod latency;
mod metrics;
pub mod simulation;
mod spending;

use std::collections::HashMap;
use std::time::Duration;

use crate::results::{
    CaseFlip, CaseResult, Comparison, DEFAULT_FALSE_ALARM_RATE, Decision, Evidence, Measure,
    MetricDelta, MetricSight, Report, Sight, Status, beyond,
};
use crate::stats::tarone_holm_adjusted;

pub use crate::config::thresholds::Thresholds;

/// Latency increases smaller than this never trip a threshold: below it the difference is the
/// scheduling noise of a shared CI machine, not the agent (a local agent answering in 1 ms one
/// run and 2 ms the next has not slowed down by 100%).
pub const LATENCY_FLOOR: Duration = Duration::from_millis(50);

/// What each measure's test of a threshold reads besides the threshold's [`MetricDelta`]: the
/// gate (with its baseline), the report now, the runs of adaptive repeats still to come, and
/// the false-alarm rate the test may spend.
#[derive(Clone, Copy)]
struct Look<'a> {
    gate: &'a Gate,
    current: &'a Report,
    runs_left: u32,
    alpha: f64,
}

impl Look<'_> {
    /// Whether a test works out the smallest worsening its runs could show: for a decision
    /// that may stay open, and at the last look, whose comparison states what it could have
    /// caught ([`Sight`]). The looks before it are never shown, and the search is costly.
    fn wants_detectable(self, undecided: bool) -> bool {
        undecided || self.runs_left == 0
    }
}

/// A comparison's test before the run's p-values are adjusted together.
#[derive(Clone, Copy, Debug)]
struct Tested {
    /// `None` when the values or verdicts decide (nothing to test on).
    p_value: Option<f64>,
    /// Worse by more than the limit, as measured.
    worse: bool,
    /// Too roughly measured yet to decide, either way: more runs are worth it (adaptive
    /// repeats only).
    open: bool,
    /// Some result of these runs (and those left) could be beyond noise.
    reachable: bool,
    /// The smallest p-value the test's sample sizes allow, whatever the outcome (0 when any
    /// can be reached): tests that cannot reach the suite's bar leave the Holm family.
    min_p: f64,
}

impl Tested {
    fn decide(self, adjusted_p: Option<f64>, alpha: f64) -> Decision {
        match (self.worse, self.p_value, adjusted_p) {
            _ if self.open => Decision::Inconclusive,
            (false, _, _) => Decision::Clear,
            (true, None, _) => Decision::Regressed,
            (true, Some(_), Some(p)) if p <= alpha => Decision::Regressed,
            _ if self.reachable => Decision::Inconclusive,
            _ => Decision::NotEnoughRuns,
        }
    }
}

/// A baseline ready to judge runs against.
#[derive(Clone, Debug)]
pub struct Gate {
    /// The baseline file, as the user named it.
    pub baseline_name: String,
    pub baseline: Report,
    pub thresholds: Thresholds,
    /// The most often an unchanged agent may trip the gate, in `(0, 1)`.
    pub false_alarm_rate: f64,
}

impl Gate {
    /// A gate at the default false-alarm rate.
    pub fn new(baseline_name: String, baseline: Report, thresholds: Thresholds) -> Self {
        Self {
            baseline_name,
            baseline,
            thresholds,
            false_alarm_rate: DEFAULT_FALSE_ALARM_RATE,
        }
    }

    /// Judges `current` against the baseline, once and for all.
    pub fn compare(&self, current: &Report) -> Comparison {
        self.compare_at(current, &adaptive::Look::last())
    }

    /// Judges `current` at one look of adaptive repeats: what more runs could still decide
    /// is `inconclusive` rather than `not enough runs`, and cases settled at an earlier look
    /// keep that look's decision (see [`adaptive`]).
    pub fn compare_at(&self, current: &Report, look: &adaptive::Look) -> Comparison {
        let runs_left = look.runs_left;
        let alpha = self.false_alarm_rate * current.alpha_share.clamp(f64::MIN_POSITIVE, 1.0);
        let mut metrics: Vec<(MetricDelta, Tested)> = self
            .thresholds
            .active()
            .map(|(t, limit)| metrics::compare(self, (t, limit), current, runs_left, alpha))
            .collect();
        let combined = combined::compare(self, current, runs_left, alpha);
        let mut worse = Vec::new();
        let mut comparison = Comparison {
            baseline: self.baseline_name.clone(),
            false_alarm_rate: self.false_alarm_rate,
            ..Comparison::default()
        };
        let settled = |key: &str| look.settled.contains_key(key);
        for movement in cases::compare(&self.baseline, current, runs_left, alpha, settled) {
            match movement {
                cases::Movement::Worse(flip, tested) => worse.push((flip, tested)),
                cases::Movement::Better(flip) => comparison.newly_passing.push(flip),
                cases::Movement::Known(flip) => comparison.known_failures.push(flip),
                cases::Movement::Quarantined(flip) => comparison.quarantined.push(flip),
            }
        }
        // Holm over every p-value of the run, metrics and cases together, leaving out the
        // tests whose sample sizes cannot reach the bar (Tarone), beside the combined test's
        // own share of the rate (see `split_adjusted`).
        let (p_values, min_p): (Vec<f64>, Vec<f64>) = metrics
            .iter()
            .map(|(_, t)| t)
            .chain(worse.iter().map(|(_, t)| t))
            .filter_map(|t| t.p_value.map(|p| (p, t.min_p)))
            .unzip();
        let combined_p = combined.as_ref().and_then(|(_, t)| t.p_value);
        let (combined_adjusted, adjusted) = split_adjusted(&p_values, &min_p, combined_p, alpha);
        let mut adjusted = adjusted.into_iter();
        let mut decide = |tested: Tested, evidence: Option<&mut Evidence>| {
            let adjusted_p = tested.p_value.and_then(|_| adjusted.next());
            if let Some(evidence) = evidence {
                evidence.adjusted_p = adjusted_p;
            }
            tested.decide(adjusted_p, alpha)
        };
        // Only the last look's comparison is shown; the earlier ones worked out no sight.
        comparison.sight = (runs_left == 0).then(|| sight(&metrics));
        for (delta, tested) in &mut metrics {
            delta.decision = decide(*tested, delta.evidence.as_mut());
            delta.tripped = delta.decision == Decision::Regressed;
            // What the run could have seen matters only where it saw too little.
            if let Some(evidence) = delta
                .evidence
                .as_mut()
                .filter(|_| !delta.decision.is_undecided())
            {
                evidence.detectable = None;
            }
        }
        comparison.combined = combined.map(|(mut line, tested)| {
            line.evidence.adjusted_p = combined_adjusted;
            line.decision = tested.decide(combined_adjusted, alpha);
            line
        });
        let decided = worse.into_iter().map(|(mut flip, tested)| {
            flip.decision = decide(tested, flip.evidence.as_mut());
            flip
        });
        for flip in decided.chain(look.settled.values().flatten().cloned()) {
            match flip.decision {
                Decision::Regressed => comparison.newly_failing.push(flip),
                _ => comparison.undecided.push(flip),
            }
        }
        comparison.metrics = metrics.into_iter().map(|(delta, _)| delta).collect();
        comparison.missing = missing(&self.baseline, current);
        comparison.notes = notes(&comparison);
        comparison
    }
}

/// What the run could have caught, from each tested rate's and latency's smallest showable
/// worsening (never below its limit). Spending and unmeasured metrics are left out: they say
/// for themselves what they lack.
fn sight(metrics: &[(MetricDelta, Tested)]) -> Sight {
    let seen = metrics
        .iter()
        .map(|(delta, _)| delta)
        .filter(|delta| {
            delta.change.is_some()
                && matches!(
                    delta.threshold.measure(),
                    Measure::Rate | Measure::Milliseconds
                )
        })
        .map(|delta| MetricSight {
            threshold: delta.threshold,
            smallest: delta
                .evidence
                .as_ref()
                .and_then(|e| e.detectable)
                .map(|smallest| smallest.max(delta.limit)),
        });
    Sight {
        metrics: seen.collect(),
    }
}

/// The share of the false-alarm rate the combined test of every case has to itself. Among
/// the run's other tests (a few metrics, and every case that looks worse: 15 or more when
/// five goldens got flakier) Holm would hold it to a fifteenth of the rate, where diffuse
/// changes need the most. A case broken outright is decided by its verdicts and needs no
/// rate, and a single case a little worse is past its own test's reach on five runs anyway;
/// both weigh in the combined test too.
const COMBINED_SHARE: f64 = 0.9;

/// Adjusted p-values, each to be read against `alpha`: the combined test's (when there is
/// one) and those of the other tests (`p_values`, with their smallest attainable values), in
/// order. The combined test is held to its share of `alpha` (Bonferroni), the others by
/// Tarone and Holm to the rest; once the combined test rejects, the others get all of
/// `alpha`: its rejection is either a false alarm already counted, or right, and then the
/// others' false alarms are bounded by `alpha` alone. So the run's false-alarm rate stays
/// within `alpha` under any dependence.
fn split_adjusted(
    p_values: &[f64],
    min_p: &[f64],
    combined: Option<f64>,
    alpha: f64,
) -> (Option<f64>, Vec<f64>) {
    let combined = combined.map(|p| (p / COMBINED_SHARE).min(1.0));
    let rest = match combined {
        Some(p) if p > alpha => 1.0 - COMBINED_SHARE,
        _ => 1.0,
    };
    let adjusted = tarone_holm_adjusted(p_values, min_p, alpha * rest)
        .into_iter()
        .map(|p| (p / rest).min(1.0))
        .collect();
    (combined, adjusted)
}

/// A report's cases by [`CaseResult::key`].
fn by_key(report: &Report) -> HashMap<String, &CaseResult> {
    report.cases.iter().map(|c| (c.key(), c)).collect()
}

/// What `measure` gives of each case both reports have, as (baseline, now), where it gives
/// something on both sides (`true`: the baseline's case). Quarantined cases are left out: they
/// must not block, through a metric either.
fn paired<T>(
    gate: &Gate,
    current: &Report,
    measure: impl Fn(&CaseResult, bool) -> Option<T>,
) -> Vec<(T, T)> {
    let before = by_key(&gate.baseline);
    current
        .cases
        .iter()
        .filter(|now| !now.is_quarantined())
        .filter_map(|now| {
            let earlier = before.get(&now.key())?;
            Some((measure(earlier, true)?, measure(now, false)?))
        })
        .collect()
}

/// Keys of the baseline's cases that did not run now.
fn missing(baseline: &Report, current: &Report) -> Vec<String> {
    let now = by_key(current);
    baseline
        .cases
        .iter()
        .map(CaseResult::key)
        .filter(|k| !now.contains_key(k))
        .collect()
}

/// What the run could not tell, and what would.
fn notes(comparison: &Comparison) -> Vec<String> {
    let by_verdict = |flip: &&CaseFlip| {
        flip.evidence
            .as_ref()
            .is_some_and(|e| e.test == crate::results::Test::Verdicts)
    };
    let mut notes = Vec::new();
    // A case with history that never failed on main needs no excuse: its evidence says so.
    let one_run_on_main = |flip: &&CaseFlip| {
        flip.baseline == Some(Status::Passed)
            && flip.evidence.as_ref().is_some_and(|e| e.samples.0 == 1)
    };
    let decided_by_verdict = comparison
        .newly_failing
        .iter()
        .filter(by_verdict)
        .filter(one_run_on_main)
        .count();
    if decided_by_verdict > 0 {
        notes.push(format!(
            "{decided_by_verdict} case(s) passed the baseline's only run (no history) and failed \
             every run here: with one run on main nothing can tell a flaky case from a break, so \
             failing every run decides. A baseline with history (--update-baseline on main) \
             tells a case that failed there now and then from one that never did."
        ));
    }
    let new_failing = comparison
        .newly_failing
        .iter()
        .filter(|f| f.baseline.is_none())
        .count();
    if new_failing > 0 {
        notes.push(format!(
            "{new_failing} case(s) are not in the baseline and fail: a new case must pass to \
             land, as gecx decides."
        ));
    }
    // Cost and tokens are tested over conversations: repeats do not add any.
    let (per_conversation, per_run): (Vec<&MetricDelta>, Vec<&MetricDelta>) = comparison
        .metrics
        .iter()
        .filter(|m| m.decision == Decision::NotEnoughRuns)
        .partition(|m| {
            m.evidence
                .as_ref()
                .is_some_and(|e| e.test == crate::results::Test::Sign)
        });
    let too_few_conversations = per_conversation.len();
    let short = comparison
        .undecided
        .iter()
        .filter(|f| f.decision == Decision::NotEnoughRuns)
        .count()
        + per_run.len();
    if short > 0 {
        notes.push(format!(
            "{short} comparison(s) look worse but no result of these runs could be told from \
             noise at a {:.2}% false-alarm rate: more repeats, or a baseline with history, would.",
            comparison.false_alarm_rate * 100.0
        ));
    }
    if too_few_conversations > 0 {
        notes.push(format!(
            "{too_few_conversations} cost or tokens comparison(s) look worse but too few \
             conversations were priced on both sides to tell it from noise at a {:.2}% \
             false-alarm rate: each conversation is one pair, so more conversations would, \
             repeats would not.",
            comparison.false_alarm_rate * 100.0
        ));
    }
    notes
}

#[cfg(test)]
mod latency_tests;
#[cfg(test)]
mod tests;
