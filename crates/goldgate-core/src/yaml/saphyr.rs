//! serde-saphyr, the parser goldgate read YAML with before `build`, kept for the tests as the
//! reference: the documents `build` accepts and the trees it builds, positions included, are
//! serde-saphyr's under the same limits.
//!
//! serde-saphyr resolves plain scalars by its own rules (goldgate's own files are read by
//! them). For a golden, whose format's loader has other rules, each plain untagged scalar is
//! read again from its text, found by the byte offset serde-saphyr's span gives.

use std::collections::HashMap;
use std::fmt;

use granit_parser::{Event, Parser, ScalarStyle, StrInput};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

use super::scalars::Schema;
use super::{Cause, Key, Node, ParseError, Value};
use crate::diagnostic::Code;

/// serde-saphyr recurses once per nesting level up to its budget (64 levels), and a level
/// takes tens of KiB of stack in a debug build: more than a 2 MiB thread or Windows' 1 MiB main
/// thread holds. So it runs on a thread whose stack fits the deepest document it accepts.
const STACK_BYTES: usize = 64 << 20;

/// Parses one non-empty YAML document with serde-saphyr, plain scalars read by `schema`, on a
/// thread of [`STACK_BYTES`].
pub(super) fn parse(text: &str, schema: Schema) -> Result<Node, ParseError> {
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("yaml".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, || parse_here(text, schema));
        match spawned {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // No thread to be had: the caller's stack it is.
            Err(_) => parse_here(text, schema),
        }
    })
}

fn parse_here(text: &str, schema: Schema) -> Result<Node, ParseError> {
    let mut alias_limits = serde_saphyr::options::AliasLimits::default();
    alias_limits.max_total_replayed_events = super::MAX_ALIAS_EVENTS;
    let mut options = serde_saphyr::options! {
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::Error,
        with_snippet: false,
        budget: serde_saphyr::budget! {
            max_nodes: super::MAX_NODES,
            max_events: super::MAX_EVENTS,
            max_recorded_anchor_events: super::MAX_ALIAS_EVENTS,
            max_total_scalar_bytes: super::MAX_SCALAR_BYTES,
        },
        alias_limits: alias_limits,
    };
    if schema != Schema::Goldgate {
        // `.inf` may be text to the format's loader; it decides below.
        options.non_finite_float_policy = serde_saphyr::NonFiniteFloatPolicy::AsString;
    }
    match serde_saphyr::from_str_with_options::<Spanned<Raw>>(text, options) {
        Ok(spanned) if schema == Schema::Goldgate => spanned.into_node(None),
        Ok(spanned) => spanned.into_node(Some(&Reread {
            schema,
            plain: plain_scalars(text),
        })),
        Err(err) => {
            let (line, column) = err
                .location()
                .map_or((1, 1), |l| (l.line() as u32, l.column() as u32));
            let full = err.to_string();
            // serde-saphyr renders a snippet after the first line; goldgate prints its own place.
            let first = full.lines().next().unwrap_or("invalid YAML");
            let message = first
                .strip_prefix("error: ")
                .unwrap_or(first)
                .split_once(": ")
                .filter(|(place, _)| place.starts_with("line "))
                .map_or(first, |(_, rest)| rest)
                .to_owned();
            let code = if message.contains("duplicate mapping key") {
                Code::E005
            } else {
                Code::E001
            };
            Err(ParseError {
                line,
                column,
                message,
                code,
                cause: Cause::Invalid,
            })
        }
    }
}

/// How a golden's plain scalars are read again: its format's schema, and the text of every
/// plain untagged scalar by the byte offset it starts at.
struct Reread {
    schema: Schema,
    plain: HashMap<usize, String>,
}

/// The plain untagged scalars of a document serde-saphyr accepted, by byte offset.
fn plain_scalars(text: &str) -> HashMap<usize, String> {
    Parser::new(StrInput::new(text))
        .map_while(Result::ok)
        .filter_map(|(event, span)| match event {
            Event::Scalar(value, ScalarStyle::Plain, _, None) => {
                Some((span.start.byte_offset()?, value.into_owned()))
            }
            _ => None,
        })
        .collect()
}

