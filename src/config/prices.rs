//! What tokens cost: a built-in table of list prices for the models of the providers goldgate
//! calls (dated: prices change), and `prices:` in goldgate.yaml over it, for models the table
//! does not know or prices a team negotiated.
//!
//! A model is found by its name as the provider spells it, with or without the provider in
//! front (`anthropic/claude-sonnet-4-5`), and with a dated or `-latest` suffix
//! (`gpt-4o-2024-08-06`, `claude-sonnet-4-5-20250929`): never by a looser prefix, since
//! `gpt-4o-mini` is not priced as `gpt-4o`. A model found nowhere has no price, and what it
//! spends is "cost unknown", never zero.

use crate::diagnostic::{Code, Diagnostics};
use crate::results::JudgeUsage;
use crate::transcript::Price;
use crate::yaml::{Fields, Node};

/// When the built-in table's prices were the providers' list prices (the entries without a
/// date of their own).
pub const TABLE_DATE: &str = "2025-11-01";

/// USD per million tokens: (model, input, cached input, output). Each group names its source
/// and when it was read; an entry read later says so on its line. A dated snapshot priced
/// unlike its alias comes before the alias, since the alias also names it (first match wins).
/// `tests` checks that every model goldgate defaults to is here.
const TABLE: &[(&str, f64, f64, f64)] = &[
    // Anthropic, https://docs.anthropic.com/en/docs/about-claude/pricing (2025-11-01); cached
    // input is a cache read.
    ("claude-opus-4-5", 5.0, 0.5, 25.0),
    ("claude-opus-4-1", 15.0, 1.5, 75.0),
    ("claude-opus-4-0", 15.0, 1.5, 75.0),
    ("claude-opus-4", 15.0, 1.5, 75.0),
    // goldgate's default Anthropic model: https://platform.claude.com/docs/en/models/sonnet-4-6/overview
    // ($3 / $15, cache reads at a tenth of input as for every Claude model), read 2026-11-29.
    ("claude-sonnet-4-6", 3.0, 0.3, 15.0),
    ("claude-sonnet-4-5", 3.0, 0.3, 15.0),
    ("claude-sonnet-4-0", 3.0, 0.3, 15.0),
    ("claude-sonnet-4", 3.0, 0.3, 15.0),
    ("claude-3-7-sonnet", 3.0, 0.3, 15.0),
    ("claude-haiku-4-5", 1.0, 0.1, 5.0),
    ("claude-3-5-haiku", 0.8, 0.08, 4.0),
    // OpenAI, https://platform.openai.com/docs/pricing (2025-11-01).
    ("gpt-5", 1.25, 0.125, 10.0),
    ("gpt-5-mini", 0.25, 0.025, 2.0),
    ("gpt-5-nano", 0.05, 0.005, 0.4),
    ("gpt-4.1", 2.0, 0.5, 8.0),
    ("gpt-4.1-mini", 0.4, 0.1, 1.6),
    ("gpt-4.1-nano", 0.1, 0.025, 0.4),
    // The first GPT-4o snapshot kept its launch price, with no cached-input discount: same
    // page, its "gpt-4o-2024-05-13" row ($5 / $15), read 2026-11-29.
    ("gpt-4o-2024-05-13", 5.0, 5.0, 15.0),
    ("gpt-4o", 2.5, 1.25, 10.0),
    ("gpt-4o-mini", 0.15, 0.075, 0.6),
    ("o3", 2.0, 0.5, 8.0),
    ("o4-mini", 1.1, 0.275, 4.4),
    // Google, https://ai.google.dev/gemini-api/docs/pricing (2025-11-01; prompts up to 200k
    // tokens).
    ("gemini-2.5-pro", 1.25, 0.125, 10.0),
    ("gemini-2.5-flash", 0.3, 0.03, 2.5),
    ("gemini-2.5-flash-lite", 0.1, 0.01, 0.4),
    ("gemini-2.0-flash", 0.1, 0.025, 0.4),
    ("gemini-2.0-flash-lite", 0.075, 0.075, 0.3),
];

/// The prices a run uses: the table, under the config's own.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prices {
    /// `prices:` in goldgate.yaml, by model name.
    pub configured: Vec<(String, Price)>,
}

impl Prices {
    /// `model`'s price: the config's, else the table's; `None` when neither knows it.
    pub fn of(&self, model: &str) -> Option<Price> {
        let model = model.rsplit('/').next().unwrap_or(model);
        let configured = self
            .configured
            .iter()
            .find(|(name, _)| names_the_model(name, model))
            .map(|&(_, price)| price);
        configured.or_else(|| {
            TABLE
                .iter()
                .find(|entry| names_the_model(entry.0, model))
                .map(|&(_, input, cached_input, output)| Price {
                    input,
                    cached_input,
                    output,
                })
        })
    }
}

impl Prices {
    /// `usage` of one judge or simulated user, with its cost and what its cached answers saved
    /// at its model's price (both unknown without one).
    pub fn judge(&self, usage: JudgeUsage) -> JudgeUsage {
        let price = self.of(&usage.judge);
        JudgeUsage {
            cost_usd: price.map(|p| p.of(&usage.spent())),
            saved_usd: price.map(|p| p.of(&usage.saved)),
            ..usage
        }
    }
}

