//! YAML into a tree that remembers where every node was written, and helpers that walk it
//! while reporting every problem at once.
//!
//! Loaders do not deserialize straight into typed structs: serde stops at the first error, and
//! `goldgate lint` must show them all with file, line and key path. Instead [`parse`] builds a
//! [`Node`] tree, and [`Fields`] walks each mapping, taking known keys and reporting unknown ones
//! with a "did you mean".
//!
//! `build` makes the tree from granit-parser's events in one pass: anchors, aliases, merge
//! keys and tags expanded, duplicate keys an error, and limits on nodes, nesting, text and
//! alias replays that refuse billion-laughs and pathological nesting in milliseconds. The
//! documents it accepts and the trees it builds are those of serde-saphyr, which goldgate used
//! before and which its tests still compare against.

mod ambiguous;
mod build;
mod comments;
mod fields;
mod resolve;
#[cfg(test)]
mod saphyr;
pub mod scalars;

use std::fmt;

use serde_json::Value as Json;

pub use ambiguous::{Ambiguous, report_ambiguous};
pub use fields::{Fields, expect_text, indexed};
pub use scalars::Schema;

use crate::diagnostic::{Code, DiagnosticBuilder, Diagnostics, Position};

/// Files larger than this are refused before parsing: goldens are hand-written text.
pub const MAX_FILE_BYTES: usize = 16 * 1024 * 1024;

/// The most YAML nodes (scalars, lists, mappings) one file may hold: eight times serde-saphyr's
/// default, so that a golden of 100,000 plain turns (about 8 MB) loads, while a file at the
/// 16 MiB cap still parses in bounded memory.
pub const MAX_NODES: usize = 2_000_000;

/// The parser events that allows (each node opens and closes).
pub(crate) const MAX_EVENTS: usize = 4 * MAX_NODES;

/// The most bytes of text a file's scalars may hold, each replay of an alias counted again
/// (serde-saphyr's default, set here so that it cannot move with it): an alias repeats its
/// text in the tree, so a small file that replays a large scalar stops here, at 64 MiB.
pub const MAX_SCALAR_BYTES: usize = 64 * 1024 * 1024;

/// What one heap allocation costs beyond the bytes it holds (glibc's header and rounding),
/// counted by [`Node::footprint`] for every text.
pub const ALLOCATION_BYTES: usize = 16;

/// The most events that anchors may record and aliases replay: a tenth of serde-saphyr's
/// default. Goldens share small blocks by anchor; a billion-laughs file then stops after
/// milliseconds, not after expanding a million events.
pub(crate) const MAX_ALIAS_EVENTS: usize = 100_000;

/// A YAML node with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub value: Value,
    pub line: u32,
    pub column: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(Key, Node)>),
}

/// A mapping key with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Key {
    pub name: String,
    pub line: u32,
    pub column: u32,
    /// The comment lines right above the key, when it opens its line (see `comments`).
    pub comments: Vec<String>,
}

impl Key {
    /// Reports a G100 "unknown key" at this key; add `.field(..)` and `.hint(..)` to the
    /// result.
    pub fn unknown<'d>(&self, diags: &'d mut Diagnostics) -> DiagnosticBuilder<'d> {
        let message = format!("unknown key `{}`", self.name);
        diags.at(self).error(Code::G100, message)
    }
}

impl From<&Key> for Position {
    fn from(key: &Key) -> Self {
        Position::new(key.line, key.column)
    }
}

impl From<&Node> for Position {
    fn from(node: &Node) -> Self {
        Position::new(node.line, node.column)
    }
}

impl Node {
    /// The bytes this node and everything under it hold in memory: each node's and key's own
    /// size, each text's bytes and its allocation. An alias is counted as often as it is
    /// replayed, since the tree holds a copy each time. What loading keeps of a file grows
    /// with it (the bound on the goldens as a whole counts it).
    pub fn footprint(&self) -> usize {
        let own = std::mem::size_of::<Node>();
        own + match &self.value {
            Value::Str(text) => text_footprint(text),
            Value::Seq(items) => items.iter().map(Node::footprint).sum(),
            Value::Map(entries) => entries
                .iter()
                .map(|(key, value)| {
                    let comments: usize = key.comments.iter().map(|c| text_footprint(c)).sum();
                    std::mem::size_of::<Key>()
                        + text_footprint(&key.name)
                        + comments
                        + value.footprint()
                })
                .sum(),
            Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) => 0,
        }
    }

    /// The YAML type name used in messages ("expected a string, found a list").
    pub fn kind(&self) -> &'static str {
        match &self.value {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) | Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }

    /// Reports a G101 "expected `expected`, found <kind>" at this node; add `.field(..)` and
    /// `.hint(..)` to the result.
    pub fn wrong_type<'d>(
        &self,
        expected: &str,
        diags: &'d mut Diagnostics,
    ) -> DiagnosticBuilder<'d> {
        let message = format!("expected {expected}, found {}", self.kind());
        diags.at(self).error(Code::G101, message)
    }

    pub fn is_null(&self) -> bool {
        matches!(self.value, Value::Null)
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&[(Key, Node)]> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    /// The value of `key` when this node is a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.name == key)
            .map(|(_, v)| v)
    }

    /// A scalar as text, as YAML authors expect (`1` and `true` are fine where a string is wanted).
    pub fn scalar_text(&self) -> Option<String> {
        match &self.value {
            Value::Str(s) => Some(s.clone()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Int(i) => Some(i.to_string()),
            Value::Float(f) => Some(f.to_string()),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self.value {
            Value::Int(i) => Some(i as f64),
            Value::Float(f) => Some(f),
            _ => None,
        }
    }

    /// The node as JSON (positions dropped), for argument values and session parameters.
    pub fn to_json(&self) -> Json {
        match &self.value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(i) => Json::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
            Value::Str(s) => Json::String(s.clone()),
            Value::Seq(items) => Json::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(entries) => Json::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.name.clone(), v.to_json()))
                    .collect(),
            ),
        }
    }
}

