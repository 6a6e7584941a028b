//! Aggregates over a run: the numbers the table prints, the JSON report keeps and the gate
//! compares with a baseline (seed 002's pass rate, deflection, latency, TTFT, hallucination
//! rate and tool-call accuracy, plus Regtrace's weighted suite score and the flake rate of
//! repeated cases).
//!
//! Every rate is a fraction in `0..=1` and `None` when nothing counted towards it, so that
//! "no data" is never mistaken for 0% or 100%. Errors of the run (an agent that timed out, a
//! judge that failed) are not test results: they are counted apart and left out of every rate.
//!
//! Aggregates are computed from the report's cases alone ([`CaseResult`]), so that
//! `goldgate merge` gets from shard reports exactly what one run of the whole suite gets. A
//! check counts towards a metric by its [`CheckCategory`], never by its label. Sums are taken
//! in a fixed order, so that the order of the cases (shards merged in any order) cannot change
//! the last bit of a result. With `--repeat`, latency and TTFT weigh every run of a case
//! together as one run ([`suite_percentiles`]); tool calls come from the run the report shows
//! for each case; tokens are those of every run.

use std::time::Duration;

use crate::results::{
    Aggregates, CaseResult, CheckCategory, Counts, Percentiles, Report, Threshold, ToolLatency,
    TurnResult, ratio,
};
use crate::stats::LatencyHistogram;

impl Report {
    /// Recomputes the aggregates from the cases, leaving out what the run could not measure
    /// ([`Report::unmeasured`]): its rows read "not measured", never a value.
    pub fn aggregate(&mut self) {
        self.aggregates = Aggregates::of(&self.cases);
        for unmeasured in &self.unmeasured {
            self.aggregates.forget(unmeasured.metric);
        }
    }
}

impl Threshold {
    /// The metric in a report's aggregates: a rate in `0..=1`, milliseconds, dollars or
    /// tokens per conversation.
    pub fn value(self, aggregates: &Aggregates) -> Option<f64> {
        let p95_ms = |p: Percentiles| p.p95.as_millis() as f64;
        match self {
            Threshold::PassRateDropPp => aggregates.pass_rate,
            Threshold::DeflectionDropPp => aggregates.deflection_rate,
            Threshold::P95LatencyIncreasePct => aggregates.latency.map(p95_ms),
            Threshold::TtftP95IncreasePct => aggregates.ttft.map(p95_ms),
            Threshold::HallucinationRateIncreasePp => aggregates.hallucination_rate,
            Threshold::CostIncreasePct => aggregates.cost_per_conversation,
            Threshold::TokensIncreasePct => aggregates.tokens_per_conversation,
        }
    }

    /// How much worse `current` is than `baseline`, in the threshold's unit. A latency is
    /// divided by at least 1 ms (the report's resolution), so that the percentage stays
    /// finite; the difference itself is never clamped, so the change keeps its sign. A cost
    /// of nothing that became something is worse by the whole of it.
    pub fn worsening(self, baseline: f64, current: f64) -> f64 {
        match self {
            Threshold::PassRateDropPp | Threshold::DeflectionDropPp => (baseline - current) * 100.0,
            Threshold::HallucinationRateIncreasePp => (current - baseline) * 100.0,
            Threshold::P95LatencyIncreasePct | Threshold::TtftP95IncreasePct => {
                (current - baseline) / baseline.max(1.0) * 100.0
            }
            Threshold::CostIncreasePct | Threshold::TokensIncreasePct => {
                (current - baseline) / baseline.max(f64::MIN_POSITIVE) * 100.0
            }
        }
    }
}

impl Aggregates {
    /// The aggregates of a report's cases.
    pub fn of(cases: &[CaseResult]) -> Self {
        let turns = || cases.iter().flat_map(|c| &c.turns);
        let checks = || cases.iter().flat_map(CaseResult::all_checks);
        let case_counts: Counts = cases.iter().map(|c| c.status).collect();
        let turn_counts: Counts = turns().map(|t| t.status).collect();
        let in_category = |category| -> Counts {
            checks()
                .filter(|c| c.category == category)
                .map(|c| c.status)
                .collect()
        };
        let hallucination = in_category(CheckCategory::Hallucination);

        let counted: Vec<bool> = cases.iter().filter_map(CaseResult::deflected).collect();
        let deflected = counted.iter().filter(|&&d| d).count();

        let judged = || cases.iter().filter(|c| c.status.is_judged());
        let total_weight = sum(judged().map(|c| c.weight));
        let weighted = sum(judged().map(|c| c.score * c.weight));

        let repeated = cases.iter().filter_map(|c| c.repeats.as_ref());
        let flaky = repeated.clone().filter(|r| r.flaky).count();

        Self {
            cases: case_counts,
            turns: turn_counts,
            checks: checks().map(|c| c.status).collect(),
            pass_rate: case_counts.pass_rate(),
            turn_pass_rate: turn_counts.pass_rate(),
            deflection_rate: ratio(deflected, counted.len()),
            latency: suite_percentiles(cases, Timing::Latency),
            ttft: suite_percentiles(cases, Timing::Ttft),
            tool_latency: ToolLatency::of(
                cases
                    .iter()
                    .filter(|c| !c.is_conversation())
                    .flat_map(|c| &c.turns)
                    .filter_map(|t| t.latency)
                    .collect(),
            ),
            hallucination_rate: ratio(hallucination.failed, hallucination.judged()),
            tool_call_accuracy: in_category(CheckCategory::ToolCall).pass_rate(),
            suite_score: (total_weight > 0.0).then(|| weighted / total_weight),
            flake_rate: ratio(flaky, repeated.count()),
            tokens: cases.iter().map(|c| c.usage).sum(),
            cost_per_conversation: mean(cases.iter().filter_map(CaseResult::cost_per_run)),
            tokens_per_conversation: mean(cases.iter().filter_map(CaseResult::tokens_per_run)),
        }
    }
}

