//! The [`Node`] tree built from granit-parser's events, in one pass and without recursion:
//! anchors and aliases, merge keys (`<<`), tags, duplicate keys, and the limits that keep a
//! hostile file small and quick to refuse (nodes, nesting, text and alias replays).
//!
//! A replayed alias is a copy placed where the alias is written, as serde-saphyr placed it;
//! merged entries come after a mapping's own, which win over them.

use std::borrow::Cow;
use std::collections::HashMap;

use granit_parser::{ErrorKind, Event, ScalarStyle, ScanError, Span, Tag};

use super::ambiguous::{self, Ambiguous};
use super::scalars::Schema;
use super::{Cause, Key, Node, ParseError, Value, resolve};
use crate::diagnostic::Code;

mod events;
mod mapping;

use mapping::{Mapping, Pending};

/// The deepest nesting of lists and mappings a document may have.
pub(super) const MAX_DEPTH: usize = 64;

/// Builds the tree of a non-empty document with plain scalars read by `schema`; with
/// `loaders`, also the plain values they read differently (in the same pass: a second parse
/// would double a golden's load time).
pub(super) fn parse(
    text: &str,
    schema: Schema,
    loaders: Option<[Schema; 3]>,
) -> Result<(Node, Vec<Ambiguous>), ParseError> {
    let mut builder = Builder {
        schema,
        loaders,
        ..Builder::default()
    };
    // A block scalar cut off by the end of the file ends without a line feed to PyYAML (SCRAPI's
    // loader); js-yaml and the `yaml` package add one, as the YAML test suite does.
    let options = granit_parser::options! {
        block_scalar_eof_without_line_feed: schema == Schema::PyYaml,
    };
    events::each(text, options, |item| {
        let (event, span) = item.map_err(syntax_error)?;
        builder.event(event, &span)
    })?;
    // The parser ends every stream it does not refuse, which sets the root.
    let root = builder.root.unwrap_or(Node {
        value: Value::Null,
        line: 1,
        column: 1,
    });
    Ok((root, builder.ambiguous))
}

fn syntax_error(err: ScanError) -> ParseError {
    let mark = err.marker();
    let at = (mark.line() as u32, mark.col() as u32 + 1);
    match err.kind() {
        ErrorKind::MappingValueNotAllowed => {
            located(at, err.info(), Code::E001, Cause::ColonInPlainScalar)
        }
        ErrorKind::UnknownAnchor => {
            refuse(at, "an alias names no anchor defined before it".to_owned())
        }
        _ => refuse(at, err.info()),
    }
}

/// A YAML error at `at`.
fn refuse(at: (u32, u32), message: String) -> ParseError {
    located(at, message, Code::E001, Cause::Invalid)
}

/// One of goldgate's limits on a file, met at `at`.
fn past_limit(at: (u32, u32), message: String) -> ParseError {
    located(at, message, Code::E001, Cause::Limit)
}

/// An error at `at`, whose message ends with the place: a diagnostic's prefix names the line
/// only.
fn located((line, column): (u32, u32), message: String, code: Code, cause: Cause) -> ParseError {
    ParseError {
        line,
        column,
        message: format!("{message} at line {line}, column {column}"),
        code,
        cause,
    }
}

/// Line and column (1-based, in characters) of the event's start.
fn position(span: &Span) -> (u32, u32) {
    (span.start.line() as u32, span.start.col() as u32 + 1)
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
    anchors: HashMap<usize, Anchored>,
    spent: Size,
    /// Events recorded under anchors, and replayed by aliases: each at most
    /// [`super::MAX_ALIAS_EVENTS`].
    recorded: usize,
    replayed: usize,
}

struct Open {
    line: u32,
    column: u32,
    anchor: usize,
    container: Container,
}

enum Container {
    Seq(Vec<Node>),
    Map(Mapping),
}

/// A node an anchor names, and what replaying it costs.
struct Anchored {
    node: Node,
    size: Size,
    /// A scalar as written, the name an alias to it gives a key (`*port: ...`).
    text: Option<String>,
}

/// What a document holds, for its limits.
#[derive(Clone, Copy, Default)]
struct Size {
    nodes: usize,
    events: usize,
    scalar_bytes: usize,
    /// Levels of lists and mappings (0 for a scalar).
    height: usize,
}

impl Size {
    fn of(node: &Node) -> Size {
        let mut size = Size::default();
        let mut stack = vec![(node, 0)];
        while let Some((node, depth)) = stack.pop() {
            size.nodes += 1;
            size.events += 1;
            match &node.value {
                Value::Str(text) => size.scalar_bytes += text.len(),
                Value::Seq(items) => {
                    size.events += 1;
                    size.height = size.height.max(depth + 1);
                    stack.extend(items.iter().map(|item| (item, depth + 1)));
                }
                Value::Map(entries) => {
                    size.events += 1;
                    size.height = size.height.max(depth + 1);
                    for (key, value) in entries {
                        size.nodes += 1;
                        size.events += 1;
                        size.scalar_bytes += key.name.len();
                        stack.push((value, depth + 1));
                    }
                }
                Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) => {}
            }
        }
        size
    }
}

