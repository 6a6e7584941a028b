//! What the gate's tests compare beyond one verdict a case: each case's runs as a tally (its
//! baseline's history included), and every turn's latency of every run, pooled over the suite
//! ([`Samples`]) and kept apart for each case ([`TurnTimes`]).

use serde::{Deserialize, Serialize};

use super::{CaseResult, Status, TurnResult};
use crate::stats::{LatencyHistogram, Tally};

/// Every turn's latency and time to first token, of every run of every case (adaptive reruns
/// included). In a baseline written by `--update-baseline` they are a window over the recent
/// builds of main (see `goldgate::gate::baseline`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Samples {
    /// How many runs of the suite the samples come from (1 for a report of one run).
    pub builds: u32,
    /// Latencies in milliseconds, as `bucket:count` pairs: bucket `b` holds the values
    /// within 1% of `1.02^b - 1` ms (see [`LatencyHistogram`]).
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub latency: LatencyHistogram,
    /// Times to first token, the same way.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub ttft: LatencyHistogram,
}

impl Samples {
    /// Adds `other`'s latencies to these.
    pub fn merge(&mut self, other: &Samples) {
        self.latency.merge(&other.latency);
        self.ttft.merge(&other.ttft);
    }

    /// Records the turn latencies of `case`'s shown run.
    pub fn record(&mut self, case: &CaseResult) {
        if case.is_conversation() {
            let times = TurnTimes::of(&case.turns);
            self.latency.merge(&times.latency);
            self.ttft.merge(&times.ttft);
        }
    }
}

/// Every turn's latency and time to first token of every run of one case (adaptive reruns
/// included). The gate compares each case's latencies with its own in the baseline, where they
/// are a window over the recent builds of main (see `goldgate::gate::baseline`): a suite mixing
/// fast and slow cases, or rerunning some of them, then cannot fake or hide a slowdown.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TurnTimes {
    /// Latencies in milliseconds, as `bucket:count` pairs (see [`Samples::latency`]).
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub latency: LatencyHistogram,
    /// Times to first token, the same way.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub ttft: LatencyHistogram,
}

impl TurnTimes {
    /// The times of one run's `turns`.
    pub fn of(turns: &[TurnResult]) -> Self {
        let mut times = TurnTimes::default();
        for turn in turns {
            if let Some(latency) = turn.latency {
                times.latency.record(latency.as_secs_f64() * 1000.0);
            }
            if let Some(ttft) = turn.ttft {
                times.ttft.record(ttft.as_secs_f64() * 1000.0);
            }
        }
        times
    }

    /// Adds `other`'s times to these.
    pub fn merge(&mut self, other: &TurnTimes) {
        self.latency.merge(&other.latency);
        self.ttft.merge(&other.ttft);
    }

    /// Nothing timed (a report written before cases kept their times, a tool test).
    pub fn is_empty(&self) -> bool {
        self.latency.count() == 0 && self.ttft.count() == 0
    }
}

fn tally_of<'a>(runs: impl Iterator<Item = &'a Status>) -> Tally {
    runs.fold(Tally::default(), |tally, status| {
        tally
            + Tally {
                passed: u32::from(*status == Status::Passed),
                judged: u32::from(status.is_judged()),
            }
    })
}

impl CaseResult {
    /// This report's runs of the case that reached a verdict (one, without repeats).
    pub fn tally(&self) -> Tally {
        self.tally_of_first(self.runs())
    }

    /// Like [`tally`](Self::tally), over the first `runs` runs only.
    pub fn tally_of_first(&self, runs: usize) -> Tally {
        match &self.repeats {
            Some(repeats) => tally_of(repeats.runs.iter().take(runs)),
            None => tally_of(std::iter::once(&self.status).take(runs)),
        }
    }

    /// How many runs of the case finished.
    pub fn runs(&self) -> usize {
        self.repeats.as_ref().map_or(1, |r| r.runs.len())
    }

    /// The runs of the case in this report and in the history it keeps (a baseline's).
    pub fn tally_with_history(&self) -> Tally {
        self.history.iter().fold(self.tally(), |sum, &t| sum + t)
    }
}

#[cfg(test)]
mod tests {
    use crate::results::{Repeats, Status};
    use crate::stats::Tally;

    #[test]
    fn a_case_counts_its_judged_runs_and_its_history() {
        let mut case = crate::results::testing::case("a.yaml", "c", Status::Failed);
        assert_eq!(
            case.tally(),
            Tally {
                passed: 0,
                judged: 1
            }
        );
        use Status::{Error as E, Failed as F, Passed as P};
        case.repeats = Some(Repeats::of(vec![P, F, E, P], 2));
        assert_eq!(
            case.tally(),
            Tally {
                passed: 2,
                judged: 3
            }
        );
        assert_eq!(
            case.tally_of_first(2),
            Tally {
                passed: 1,
                judged: 2
            }
        );
        assert_eq!(case.runs(), 4);
        case.history = vec![
            Tally {
                passed: 5,
                judged: 5
            };
            2
        ];
        assert_eq!(
            case.tally_with_history(),
            Tally {
                passed: 12,
                judged: 13
            }
        );
    }
}
