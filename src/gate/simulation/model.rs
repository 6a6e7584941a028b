//! What the simulation plays: a suite of cases, each with its own chance to pass a run and its
//! own latency per turn ([`SuiteModel`]), built from the usual shapes of a suite (stable,
//! slightly flaky, known flaky goldens) and changed by planted regressions. A model can as well
//! be derived from a real baseline (each case's pass rate over its history, its latencies) and
//! replayed through the gate: nothing here assumes the shapes.

/// One case as the simulation plays it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimulatedCase {
    /// The chance that a run of the case passes.
    pub pass: f64,
    /// Turns a run plays, each with its own latency.
    pub turns: u32,
    /// Median latency of a turn, milliseconds.
    pub median_ms: f64,
    /// Log-scale standard deviation of a turn's latency (0.5 is typical of LLM agents).
    pub sigma: f64,
}

impl SimulatedCase {
    /// The flaky agent: 10% of answers wrong, one turn, latency median 400 ms, sigma
    /// 0.5.
    pub const FLAKY: SimulatedCase = SimulatedCase {
        pass: 0.9,
        turns: 1,
        median_ms: 400.0,
        sigma: 0.5,
    };
}

/// How often each kind of golden in a suite passes a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Flakiness {
    /// Always right.
    Stable,
    /// Wrong now and then (5% of runs).
    SlightlyFlaky,
    /// Wrong often (30% of runs), and known for it.
    KnownFlaky,
}

impl Flakiness {
    pub fn pass(self) -> f64 {
        match self {
            Flakiness::Stable => 1.0,
            Flakiness::SlightlyFlaky => 0.95,
            Flakiness::KnownFlaky => 0.7,
        }
    }
}

/// A suite as the simulation plays it: each case's behaviour, by position (the case's key is
/// [`SuiteModel::key`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SuiteModel {
    pub cases: Vec<SimulatedCase>,
}

impl SuiteModel {
    /// `count` cases that all behave as `case`.
    pub fn uniform(count: usize, case: SimulatedCase) -> Self {
        Self {
            cases: vec![case; count],
        }
    }

    /// A suite of `turns`-turn goldens, `count` of each kind of flakiness in the order given,
    /// with the latency of [`SimulatedCase::FLAKY`].
    pub fn mixed(kinds: &[(Flakiness, usize)], turns: u32) -> Self {
        let cases = kinds
            .iter()
            .flat_map(|&(kind, count)| {
                let case = SimulatedCase {
                    pass: kind.pass(),
                    turns,
                    ..SimulatedCase::FLAKY
                };
                std::iter::repeat_n(case, count)
            })
            .collect();
        Self { cases }
    }

    /// The key of case `index` in the reports the simulation writes.
    pub fn key(index: usize) -> String {
        crate::shard::key(Self::FILE, &Self::id(index))
    }

    /// The id of case `index`.
    pub fn id(index: usize) -> String {
        format!("c{index:03}")
    }

    /// The golden file every simulated case belongs to.
    pub const FILE: &'static str = "sim.yaml";

    /// The first `count` cases that pass as `from` (to within 1e-9) now pass as `to`: a
    /// planted regression of some goldens of one kind (`from` 1.0, `to` 0.7: five stable
    /// goldens now wrong 30% of the time).
    pub fn with_some(&self, count: usize, from: f64, to: f64) -> Self {
        let mut changed = self.clone();
        changed
            .cases
            .iter_mut()
            .filter(|c| (c.pass - from).abs() < 1e-9)
            .take(count)
            .for_each(|c| c.pass = to);
        changed
    }

    /// Every case that passes as `from` now passes as `to` (a kind of golden got worse).
    pub fn with_all(&self, from: f64, to: f64) -> Self {
        self.with_some(self.cases.len(), from, to)
    }

    /// Fast and slow cases mixed, as a support suite has them: every other case answers in
    /// `fast_ms`, the rest in `slow_ms` (greetings against order lookups), each turn's spread
    /// as before.
    pub fn fast_and_slow(&self, fast_ms: f64, slow_ms: f64) -> Self {
        let mut changed = self.clone();
        for (index, case) in changed.cases.iter_mut().enumerate() {
            case.median_ms = if index % 2 == 0 { fast_ms } else { slow_ms };
        }
        changed
    }

    /// Every turn of every case `factor` times as slow.
    pub fn slower(&self, factor: f64) -> Self {
        let mut changed = self.clone();
        changed.cases.iter_mut().for_each(|c| c.median_ms *= factor);
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::{Flakiness, SuiteModel};

    #[test]
    fn shapes_and_planted_regressions_change_only_what_they_name() {
        let suite = SuiteModel::mixed(&[(Flakiness::Stable, 3), (Flakiness::SlightlyFlaky, 2)], 2);
        let rates = |m: &SuiteModel| m.cases.iter().map(|c| c.pass).collect::<Vec<_>>();
        assert_eq!(rates(&suite), [1.0, 1.0, 1.0, 0.95, 0.95]);
        assert!(suite.cases.iter().all(|c| c.turns == 2));
        assert_eq!(
            rates(&suite.with_some(2, 1.0, 0.7)),
            [0.7, 0.7, 1.0, 0.95, 0.95]
        );
        assert_eq!(
            rates(&suite.with_all(0.95, 0.75)),
            [1.0, 1.0, 1.0, 0.75, 0.75]
        );
        assert_eq!(suite.slower(2.0).cases[4].median_ms, 800.0);
        let mixed = suite.fast_and_slow(100.0, 600.0);
        assert_eq!(mixed.cases[2].median_ms, 100.0);
        assert_eq!(mixed.cases[3].median_ms, 600.0);
        assert_eq!(SuiteModel::key(7), "sim.yaml#c007");
    }
}
