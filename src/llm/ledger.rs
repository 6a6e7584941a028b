//! What one judge or simulated user has spent: answers taken from the cache (and the tokens
//! they would have cost), and tokens. Clones of a judge share one ledger; the requests sent
//! are the client's count.

use std::sync::atomic::{AtomicU64, Ordering};

use super::client::LlmClient;
use crate::results::JudgeUsage;
use crate::transcript::Usage;

/// Running totals, updated from concurrent cases.
#[derive(Debug, Default)]
pub(super) struct Ledger {
    cached: AtomicU64,
    spent: Tokens,
    saved: Tokens,
}

/// Token counts, updated from concurrent cases.
#[derive(Debug, Default)]
struct Tokens {
    input: AtomicU64,
    cached_input: AtomicU64,
    output: AtomicU64,
}

impl Tokens {
    fn add(&self, usage: Usage) {
        self.input.fetch_add(usage.input_tokens, Ordering::Relaxed);
        self.cached_input
            .fetch_add(usage.cached_input_tokens, Ordering::Relaxed);
        self.output
            .fetch_add(usage.output_tokens, Ordering::Relaxed);
    }

    fn usage(&self) -> Usage {
        Usage {
            input_tokens: self.input.load(Ordering::Relaxed),
            cached_input_tokens: self.cached_input.load(Ordering::Relaxed),
            output_tokens: self.output.load(Ordering::Relaxed),
            ..Usage::default()
        }
    }
}

impl Ledger {
    /// One answer came from the cache (or the recording): what it cost when it was asked is
    /// what the cache saved.
    pub(super) fn cached_answer(&self, usage: Usage) {
        self.cached.fetch_add(1, Ordering::Relaxed);
        self.saved.add(usage);
    }

    /// Tokens one provider response spent.
    pub(super) fn count(&self, usage: Usage) {
        self.spent.add(usage);
    }

    /// The totals so far, as the report's usage line of `judge` (not yet priced).
    pub(super) fn usage(&self, judge: String, client: &LlmClient) -> JudgeUsage {
        let spent = self.spent.usage();
        JudgeUsage {
            judge,
            calls: client.requests(),
            cached: self.cached.load(Ordering::Relaxed),
            input_tokens: spent.input_tokens,
            cached_input_tokens: spent.cached_input_tokens,
            output_tokens: spent.output_tokens,
            saved: self.saved.usage(),
            cost_usd: None,
            saved_usd: None,
        }
    }
}
