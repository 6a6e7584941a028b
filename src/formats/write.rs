//! What the format writers share: the losses they report, and YAML text for JSON values.
//!
//! A writer carries every construct of the model that the target format can say, and reports
//! each one it cannot as a [`Loss`] at the place the construct was written, so that nothing is
//! dropped silently. YAML is written by hand: block structure for the document, and for values
//! plain scalars where YAML reads them back as the same string, JSON elsewhere (JSON is YAML),
//! so that every value loads back exactly as it was.

pub mod criterion;
pub mod per_turn;

use std::fmt;

use serde_json::Value;

use crate::model::{ArgsMatcher, Case, Location, MatchType, Matcher, ValueMatcher};

/// Something the target format cannot carry, where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loss {
    pub location: Location,
    pub message: String,
    /// What was left out or changed may change a verdict (a check, an input, a mock): a
    /// converted case with such a loss cannot pass. `false` for what is written another way
    /// with the same meaning, or does not bear on a verdict (comments, names, notes).
    pub verdict: bool,
}

impl fmt::Display for Loss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: warning: {}", self.location, self.message)
    }
}

/// The losses of one conversion, in the order found.
#[derive(Debug, Default)]
pub struct Losses {
    pub items: Vec<Loss>,
}

impl Losses {
    /// What the target cannot carry, which may change a verdict.
    pub fn add(&mut self, location: &Location, message: impl Into<String>) {
        self.items.push(Loss {
            location: location.clone(),
            message: message.into(),
            verdict: true,
        });
    }

    /// What the target writes another way with the same meaning, or that bears on no verdict:
    /// warned about all the same.
    pub fn note(&mut self, location: &Location, message: impl Into<String>) {
        self.items.push(Loss {
            location: location.clone(),
            message: message.into(),
            verdict: false,
        });
    }

    /// `format` compares agent text by meaning only: a `matcher` of another type is written
    /// as semantic, and that is a loss.
    pub fn semantic_only(&mut self, matcher: &Matcher, location: &Location, format: &str) {
        if matcher.match_type != MatchType::Semantic {
            self.add(
                location,
                format!(
                    "{format} compares agent text by meaning: this `{}` match becomes semantic",
                    matcher.match_type.name()
                ),
            );
        }
    }

    /// The case-level constructs only Regtrace has, which none of the writers' formats carry.
    pub fn regtrace_only(&mut self, case: &Case, format: &str) {
        if case.system_prompt.is_some() {
            self.add(
                &case.location,
                format!("{format} has no system prompt: `{}`'s is left out", case.id),
            );
        }
        if !case.context.is_empty() {
            self.add(
                &case.location,
                format!(
                    "{format} has no context documents: `{}`'s {} are left out",
                    case.id,
                    case.context.len()
                ),
            );
        }
        if case.weight != 1.0 {
            self.add(
                &case.location,
                format!(
                    "{format} has no case weight: `{}`'s weight {} is left out",
                    case.id, case.weight
                ),
            );
        }
        for turn in &case.turns {
            if turn.recorded_reply.is_some() {
                self.add(
                    &turn.location,
                    format!("{format} has no recorded reply: the turn's is left out"),
                );
            }
        }
    }
}

/// Expected text as the formats write it: a string as it is, any other value as JSON.
pub fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// A string as a YAML scalar: plain when YAML reads it back as this string, else quoted.
pub fn yaml_str(text: &str) -> String {
    if is_plain_safe(text) {
        text.to_owned()
    } else {
        json(&Value::String(text.to_owned()))
    }
}

/// A JSON value as YAML flow (a plain scalar for safe strings).
pub fn yaml_value(value: &Value) -> String {
    match value {
        Value::String(text) => yaml_str(text),
        other => json(other),
    }
}

fn json(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned())
}

/// Letters, digits and a few punctuation marks that mean nothing to YAML in the middle of a
/// plain scalar, even inside a flow collection (so no `,`), starting with a letter, and not a word YAML 1.1 reads as a boolean or null.
fn is_plain_safe(text: &str) -> bool {
    const RESERVED: [&str; 11] = [
        "true", "false", "null", "yes", "no", "on", "off", "y", "n", "none", "~",
    ];
    let Some(first) = text.chars().next() else {
        return false;
    };
    first.is_alphabetic()
        && !text.ends_with(' ')
        && !text.contains("  ")
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || " _-.'?!()/".contains(c))
        && !RESERVED.contains(&text.to_ascii_lowercase().as_str())
}