/// Which time of a turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    Latency,
    Ttft,
}

impl Timing {
    fn of_turn(self, turn: &TurnResult) -> Option<Duration> {
        match self {
            Timing::Latency => turn.latency,
            Timing::Ttft => turn.ttft,
        }
    }

    /// The case's times of every run.
    pub fn of_case(self, case: &CaseResult) -> &LatencyHistogram {
        match self {
            Timing::Latency => &case.turn_times.latency,
            Timing::Ttft => &case.turn_times.ttft,
        }
    }

    /// Some case of `cases` kept its times of every run (reports written before cases kept
    /// them, and baselines of those, have none).
    pub fn kept_by(self, cases: &[CaseResult]) -> bool {
        cases.iter().any(|c| self.of_case(c).count() > 0)
    }
}

/// The suite's percentiles of a turn time, the one p95 that reports show and the gate
/// compares. Every conversation weighs as one run of it (as many turns as its shown run),
/// that weight spread evenly over the times of all its runs, so that reruns of some cases
/// (adaptive repeats rerun the doubtful ones) refine their share but cannot enlarge it: an
/// unchanged agent whose slow cases were rerun keeps its p95. A case that kept no times of
/// its runs (a report written before they were kept) gives its shown run's turns.
pub fn suite_percentiles(cases: &[CaseResult], timing: Timing) -> Option<Percentiles> {
    let mut weighted: Vec<(Duration, f64)> = Vec::new();
    for case in cases.iter().filter(|c| c.is_conversation()) {
        let runs = timing.of_case(case);
        if runs.count() == 0 {
            let shown = case.turns.iter().filter_map(|t| timing.of_turn(t));
            weighted.extend(shown.map(|d| (d, 1.0)));
            continue;
        }
        let weight = case.turns.len() as f64 / runs.count() as f64;
        let times = runs
            .samples()
            .map(|ms| Duration::from_secs_f64(ms / 1000.0));
        weighted.extend(times.map(|d| (d, weight)));
    }
    Percentiles::of_weighted(weighted)
}

/// The mean, in the same fixed order as [`sum`]; `None` of nothing.
fn mean(terms: impl Iterator<Item = f64>) -> Option<f64> {
    let terms: Vec<f64> = terms.collect();
    let count = terms.len();
    (count > 0).then(|| sum(terms.into_iter()) / count as f64)
}

/// A sum that does not depend on the order of its terms: they are added in ascending order.
fn sum(terms: impl Iterator<Item = f64>) -> f64 {
    let mut terms: Vec<f64> = terms.collect();
    terms.sort_unstable_by(f64::total_cmp);
    terms.into_iter().sum()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Timing, suite_percentiles};
    use crate::results::testing::{case, timed_turn};
    use crate::results::{CaseResult, Status, TurnTimes};

    /// One run of a one-turn case taking `ms`, as the runner records it.
    fn run(id: &str, ms: u64) -> CaseResult {
        let mut run = CaseResult {
            turns: vec![timed_turn(1, ms as f64)],
            ..case("a.yaml", id, Status::Passed)
        };
        run.turn_times = TurnTimes::of(&run.turns);
        run
    }

    #[test]
    fn reruns_of_a_case_refine_its_share_of_the_p95_but_do_not_enlarge_it() {
        // 19 fast cases and one slow: the p95 (rank 19 of 20) is a fast one.
        let mut cases: Vec<CaseResult> = (0..19).map(|i| run(&format!("f{i}"), 100)).collect();
        cases.push(run("slow", 1000));
        let once = suite_percentiles(&cases, Timing::Latency).unwrap();
        // The slow case rerun 9 times: ten of 29 latencies are slow, yet it still weighs one.
        let slow = CaseResult::from_runs(vec![run("slow", 1000); 10], 10, 10).unwrap();
        *cases.last_mut().unwrap() = slow;
        let rerun = suite_percentiles(&cases, Timing::Latency).unwrap();
        assert_eq!(once, rerun);
        assert!(once.p95 < Duration::from_millis(110), "{once:?}");
        // Without the times of every run (an older report), the shown runs' turns, exactly.
        cases
            .iter_mut()
            .for_each(|c| c.turn_times = TurnTimes::default());
        let shown = suite_percentiles(&cases, Timing::Latency).unwrap();
        assert_eq!(shown.p95, Duration::from_millis(100));
        assert_eq!(suite_percentiles(&cases, Timing::Ttft), None);
    }
}
