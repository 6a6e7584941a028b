//! LLM judges, behind one trait so that scoring does not care which provider answers.
//!
//! A judge does two things: it rates how similar an agent's text is to the expected text on
//! the platform's 0-4 scale (used by `semantic` matchers), and it answers a yes/no question
//! about a conversation (gecx `llm-judge-*` scorers, SCRAPI criteria, Regtrace factuality and
//! tone). The HTTP clients for the providers live elsewhere; scoring only sees this trait.
//!
//! Without a judge, every check that needs one is skipped with [`NO_JUDGE`]: it is never
//! counted as passed.

use std::fmt::Write as _;
use std::sync::Arc;

use async_trait::async_trait;

use crate::model::Provider;
use crate::results::{JudgeUsage, Method, TurnResult};

/// Why an LLM-judge check was skipped when no judge is configured.
pub const NO_JUDGE: &str = "no judge configured (set judge: in goldgate.yaml)";

/// A similarity rating on the 0-4 scale.
#[derive(Clone, Debug, PartialEq)]
pub struct JudgeScore {
    /// In `0.0..=4.0`; passes at
    /// [`SIMILARITY_PASS`](crate::config::llm::SIMILARITY_PASS).
    pub score: f64,
    pub explanation: Option<String>,
}

/// A judge's answer to a [`JudgeQuestion`].
#[derive(Clone, Debug, PartialEq)]
pub struct JudgeVerdict {
    pub passed: bool,
    /// A graded score in `0.0..=1.0`, when the judge gives one. Metrics with a threshold pass
    /// on this score when present, else on `passed`.
    pub score: Option<f64>,
    pub explanation: Option<String>,
}

/// What a judge is asked about a conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JudgeQuestion<'a> {
    /// gecx `llm-judge-not-hallucinating`: is every claim grounded in this context?
    NotHallucinating { grounding: &'a str },
    /// gecx `llm-judge-helpfulness`: is the answer helpful (by these criteria, if given)?
    Helpfulness { criteria: Option<&'a str> },
    /// gecx `llm-judge-tone-matches`: does the agent speak in this tone?
    ToneMatches { tone: &'a str },
    /// A free-text criterion over the whole conversation (SCRAPI `expectations`).
    Criterion(&'a str),
    /// Regtrace `factuality`: does the final answer state the facts of this reference?
    Factuality { expected: &'a str },
    /// Regtrace `tone`: does the final answer have the tone of this reference?
    Tone { expected: &'a str },
}

impl JudgeQuestion<'_> {
    /// The question for people, used as a check's expected value.
    pub fn describe(&self) -> String {
        match self {
            JudgeQuestion::NotHallucinating { grounding } => {
                format!("grounded in: {grounding}")
            }
            JudgeQuestion::Helpfulness { criteria: Some(c) } => format!("helpful: {c}"),
            JudgeQuestion::Helpfulness { criteria: None } => "helpful".to_owned(),
            JudgeQuestion::ToneMatches { tone } => format!("tone: {tone}"),
            JudgeQuestion::Criterion(text) => (*text).to_owned(),
            JudgeQuestion::Factuality { expected } => format!("facts of: {expected}"),
            JudgeQuestion::Tone { expected } => format!("tone of: {expected}"),
        }
    }
}

/// Why a judge could not answer. The check becomes an error of the run, never a failure.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum JudgeError {
    /// The provider could not be reached or answered with an error status.
    #[error("judge request failed: {0}")]
    Request(String),
    /// The provider answered, but not in the expected shape.
    #[error("judge answer not understood: {0}")]
    Answer(String),
}

#[async_trait]
pub trait Judge: Send + Sync {
    /// The provider's name as configured (`anthropic`, `openai`, `gemini`).
    fn provider(&self) -> Provider;

    fn model(&self) -> String;

    /// How the checks this judge decides are said to be judged.
    fn method(&self) -> Method {
        Method::Judge {
            provider: self.provider(),
            model: self.model(),
        }
    }

    /// Rates `actual` against `expected` on the 0-4 scale.
    async fn similarity(&self, expected: &str, actual: &str) -> Result<JudgeScore, JudgeError>;

    /// Answers `question` about the conversation in `transcript`.
    async fn criterion(
        &self,
        question: JudgeQuestion<'_>,
        transcript: &str,
    ) -> Result<JudgeVerdict, JudgeError>;

    /// The judge for a check that names another provider than this judge's (gecx
    /// `provider:`), or why the check is skipped. By default there is none.
    fn other_provider(&self, provider: Provider) -> Result<&dyn Judge, String> {
        Err(format!(
            "asks for the {} judge; the configured judge is {}",
            provider.name(),
            self.provider().name()
        ))
    }

    /// Calls and tokens so far, one entry per provider and model that judged.
    fn usage(&self) -> Vec<JudgeUsage> {
        Vec::new()
    }

    /// This judge for the `index`-th run (0-based) of a case under `--repeat`, so that repeats
    /// stay independent samples where answers are cached. `None`: the same judge serves every
    /// run.
    fn for_repeat(&self, _index: u32) -> Option<Arc<dyn Judge>> {
        None
    }
}

/// The played turns as plain text for a judge: user inputs, agent text with its speaker, tool
/// calls with their responses, transfers, handoffs and errors, in order.
pub fn transcript(turns: &[TurnResult]) -> String {
    let mut out = String::new();
    for turn in turns {
        // Writing into a String cannot fail.
        let _ = writeln!(out, "[turn {}] user: {}", turn.index, turn.input);
        let Some(reply) = &turn.reply else {
            let _ = writeln!(
                out,
                "(not played: {})",
                turn.error.as_deref().unwrap_or("-")
            );
            continue;
        };
        reply.write_lines(&mut out);
    }
    out
}