/// A block YAML document under construction, one line at a time.
#[derive(Default)]
pub struct Yaml {
    pub text: String,
}

impl Yaml {
    /// `key: value` at `indent` spaces.
    pub fn field(&mut self, indent: usize, key: &str, value: &str) {
        self.line(indent, &format!("{}: {value}", yaml_str(key)));
    }

    /// `key:` opening a block at `indent` spaces.
    pub fn open(&mut self, indent: usize, key: &str) {
        self.line(indent, &format!("{}:", yaml_str(key)));
    }

    /// `# text` at `indent` spaces, on one line: what the format has no key for, kept for the
    /// reader of the file.
    pub fn comment(&mut self, indent: usize, text: &str) {
        let text: Vec<&str> = text.split_whitespace().collect();
        self.line(indent, &format!("# {}", text.join(" ")));
    }

    /// The author's comment lines at `indent` spaces, as they were written (their reader took
    /// off only the `#` and one space).
    pub fn comments(&mut self, indent: usize, comments: &[String]) {
        for comment in comments {
            if comment.is_empty() {
                self.line(indent, "#");
            } else {
                self.line(indent, &format!("# {comment}"));
            }
        }
    }

    pub fn line(&mut self, indent: usize, text: &str) {
        self.text.push_str(&" ".repeat(indent));
        self.text.push_str(text);
        self.text.push('\n');
    }
}

/// Expected arguments as the JSON object CES and gecx write, where an object lists the keys to
/// check and every other value is compared exactly. A `$matchType` other than exact (left out),
/// and an exact match of a whole object (which these formats read as a match of its listed
/// keys), have no counterpart there and are reported at `location`.
pub fn exact_args_json(
    args: &ArgsMatcher,
    location: &Location,
    format: &str,
    losses: &mut Losses,
) -> serde_json::Map<String, Value> {
    let (json, problems) = args_json(args, format);
    for problem in problems {
        losses.add(location, problem);
    }
    json
}

/// [`exact_args_json`] with the problems returned as messages.
pub fn args_json(
    args: &ArgsMatcher,
    format: &str,
) -> (serde_json::Map<String, Value>, Vec<String>) {
    let mut problems = Vec::new();
    let json = fields_json(&args.fields, "", format, &mut problems);
    (json, problems)
}

fn fields_json(
    fields: &[(String, ValueMatcher)],
    path: &str,
    format: &str,
    problems: &mut Vec<String>,
) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    for (key, matcher) in fields {
        let path = format!("{path}{key}");
        match matcher {
            ValueMatcher::Object(inner) => {
                let inner = fields_json(inner, &format!("{path}."), format, problems);
                out.insert(key.clone(), Value::Object(inner));
            }
            ValueMatcher::Leaf(leaf) => match leaf.match_type {
                MatchType::Exact => {
                    if leaf.expected.is_object() {
                        problems.push(format!(
                            "{format} checks only the keys listed under argument `{path}`, not that it holds nothing else"
                        ));
                    }
                    out.insert(key.clone(), leaf.expected.clone());
                }
                MatchType::Ignore => problems.push(format!(
                    "{format} has no `$matchType: ignore`: argument `{path}` is left out (not checked)"
                )),
                // As an exact match it would fail where the source passes: left out, the
                // case is marked as not carried whole (`convert`), so it cannot pass either.
                other => problems.push(format!(
                    "{format} compares arguments exactly: argument `{path}`'s `$matchType: {}` is left out (not checked)",
                    other.name()
                )),
            },
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::yaml_str;

    #[test]
    fn plain_only_where_yaml_reads_the_same_string() {
        assert_eq!(yaml_str("Where is my order?"), "Where is my order?");
        for quoted in [
            "yes", "No", "null", "", "12", "a, b", "a: b", "# x", "x #y", "-x", " x", "x ",
            "ORD-1: x", "{a}", "[a]", "*a", "&a", "'q'", "\"q\"", "a\nb", "@x", "`x`", "%x",
        ] {
            assert!(yaml_str(quoted).starts_with('"'), "{quoted}");
        }
    }
}
