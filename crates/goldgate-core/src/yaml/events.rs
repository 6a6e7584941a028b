//! The fast path of [`super::parse`]: builds the [`Node`] tree straight from granit-parser's
//! events, the parser serde-saphyr itself runs, skipping serde's per-node `Spanned` maps.
//!
//! It covers what goldens are written in: one document of untagged plain, quoted and block
//! scalars in mappings and sequences. For anything else it answers `None` and serde-saphyr
//! decides: tags, anchors and aliases, merge keys, keys serde-saphyr refuses or compares by
//! value, non-finite floats, a breach of serde-saphyr's default budget, more than one document,
//! and every syntax error. So the fast path never accepts what serde-saphyr would refuse, every
//! error message still comes from serde-saphyr, and a tree built here is the one serde-saphyr
//! builds, positions included (the tests below hold it to that, on random documents too).

use std::borrow::Cow;

use granit_parser::{Event, Parser, ScalarStyle, Span, StrInput};

use super::ambiguous::{self, Ambiguous};
use super::scalars::{Reading, Schema};
use super::{Key, Node, Value};

/// The budget goldgate gives serde-saphyr (see [`super::saphyr`]). Past any of these it
/// reports an error, so the fast path gives up there.
const MAX_DEPTH: usize = 64;
const MAX_NODES: usize = super::MAX_NODES;
const MAX_EVENTS: usize = super::MAX_EVENTS;
const MAX_SCALAR_BYTES: usize = super::MAX_SCALAR_BYTES;

/// Builds the tree of a non-empty document with plain scalars read by `schema`, or `None` when
/// serde-saphyr must decide; with `loaders`, also the plain values they read differently (in
/// the same pass: a second parse would double a golden's load time).
pub(super) fn parse(
    text: &str,
    schema: Schema,
    loaders: Option<[Schema; 3]>,
) -> Option<(Node, Vec<Ambiguous>)> {
    // The parser options serde-saphyr derives from its default budget: granit-parser's
    // defaults, but with fewer comments buffered (too many is a parse error).
    let options = granit_parser::options! { max_buffered_comment_events: 32 };
    let mut builder = Builder {
        schema,
        loaders,
        ..Builder::default()
    };
    for item in Parser::with_options(StrInput::new(text), options) {
        let (event, span) = item.ok()?;
        builder.events += 1;
        if builder.events > MAX_EVENTS {
            return None;
        }
        match event {
            Event::StreamStart | Event::DocumentEnd | Event::Comment(..) => {}
            // A second document is refused by serde-saphyr.
            Event::DocumentStart(..) if builder.root.is_some() => return None,
            Event::DocumentStart(..) => {}
            Event::StreamEnd => break,
            Event::Scalar(value, style, 0, None) => builder.scalar(value, style, &span)?,
            Event::SequenceStart(_, 0, None) => builder.open(Container::Seq(Vec::new()), &span)?,
            Event::MappingStart(_, 0, None) => {
                builder.open(Container::Map(Vec::new(), None), &span)?;
            }
            Event::SequenceEnd | Event::MappingEnd => builder.close()?,
            // Anchors, aliases and tags.
            _ => return None,
        }
    }
    Some((builder.root?, builder.ambiguous))
}

#[derive(Default)]
struct Builder {
    schema: Schema,
    /// The reference loaders whose disagreements are collected, if asked.
    loaders: Option<[Schema; 3]>,
    ambiguous: Vec<Ambiguous>,
    /// The open collections, outermost first.
    stack: Vec<Open>,
    root: Option<Node>,
    events: usize,
    nodes: usize,
    scalar_bytes: usize,
}

struct Open {
    line: u32,
    column: u32,
    container: Container,
}

enum Container {
    Seq(Vec<Node>),
    /// The entries so far and the key waiting for its value.
    Map(Vec<(Key, Node)>, Option<Key>),
}

impl Builder {
    fn count_node(&mut self) -> Option<()> {
        self.nodes += 1;
        (self.nodes <= MAX_NODES).then_some(())
    }

