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
//! the last bit of a result. With `--repeat`, turn metrics (latency, TTFT, tool calls) come
//! from the run the report shows for each case; tokens are those of every run.

use crate::results::{
    Aggregates, CaseResult, CheckCategory, Counts, Percentiles, Report, ToolLatency, ratio,
};

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

impl Aggregates {
    /// The aggregates of a report's cases.
    pub fn of(cases: &[CaseResult]) -> Self {
        let turns = || cases.iter().flat_map(|c| &c.turns);
        let conversations = || cases.iter().filter(|c| c.is_conversation());
        let conversation_turns = || conversations().flat_map(|c| &c.turns);
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
            latency: Percentiles::of(conversation_turns().filter_map(|t| t.latency).collect()),
            ttft: Percentiles::of(conversation_turns().filter_map(|t| t.ttft).collect()),
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
