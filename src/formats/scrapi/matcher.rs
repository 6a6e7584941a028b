//! Expected tool-call arguments and their `$matchType`.
//!
//! Real files write a matcher in four shapes, all read here: `{value: X, $matchType: T}`,
//! `{$matchType: T, $matchValue: X, $originalValue: ...}`, `{$matchType: ignore}` with no value,
//! and `$matchValue: ""` with the expected value in `$originalValue`. A matcher may also sit
//! below a top-level argument, which becomes a [`ValueMatcher::Object`]. A bare value, map or
//! list without any `$` key is compared exactly.

use serde_json::Value as Json;

use crate::diagnostic::{Code, Diagnostics, suggestion};
use crate::model::{ArgsMatcher, MatchType, Matcher, ValueMatcher};
use crate::yaml::{Fields, Key, Node};

/// The expected arguments of one tool call; `node` must be a mapping.
pub(super) fn args(node: &Node, path: &str, diags: &mut Diagnostics) -> ArgsMatcher {
    let Some(entries) = node.as_map() else {
        node.wrong_type("a mapping of argument names to values", diags)
            .field(path);
        return ArgsMatcher::default();
    };
    ArgsMatcher {
        fields: object(entries, path, diags),
    }
}

fn object(
    entries: &[(Key, Node)],
    path: &str,
    diags: &mut Diagnostics,
) -> Vec<(String, ValueMatcher)> {
    entries
        .iter()
        .filter_map(|(key, value)| {
            let matcher = value_matcher(value, &format!("{path}.{}", key.name), diags)?;
            Some((key.name.clone(), matcher))
        })
        .collect()
}

fn value_matcher(node: &Node, path: &str, diags: &mut Diagnostics) -> Option<ValueMatcher> {
    let Some(entries) = node.as_map() else {
        return Some(exact(node));
    };
    if entries.iter().any(|(k, _)| is_matcher_key(&k.name)) {
        leaf(node, path, diags).map(ValueMatcher::Leaf)
    } else if holds_matcher(node) {
        Some(ValueMatcher::Object(object(entries, path, diags)))
    } else {
        Some(exact(node))
    }
}

/// `$`-keys mark a matcher map; a misspelt one (`$matchtype`) then gets a "did you mean".
fn is_matcher_key(name: &str) -> bool {
    name.starts_with('$')
}

fn holds_matcher(node: &Node) -> bool {
    node.as_map().is_some_and(|entries| {
        entries
            .iter()
            .any(|(k, v)| is_matcher_key(&k.name) || holds_matcher(v))
    })
}

fn exact(node: &Node) -> ValueMatcher {
    ValueMatcher::Leaf(Matcher::new(MatchType::Exact, node.to_json()))
}

/// One `$matchType` map. `None` after reporting when it cannot be built.
fn leaf(node: &Node, path: &str, diags: &mut Diagnostics) -> Option<Matcher> {
    let mut fields = Fields::of(node, path, diags)?;
    let match_type = match fields.take("$matchType") {
        None => Some(MatchType::Exact),
        Some(name_node) => match_type(name_node, &fields.path_of("$matchType"), diags),
    };
    let value = fields.take("value");
    let match_value = fields.take("$matchValue");
    let original = fields.take("$originalValue");
    fields.finish(diags);
    // The platform leaves `$matchValue` empty when the value was never edited and keeps the
    // written one in `$originalValue`.
    let expected = value
        .or(match_value.filter(|n| n.as_str() != Some("")))
        .or(original)
        .or(match_value);
    let match_type = match_type?;
    match (match_type, expected) {
        (MatchType::Ignore, expected) => Some(Matcher::new(
            MatchType::Ignore,
            expected.map_or(Json::Null, Node::to_json),
        )),
        (_, None) => {
            diags
                .at(node)
                .error(
                    Code::G102,
                    format!(
                        "`$matchType: {}` needs an expected value",
                        match_type.name()
                    ),
                )
                .field(path)
                .hint("add `value:` or `$matchValue:`, or use `$matchType: ignore`");
            None
        }
        (MatchType::Regexp, Some(pattern)) => regexp(pattern, path, diags),
        (match_type, Some(expected)) => Some(Matcher::new(match_type, expected.to_json())),
    }
}

fn match_type(node: &Node, path: &str, diags: &mut Diagnostics) -> Option<MatchType> {
    let Some(name) = node.as_str() else {
        node.wrong_type("a match type name", diags)
            .field(path)
            .hint(format!("one of: {}", MatchType::NAMES.join(", ")));
        return None;
    };
    let parsed = MatchType::parse(name);
    if parsed.is_none() {
        diags
            .at(node)
            .error(Code::E011, format!("unknown `$matchType` `{name}`"))
            .field(path)
            .hint(suggestion(name, &MatchType::NAMES));
    }
    parsed
}

/// Compiles a `regexp` pattern now, so a bad one fails the load rather than the run.
fn regexp(pattern: &Node, path: &str, diags: &mut Diagnostics) -> Option<Matcher> {
    let Some(text) = pattern.as_str() else {
        diags
            .at(pattern)
            .error(
                Code::G101,
                format!(
                    "a `regexp` pattern must be a string, found {}",
                    pattern.kind()
                ),
            )
            .field(path);
        return None;
    };
    match Matcher::regexp(text) {
        Ok(matcher) => Some(matcher),
        Err(err) => {
            diags
                .at(pattern)
                .error(
                    Code::G104,
                    format!(
                        "invalid regular expression `{text}`: {}",
                        regex_reason(&err)
                    ),
                )
                .field(path);
            None
        }
    }
}

/// The one-line cause of a regex error (its Display draws a multi-line caret diagram).
fn regex_reason(err: &regex::Error) -> String {
    let full = err.to_string();
    full.lines()
        .find_map(|line| line.strip_prefix("error: "))
        .or_else(|| full.lines().next())
        .unwrap_or("invalid pattern")
        .to_owned()
}