/// What a text holds on the heap: its bytes and an allocation (none when empty).
fn text_footprint(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        text.len() + ALLOCATION_BYTES
    }
}

/// Why a document could not be parsed at all.
#[derive(Debug)]
pub struct ParseError {
    pub line: u32,
    pub column: u32,
    pub message: String,
    pub code: Code,
    pub cause: Cause,
}

/// What kind of problem stopped a parse, for the hint that goes with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// YAML's syntax, or a value YAML or goldgate refuses.
    Invalid,
    /// `: ` inside a plain scalar, which YAML reads as a mapping.
    ColonInPlainScalar,
    /// One of goldgate's limits on a file: nodes, nesting, aliases, text.
    Limit,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// Parses one of goldgate's own YAML files (plain scalars as serde-saphyr reads them). An
/// empty document is `Null`.
pub fn parse(text: &str) -> Result<Node, ParseError> {
    parse_as(text, Schema::Goldgate)
}

/// Parses one YAML document, its plain scalars read by `schema`: a golden's by the rules of its
/// format's own loader. An empty document is `Null`.
pub fn parse_as(text: &str, schema: Schema) -> Result<Node, ParseError> {
    parse_document(text, schema, false).map(|(root, _)| root)
}

/// Parses a golden as [`parse_as`] does, with the plain values in it that the reference loaders
/// read differently (G113, see [`report_ambiguous`]).
pub fn parse_golden(text: &str, schema: Schema) -> Result<(Node, Vec<Ambiguous>), ParseError> {
    parse_document(text, schema, true)
}

fn parse_document(
    text: &str,
    schema: Schema,
    scan: bool,
) -> Result<(Node, Vec<Ambiguous>), ParseError> {
    if text.len() > MAX_FILE_BYTES {
        return Err(ParseError {
            line: 1,
            column: 1,
            message: format!(
                "file is {} MiB; goldgate refuses YAML files over {} MiB",
                text.len() / (1024 * 1024),
                MAX_FILE_BYTES / (1024 * 1024)
            ),
            code: Code::E001,
            cause: Cause::Invalid,
        });
    }
    if is_blank(text) {
        let empty = Node {
            value: Value::Null,
            line: 1,
            column: 1,
        };
        return Ok((empty, Vec::new()));
    }
    let loaders = scan.then(|| ambiguous::loaders(text));
    let schema = schema.for_document(text);
    let (mut root, found) = build::parse(text, schema, loaders)?;
    comments::attach(&mut root, text);
    Ok((root, found))
}

/// Whether a text holds no document: nothing but blank and comment lines.
fn is_blank(text: &str) -> bool {
    text.lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
}

