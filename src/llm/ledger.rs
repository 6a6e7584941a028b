//! What one judge or simulated user has spent: answers taken from the cache, and tokens.
//! Clones of a judge share one ledger; the requests sent are the client's count.

use std::sync::atomic::{AtomicU64, Ordering};

use super::client::LlmClient;
use crate::results::JudgeUsage;
use crate::transcript::Usage;

/// Running totals, updated from concurrent cases.
#[derive(Debug, Default)]
pub(super) struct Ledger {
    cached: AtomicU64,
    input_tokens: AtomicU64,
    output_tokens: AtomicU64,
}

impl Ledger {
    /// One answer came from the cache (or the recording).
    pub(super) fn cached_answer(&self) {
        self.cached.fetch_add(1, Ordering::Relaxed);
    }

    /// Tokens one provider response spent.
    pub(super) fn count(&self, usage: Usage) {
        self.input_tokens
            .fetch_add(usage.input_tokens, Ordering::Relaxed);
        self.output_tokens
            .fetch_add(usage.output_tokens, Ordering::Relaxed);
    }

    /// The totals so far, as the report's usage line of `judge`.
    pub(super) fn usage(&self, judge: String, client: &LlmClient) -> JudgeUsage {
        JudgeUsage {
            judge,
            calls: client.requests(),
            cached: self.cached.load(Ordering::Relaxed),
            input_tokens: self.input_tokens.load(Ordering::Relaxed),
            output_tokens: self.output_tokens.load(Ordering::Relaxed),
        }
    }
}