    fn scalar(&mut self, value: Cow<'_, str>, style: ScalarStyle, span: &Span) -> Option<()> {
        self.count_node()?;
        self.scalar_bytes += value.len();
        if self.scalar_bytes > MAX_SCALAR_BYTES {
            return None;
        }
        let (line, column) = position(span);
        if let Some(Open {
            container: Container::Map(_, pending @ None),
            ..
        }) = self.stack.last_mut()
        {
            *pending = Some(Key {
                name: key_name(value, style)?,
                line,
                column,
                comments: Vec::new(),
            });
            return Some(());
        }
        if let (Some(loaders), ScalarStyle::Plain) = (self.loaders, style) {
            self.ambiguous
                .extend(ambiguous::check(&value, loaders, (line, column)));
        }
        self.push(Node {
            value: match self.schema {
                Schema::Goldgate => resolve(value, style)?,
                schema => resolve_as(schema, value, style)?,
            },
            line,
            column,
        })
    }

    fn open(&mut self, container: Container, span: &Span) -> Option<()> {
        self.count_node()?;
        let awaits_key = matches!(
            self.stack.last(),
            Some(Open {
                container: Container::Map(_, None),
                ..
            })
        );
        // A collection as a key cannot become a string key.
        if awaits_key || self.stack.len() >= MAX_DEPTH {
            return None;
        }
        let (line, column) = position(span);
        self.stack.push(Open {
            line,
            column,
            container,
        });
        Some(())
    }

    fn close(&mut self) -> Option<()> {
        let open = self.stack.pop()?;
        let value = match open.container {
            Container::Seq(items) => Value::Seq(items),
            Container::Map(entries, None) if !has_duplicate_key(&entries) => Value::Map(entries),
            Container::Map(..) => return None,
        };
        self.push(Node {
            value,
            line: open.line,
            column: open.column,
        })
    }

    /// Hands a finished node to the collection it belongs to, or makes it the root.
    fn push(&mut self, node: Node) -> Option<()> {
        match self.stack.last_mut() {
            Some(Open {
                container: Container::Seq(items),
                ..
            }) => items.push(node),
            Some(Open {
                container: Container::Map(entries, pending),
                ..
            }) => entries.push((pending.take()?, node)),
            None if self.root.is_none() => self.root = Some(node),
            None => return None,
        }
        Some(())
    }
}

/// Line and column (1-based, in characters) as serde-saphyr reports them: the event's start.
fn position(span: &Span) -> (u32, u32) {
    (span.start.line() as u32, span.start.col() as u32 + 1)
}

/// The name of a mapping key, or `None` where serde-saphyr does more than take the text: a null
/// key is refused, `<<` merges, and integer keys are compared by value (`0x1` repeats `1`).
fn key_name(value: Cow<'_, str>, style: ScalarStyle) -> Option<String> {
    if style == ScalarStyle::Plain {
        if is_null(&value) || value == "<<" {
            return None;
        }
        // A canonical integer repeats another key only when their texts are equal.
        if let Some((negative, magnitude)) = integer(trim(&value)) {
            let sign = if negative && magnitude != 0 { "-" } else { "" };
            if value != format!("{sign}{magnitude}") {
                return None;
            }
        }
    }
    Some(value.into_owned())
}

/// Whether a mapping repeats a key (mappings are small: compare pairs, else sort).
fn has_duplicate_key(entries: &[(Key, Node)]) -> bool {
    if entries.len() <= 16 {
        return entries
            .iter()
            .enumerate()
            .any(|(i, (key, _))| entries[..i].iter().any(|(k, _)| k.name == key.name));
    }
    let mut names: Vec<&str> = entries.iter().map(|(k, _)| k.name.as_str()).collect();
    names.sort_unstable();
    names.windows(2).any(|pair| pair[0] == pair[1])
}

/// A scalar value as serde-saphyr resolves an untagged one for an untyped visitor: quoted and
/// block scalars are strings; plain ones are null, a YAML 1.1 boolean, an integer, a float, or
/// else a string. `None` for a non-finite float, which serde-saphyr refuses.
fn resolve(value: Cow<'_, str>, style: ScalarStyle) -> Option<Value> {
    if style != ScalarStyle::Plain {
        return Some(Value::Str(value.into_owned()));
    }
    if is_null(&value) {
        return Some(Value::Null);
    }
    let text = trim(&value);
    if let Some(b) = boolean(text) {
        return Some(Value::Bool(b));
    }
    match integer(text) {
        // serde-saphyr reads `-…` as an i64 and anything else as a u64.
        Some((true, magnitude)) => {
            let signed = i128::try_from(magnitude).ok().map(|m| i64::try_from(-m));
            if let Some(Ok(i)) = signed {
                return Some(Value::Int(i));
            }
        }
        Some((false, magnitude)) => {
            if let Ok(u) = u64::try_from(magnitude) {
                return Some(i64::try_from(u).map_or(Value::Float(u as f64), Value::Int));
            }
        }
        None => {}
    }
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    if matches!(
        unsigned,
        ".inf" | ".Inf" | ".INF" | ".nan" | ".NaN" | ".NAN"
    ) {
        return None;
    }
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() => Some(Value::Float(f)),
        // A numeral that overflows (`1e999`) is a non-finite float; `inf` or `nan` is text.
        Ok(_) if unsigned.starts_with(|c: char| c.is_ascii_digit()) => None,
        _ => Some(Value::Str(value.into_owned())),
    }
}