impl Builder {
    /// Takes one event; `true` at the end of the stream.
    fn event(&mut self, event: Event<'_>, span: &Span) -> Result<bool, ParseError> {
        self.spent.events += 1;
        if self.spent.events > super::MAX_EVENTS {
            let message = format!("more than {} YAML events", super::MAX_EVENTS);
            return Err(past_limit(position(span), message));
        }
        let opens_node = matches!(
            event,
            Event::Scalar(..)
                | Event::SequenceStart(..)
                | Event::MappingStart(..)
                | Event::Alias(_)
        );
        if opens_node && self.root.is_some() {
            let message = "a second YAML document in the file; goldgate reads one a file, so \
                 split them into files of their own";
            return Err(refuse(position(span), message.to_owned()));
        }
        match event {
            Event::StreamStart
            | Event::DocumentStart(..)
            | Event::DocumentEnd
            | Event::Anchor(..) => {}
            Event::StreamEnd => {
                // A stream of markers alone is a null document, where the stream ends.
                let (line, column) = position(span);
                self.root.get_or_insert(Node {
                    value: Value::Null,
                    line,
                    column,
                });
                return Ok(true);
            }
            Event::Scalar(value, style, anchor, tag) => {
                self.scalar(value, style, anchor, tag.as_deref(), span)?;
            }
            Event::SequenceStart(_, anchor, tag) => {
                resolve::collection(tag.as_deref(), false)
                    .map_err(|message| refuse(position(span), message))?;
                self.open(Container::Seq(Vec::new()), anchor, span)?;
            }
            Event::MappingStart(_, anchor, tag) => {
                resolve::collection(tag.as_deref(), true)
                    .map_err(|message| refuse(position(span), message))?;
                self.open(Container::Map(Mapping::default()), anchor, span)?;
            }
            Event::SequenceEnd | Event::MappingEnd => self.close()?,
            Event::Alias(id) => self.alias(id, span)?,
            Event::UnresolvedAlias(name) => {
                let message = format!("the alias `*{name}` names no anchor defined before it");
                return Err(refuse(position(span), message));
            }
            // A kind of event newer than this builder: refused rather than skipped.
            other => {
                let message = format!("a YAML construct goldgate cannot read ({other:?})");
                return Err(refuse(position(span), message));
            }
        }
        Ok(false)
    }

    fn count(&mut self, size: Size, at: (u32, u32)) -> Result<(), ParseError> {
        self.spent.nodes += size.nodes;
        self.spent.scalar_bytes += size.scalar_bytes;
        if self.spent.nodes > super::MAX_NODES {
            return Err(past_limit(at, over_nodes()));
        }
        if self.spent.scalar_bytes > super::MAX_SCALAR_BYTES {
            return Err(past_limit(
                at,
                format!(
                    "its text, aliases expanded, is more than {} MiB",
                    super::MAX_SCALAR_BYTES / (1024 * 1024)
                ),
            ));
        }
        Ok(())
    }

    fn awaits_key(&self) -> bool {
        matches!(
            self.stack.last(),
            Some(Open {
                container: Container::Map(Mapping { pending: None, .. }),
                ..
            })
        )
    }

    fn scalar(
        &mut self,
        value: Cow<'_, str>,
        style: ScalarStyle,
        anchor: usize,
        tag: Option<&Tag>,
        span: &Span,
    ) -> Result<(), ParseError> {
        let at = position(span);
        let size = Size {
            nodes: 1,
            scalar_bytes: value.len(),
            ..Size::default()
        };
        self.count(size, at)?;
        let written = (anchor != 0).then(|| value.as_ref().to_owned());
        if self.awaits_key() {
            resolve::key(&value, style, tag).map_err(|message| refuse(at, message))?;
            if let Some(text) = written {
                let node = Node {
                    value: Value::Str(text.clone()),
                    line: at.0,
                    column: at.1,
                };
                self.record(anchor, &node, Some(text))?;
            }
            let merge = style == ScalarStyle::Plain && tag.is_none() && value == "<<";
            return self.key(value, style, merge, at);
        }
        if let (Some(loaders), ScalarStyle::Plain, None) = (self.loaders, style, tag) {
            self.ambiguous.extend(ambiguous::check(&value, loaders, at));
        }
        let value = resolve::scalar(value, style, tag, self.schema)
            .map_err(|message| refuse(at, message))?;
        let node = Node {
            value,
            line: at.0,
            column: at.1,
        };
        if let Some(text) = written {
            self.record(anchor, &node, Some(text))?;
        }
        self.push(node)
    }

    /// Takes a scalar as the key of the innermost mapping, or as a merge (`<<`).
    fn key(
        &mut self,
        name: Cow<'_, str>,
        style: ScalarStyle,
        merge: bool,
        at: (u32, u32),
    ) -> Result<(), ParseError> {
        let Some(Open {
            container: Container::Map(mapping),
            ..
        }) = self.stack.last_mut()
        else {
            unreachable!("a key is awaited only in a mapping");
        };
        if merge {
            mapping.pending = Some(Pending::Merge);
            return Ok(());
        }
        if let Some(identity) = resolve::key_identity(&name, style) {
            mapping.identities.push((mapping.entries.len(), identity));
        }
        mapping.pending = Some(Pending::Key(Key {
            name: name.into_owned(),
            line: at.0,
            column: at.1,
            comments: Vec::new(),
        }));
        Ok(())
    }

