//! The independent runs of one case under `--repeat N --min-pass K`, and the rules that make
//! one verdict of them.
//!
//! - **Status**: passed when at least K runs passed. Otherwise errors of the run decide only
//!   where they could have made the difference: the case is an error when its passed runs
//!   plus its errored (or never finished) runs reach K, and failed when even those passing
//!   would leave it short of K. A case none of whose runs could be judged is skipped.
//! - **Flaky**: at least one run passed and at least one failed (errors are not the agent's
//!   verdict and do not make a case flaky).
//! - **pass^k**: see [`pass_hat_k`], with k = K.

use serde::{Deserialize, Serialize};

use super::{CaseResult, Status, TurnTimes};

/// How the runs of one case went.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Repeats {
    /// Each finished run's status, in the order they were scheduled.
    pub runs: Vec<Status>,
    pub passed: u32,
    /// K: the case passes when at least this many runs pass.
    pub min_pass: u32,
    /// passed / runs.
    pub pass_fraction: f64,
    /// The estimated chance that K independent runs all pass: `C(passed, K) / C(runs, K)`
    /// (see [`pass_hat_k`]).
    pub pass_hat_k: f64,
    /// The runs disagree.
    pub flaky: bool,
}

fn count(runs: &[Status], status: Status) -> u32 {
    u32::try_from(runs.iter().filter(|&&r| r == status).count()).unwrap_or(u32::MAX)
}

fn len(runs: &[impl Sized]) -> u32 {
    u32::try_from(runs.len()).unwrap_or(u32::MAX)
}

impl Repeats {
    /// The summary of `runs` (statuses in the order scheduled) under K = `min_pass`.
    pub fn of(runs: Vec<Status>, min_pass: u32) -> Repeats {
        let passed = count(&runs, Status::Passed);
        let finished = len(&runs);
        Repeats {
            pass_fraction: if finished == 0 {
                0.0
            } else {
                f64::from(passed) / f64::from(finished)
            },
            pass_hat_k: pass_hat_k(finished, passed, min_pass),
            flaky: passed > 0 && count(&runs, Status::Failed) > 0,
            passed,
            min_pass,
            runs,
        }
    }

    /// The case's verdict when `asked` runs were scheduled (see the module doc).
    pub fn status(&self, asked: u32) -> Status {
        let missing = asked.saturating_sub(len(&self.runs));
        let undecided = count(&self.runs, Status::Error).saturating_add(missing);
        if self.passed >= self.min_pass {
            Status::Passed
        } else if self.passed.saturating_add(undecided) >= self.min_pass {
            Status::Error
        } else if self.passed + count(&self.runs, Status::Failed) == 0 {
            Status::Skipped
        } else {
            Status::Failed
        }
    }

    /// The run whose turns and checks stand for the case: for a case that did not pass, the
    /// first run that ended the same way; for one that passed, the first failed run (what
    /// made it flaky), else the first run that passed.
    fn shown(&self, status: Status) -> usize {
        let target = match status {
            Status::Passed if self.flaky => Status::Failed,
            status => status,
        };
        self.runs
            .iter()
            .position(|&r| r == target)
            .unwrap_or_default()
    }
}

/// The chance that k independent runs of a case all pass, estimated from c passes among n runs
/// without bias: `C(c, k) / C(n, k)` (0 when c < k). It is the share of the k-run subsets of
/// the n runs in which every run passed; with k = n it is 1 only when every run passed, with
/// k = 1 it is the pass fraction c / n.
pub fn pass_hat_k(n: u32, c: u32, k: u32) -> f64 {
    if n == 0 || c < k || k > n {
        return 0.0;
    }
    // C(c,k)/C(n,k) = prod_{i<k} (c-i)/(n-i): no factorials, no overflow.
    (0..k).fold(1.0, |p, i| p * f64::from(c - i) / f64::from(n - i))
}

/// `3 of 5 runs passed, 4 needed`, or `1 of 2 runs passed, every run must pass` when K is
/// every run (`--min-pass` not set): how every output sums up a repeated case.
impl std::fmt::Display for Repeats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let runs = self.runs.len();
        write!(f, "{} of {runs} runs passed, ", self.passed)?;
        if self.min_pass as usize >= runs {
            f.write_str("every run must pass")
        } else {
            write!(f, "{} needed", self.min_pass)
        }
    }
}

