//! What a SCRAPI golden has no key for, kept in comments that goldgate reads back.
//!
//! SCRAPI's loader (pydantic models over `yaml.safe_load`) has no key for a case's display
//! name or description, an expectation's note or the agent an expected text comes from, which
//! CES goldens hold. `goldgate convert` writes each as a comment right above the conversation
//! or turn it belongs to, one per line, and the reader takes them back, so that CES -> SCRAPI
//! -> CES gives the same rows; SCRAPI and every other YAML reader see only comments:
//!
//! ```yaml
//! conversations:
//!   # goldgate name: Invoice lookup
//!   # goldgate description: Customer asks about an invoice
//!   - conversation: invoice-lookup
//!     turns:
//!       # goldgate agent[0] response_agent: support_agent
//!       # goldgate tool_calls[0] note: Looks the invoice up by id
//!       - user: Can you check invoice INV-5678?
//! ```
//!
//! A turn whose calls come before its texts (SCRAPI reads texts first) says so with
//! `# goldgate order: tool_calls first`. A turn that checks no agent text at all (a scenario's
//! turn, a CES turn without an expected text) says so with `# goldgate agent: not checked`:
//! SCRAPI has no key for it, and without `agent` it flags any reply as an UNEXPECTED RESPONSE,
//! which would fail the converted case where its source passed. `agent[i]` is the turn's i-th expected text, `tool_calls[i]` its i-th tool call or
//! transfer; the value is a YAML scalar (quoted as JSON where a plain one would read otherwise).

use crate::formats::write::yaml_str;
use crate::yaml::{Schema, Value, parse_as};

const PREFIX: &str = "goldgate ";

/// The author's comments among `comments`: all but goldgate's own, which say what the format
/// has no key for and are read back into the model instead.
pub(crate) fn authors(comments: &[String]) -> Vec<String> {
    comments
        .iter()
        .filter(|comment| !comment.starts_with(PREFIX))
        .cloned()
        .collect()
}

/// `order`'s value for a turn whose calls come before its texts, as CES rows may say.
pub(super) const CALLS_FIRST: &str = "tool_calls first";

/// The `agent` annotation of a turn that checks no agent text.
pub(super) const AGENT_NOT_CHECKED: (&str, &str) = ("agent", "not checked");

/// Whether the goldgate comments among `comments` say the turn checks no agent text.
pub(super) fn agent_not_checked(comments: &[String]) -> bool {
    read(comments)
        .iter()
        .any(|(field, value)| (*field, value.as_str()) == AGENT_NOT_CHECKED)
}

/// The comment text (without `# `) that keeps `value` as `field`.
pub(super) fn comment(field: &str, value: &str) -> String {
    // `yaml_str` quotes a string with a line break as JSON: the comment stays one line.
    format!("{PREFIX}{field}: {}", yaml_str(value))
}

/// The `(field, value)` pairs of the goldgate comments among `comments`; other comments are
/// the author's, and left alone.
pub(super) fn read(comments: &[String]) -> Vec<(&str, String)> {
    comments
        .iter()
        .filter_map(|comment| {
            let (field, value) = comment.strip_prefix(PREFIX)?.split_once(": ")?;
            let value = match parse_as(value, Schema::YamlCore).map(|node| node.value) {
                Ok(Value::Str(text)) => text,
                _ => value.to_owned(),
            };
            Some((field, value))
        })
        .collect()
}

/// The expectation an annotation of a turn is on, and what it says of it.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Target {
    /// The turn's i-th expected agent text.
    Text(usize),
    /// The turn's i-th tool call or transfer.
    Call(usize),
}

/// `agent[2] note` into `(Text(2), "note")`.
pub(super) fn target(field: &str) -> Option<(Target, &str)> {
    let (place, what) = field.split_once(' ')?;
    let (list, index) = place.strip_suffix(']')?.split_once('[')?;
    let index = index.parse().ok()?;
    let target = match list {
        "agent" => Target::Text(index),
        "tool_calls" => Target::Call(index),
        _ => return None,
    };
    Some((target, what))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_reads_back_as_it_was_written() {
        let values = [
            "Invoice lookup",
            "12",
            "yes",
            "two\nlines",
            "a: b # c",
            " padded ",
        ];
        let comments: Vec<String> = values.iter().map(|v| comment("note", v)).collect();
        assert!(comments.iter().all(|c| !c.contains('\n')));
        let read: Vec<String> = read(&comments).into_iter().map(|(_, v)| v).collect();
        assert_eq!(read, values);
    }

    #[test]
    fn only_goldgate_comments_are_read() {
        let comments = ["name: mine".to_owned(), "goldgate name: x".to_owned()];
        assert_eq!(read(&comments), [("name", "x".to_owned())]);
        assert_eq!(authors(&comments), ["name: mine"]);
        assert_eq!(
            target("tool_calls[1] note"),
            Some((Target::Call(1), "note"))
        );
        assert_eq!(target("agent[x] note"), None);
    }
}
