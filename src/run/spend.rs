//! What a run spends as it goes, priced, against its budget: the agent's replies are priced
//! as they arrive, the judges' and simulated users' requests from their ledgers when asked.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::config::prices::Prices;
use crate::results::JudgeUsage;
use crate::score::Grader;
use crate::transcript::{Price, Usage};

/// How a run prices what it spends, and the most it may spend.
#[derive(Clone, Debug, Default)]
pub struct Pricing {
    /// The price of the agent's model, for replies that do not state their own cost.
    pub agent: Option<Price>,
    /// The prices of the judges' and simulated users' models.
    pub prices: Prices,
    /// US dollars; `None`: no limit.
    pub budget: Option<f64>,
}

/// The run's spending so far. Shared by every case of the run (and its adaptive reruns).
#[derive(Debug, Default)]
pub struct Spend {
    /// The agent's priced cost, in millionths of a dollar.
    agent_micro_usd: AtomicU64,
    /// The budget was reached: no case starts, and no turn.
    stopped: AtomicBool,
}

impl Spend {
    /// A reply's usage, priced, counted towards the budget: once the agent alone has spent
    /// it, the budget is reached, whether or not a case is left to refuse (a run's last case
    /// may spend past it).
    pub(super) fn agent_reply(&self, usage: Usage, pricing: &Pricing) -> Usage {
        let priced = usage.priced(pricing.agent);
        let micro = (priced.cost_usd.unwrap_or(0.0) * 1e6).round() as u64;
        let spent = self
            .agent_micro_usd
            .fetch_add(micro, Ordering::Relaxed)
            .saturating_add(micro);
        if pricing
            .budget
            .is_some_and(|budget| spent as f64 / 1e6 >= budget)
        {
            self.stopped.store(true, Ordering::Relaxed);
        }
        priced
    }

    /// Whether the next case may start: not once what the agent, judges and simulated users
    /// have spent reaches the budget (which is then remembered as the reason the run stopped).
    pub(super) fn may_start(&self, pricing: &Pricing, grader: &Grader) -> bool {
        let Some(budget) = pricing.budget else {
            return true;
        };
        if self.stopped.load(Ordering::Relaxed) {
            return false;
        }
        let agent = self.agent_micro_usd.load(Ordering::Relaxed) as f64 / 1e6;
        let graders: f64 = priced_usage(grader.judge_usage(), &pricing.prices)
            .iter()
            .filter_map(|u| u.cost_usd)
            .sum();
        let within = agent + graders < budget;
        if !within {
            self.stopped.store(true, Ordering::Relaxed);
        }
        within
    }

    /// The spending reached the budget: scheduling stopped, or the agent spent it.
    pub fn budget_reached(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }
}

/// Each judge's and simulated user's usage, priced.
pub(super) fn priced_usage(usage: Vec<JudgeUsage>, prices: &Prices) -> Vec<JudgeUsage> {
    usage.into_iter().map(|u| prices.judge(u)).collect()
}