impl CaseResult {
    /// One result of a case's runs (`runs` in the order scheduled, at least one, of the
    /// `asked`): the shown run's turns and checks under the verdict of [`Repeats`], the mean
    /// score of the judged runs, and the time, tokens and turn times of all runs together.
    pub fn from_runs(runs: Vec<CaseResult>, asked: u32, min_pass: u32) -> Option<CaseResult> {
        let repeats = Repeats::of(runs.iter().map(|r| r.status).collect(), min_pass);
        let status = repeats.status(asked);
        let mut case = runs.get(repeats.shown(status))?.clone();
        case.status = status;
        let judged: Vec<f64> = runs
            .iter()
            .filter(|r| r.status.is_judged())
            .map(|r| r.score)
            .collect();
        if !judged.is_empty() {
            case.score = judged.iter().sum::<f64>() / judged.len() as f64;
        }
        case.duration = runs.iter().map(|r| r.duration).sum();
        case.usage = runs.iter().map(|r| r.usage).sum();
        case.turn_times = TurnTimes::default();
        runs.iter()
            .for_each(|r| case.turn_times.merge(&r.turn_times));
        case.error = match status {
            Status::Error => case
                .error
                .or_else(|| Some(format!("only {} of {asked} runs finished", runs.len()))),
            // Why the shown run could not be judged (a simulation's ungraded expectation).
            Status::Skipped => case.error,
            _ => None,
        };
        case.repeats = Some(repeats);
        Some(case)
    }
}

