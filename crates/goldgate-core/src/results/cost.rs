//! What a run spent: the agent's tokens and cost (summed from its replies), each judge's and
//! simulated user's, what the judge cache saved, and the budget it ran under.

use serde::{Deserialize, Serialize};

use super::{CaseResult, Report};
use crate::transcript::{Cost, Usage};

/// What one judge or simulated user (a provider and model) cost in a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct JudgeUsage {
    /// `provider/model`.
    pub judge: String,
    /// Requests sent to the provider, retries included.
    pub calls: u64,
    /// Answers read from the judge cache instead.
    pub cached: u64,
    pub input_tokens: u64,
    /// Of the input tokens, those the provider read from its prompt cache. Absent from
    /// older reports.
    #[serde(default)]
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    /// What the cached answers cost when they were first asked: what the cache saved.
    #[serde(default)]
    pub saved: Usage,
    /// The tokens spent at the model's price; `null` when no price is known for it.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// The saved tokens at the model's price.
    #[serde(default)]
    pub saved_usd: Option<f64>,
}

impl JudgeUsage {
    /// The tokens spent and their cost, as a [`Usage`]; with no price found, each request
    /// sent counts as one unpriced reply, as each of the agent's replies does.
    pub fn spent(&self) -> Usage {
        let tokens = Usage {
            input_tokens: self.input_tokens,
            cached_input_tokens: self.cached_input_tokens,
            output_tokens: self.output_tokens,
            ..Usage::default()
        };
        Usage {
            cost_usd: self.cost_usd,
            unpriced: if self.cost_usd.is_none() && tokens.tokens() > 0 {
                self.calls.max(1)
            } else {
                0
            },
            ..tokens
        }
    }

    /// What it cost, as far as it is known.
    pub fn cost(&self) -> Cost {
        self.spent().cost()
    }

    /// Adds up usages of the same judge (shards of one suite), in order of first appearance.
    pub fn sum<'a>(usages: impl IntoIterator<Item = &'a JudgeUsage>) -> Vec<JudgeUsage> {
        let mut total: Vec<JudgeUsage> = Vec::new();
        let add = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        for usage in usages {
            match total.iter_mut().find(|t| t.judge == usage.judge) {
                Some(t) => {
                    t.calls = t.calls.saturating_add(usage.calls);
                    t.cached = t.cached.saturating_add(usage.cached);
                    t.input_tokens = t.input_tokens.saturating_add(usage.input_tokens);
                    t.cached_input_tokens = t
                        .cached_input_tokens
                        .saturating_add(usage.cached_input_tokens);
                    t.output_tokens = t.output_tokens.saturating_add(usage.output_tokens);
                    t.saved = t.saved.plus(usage.saved);
                    t.cost_usd = add(t.cost_usd, usage.cost_usd);
                    t.saved_usd = add(t.saved_usd, usage.saved_usd);
                }
                None => total.push(usage.clone()),
            }
        }
        total
    }
}

/// The most a run may spend (`--budget`), and whether it stopped for it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Budget {
    /// US dollars.
    pub limit_usd: f64,
    /// The spending reached the limit: the cases and turns not started are not played, and
    /// the run is an error (exit 2), even when its last case was the one that spent it.
    pub reached: bool,
}

/// A run's spending, for the reports: the agent, every judge and simulated user, the total.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spending {
    /// Summed over every run of every case.
    pub agent: Cost,
    pub judges: Cost,
    pub total: Cost,
    /// What the judge cache saved, at the judges' prices (none when it saved nothing priced).
    pub saved_usd: Option<f64>,
}

impl Report {
    /// What the run spent, as far as it is known.
    pub fn spending(&self) -> Spending {
        let judges: Usage = self.judge_usage.iter().map(JudgeUsage::spent).sum();
        let agent = self.aggregates.tokens;
        let saved_usd = self
            .judge_usage
            .iter()
            .filter_map(|j| j.saved_usd)
            .reduce(|a, b| a + b)
            .filter(|usd| *usd > 0.0);
        Spending {
            agent: agent.cost(),
            judges: judges.cost(),
            total: agent.plus(judges).cost(),
            saved_usd,
        }
    }
}

impl CaseResult {
    /// What one run of this conversation cost the agent, in US dollars: `None` when it is not a
    /// conversation or its cost is not wholly known (an unpriced reply would make it look
    /// cheaper). The one rule the aggregates and the gate's cost test both read.
    pub fn cost_per_run(&self) -> Option<f64> {
        match self.usage.cost() {
            Cost::Known(usd) if self.is_conversation() => Some(usd / self.runs() as f64),
            _ => None,
        }
    }

    /// The tokens one run of this conversation spent: `None` when it is not a conversation or
    /// the agent reported none.
    pub fn tokens_per_run(&self) -> Option<f64> {
        let tokens = self.usage.tokens();
        (self.is_conversation() && tokens > 0).then(|| tokens as f64 / self.runs() as f64)
    }
}
