//! What the regression gate found, as the report keeps it: each threshold's metric before
//! and now, and the cases whose verdict changed. `goldgate::gate` decides them.

use serde::{Deserialize, Serialize};

use super::Status;

/// The five regression thresholds, by their seed names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Threshold {
    #[serde(rename = "passRateDropPp")]
    PassRateDropPp,
    #[serde(rename = "deflectionDropPp")]
    DeflectionDropPp,
    #[serde(rename = "p95LatencyIncreasePct")]
    P95LatencyIncreasePct,
    #[serde(rename = "ttftP95IncreasePct")]
    TtftP95IncreasePct,
    #[serde(rename = "hallucinationRateIncreasePp")]
    HallucinationRateIncreasePp,
    /// Off unless set: what a conversation costs the agent.
    #[serde(rename = "costIncreasePct")]
    CostIncreasePct,
    /// Off unless set: the tokens a conversation spends.
    #[serde(rename = "tokensIncreasePct")]
    TokensIncreasePct,
}

/// What a threshold's metric itself is measured in (its change is in its [`Unit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// A fraction in `0..=1`.
    Rate,
    /// A p95, in milliseconds.
    Milliseconds,
    /// US dollars per conversation.
    Dollars,
    /// Tokens per conversation.
    Tokens,
}

/// What a threshold's change and limit are measured in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Percentage points of a rate.
    PercentagePoints,
    /// Percent of the baseline's value.
    Percent,
}

impl Unit {
    /// A change or a limit in this unit, to one decimal without a trailing `.0`: `5 pp`,
    /// `66.7%`.
    pub fn amount(self, amount: f64) -> String {
        let text = format!("{amount:.1}");
        let number = text.strip_suffix(".0").unwrap_or(&text);
        match self {
            Unit::PercentagePoints => format!("{number} pp"),
            Unit::Percent => format!("{number}%"),
        }
    }
}

impl Threshold {
    pub const ALL: [Threshold; 7] = [
        Threshold::PassRateDropPp,
        Threshold::DeflectionDropPp,
        Threshold::P95LatencyIncreasePct,
        Threshold::TtftP95IncreasePct,
        Threshold::HallucinationRateIncreasePp,
        Threshold::CostIncreasePct,
        Threshold::TokensIncreasePct,
    ];

    /// The seed's name, as written in config files.
    pub fn name(self) -> &'static str {
        match self {
            Threshold::PassRateDropPp => "passRateDropPp",
            Threshold::DeflectionDropPp => "deflectionDropPp",
            Threshold::P95LatencyIncreasePct => "p95LatencyIncreasePct",
            Threshold::TtftP95IncreasePct => "ttftP95IncreasePct",
            Threshold::HallucinationRateIncreasePp => "hallucinationRateIncreasePp",
            Threshold::CostIncreasePct => "costIncreasePct",
            Threshold::TokensIncreasePct => "tokensIncreasePct",
        }
    }

    /// The metric it watches, for people.
    pub fn metric(self) -> &'static str {
        match self {
            Threshold::PassRateDropPp => "pass rate",
            Threshold::DeflectionDropPp => "deflection rate",
            Threshold::P95LatencyIncreasePct => "p95 latency",
            Threshold::TtftP95IncreasePct => "p95 TTFT",
            Threshold::HallucinationRateIncreasePp => "hallucination rate",
            Threshold::CostIncreasePct => "cost per conversation",
            Threshold::TokensIncreasePct => "tokens per conversation",
        }
    }

    pub fn unit(self) -> Unit {
        match self.measure() {
            Measure::Rate => Unit::PercentagePoints,
            Measure::Milliseconds | Measure::Dollars | Measure::Tokens => Unit::Percent,
        }
    }

    pub fn measure(self) -> Measure {
        match self {
            Threshold::PassRateDropPp
            | Threshold::DeflectionDropPp
            | Threshold::HallucinationRateIncreasePp => Measure::Rate,
            Threshold::P95LatencyIncreasePct | Threshold::TtftP95IncreasePct => {
                Measure::Milliseconds
            }
            Threshold::CostIncreasePct => Measure::Dollars,
            Threshold::TokensIncreasePct => Measure::Tokens,
        }
    }

    /// The seed's default limit; `None`: off unless a config sets it (cost and tokens, which
    /// not every agent reports).
    pub fn default_limit(self) -> Option<f64> {
        match self {
            Threshold::PassRateDropPp => Some(0.0),
            Threshold::DeflectionDropPp => Some(5.0),
            Threshold::P95LatencyIncreasePct => Some(20.0),
            Threshold::TtftP95IncreasePct => Some(20.0),
            Threshold::HallucinationRateIncreasePp => Some(2.0),
            Threshold::CostIncreasePct | Threshold::TokensIncreasePct => None,
        }
    }
}