    fn open(&mut self, container: Container, anchor: usize, span: &Span) -> Result<(), ParseError> {
        let at = position(span);
        self.count(
            Size {
                nodes: 1,
                ..Size::default()
            },
            at,
        )?;
        if self.awaits_key() {
            let kind = match container {
                Container::Seq(_) => "a list",
                Container::Map(_) => "a mapping",
            };
            return Err(refuse(at, not_a_key(kind)));
        }
        if self.stack.len() >= MAX_DEPTH {
            return Err(past_limit(at, nested_too_deep()));
        }
        self.stack.push(Open {
            line: at.0,
            column: at.1,
            anchor,
            container,
        });
        Ok(())
    }

    fn close(&mut self) -> Result<(), ParseError> {
        let open = self
            .stack
            .pop()
            .expect("the parser closes only what it opened");
        let value = match open.container {
            Container::Seq(items) => Value::Seq(items),
            Container::Map(mapping) => Value::Map(mapping.finish()?),
        };
        let node = Node {
            value,
            line: open.line,
            column: open.column,
        };
        if open.anchor != 0 {
            self.record(open.anchor, &node, None)?;
        }
        self.push(node)
    }

    /// Keeps a copy of a finished node under its anchor, and the scalar's text as written.
    fn record(
        &mut self,
        anchor: usize,
        node: &Node,
        text: Option<String>,
    ) -> Result<(), ParseError> {
        let size = Size::of(node);
        self.recorded += size.events;
        if self.recorded > super::MAX_ALIAS_EVENTS {
            return Err(past_limit((node.line, node.column), over_aliases()));
        }
        let anchored = Anchored {
            node: node.clone(),
            size,
            text,
        };
        self.anchors.insert(anchor, anchored);
        Ok(())
    }

    fn alias(&mut self, id: usize, span: &Span) -> Result<(), ParseError> {
        let at = position(span);
        let Some(anchored) = self.anchors.get(&id) else {
            return Err(refuse(
                at,
                "an alias inside the node its anchor names (a cycle)".to_owned(),
            ));
        };
        let size = anchored.size;
        self.replayed += size.events;
        if self.replayed > super::MAX_ALIAS_EVENTS {
            return Err(past_limit(at, over_aliases()));
        }
        self.spent.events += size.events;
        if self.stack.len() + size.height > MAX_DEPTH {
            return Err(past_limit(at, nested_too_deep()));
        }
        if self.awaits_key() {
            // A key names its entry by the scalar's text as written: `*x` of `&x 0x1` is `0x1`.
            let name = match (&anchored.node.value, &anchored.text) {
                (Value::Null, _) => return Err(refuse(at, resolve::NULL_KEY.to_owned())),
                (_, Some(text)) => text.clone(),
                _ => return Err(refuse(at, not_a_key(anchored.node.kind()))),
            };
            self.count(size, at)?;
            return self.key(Cow::Owned(name), ScalarStyle::Plain, false, at);
        }
        let mut node = anchored.node.clone();
        self.count(size, at)?;
        relocate(&mut node, at);
        self.push(node)
    }

    /// Hands a finished node to the collection it belongs to, or makes it the root.
    fn push(&mut self, node: Node) -> Result<(), ParseError> {
        match self.stack.last_mut() {
            Some(Open {
                container: Container::Seq(items),
                ..
            }) => items.push(node),
            Some(Open {
                container: Container::Map(mapping),
                ..
            }) => match mapping.pending.take() {
                Some(Pending::Key(key)) => mapping.entries.push((key, node)),
                Some(Pending::Merge) => mapping.merge(node)?,
                None => unreachable!("a scalar key is taken by `key`, a collection refused"),
            },
            None => self.root = Some(node),
        }
        Ok(())
    }
}

/// Places a replayed copy where its alias is written, every node and key of it.
fn relocate(node: &mut Node, (line, column): (u32, u32)) {
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        (node.line, node.column) = (line, column);
        match &mut node.value {
            Value::Seq(items) => stack.extend(items.iter_mut()),
            Value::Map(entries) => {
                for (key, value) in entries.iter_mut() {
                    (key.line, key.column) = (line, column);
                    stack.push(value);
                }
            }
            _ => {}
        }
    }
}

fn not_a_key(kind: &str) -> String {
    format!("a mapping key must be text, not {kind}")
}

fn nested_too_deep() -> String {
    format!("nested deeper than {MAX_DEPTH} levels")
}

fn over_nodes() -> String {
    format!("more than {} nodes", super::MAX_NODES)
}

fn over_aliases() -> String {
    format!(
        "anchors and aliases expand to more than {} events",
        super::MAX_ALIAS_EVENTS
    )
}

#[cfg(test)]
mod tests;
