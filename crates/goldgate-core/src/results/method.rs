//! How a check was judged, written in reports as one word (`exact`, `local-similarity`,
//! `judge:anthropic/claude-sonnet-4-6`, `none`) and read back into the same value.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::model::Provider;

/// How a check was judged, so the report can say which method decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Method {
    /// A deterministic comparison (exact, contains, regexp, ignore, structural checks), by
    /// its name.
    Deterministic(Cow<'static, str>),
    /// goldgate's local, deterministic similarity (no judge configured).
    LocalSimilarity,
    /// An LLM judge.
    Judge { provider: Provider, model: String },
    /// Not judged (skipped for lack of a judge, or the agent errored before).
    None,
}

const LOCAL_SIMILARITY: &str = "local-similarity";
const NONE: &str = "none";
const JUDGE_PREFIX: &str = "judge:";

impl Method {
    /// A deterministic comparison named `name`.
    pub const fn deterministic(name: &'static str) -> Method {
        Method::Deterministic(Cow::Borrowed(name))
    }

    /// Reads the word a report writes (the method's `Display`); `None` for a judge of an unknown provider.
    pub fn parse(word: &str) -> Option<Method> {
        Some(match word {
            LOCAL_SIMILARITY => Method::LocalSimilarity,
            NONE => Method::None,
            _ => match word.strip_prefix(JUDGE_PREFIX) {
                Some(judge) => {
                    let (provider, model) = judge.split_once('/')?;
                    Method::Judge {
                        provider: Provider::parse(provider)?,
                        model: model.to_owned(),
                    }
                }
                None => Method::Deterministic(Cow::Owned(word.to_owned())),
            },
        })
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Method::Deterministic(name) => f.write_str(name),
            Method::LocalSimilarity => f.write_str(LOCAL_SIMILARITY),
            Method::Judge { provider, model } => {
                write!(f, "{JUDGE_PREFIX}{}/{model}", provider.name())
            }
            Method::None => f.write_str(NONE),
        }
    }
}

impl Serialize for Method {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Method {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Method, D::Error> {
        let word = String::deserialize(d)?;
        Method::parse(&word).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "`{word}` is not a method: expected a matcher name, `{LOCAL_SIMILARITY}`, `{NONE}` or `{JUDGE_PREFIX}PROVIDER/MODEL` with PROVIDER one of {}",
                Provider::NAMES.join(", ")
            ))
        })
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Method {
    fn schema_name() -> Cow<'static, str> {
        "Method".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "How the check was judged: a matcher's name (`exact`, `contains`, ...), `local-similarity`, `judge:PROVIDER/MODEL`, or `none`."
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Method;
    use crate::model::Provider;

    #[test]
    fn every_method_reads_back_as_written() {
        for method in [
            Method::deterministic("exact"),
            Method::LocalSimilarity,
            Method::None,
            Method::Judge {
                provider: Provider::Anthropic,
                model: "claude-sonnet-4-6".into(),
            },
        ] {
            let json = serde_json::to_string(&method).unwrap();
            assert_eq!(serde_json::from_str::<Method>(&json).unwrap(), method);
        }
        assert_eq!(
            Method::parse("judge:openai/gpt-4o/mini"),
            Some(Method::Judge {
                provider: Provider::OpenAi,
                model: "gpt-4o/mini".into()
            })
        );
        assert!(serde_json::from_str::<Method>("\"judge:acme/x\"").is_err());
    }
}