/// What the gate concluded about one comparison (a threshold's metric, or a case).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    /// Worse by more than the limit, and beyond the noise at the suite's false-alarm rate (or,
    /// with nothing to measure noise on, by verdict as gecx decides: see [`Evidence`]).
    Regressed,
    /// Looks worse by more than the limit, but could be noise; more runs could tell.
    Inconclusive,
    /// Looks worse by more than the limit, but no result these runs could produce would be
    /// beyond noise: it takes repeats (`--repeat`, `--max-repeat`) or a baseline with history.
    NotEnoughRuns,
    /// Not worse by more than the limit.
    #[default]
    Clear,
}

impl Decision {
    /// The word reports print.
    pub fn name(self) -> &'static str {
        match self {
            Decision::Regressed => "regressed",
            Decision::Inconclusive => "inconclusive",
            Decision::NotEnoughRuns => "not enough runs",
            Decision::Clear => "clear",
        }
    }

    /// Looks worse but is not decided: inconclusive, or not enough runs.
    pub fn is_undecided(self) -> bool {
        matches!(self, Decision::Inconclusive | Decision::NotEnoughRuns)
    }
}

/// How a decision was reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    /// No test: one run a side and no history, so the verdicts decide, as gecx does.
    Verdicts,
    /// No test: a side has nothing to test on (a baseline written before goldgate kept
    /// latency samples, a rate set by hand), so the values decide, as gecx does.
    Values,
    /// Fisher's exact test on a case's runs (baseline history included).
    Fisher,
    /// The exact stratified (Mantel–Haenszel) test over the cases' runs.
    Stratified,
    /// Mood's quantile test on the latencies of every turn of every run, pooled over the suite.
    Quantile,
    /// The rank-sum (Mann–Whitney) test of every latency, scaled by the limit, against the
    /// baseline's: the whole distribution moved. Like [`Test::Quantile`], over the suite's
    /// latencies pooled: against a baseline written before cases kept their times.
    RankSum,
    /// The rank-sum test within each case, summed over the cases (van Elteren's): each
    /// case's latencies now, divided by the limit's ratio (and, where the floor binds, less
    /// the floor in a second test), against its own in the baseline, so that neither a
    /// mixture of fast and slow cases nor reruns of some of them move it.
    CaseRankSum,
    /// The sign test over the conversations both runs had: how many cost (or spent) more now
    /// than the baseline's figure times the limit.
    Sign,
    /// The exact combined test of every case's runs (each case's conditional mid-p, summed by
    /// Fisher's method, its law convolved exactly): several cases each a little worse.
    Combined,
}

/// The evidence behind a decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Evidence {
    pub test: Test,
    /// The one-sided p-value: the chance of data at least this bad from an unchanged agent.
    /// `None` for [`Test::Verdicts`] and [`Test::Values`].
    pub p_value: Option<f64>,
    /// The p-value adjusted for every comparison of the run (Holm): it decides against the
    /// false-alarm rate.
    pub adjusted_p: Option<f64>,
    /// The measured change, in the threshold's unit (points, percent); for a case, points of
    /// its pass fraction.
    pub effect: Option<f64>,
    /// A confidence interval of the change, in the same unit (at `1 - 2 × rate`): how large
    /// it may be.
    pub interval: Option<(f64, f64)>,
    /// Runs (rates, cases) or latencies (latency tests) compared: baseline, now.
    pub samples: (u64, u64),
    /// For a decision left open: the smallest worsening, in the threshold's unit, that these
    /// runs could have shown beyond noise (`could detect a rise of 35% or more`).
    #[serde(default)]
    pub detectable: Option<f64>,
}