/// `name` is `model`, or `model` is `name` with a date, a version number or `latest` after it.
fn names_the_model(name: &str, model: &str) -> bool {
    let Some(rest) = model.strip_prefix(name) else {
        return false;
    };
    let Some(suffix) = rest.strip_prefix('-') else {
        return rest.is_empty();
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let dated = suffix.split('-').all(digits) && suffix.len() >= 3;
    suffix == "latest" || dated
}

/// Reads `prices: { MODEL: { input, output, cached_input } }` (USD per million tokens;
/// `cached_input` defaults to `input`).
pub(crate) fn parse(node: &Node, diags: &mut Diagnostics) -> Prices {
    let Some(models) = node.as_map() else {
        node.wrong_type("a mapping of model names to prices", diags)
            .field("prices");
        return Prices::default();
    };
    let configured = models
        .iter()
        .filter_map(|(key, value)| {
            let path = format!("prices.{}", key.name);
            Some((key.name.clone(), price(value, &path, diags)?))
        })
        .collect();
    Prices { configured }
}

fn price(node: &Node, path: &str, diags: &mut Diagnostics) -> Option<Price> {
    let mut fields = Fields::of(node, path, diags)?;
    // Each key: absent (`None`), or read (`Some`, with `None` inside when it was wrong).
    let amounts = ["input", "output", "cached_input"].map(|key| {
        let node = fields.take(key)?;
        Some(read_dollars(node, &format!("{path}.{key}"), diags))
    });
    fields.finish(diags);
    let [Some(input), Some(output), cached_input] = amounts else {
        diags
            .at(node)
            .error(
                Code::G102,
                "a price needs `input` and `output` (USD per million tokens)",
            )
            .field(path);
        return None;
    };
    Some(Price {
        input: input?,
        cached_input: cached_input.unwrap_or(input)?,
        output: output?,
    })
}

/// A non-negative amount of US dollars at `node`; an error naming `field` otherwise.
pub(crate) fn read_dollars(node: &Node, field: &str, diags: &mut Diagnostics) -> Option<f64> {
    match node.as_f64() {
        Some(usd) if usd >= 0.0 && usd.is_finite() => Some(usd),
        Some(usd) => {
            let message = format!("expected a non-negative number of US dollars, found {usd}");
            diags.at(node).error(Code::G101, message).field(field);
            None
        }
        _ => {
            node.wrong_type("a non-negative number of US dollars", diags)
                .field(field);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Prices, TABLE, names_the_model};
    use crate::model::Provider;
    use crate::transcript::Price;

    #[test]
    fn models_are_found_by_name_with_dated_suffixes_never_by_a_looser_prefix() {
        let prices = Prices::default();
        let sonnet = prices.of("claude-sonnet-4-5-20250929").unwrap();
        assert_eq!(sonnet.input, 3.0);
        assert_eq!(prices.of("anthropic/claude-sonnet-4-5").unwrap(), sonnet);
        assert_eq!(prices.of("gpt-4o-2024-08-06").unwrap().input, 2.5);
        assert_eq!(prices.of("gpt-4o-mini").unwrap().input, 0.15);
        assert_eq!(prices.of("claude-3-5-haiku-latest").unwrap().output, 4.0);
        assert!(prices.of("gpt-4o-audio-preview").is_none());
        assert!(prices.of("gpt-5.1").is_none());
        assert!(prices.of("my-finetune").is_none());
        assert!(!names_the_model("gpt-4", "gpt-4o"));
    }

    /// goldgate's own defaults (the judge's above all) are never "cost unknown", and a dated
    /// snapshot priced unlike its alias is priced as published, not as the alias.
    #[test]
    fn every_default_model_and_a_differently_priced_snapshot_are_priced() {
        let prices = Prices::default();
        for provider in [Provider::Anthropic, Provider::OpenAi, Provider::Gemini] {
            let model = crate::llm::info(provider).default_model;
            assert!(prices.of(model).is_some(), "{model} has no price");
        }
        let may_2024 = prices.of("gpt-4o-2024-05-13").unwrap();
        assert_eq!((may_2024.input, may_2024.output), (5.0, 15.0));
        assert_eq!(prices.of("gpt-4o-2024-11-20").unwrap().input, 2.5);
    }

    #[test]
    fn the_config_wins_over_the_table() {
        let mine = Price {
            input: 1.0,
            cached_input: 1.0,
            output: 2.0,
        };
        let prices = Prices {
            configured: vec![("gpt-4o".to_owned(), mine)],
        };
        assert_eq!(prices.of("gpt-4o-2024-08-06"), Some(mine));
    }

    #[test]
    fn every_table_entry_is_a_sane_price() {
        for &(model, input, cached, output) in TABLE {
            assert!(cached <= input && input <= output, "{model}");
            assert_eq!(
                TABLE.iter().filter(|e| e.0 == model).count(),
                1,
                "{model} twice"
            );
        }
    }
}