impl CaseResult {
    /// Joins `more`, further runs of this case (adaptive repeats), into it: the runs' statuses
    /// in order, the verdict with `min_pass` of every `repeat` runs as the share that must
    /// pass, the shown run picked again, scores averaged over the judged runs, time, tokens and
    /// turn times summed.
    pub fn join(&mut self, more: CaseResult, repeat: u32, min_pass: u32) {
        let statuses = |case: &CaseResult| -> Vec<Status> {
            case.repeats
                .as_ref()
                .map_or_else(|| vec![case.status], |r| r.runs.clone())
        };
        let (mine, theirs) = (statuses(self), statuses(&more));
        let judged = |runs: &[Status]| runs.iter().filter(|s| s.is_judged()).count() as f64;
        let (n1, n2) = (judged(&mine), judged(&theirs));
        let score = if n1 + n2 > 0.0 {
            (self.score * n1 + more.score * n2) / (n1 + n2)
        } else {
            self.score
        };
        let runs = [mine, theirs].concat();
        let total = len(&runs);
        // The share K/N of the first runs, over all of them, rounded up.
        let min_pass = (u64::from(total) * u64::from(min_pass)).div_ceil(u64::from(repeat.max(1)));
        let repeats = Repeats::of(runs, u32::try_from(min_pass).unwrap_or(u32::MAX));
        let status = repeats.status(total);
        let (duration, usage) = (self.duration + more.duration, self.usage.plus(more.usage));
        let mut turn_times = std::mem::take(&mut self.turn_times);
        turn_times.merge(&more.turn_times);
        let target = match status {
            Status::Passed if repeats.flaky => Status::Failed,
            status => status,
        };
        if self.status != target && more.status == target {
            let history = std::mem::take(&mut self.history);
            *self = CaseResult { history, ..more };
        }
        self.status = status;
        self.score = score;
        self.duration = duration;
        self.usage = usage;
        self.turn_times = turn_times;
        if status != Status::Error {
            self.error = None;
        }
        self.repeats = Some(repeats);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::pass_hat_k;
    use crate::model::Format;
    use crate::results::{CaseResult, Status};
    use crate::transcript::Usage;

    #[test]
    fn pass_hat_k_is_the_unbiased_estimate() {
        // C(4,3)/C(5,3) = 4/10.
        assert!((pass_hat_k(5, 4, 3) - 0.4).abs() < 1e-12);
        // C(3,3)/C(5,3) = 1/10.
        assert!((pass_hat_k(5, 3, 3) - 0.1).abs() < 1e-12);
        assert_eq!(pass_hat_k(5, 2, 3), 0.0);
        assert_eq!(pass_hat_k(5, 5, 5), 1.0);
        assert_eq!(pass_hat_k(5, 4, 5), 0.0);
        // k = 1 is the pass fraction.
        assert!((pass_hat_k(5, 3, 1) - 0.6).abs() < 1e-12);
        assert_eq!(pass_hat_k(0, 0, 1), 0.0);
    }

    fn run(status: Status, score: f64) -> CaseResult {
        CaseResult {
            id: "c".into(),
            name: "c".into(),
            file: "a.scenario.yaml".into(),
            line: 1,
            format: Format::GecxScenario,
            kind: crate::model::CaseKind::Conversation,
            tags: Vec::new(),
            weight: 1.0,
            status,
            score,
            duration: Duration::from_millis(10),
            error: (status == Status::Error).then(|| "timed out".to_owned()),
            usage: Usage {
                input_tokens: 1,
                output_tokens: 2,
                ..Usage::default()
            },
            repeats: None,
            turns: Vec::new(),
            checks: Vec::new(),
            history: Vec::new(),
            turn_times: Default::default(),
            quarantine: None,
        }
    }

    fn joined(statuses: &[Status], min_pass: u32) -> CaseResult {
        let runs = statuses
            .iter()
            .map(|&s| run(s, if s == Status::Passed { 1.0 } else { 0.0 }))
            .collect();
        CaseResult::from_runs(runs, 5, min_pass).unwrap()
    }

    use Status::{Error as E, Failed as F, Passed as P, Skipped as S};

    /// "2 needed" reads as a bar someone set: with K every run (no `--min-pass`), say that.
    #[test]
    fn the_runs_in_words_say_every_run_when_k_is_every_run() {
        assert_eq!(
            super::Repeats::of(vec![P, F], 2).to_string(),
            "1 of 2 runs passed, every run must pass"
        );
        assert_eq!(
            super::Repeats::of(vec![P, F, P], 2).to_string(),
            "2 of 3 runs passed, 2 needed"
        );
    }

    #[test]
    fn the_verdict_of_runs() {
        let case = joined(&[P, F, P, P, F], 3);
        assert_eq!(case.status, P);
        let repeats = case.repeats.as_ref().unwrap();
        assert!(repeats.flaky);
        assert_eq!(repeats.passed, 3);
        assert!((repeats.pass_fraction - 0.6).abs() < 1e-12);
        // A flaky pass shows the run that failed.
        assert_eq!(repeats.shown(P), 1);
        assert_eq!(case.error, None);
        assert!((case.score - 0.6).abs() < 1e-12);
        assert_eq!(case.duration, Duration::from_millis(50));
        assert_eq!(case.usage.output_tokens, 10);

        assert_eq!(joined(&[P, F, F, P, F], 3).status, F);
        // Errors decide only where they could have made the difference.
        assert_eq!(joined(&[P, E, F, P, F], 3).status, E);
        assert_eq!(joined(&[E, F, F, P, F], 3).status, F);
        assert_eq!(joined(&[P, E, P, P, E], 3).status, P);
        assert_eq!(joined(&[S, S, S, S, S], 3).status, S);
        // Never flaky without a pass and a failure.
        assert!(!joined(&[P, E, P, P, P], 5).repeats.unwrap().flaky);
        assert!(!joined(&[F, F, F, F, F], 3).repeats.unwrap().flaky);
        // An errored case shows its first errored run, with its error.
        let errored = joined(&[F, P, E, P, F], 3);
        assert_eq!(errored.repeats.as_ref().unwrap().shown(E), 2);
        assert_eq!(errored.error.as_deref(), Some("timed out"));
        // A skipped case keeps why it could not be judged.
        let why = |status| CaseResult {
            error: (status == S).then(|| "not graded".to_owned()),
            ..run(status, 0.0)
        };
        let skipped = CaseResult::from_runs(vec![why(S), why(S)], 2, 1).unwrap();
        assert_eq!(
            (skipped.status, skipped.error.as_deref()),
            (S, Some("not graded"))
        );
    }

    #[test]
    fn runs_that_never_finished_leave_the_verdict_open() {
        let runs = vec![run(P, 1.0), run(P, 1.0)];
        let case = CaseResult::from_runs(runs, 5, 3).unwrap();
        assert_eq!(case.status, E);
        assert_eq!(case.error.as_deref(), Some("only 2 of 5 runs finished"));
        assert!(CaseResult::from_runs(Vec::new(), 5, 3).is_none());
    }
}