/// A scalar value as `schema`'s loader reads it (see [`super::scalars`]); `None` for a
/// non-finite float, which JSON cannot hold: serde-saphyr's path reports it.
fn resolve_as(schema: Schema, value: Cow<'_, str>, style: ScalarStyle) -> Option<Value> {
    if style != ScalarStyle::Plain {
        return Some(Value::Str(value.into_owned()));
    }
    value_of(schema.read(&value), value)
}

/// The tree's value for a reading of the plain scalar `text`; `None` for a non-finite float.
pub(super) fn value_of(reading: Reading, text: Cow<'_, str>) -> Option<Value> {
    Some(match reading {
        Reading::Null => Value::Null,
        Reading::Bool(b) => Value::Bool(b),
        Reading::Int(i) => Value::Int(i),
        Reading::Float(f) if f.is_finite() => Value::Float(f),
        Reading::Float(_) => return None,
        Reading::Date | Reading::Text => Value::Str(text.into_owned()),
    })
}

fn is_null(plain: &str) -> bool {
    matches!(plain, "" | "~" | "null" | "Null" | "NULL")
}

/// The padding serde-saphyr trims before reading a scalar as a boolean or number.
fn trim(text: &str) -> &str {
    text.trim_matches([' ', '\t', '\r', '\n'])
}

/// YAML 1.1 booleans, as serde-saphyr reads them unless `strict_booleans` is set.
fn boolean(text: &str) -> Option<bool> {
    let is = |words: [&str; 4]| words.iter().any(|w| text.eq_ignore_ascii_case(w));
    if is(["true", "yes", "y", "on"]) {
        Some(true)
    } else if is(["false", "no", "n", "off"]) {
        Some(false)
    } else {
        None
    }
}

