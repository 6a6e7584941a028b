//! One structured answer from a provider, as the judge and the simulated user ask for it: the
//! request forces one tool call, whose arguments are the answer. A refusal, another call or
//! arguments that do not parse are asked again, once.

use serde_json::Value;

use super::client::LlmClient;
use super::ledger::Ledger;
use crate::transcript::Usage;

/// Attempts per answer when it does not parse: the first and one retry.
const ANSWER_ATTEMPTS: u32 = 2;

/// A parsed answer, with what a cache keeps of it.
pub(super) struct Answer<T> {
    pub parsed: T,
    /// The forced call's arguments as the provider gave them.
    pub arguments: Value,
    /// The tokens of the response that gave the answer.
    pub usage: Usage,
    /// The tokens of every attempt.
    pub spent: Usage,
}

/// Why no answer came.
pub(super) enum Unanswered {
    /// The provider could not be reached or refused the request.
    Request(String),
    /// Every attempt's answer was unusable: the last reason, with the count of attempts.
    Answer(String),
}

/// Sends `body` until the call of `tool` parses; `asker` ("the judge") names who did not call
/// it. Every response's tokens go to `ledger`.
pub(super) async fn ask<T>(
    client: &LlmClient,
    ledger: &Ledger,
    (body, tool, asker): (&Value, &str, &str),
    parse: impl Fn(&Value) -> Result<T, String>,
) -> Result<Answer<T>, Unanswered> {
    let mut spent = Usage::default();
    let mut problem = String::new();
    for _ in 0..ANSWER_ATTEMPTS {
        let response = client
            .send(body)
            .await
            .map_err(|e| Unanswered::Request(e.to_string()))?;
        spent = spent.plus(response.usage);
        ledger.count(response.usage);
        let arguments = match (&response.refusal, response.calls.as_slice()) {
            (Some(refusal), _) => Err(refusal.clone()),
            (None, [call]) if call.name == tool => Ok(&call.args),
            (None, _) => Err(format!("{asker} did not call {tool}")),
        };
        match arguments.and_then(|args| parse(args).map(|parsed| (args, parsed))) {
            Ok((arguments, parsed)) => {
                return Ok(Answer {
                    parsed,
                    arguments: arguments.clone(),
                    usage: response.usage,
                    spent,
                });
            }
            Err(why) => problem = why,
        }
    }
    Err(Unanswered::Answer(format!(
        "{problem} (asked {ANSWER_ATTEMPTS} times)"
    )))
}
