//! One expected tool call as the SCRAPI writer writes it: a flow map of `action`, `args`
//! (with `$matchType` where not exact), `output` and `agent`.

use serde_json::Value;

use crate::formats::write::{yaml_str, yaml_value};
use crate::model::{ExpectedToolCall, MatchType, ValueMatcher};

/// `{action, args, output, agent}` of `call`, its `output` the mocked response if any.
pub(super) fn tool_call(call: &ExpectedToolCall, output: Option<&Value>) -> String {
    let mut parts = vec![format!("action: {}", yaml_str(&call.name))];
    if !call.args.fields.is_empty() {
        parts.push(format!("args: {}", fields(&call.args.fields)));
    }
    if let Some(output) = output {
        parts.push(format!("output: {}", yaml_value(output)));
    }
    if let Some(agent) = &call.agent {
        parts.push(format!("agent: {}", yaml_str(agent)));
    }
    format!("{{{}}}", parts.join(", "))
}

/// Arguments as SCRAPI reads them back: a bare value is exact, other match types are
/// `{$matchType, value}` maps, and an object that lists keys to check writes its exact leaves
/// as matcher maps too (a bare map is one exact value to SCRAPI).
fn fields(fields: &[(String, ValueMatcher)]) -> String {
    let parts: Vec<String> = fields
        .iter()
        .map(|(key, matcher)| format!("{}: {}", yaml_str(key), value_matcher(matcher, false)))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

fn value_matcher(matcher: &ValueMatcher, in_object: bool) -> String {
    match matcher {
        ValueMatcher::Object(inner) => {
            let parts: Vec<String> = inner
                .iter()
                .map(|(key, m)| format!("{}: {}", yaml_str(key), value_matcher(m, true)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        ValueMatcher::Leaf(leaf) => {
            let bare_is_exact = !in_object && !has_dollar_key(&leaf.expected);
            match leaf.match_type {
                MatchType::Exact if bare_is_exact => yaml_value(&leaf.expected),
                MatchType::Ignore if leaf.expected.is_null() => "{$matchType: ignore}".to_owned(),
                other => format!(
                    "{{$matchType: {}, value: {}}}",
                    other.name(),
                    yaml_value(&leaf.expected)
                ),
            }
        }
    }
}

fn has_dollar_key(value: &Value) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k.starts_with('$') || has_dollar_key(v)),
        _ => false,
    }
}
