//! What an agent did in a turn: its reply (messages, tool calls, transfer, handoff, error,
//! tokens) and the time it took. The agents produce it, the scorers judge it, the results keep
//! it. The rules about a reply that more than one place needs (what counts as a handoff, how
//! tokens add up) are written here once.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What one turn produced, with its timings.
#[derive(Clone, Debug, PartialEq)]
pub struct Exchange {
    pub reply: Reply,
    /// From sending the request to the complete reply.
    pub latency: Duration,
    /// From sending the request to the first agent text, when the reply was streamed.
    pub ttft: Option<Duration>,
}

/// The agent's answer to one turn. Every field may be left out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    /// Echo of the request's id on multiplexed channels (command agents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer: Option<Transfer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff: Option<Handoff>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ReplyError>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The session variables after the turn, where the agent reports them (a directly executed
    /// tool's updated variables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<Map<String, Value>>,
}

impl Reply {
    /// All agent text of the turn, chunks joined by a newline.
    pub fn text(&self) -> String {
        self.messages
            .iter()
            .map(|m| m.text.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Merges a streamed fragment into the reply built so far.
    pub fn absorb(&mut self, fragment: Reply) {
        self.messages.extend(fragment.messages);
        self.tool_calls.extend(fragment.tool_calls);
        self.transfer = fragment.transfer.or(self.transfer.take());
        self.handoff = fragment.handoff.or(self.handoff.take());
        self.error = fragment.error.or(self.error.take());
        if let Some(variables) = fragment.variables {
            self.variables
                .get_or_insert_with(Map::new)
                .extend(variables);
        }
        if let Some(usage) = fragment.usage {
            let total = self.usage.get_or_insert_with(Usage::default);
            *total = total.plus(usage);
        }
    }

    /// Every agent this reply transferred to: its `transfer`, and the `agent` of each
    /// [`TRANSFER_TOOL`] call (how some agents, and SCRAPI goldens, express a transfer).
    pub fn transfer_targets(&self) -> Vec<&str> {
        let calls = self
            .tool_calls
            .iter()
            .filter(|call| call.is_transfer())
            .filter_map(|call| call.args.get("agent").and_then(Value::as_str));
        self.transfer
            .iter()
            .map(|t| t.agent.as_str())
            .chain(calls)
            .collect()
    }

    /// The handoff the agent reported, when it is one (see [`Handoff::is_handoff`]).
    pub fn handoff(&self) -> Option<&Handoff> {
        self.handoff.as_ref().filter(|h| h.is_handoff())
    }

    /// The reply as plain lines, in the order it happened: tool calls with their responses,
    /// the messages with their speaker, then a transfer, handoff or error. A judge reads
    /// these lines, and so does a person in the JUnit output; the judge's cache keys hold
    /// them, so a change of wording here re-asks every cached criterion.
    pub fn write_lines(&self, out: &mut String) {
        use std::fmt::Write;
        // Writing into a String cannot fail.
        for call in &self.tool_calls {
            let _ = write!(out, "tool call: {}({})", call.name, call.args);
            match &call.response {
                Some(response) => {
                    let _ = writeln!(out, " -> {response}");
                }
                None => out.push('\n'),
            }
        }
        for message in &self.messages {
            let _ = writeln!(out, "{message}");
        }
        if let Some(transfer) = &self.transfer {
            let _ = writeln!(out, "transfer to: {}", transfer.agent);
        }
        if let Some(handoff) = &self.handoff {
            let _ = writeln!(out, "handoff: {}", handoff.status);
        }
        if let Some(error) = &self.error {
            let _ = writeln!(out, "error {}: {}", error.code, error.message);
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Message {
    pub text: String,
    /// The (sub-)agent that spoke.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// A message as a transcript line, `agent (NAME): TEXT` (`agent: TEXT` when no sub-agent is
/// named): JUnit's system-out and the judge's prompt both write it so.
impl std::fmt::Display for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.agent {
            Some(agent) => write!(f, "agent ({agent}): {}", self.text),
            None => write!(f, "agent: {}", self.text),
        }
    }
}

/// The tool call through which some agents (and SCRAPI goldens) express a transfer.
pub const TRANSFER_TOOL: &str = "transfer_to_agent";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolCall {
    pub name: String,
    #[serde(default)]
    pub args: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
    /// The platform's name for the tool where it has one beside the display name that goldens
    /// match (a CX Agent Studio resource name), kept for the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
}

impl ToolCall {
    /// A call to `name` with `args`, its response not seen and no platform name.
    pub fn new(name: impl Into<String>, args: Value) -> Self {
        Self {
            name: name.into(),
            args,
            response: None,
            resource: None,
        }
    }

    /// Whether this call is a transfer ([`TRANSFER_TOOL`]) rather than a tool of the agent.
    pub fn is_transfer(&self) -> bool {
        self.name == TRANSFER_TOOL
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Transfer {
    pub agent: String,
    /// The platform's name for the agent, beside the display name goldens match (a CX Agent
    /// Studio resource name), kept for the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Handoff {
    pub status: String,
}

impl Handoff {
    /// A handoff happened unless its status is empty or `none` (any case): agents that always
    /// send the field write one of those when they kept the conversation. The `no-handoff`
    /// scorer and the deflection rate both decide by this rule.
    pub(crate) fn is_handoff(&self) -> bool {
        let status = self.status.trim();
        !status.is_empty() && !status.eq_ignore_ascii_case("none")
    }
}

/// An error the agent reports as part of its behaviour (scored by `error-code`, `no-error`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReplyError {
    pub code: String,
    #[serde(default)]
    pub message: String,
}

/// Tokens spent, and what they cost where that is known. The agent reports its own in a
/// reply's `usage` (tokens, and its own `cost_usd` if it knows it); goldgate prices the rest
/// from the price table (`config::prices`) and counts what it could not price.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Usage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    /// Of the input tokens, those read from the provider's prompt cache (billed lower).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_input_tokens: u64,
    /// What the priced part cost, in US dollars: the agent's own figure, or the tokens at
    /// their model's price. `None`: nothing here was priced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// How many replies or requests summed here spent tokens that no price covers, so that
    /// a total with any of them reads "at least", never as complete (goldgate's own count:
    /// agents leave it out).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// Both added. Agents report usage: saturate rather than overflow on absurd numbers.
    pub fn plus(self, other: Usage) -> Usage {
        let cost_usd = match (self.cost_usd, other.cost_usd) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
        Usage {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
            cached_input_tokens: self
                .cached_input_tokens
                .saturating_add(other.cached_input_tokens),
            cost_usd,
            unpriced: self.unpriced.saturating_add(other.unpriced),
        }
    }

    /// All tokens, in and out.
    pub fn tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// One reply's or request's usage with its cost: its own figure if it has one, else its
    /// tokens at `price` (USD per million tokens), else counted as unpriced when it spent any.
    pub fn priced(mut self, price: Option<Price>) -> Usage {
        if self.cost_usd.is_some() || self.tokens() == 0 {
            return self;
        }
        match price {
            Some(price) => self.cost_usd = Some(price.of(&self)),
            None => self.unpriced = self.unpriced.saturating_add(1),
        }
        self
    }

    /// What these tokens cost, as far as it is known.
    pub fn cost(&self) -> Cost {
        match (self.cost_usd, self.unpriced) {
            (None, 0) if self.tokens() == 0 => Cost::NotReported,
            (None, _) => Cost::Unknown,
            (Some(usd), 0) => Cost::Known(usd),
            (Some(usd), unpriced) => Cost::AtLeast(usd, unpriced),
        }
    }
}

/// List prices of one model, in US dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Price {
    pub input: f64,
    /// Input read from the provider's prompt cache.
    pub cached_input: f64,
    pub output: f64,
}

impl Price {
    /// What `usage`'s tokens cost at these prices.
    pub fn of(&self, usage: &Usage) -> f64 {
        let cached = usage.cached_input_tokens.min(usage.input_tokens);
        let fresh = usage.input_tokens - cached;
        (fresh as f64 * self.input
            + cached as f64 * self.cached_input
            + usage.output_tokens as f64 * self.output)
            / 1_000_000.0
    }
}

/// What something cost, as far as it is known: reports say which, and never show an
/// unknown cost as zero.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cost {
    /// No tokens and no cost were reported at all.
    NotReported,
    /// Tokens were spent, and none of them could be priced.
    Unknown,
    Known(f64),
    /// The priced part; this many replies or requests could not be priced.
    AtLeast(f64, u64),
}

impl Cost {
    /// The dollars known to have been spent (a lower bound unless [`Cost::Known`]).
    pub fn usd(self) -> Option<f64> {
        match self {
            Cost::Known(usd) | Cost::AtLeast(usd, _) => Some(usd),
            Cost::NotReported | Cost::Unknown => None,
        }
    }
}

impl std::fmt::Display for Cost {
    /// `$0.0123`, `at least $0.0123 (3 unpriced)`, `unknown`, `not reported`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Cost::NotReported => f.write_str("not reported"),
            Cost::Unknown => f.write_str("unknown"),
            Cost::Known(usd) => write!(f, "{}", dollars(usd)),
            Cost::AtLeast(usd, unpriced) => {
                write!(f, "at least {} ({unpriced} unpriced)", dollars(usd))
            }
        }
    }
}