impl Reread {
    /// The value of the scalar serde-saphyr read as `value`, defined at byte `offset`.
    fn value(
        &self,
        value: Value,
        offset: Option<u64>,
        at: (u32, u32),
    ) -> Result<Value, ParseError> {
        // Every schema spells null alike; and an empty null starts where the next scalar
        // does, whose text is not its own.
        if value == Value::Null {
            return Ok(value);
        }
        let Some(text) = offset
            .and_then(|o| usize::try_from(o).ok())
            .and_then(|o| self.plain.get(&o))
        else {
            return Ok(value);
        };
        super::resolve::scalar(text.into(), ScalarStyle::Plain, None, self.schema).map_err(
            |message| ParseError {
                line: at.0,
                column: at.1,
                message,
                code: Code::E001,
                cause: Cause::Invalid,
            },
        )
    }
}

/// The raw serde-saphyr shape: every child wrapped in `Spanned`.
enum Raw {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Spanned<Raw>>),
    Map(Vec<(Spanned<String>, Spanned<Raw>)>),
}

trait IntoNode {
    /// The node, its plain scalars read again by `reread` when given.
    fn into_node(self, reread: Option<&Reread>) -> Result<Node, ParseError>;
}

impl IntoNode for Spanned<Raw> {
    fn into_node(self, reread: Option<&Reread>) -> Result<Node, ParseError> {
        let line = self.referenced.line() as u32;
        let column = self.referenced.column() as u32;
        let value = match self.value {
            Raw::Null => Value::Null,
            Raw::Bool(b) => Value::Bool(b),
            Raw::Int(i) => Value::Int(i),
            Raw::Float(f) => Value::Float(f),
            Raw::Str(s) => Value::Str(s),
            Raw::Seq(items) => Value::Seq(
                items
                    .into_iter()
                    .map(|item| item.into_node(reread))
                    .collect::<Result<_, _>>()?,
            ),
            Raw::Map(entries) => Value::Map(
                entries
                    .into_iter()
                    .map(|(k, v)| {
                        let key = Key {
                            name: k.value,
                            line: k.referenced.line() as u32,
                            column: k.referenced.column() as u32,
                            comments: Vec::new(),
                        };
                        Ok((key, v.into_node(reread)?))
                    })
                    .collect::<Result<_, _>>()?,
            ),
        };
        let value = match reread {
            Some(reread) if !matches!(value, Value::Seq(_) | Value::Map(_)) => {
                let offset = self.defined.span().byte_offset();
                reread.value(value, offset, (line, column))?
            }
            _ => value,
        };
        Ok(Node {
            value,
            line,
            column,
        })
    }
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RawVisitor;
        impl<'de> Visitor<'de> for RawVisitor {
            type Value = Raw;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any YAML value")
            }
            fn visit_unit<E>(self) -> Result<Raw, E> {
                Ok(Raw::Null)
            }
            fn visit_none<E>(self) -> Result<Raw, E> {
                Ok(Raw::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
                Raw::deserialize(d)
            }
            fn visit_bool<E>(self, b: bool) -> Result<Raw, E> {
                Ok(Raw::Bool(b))
            }
            fn visit_i64<E>(self, i: i64) -> Result<Raw, E> {
                Ok(Raw::Int(i))
            }
            fn visit_u64<E>(self, u: u64) -> Result<Raw, E> {
                Ok(i64::try_from(u).map_or(Raw::Float(u as f64), Raw::Int))
            }
            fn visit_f64<E>(self, f: f64) -> Result<Raw, E> {
                Ok(Raw::Float(f))
            }
            fn visit_str<E>(self, s: &str) -> Result<Raw, E> {
                Ok(Raw::Str(s.to_owned()))
            }
            fn visit_string<E>(self, s: String) -> Result<Raw, E> {
                Ok(Raw::Str(s))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Raw::Seq(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(Raw::Map(entries))
            }
        }
        deserializer.deserialize_any(RawVisitor)
    }
}