impl Evidence {
    /// The evidence in words, for reports: `p = 0.0004 (adjusted 0.002); change 4.1 pp to
    /// 20.9 pp; 100 vs 100 judged runs`.
    pub fn describe(&self, unit: Unit) -> String {
        match self.test {
            Test::Verdicts => {
                return match self.samples {
                    (0, _) => "decided by verdict: a new case must pass".to_owned(),
                    (1, 0 | 1) => "decided by verdict: one run a side and no history".to_owned(),
                    (1, now) => format!(
                        "decided by verdict: failed all {now} runs here, against one passing \
                         run and no history in the baseline"
                    ),
                    (before, now) => format!(
                        "decided by verdict: failed {} here, and none of its {before} runs on \
                         main",
                        if now == 1 {
                            "its one run".to_owned()
                        } else {
                            format!("all {now} runs")
                        }
                    ),
                };
            }
            Test::Values => {
                return "decided by the values: nothing to test on in the baseline or now"
                    .to_owned();
            }
            _ => {}
        }
        let mut parts = Vec::new();
        if let Some(p) = self.p_value {
            let adjusted = self
                .adjusted_p
                .filter(|a| (a - p).abs() > p * 1e-6)
                .map_or_else(String::new, |a| format!(" (adjusted {})", p_value(a)));
            parts.push(format!("p = {}{adjusted}", p_value(p)));
        }
        if let Some((lo, hi)) = self.interval {
            parts.push(format!(
                "interval {} to {}",
                unit.amount(lo),
                unit.amount(hi)
            ));
        }
        let what = match self.test {
            Test::Quantile | Test::RankSum => "latencies pooled",
            Test::CaseRankSum => "latencies, case by case",
            Test::Sign => "conversations",
            _ => "judged runs",
        };
        parts.push(format!("{} vs {} {what}", self.samples.0, self.samples.1));
        if let Some(detectable) = self.detectable {
            let verb = match unit {
                Unit::Percent => "rise",
                Unit::PercentagePoints => "worsening",
            };
            parts.push(format!(
                "could detect a {verb} of {} or more",
                unit.amount(detectable)
            ));
        }
        parts.join("; ")
    }
}

/// A p-value with two significant digits: `0.031`, `0.0004`, `< 1e-6`.
fn p_value(p: f64) -> String {
    if p < 1e-6 {
        "< 1e-6".to_owned()
    } else if p >= 0.1 {
        format!("{p:.2}")
    } else {
        let digits = (-p.log10()).ceil() as usize + 1;
        format!("{p:.digits$}")
    }
}

/// One metric of the run against the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MetricDelta {
    pub threshold: Threshold,
    /// The metric in the baseline and now: a rate in 0..=1, or milliseconds for latencies.
    pub baseline: Option<f64>,
    pub current: Option<f64>,
    /// How much worse the run is, in the threshold's unit: percentage points for rates (a
    /// drop of the pass or deflection rate, a rise of the hallucination rate), percent for
    /// latencies; negative when it got better. `None` when either side was not measured.
    pub change: Option<f64>,
    /// The threshold's limit in the same unit.
    pub limit: f64,
    /// `decision == regressed` (kept for readers of the first reports).
    pub tripped: bool,
    #[serde(default)]
    pub decision: Decision,
    #[serde(default)]
    pub evidence: Option<Evidence>,
    /// Why the metric was not measured, when a report says (the agent cannot report a
    /// handoff): the threshold cannot trip, and every output says why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmeasured: Option<String>,
}