/// Reports a parse failure as the file's one diagnostic.
pub fn report_parse_error(err: &ParseError, diags: &mut Diagnostics) {
    let hint = match err.cause {
        Cause::Invalid => None,
        Cause::ColonInPlainScalar => {
            Some("a plain scalar may not contain `: `; quote the value".to_owned())
        }
        Cause::Limit => Some(format!(
            "the file is past goldgate's YAML limits ({MAX_NODES} nodes, 64 levels of nesting, \
             {MAX_ALIAS_EVENTS} events recorded under anchors and as many replayed by aliases, \
             {} MiB of text with aliases expanded); split it into several files",
            MAX_SCALAR_BYTES / (1024 * 1024)
        )),
    };
    let builder = diags
        .at(Position::new(err.line, err.column))
        .error(err.code, err.message.clone());
    if let Some(hint) = hint {
        builder.hint(hint);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error's message carries `words`; a failure shows the whole message.
    #[track_caller]
    fn assert_says(err: &ParseError, words: &str) {
        let message = &err.message;
        assert!(message.contains(words), "{words:?} in {message:?}");
    }

    #[test]
    fn keeps_positions_of_keys_and_values() {
        let node = parse("a: 1\nb:\n  - x\n  - {c: null}\n").unwrap();
        let b = node.get("b").unwrap();
        assert_eq!(b.line, 3);
        let items = b.as_seq().unwrap();
        assert_eq!((items[1].line, items[1].column), (4, 5));
        let (key, _) = &node.as_map().unwrap()[1];
        assert_eq!((key.name.as_str(), key.line), ("b", 2));
    }

    #[test]
    fn duplicate_keys_are_e005_with_the_line() {
        let err = parse("a: 1\nb: 2\na: 3\n").unwrap_err();
        assert_eq!(err.code, Code::E005);
        assert_eq!(err.line, 3);
        assert_says(&err, "duplicate mapping key");
    }

    #[test]
    fn truncated_yaml_is_e001_at_the_break() {
        let err = parse("a:\n  - b: [1, 2\n").unwrap_err();
        assert_eq!(err.code, Code::E001);
        assert_eq!(err.line, 2);
    }

    #[test]
    fn comment_only_document_is_null() {
        assert!(parse("# nothing here\n\n").unwrap().is_null());
    }

    #[test]
    fn aliases_and_merge_keys_are_expanded() {
        let node = parse("base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  y: 3\nagain: *b\n").unwrap();
        let json = node.to_json();
        assert_eq!(json["use"], serde_json::json!({"y": 3, "x": 1}));
        assert_eq!(json["again"], serde_json::json!({"x": 1, "y": 2}));
    }

    #[test]
    fn scalars_resolve_as_serde_saphyr_reads_them() {
        let node = parse("[yes, off, 0x1F, 1_000, 010, 1.5, '1', ~, !!str 2, \"a\\tb\"]").unwrap();
        let json = serde_json::json!([true, false, 31, 1000, 10.0, 1.5, "1", null, "2", "a\tb"]);
        assert_eq!(node.to_json(), json);
        let err = parse("a: .inf\n").unwrap_err();
        assert_eq!((err.code, err.line), (Code::E001, 1));
    }

    #[test]
    fn a_goldens_plain_scalars_read_as_its_formats_loader_reads_them() {
        // Without an anchor, then with one: the same reading.
        for doc in [
            "[N, yes, yEs, 010, 1e3, 0o17, '010', \"yes\"]",
            "[&a N, yes, yEs, 010, 1e3, 0o17, '010', \"yes\"]",
        ] {
            let read = |schema| parse_as(doc, schema).unwrap().to_json();
            let json = serde_json::json!(["N", true, "yEs", 8, "1e3", "0o17", "010", "yes"]);
            assert_eq!(read(Schema::PyYaml), json, "{doc}");
            let json = serde_json::json!(["N", "yes", "yEs", 10, 1000.0, 15, "010", "yes"]);
            assert_eq!(read(Schema::JsYaml), json, "{doc}");
            assert_eq!(read(Schema::YamlCore), json, "{doc}");
        }
        // Text to PyYAML, infinity to the others, which JSON cannot hold.
        assert_eq!(
            parse_as("a: -.nan", Schema::PyYaml).unwrap().to_json()["a"],
            "-.nan"
        );
        let err = parse_as("a: 1\nb: .inf\n", Schema::YamlCore).unwrap_err();
        assert_eq!((err.code, err.line, err.column), (Code::E001, 2, 4));
        assert_says(&err, "quote it");
    }

    #[test]
    fn a_second_document_is_refused() {
        let err = parse("a: 1\n---\nb: 2\n").unwrap_err();
        assert_eq!((err.code, err.line), (Code::E001, 3));
        assert_says(&err, "a second YAML document");
    }

    /// The hint says what the error is: a limit met, a colon in a plain scalar, or nothing.
    #[test]
    fn only_a_limit_met_hints_at_the_limits() {
        let hint_of = |text: &str| {
            let err = parse(text).unwrap_err();
            let mut diags = Diagnostics::new(&std::sync::Arc::from(std::path::Path::new("g")));
            report_parse_error(&err, &mut diags);
            diags.items.remove(0).hint.unwrap_or_default()
        };
        let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
        assert!(hint_of(&deep).contains("past goldgate's YAML limits"));
        assert_eq!(hint_of("a: &a [1, *a]\n"), "");
        assert_eq!(hint_of("a: *missing\n"), "");
        assert!(hint_of("a: b: c\n").contains("quote the value"));
    }

    #[test]
    fn deep_nesting_fails_fast() {
        let start = std::time::Instant::now();
        let err = parse(&"[".repeat(200_000)).unwrap_err();
        assert_eq!(err.code, Code::E001);
        assert!(start.elapsed().as_secs() < 1);
    }
}