/// A YAML 1.2 integer as serde-saphyr reads it: an optional sign, then decimal without a
/// leading zero, or `0x`, `0o` or `0b` digits, with single `_` between digits. Answers the sign
/// and the magnitude.
fn integer(text: &str) -> Option<(bool, u128)> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (radix, digits) = if let Some(d) = rest.strip_prefix("0x").or(rest.strip_prefix("0X")) {
        (16, d)
    } else if let Some(d) = rest.strip_prefix("0o").or(rest.strip_prefix("0O")) {
        (8, d)
    } else if let Some(d) = rest.strip_prefix("0b").or(rest.strip_prefix("0B")) {
        (2, d)
    } else if rest.starts_with('0') && rest != "0" {
        return None;
    } else {
        (10, rest)
    };
    let bytes = digits.as_bytes();
    let mut magnitude: u128 = 0;
    let mut any_digit = false;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'_' {
            let between_digits =
                i > 0 && bytes[i - 1] != b'_' && bytes.get(i + 1).is_some_and(|&n| n != b'_');
            if !between_digits {
                return None;
            }
            continue;
        }
        let digit = char::from(b).to_digit(radix)?;
        magnitude = magnitude
            .checked_mul(u128::from(radix))?
            .checked_add(u128::from(digit))?;
        any_digit = true;
    }
    any_digit.then_some((negative, magnitude))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::saphyr;

    const SCHEMAS: [Schema; 4] = [
        Schema::Goldgate,
        Schema::PyYaml,
        Schema::JsYaml,
        Schema::YamlCore,
    ];

    /// Asserts that the fast path answers `text` with serde-saphyr's tree, positions included,
    /// under every schema.
    fn assert_built_as_serde_saphyr_builds(text: &str) {
        for schema in SCHEMAS {
            let (fast, _) = parse(text, schema, None)
                .unwrap_or_else(|| panic!("left to serde-saphyr: {text:?} ({schema:?})"));
            let reference = saphyr::parse(text, schema).unwrap_or_else(|e| panic!("{e}: {text:?}"));
            // Debug output tells -0.0 from 0.0.
            assert_eq!(
                format!("{fast:?}"),
                format!("{reference:?}"),
                "{text:?} ({schema:?})"
            );
        }
    }

    #[test]
    fn builds_what_serde_saphyr_builds() {
        let documents = [
            "a: 1\nb:\n  - x\n  - {c: null, d: ~, e: }\n",
            // The core schema with YAML 1.1 booleans; quoted and block scalars stay strings.
            "[true, yes, N, off, 0x1F, -0o17, 0b101, 1_000, +5, -0, 010, 1.5e3, .5, -0.0, inf, nan]",
            "[9223372036854775807, 9223372036854775808, -9223372036854775809, 0x1_F, 1__0, 0x]",
            "['1', \"true\", '', \"\\u00e9\\n\", ~, null, NULL, nULL, y, Yes please, 1 2, 1.2.3]",
            "text: first\n  second\n\n  third\nlit: |\n  l1\n  l2\nfold: >-\n  f1\n  f2\n",
            // Explicit keys, integer and quoted keys, markers, comments, CRLF, BOM, wide columns.
            "? a\n: 1\n10: x\n'<<': y\n\"\": z\n",
            "--- # top\nété: [日本, {k: v}]  # trailing\n...\n",
            "\u{FEFF}a: 1\r\nb: [x,\r\n  y]\r\n",
            "- - - deep\n  - {a: [1, {b: [2]}]}\n",
            "--- |\n  only a scalar\n",
            "---\n",
        ];
        for text in documents {
            assert_built_as_serde_saphyr_builds(text);
        }
    }

    #[test]
    fn gives_up_past_serde_saphyrs_depth_limit() {
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        // serde-saphyr recurses per level: more stack than a debug test thread has.
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(move || {
                assert_built_as_serde_saphyr_builds(&nested(MAX_DEPTH));
                assert!(parse(&nested(MAX_DEPTH + 1), Schema::Goldgate, None).is_none());
                assert!(saphyr::parse(&nested(MAX_DEPTH + 1), Schema::Goldgate).is_err());
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn leaves_the_rest_to_serde_saphyr() {
        let documents = [
            "a: &x 1\nb: *x\n",
            "base: {x: 1}\nuse:\n  <<: {y: 2}\n",
            "a: !!str 1\n",
            "a: .inf\n",
            "a: 1e999\n",
            "a: 1\na: 2\n",
            "'a': 1\na: 2\n",
            "1: a\n0x1: b\n",
            "~: 1\n",
            "[k]: v\n",
            "a: 1\n---\nb: 2\n",
            "a: [1, 2\n",
        ];
        for text in documents {
            assert!(parse(text, Schema::Goldgate, None).is_none(), "{text:?}");
        }
    }

    /// Random snippets of YAML syntax: wherever the fast path answers, serde-saphyr must accept
    /// the document and build the same tree.
    #[test]
    fn random_documents_agree_with_serde_saphyr() {
        const PIECES: &[&str] = &[
            "a",
            "b",
            "1",
            "0",
            "x",
            ".",
            "e",
            "-",
            "+",
            ":",
            " ",
            "  ",
            "\n",
            "\n",
            "\n  ",
            "[",
            "]",
            "{",
            "}",
            ",",
            "#",
            "\"",
            "'",
            "?",
            "&a",
            "*a",
            "!",
            "|",
            ">",
            "%YAML 1.2",
            "---",
            "...",
            "~",
            "null",
            "yes",
            "_",
            "\t",
            "é",
            "\r\n",
            "<<",
            "\\",
            "N",
            "0o",
            "1:3",
            ".inf",
            "2024-01-01",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: usize| {
            // xorshift64: deterministic, so a failure can be replayed.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..20_000 {
            let text: String = (0..1 + next(24))
                .map(|_| PIECES[next(PIECES.len())])
                .collect();
            let schema = SCHEMAS[next(SCHEMAS.len())];
            if let Some((fast, _)) = parse(&text, schema, None) {
                let reference =
                    saphyr::parse(&text, schema).unwrap_or_else(|e| panic!("{e}: {text:?}"));
                assert_eq!(
                    format!("{fast:?}"),
                    format!("{reference:?}"),
                    "{text:?} ({schema:?})"
                );
            }
        }
    }
}