impl MetricDelta {
    /// Why the metric was not compared, for people (`None` when it was): which side lacks
    /// it, and why when the report knows.
    pub fn not_compared(&self) -> Option<String> {
        if self.change.is_some() {
            return None;
        }
        let side = match (self.baseline, self.current) {
            (None, None) => "in the baseline or now",
            (None, Some(_)) => "in the baseline",
            _ => "now",
        };
        Some(match &self.unmeasured {
            Some(why) => format!("not measured: {why}; not compared, it cannot trip"),
            None => format!("not measured {side}: not compared"),
        })
    }

    /// The evidence for people, in the threshold's unit: `p = 0.0040 (adjusted 0.012); …`.
    pub fn evidence_words(&self) -> Option<String> {
        (self.evidence.as_ref()).map(|e| e.describe(self.threshold.unit()))
    }

    /// The measured change is worse than the limit, whatever the tests say.
    pub fn measured_beyond_limit(&self) -> bool {
        self.change.is_some_and(|c| beyond(c, self.limit))
    }

    /// Worse by more than the limit, but a latency change within the gate's latency floor
    /// (`goldgate::gate::LATENCY_FLOOR`).
    pub fn within_latency_floor(&self) -> bool {
        self.threshold.measure() == Measure::Milliseconds
            && self.decision == Decision::Clear
            && self.measured_beyond_limit()
    }
}

/// Rates are ratios of counts: equal rates computed from different counts may differ in the
/// last bits, and must not read as worse than a limit of 0.
const EPSILON: f64 = 1e-9;

/// `change` is worse than `limit` (both in the threshold's unit).
pub fn beyond(change: f64, limit: f64) -> bool {
    change > limit + EPSILON
}

/// Every case's runs against its baseline's, combined into one test: several cases each a
/// little worse add up (see [`Test::Combined`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CasesCombined {
    /// Cases that took part: judged on both sides, quarantined ones aside, with more than one
    /// possible outcome.
    pub cases: u64,
    pub decision: Decision,
    /// The test, its p-value and Holm-adjusted p-value, the runs compared.
    pub evidence: Evidence,
}

impl CasesCombined {
    /// The name reports print for it.
    pub const NAME: &'static str = "cases combined";
}

/// A case whose verdict differs from the baseline's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CaseFlip {
    pub id: String,
    pub name: String,
    pub file: String,
    pub line: u32,
    /// `None` when the case is new (not in the baseline).
    pub baseline: Option<Status>,
    pub current: Status,
    /// With repeats or history: the pass fractions compared (passed / judged runs, the
    /// baseline's history included), baseline then now.
    pub pass_fraction: Option<(f64, f64)>,
    #[serde(default)]
    pub decision: Decision,
    #[serde(default)]
    pub evidence: Option<Evidence>,
    /// The quarantine entry naming the case, active or expired.
    #[serde(default)]
    pub quarantine: Option<super::Quarantine>,
}

impl CaseFlip {
    /// The key of the case, as [`super::CaseResult::key`] gives it.
    pub fn key(&self) -> String {
        crate::shard::key(&self.file, &self.id)
    }

    /// How the case moved, for people: `passed → failed`, `new, failed`, or with runs
    /// `100.0% → 40.0% of runs passed`.
    pub fn movement(&self) -> String {
        match (self.baseline, self.pass_fraction) {
            (_, Some((before, now))) => format!(
                "{:.1}% → {:.1}% of runs passed",
                before * 100.0,
                now * 100.0
            ),
            (None, None) => format!("new, {}", self.current.name()),
            (Some(before), None) => format!("{} → {}", before.name(), self.current.name()),
        }
    }

    /// The decision, unless `regressed`, and its evidence, for people: `not enough runs: p =
    /// 0.25; …`; then its quarantine, if any. `None` with neither.
    pub fn evidence_words(&self) -> Option<String> {
        let evidence = self
            .evidence
            .as_ref()
            .map(|e| e.describe(Unit::PercentagePoints))
            .map(|evidence| match self.decision {
                Decision::Regressed => evidence,
                other => format!("{}: {evidence}", other.name()),
            });
        let quarantine = self.quarantine.as_ref().map(super::Quarantine::describe);
        match (evidence, quarantine) {
            (Some(e), Some(q)) => Some(format!("{e}; {q}")),
            (e, q) => e.or(q),
        }
    }
}

