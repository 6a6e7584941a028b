//! Where each gated metric stands, decided once for every output: the terminal, the Markdown
//! and the page each used to work out from a [`MetricDelta`] whether a row reads regressed,
//! open or within its limit, and one of them said "ok" where another said "within the
//! limit, case by case".

use crate::results::{Decision, MetricDelta};

/// A gated metric's standing against its limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricStanding {
    /// Not measured on a side (or not measurable this run): it cannot trip.
    NotCompared,
    /// Worse than its limit beyond noise: it trips the gate.
    Regressed,
    /// Worse than its limit, but the runs could not tell it from noise
    /// ([`Decision::Inconclusive`] or [`Decision::NotEnoughRuns`]).
    Open(Decision),
    /// A latency worse than its limit, by less than the gate's latency floor.
    WithinLatencyFloor,
    /// Worse than its limit as a whole, yet not case by case: other cases ran (new ones,
    /// fewer ones), and the gate compares each case with its own history.
    WithinCaseByCase,
    /// Worse, by less than its limit.
    WorseWithin,
    /// No worse.
    Within,
}

/// How an output colours a row: the severity a standing stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowTone {
    /// It trips the gate.
    Failed,
    /// Worth a look, does not trip.
    Warning,
    Passed,
    /// Not compared.
    Skipped,
}

impl MetricStanding {
    /// The standing of `delta`.
    pub fn of(delta: &MetricDelta) -> Self {
        match (delta.change, delta.decision) {
            (None, _) => MetricStanding::NotCompared,
            (_, Decision::Regressed) => MetricStanding::Regressed,
            (_, open) if open.is_undecided() => MetricStanding::Open(open),
            _ if delta.within_latency_floor() => MetricStanding::WithinLatencyFloor,
            _ if delta.measured_beyond_limit() => MetricStanding::WithinCaseByCase,
            (Some(change), _) if change > 0.0 => MetricStanding::WorseWithin,
            (Some(_), _) => MetricStanding::Within,
        }
    }

    /// The standing in a few words, the same in every output.
    pub fn words(self) -> &'static str {
        match self {
            MetricStanding::NotCompared => "not compared",
            MetricStanding::Regressed => "regressed",
            MetricStanding::Open(Decision::NotEnoughRuns) => "not enough runs to tell",
            MetricStanding::Open(_) => "inconclusive: could be noise",
            MetricStanding::WithinLatencyFloor => "within the latency noise floor",
            MetricStanding::WithinCaseByCase => "within the limit, case by case",
            MetricStanding::WorseWithin => "worse, within the limit",
            MetricStanding::Within => "within the limit",
        }
    }

    pub fn tone(self) -> RowTone {
        match self {
            MetricStanding::NotCompared => RowTone::Skipped,
            MetricStanding::Regressed => RowTone::Failed,
            MetricStanding::Open(_) | MetricStanding::WorseWithin => RowTone::Warning,
            MetricStanding::WithinLatencyFloor
            | MetricStanding::WithinCaseByCase
            | MetricStanding::Within => RowTone::Passed,
        }
    }
}

impl RowTone {
    /// The sign the Markdown marks it with.
    pub fn sign(self) -> &'static str {
        match self {
            RowTone::Failed => "❌",
            RowTone::Warning => "⚠️",
            RowTone::Passed => "✅",
            RowTone::Skipped => "",
        }
    }

    /// The word outputs mark it with (the page's class).
    pub fn name(self) -> &'static str {
        match self {
            RowTone::Failed => "failed",
            RowTone::Warning => "warn",
            RowTone::Passed => "passed",
            RowTone::Skipped => "skipped",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::MetricStanding;
    use crate::results::{Decision, MetricDelta, Threshold};

    fn delta(threshold: Threshold, change: Option<f64>, decision: Decision) -> MetricDelta {
        MetricDelta {
            threshold,
            baseline: change.map(|_| 100.0),
            current: change.map(|c| 100.0 + c),
            change,
            limit: 20.0,
            tripped: decision == Decision::Regressed,
            decision,
            evidence: None,
            unmeasured: None,
        }
    }

    #[test]
    fn each_row_has_one_standing() {
        let latency = Threshold::P95LatencyIncreasePct;
        let rows = [
            (None, Decision::Clear, MetricStanding::NotCompared),
            (Some(30.0), Decision::Regressed, MetricStanding::Regressed),
            (
                Some(30.0),
                Decision::Inconclusive,
                MetricStanding::Open(Decision::Inconclusive),
            ),
            (
                Some(30.0),
                Decision::Clear,
                MetricStanding::WithinLatencyFloor,
            ),
            (Some(5.0), Decision::Clear, MetricStanding::WorseWithin),
            (Some(0.0), Decision::Clear, MetricStanding::Within),
        ];
        for (change, decision, standing) in rows {
            assert_eq!(
                MetricStanding::of(&delta(latency, change, decision)),
                standing
            );
        }
        let rate = delta(Threshold::PassRateDropPp, Some(30.0), Decision::Clear);
        assert_eq!(MetricStanding::of(&rate), MetricStanding::WithinCaseByCase);
    }
}