/// Dollars to cents from a dollar up or in whole cents, to three significant digits below
/// (`$0.0123`).
pub fn dollars(usd: f64) -> String {
    let whole_cents = ((usd * 100.0).round() - usd * 100.0).abs() < 1e-6;
    if usd >= 1.0 || usd <= 0.0 || whole_cents {
        format!("${usd:.2}")
    } else {
        let decimals = (2 - usd.log10().floor() as i32).clamp(2, 8) as usize;
        format!("${usd:.decimals$}")
    }
}

impl std::iter::Sum for Usage {
    fn sum<I: Iterator<Item = Usage>>(usages: I) -> Usage {
        usages.fold(Usage::default(), Usage::plus)
    }
}

#[cfg(test)]
mod tests {
    use super::{Cost, Price, Usage, dollars};

    const PRICE: Price = Price {
        input: 3.0,
        cached_input: 0.3,
        output: 15.0,
    };

    fn tokens(input: u64, cached: u64, output: u64) -> Usage {
        Usage {
            input_tokens: input,
            cached_input_tokens: cached,
            output_tokens: output,
            ..Usage::default()
        }
    }

    #[test]
    fn tokens_are_priced_per_million_with_cached_input_apart() {
        let usage = tokens(1_000_000, 400_000, 100_000).priced(Some(PRICE));
        // 600k fresh at $3, 400k cached at $0.30, 100k out at $15.
        let usd = usage.cost_usd.unwrap();
        assert!((usd - (1.8 + 0.12 + 1.5)).abs() < 1e-9, "{usd}");
        assert_eq!(usage.cost(), Cost::Known(usd));
    }

    #[test]
    fn the_agents_own_cost_wins_and_an_unknown_price_is_never_zero() {
        let own = Usage {
            cost_usd: Some(0.5),
            ..tokens(10, 0, 10)
        };
        assert_eq!(own.priced(Some(PRICE)).cost_usd, Some(0.5));
        let unpriced = tokens(10, 0, 10).priced(None);
        assert_eq!(unpriced.cost(), Cost::Unknown);
        assert_eq!(unpriced.cost().to_string(), "unknown");
        assert_eq!(Usage::default().priced(None).cost(), Cost::NotReported);
        let sum = own.priced(None).plus(unpriced);
        assert_eq!(sum.cost(), Cost::AtLeast(0.5, 1));
        assert_eq!(sum.cost().to_string(), "at least $0.50 (1 unpriced)");
    }

    #[test]
    fn dollars_read_as_people_write_them() {
        for (amount, shown) in [
            (1.8234, "$1.82"),
            (0.0123456, "$0.0123"),
            (0.25, "$0.25"),
            (0.255, "$0.255"),
            (0.0, "$0.00"),
        ] {
            assert_eq!(dollars(amount), shown, "{amount}");
        }
    }
}