/// Everything the gate found. It is part of the JSON report (`gate`), so that `compare`, the
/// Markdown summary and the PR comment render the same facts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Comparison {
    /// The baseline file compared with, as given.
    pub baseline: String,
    pub metrics: Vec<MetricDelta>,
    /// The combined test of every case's runs; `None` when no case could move (or in reports
    /// written before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub combined: Option<CasesCombined>,
    /// The suite's false-alarm rate: the most often an unchanged agent may trip the gate.
    #[serde(default = "default_false_alarm_rate")]
    pub false_alarm_rate: f64,
    /// Cases that regressed: these trip the gate.
    pub newly_failing: Vec<CaseFlip>,
    /// Cases that look worse but are not decided (`inconclusive`, `not enough runs`): these
    /// do not trip the gate.
    #[serde(default)]
    pub undecided: Vec<CaseFlip>,
    /// Failed in the baseline and passed now.
    pub newly_passing: Vec<CaseFlip>,
    /// Fail now as they did in the baseline, no worse beyond noise: listed, never a
    /// regression.
    #[serde(default)]
    pub known_failures: Vec<CaseFlip>,
    /// Fail now, held by a quarantine entry that has not expired: listed, never decided on.
    #[serde(default)]
    pub quarantined: Vec<CaseFlip>,
    /// Keys (`file#id`, see [`crate::shard::key`]) of the baseline's cases that did not run now.
    pub missing: Vec<String>,
    /// Runs beyond `--repeat` that adaptive repeats spent to settle open decisions.
    #[serde(default)]
    pub extra_runs: u64,
    /// What the run could not tell, and what would tell it.
    #[serde(default)]
    pub notes: Vec<String>,
    /// The smallest change this run could have caught. Absent from older reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sight: Option<super::Sight>,
}

impl Default for Comparison {
    fn default() -> Self {
        Self {
            baseline: String::new(),
            metrics: Vec::new(),
            combined: None,
            false_alarm_rate: DEFAULT_FALSE_ALARM_RATE,
            newly_failing: Vec::new(),
            undecided: Vec::new(),
            newly_passing: Vec::new(),
            known_failures: Vec::new(),
            quarantined: Vec::new(),
            missing: Vec::new(),
            extra_runs: 0,
            notes: Vec::new(),
            sight: None,
        }
    }
}

fn default_false_alarm_rate() -> f64 {
    DEFAULT_FALSE_ALARM_RATE
}

/// The false-alarm rate a gated run promises unless told otherwise: 1%.
pub const DEFAULT_FALSE_ALARM_RATE: f64 = 0.01;

impl Comparison {
    /// True when the gate trips: a threshold, a case that newly fails, or the cases combined.
    pub fn regressed(&self) -> bool {
        !self.newly_failing.is_empty()
            || self.tripped().next().is_some()
            || self.combined_decision() == Some(Decision::Regressed)
    }

    /// The decision of the combined test of every case, when there was one.
    pub fn combined_decision(&self) -> Option<Decision> {
        self.combined.as_ref().map(|c| c.decision)
    }

    /// The thresholds that tripped.
    pub fn tripped(&self) -> impl Iterator<Item = &MetricDelta> {
        self.metrics
            .iter()
            .filter(|m| m.decision == Decision::Regressed)
    }

    /// How many comparisons (cases and metrics) look worse but are not decided.
    pub fn undecided_count(&self) -> usize {
        self.undecided.len()
            + self.undecided_metrics().count()
            + usize::from(self.combined_decision().is_some_and(Decision::is_undecided))
    }

    /// The metrics that look worse but are not decided.
    pub fn undecided_metrics(&self) -> impl Iterator<Item = &MetricDelta> {
        self.metrics.iter().filter(|m| m.decision.is_undecided())
    }
}
