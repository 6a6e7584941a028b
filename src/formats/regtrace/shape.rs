//! The expected shape of a Regtrace file, written as data, and one walker that checks a YAML
//! tree against it.
//!
//! Regtrace validates both of its files with zod schemas. Mirroring them as [`Shape`] tables
//! keeps every rule (required keys, types, enums, ranges) in one readable place per file and
//! lets a single walker report all problems with their line, instead of hand-written checks
//! for each of the ~80 keys a `regtrace.config.yaml` may hold. Cross-field rules (unique ids,
//! RAG context, enabled sets) stay in the loaders.

use std::fmt;

use crate::diagnostic::{Code, DiagnosticBuilder, Diagnostics, suggestion};
use crate::yaml::{Fields, Node, Value};

/// What one YAML value must look like.
pub(super) enum Shape {
    Bool,
    /// A YAML string. Numbers are refused like zod refuses them: `version: 1.0` would
    /// otherwise read back as `1`. `non_empty` mirrors zod's `.min(1)`.
    Text {
        non_empty: bool,
    },
    Number(Range),
    /// A string from a fixed set; anything else gets a "did you mean".
    OneOf(&'static [&'static str]),
    /// The inner shape, or `null`.
    Nullable(&'static Shape),
    List {
        item: &'static Shape,
        non_empty: bool,
    },
    /// A mapping with these keys; unknown keys are errors (zod drops them silently, which hides
    /// typos).
    Object(&'static [Field]),
    /// A mapping from names (limited to `keys` when given) to values of one shape.
    Record {
        keys: Option<&'static [&'static str]>,
        value: &'static Shape,
    },
}

/// One key of a [`Shape::Object`].
pub(super) struct Field {
    pub key: &'static str,
    pub required: bool,
    pub shape: Shape,
}

/// A required key.
pub(super) const fn required(key: &'static str, shape: Shape) -> Field {
    Field {
        key,
        required: true,
        shape,
    }
}

/// A key that may be left out (zod's `.optional()` or `.default(..)`).
pub(super) const fn optional(key: &'static str, shape: Shape) -> Field {
    Field {
        key,
        required: false,
        shape,
    }
}

pub(super) const TEXT: Shape = Shape::Text { non_empty: false };
pub(super) const NON_EMPTY_TEXT: Shape = Shape::Text { non_empty: true };

/// Allowed numbers: `min` (exclusive or not) up to `max` inclusive, optionally whole.
#[derive(Clone, Copy)]
pub(super) struct Range {
    min: f64,
    min_exclusive: bool,
    max: f64,
    integer: bool,
}

impl Range {
    /// Scores, thresholds and ratios.
    pub const UNIT: Range = Range::between(0.0, 1.0);
    pub const POSITIVE: Range = Range {
        min: 0.0,
        min_exclusive: true,
        max: f64::INFINITY,
        integer: false,
    };
    pub const POSITIVE_INT: Range = Range::POSITIVE.whole();
    pub const NON_NEGATIVE: Range = Range::at_least(0.0);
    pub const NON_NEGATIVE_INT: Range = Range::NON_NEGATIVE.whole();

    pub const fn between(min: f64, max: f64) -> Range {
        Range {
            min,
            min_exclusive: false,
            max,
            integer: false,
        }
    }

    const fn at_least(min: f64) -> Range {
        Range::between(min, f64::INFINITY)
    }

    pub const fn whole(self) -> Range {
        Range {
            integer: true,
            ..self
        }
    }

    fn contains(self, value: f64) -> bool {
        let above_min = if self.min_exclusive {
            value > self.min
        } else {
            value >= self.min
        };
        above_min && value <= self.max && (!self.integer || value.fract() == 0.0)
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.integer {
            "a whole number"
        } else {
            "a number"
        })?;
        match (self.min_exclusive, self.max.is_finite()) {
            (true, _) => write!(f, " greater than {}", self.min),
            (false, true) => write!(f, " from {} to {}", self.min, self.max),
            (false, false) => write!(f, " of at least {}", self.min),
        }
    }
}

impl Shape {
    /// What the shape expects, for "expected X, found Y" messages.
    fn describe(&self) -> String {
        match self {
            Shape::Bool => "true or false".into(),
            Shape::Text { .. } => "a string".into(),
            Shape::Number(range) => range.to_string(),
            Shape::OneOf(names) => format!("one of: {}", names.join(", ")),
            Shape::Nullable(inner) => format!("{} or null", inner.describe()),
            Shape::List { .. } => "a list".into(),
            Shape::Object(_) | Shape::Record { .. } => "a mapping".into(),
        }
    }

    /// Whether the node has the right YAML type; its content is checked separately.
    fn fits(&self, node: &Node) -> bool {
        match (self, &node.value) {
            (Shape::Nullable(inner), value) => matches!(value, Value::Null) || inner.fits(node),
            (Shape::Bool, Value::Bool(_))
            | (Shape::Text { .. } | Shape::OneOf(_), Value::Str(_))
            | (Shape::Number(_), Value::Int(_) | Value::Float(_))
            | (Shape::List { .. }, Value::Seq(_))
            | (Shape::Object(_) | Shape::Record { .. }, Value::Map(_)) => true,
            _ => false,
        }
    }

    fn wants_text(&self) -> bool {
        match self {
            Shape::Text { .. } | Shape::OneOf(_) => true,
            Shape::Nullable(inner) => inner.wants_text(),
            _ => false,
        }
    }
}

/// Checks `node` against `shape`, reporting every mismatch under the key path `path`.
pub(super) fn check(node: &Node, shape: &Shape, path: &str, diags: &mut Diagnostics) {
    if !shape.fits(node) {
        let builder = wrong_type(node, shape, path, diags);
        if shape.wants_text() && node.scalar_text().is_some() {
            builder.hint("quote the value to make it a string");
        }
        return;
    }
    match (shape, &node.value) {
        (Shape::Nullable(inner), value) if !matches!(value, Value::Null) => {
            check(node, inner, path, diags);
        }
        (Shape::Text { non_empty: true }, Value::Str(text)) if text.is_empty() => {
            out_of_range(node, path, "must not be empty".into(), diags);
        }
        (Shape::Number(range), _) => {
            let value = node.as_f64().unwrap_or_default();
            if !range.contains(value) {
                out_of_range(
                    node,
                    path,
                    format!("expected {range}, found {value}"),
                    diags,
                );
            }
        }
        (Shape::OneOf(names), Value::Str(name)) if !names.contains(&name.as_str()) => {
            diags
                .at(node)
                .error(Code::G107, format!("unknown value `{name}`"))
                .field(path)
                .hint(suggestion(name, names));
        }
        (Shape::List { item, non_empty }, Value::Seq(items)) => {
            if *non_empty && items.is_empty() {
                out_of_range(node, path, "expected at least one item".into(), diags);
            }
            for (index, element) in items.iter().enumerate() {
                check(element, item, &format!("{path}[{index}]"), diags);
            }
        }
        (Shape::Object(fields), _) => check_object(node, fields, path, diags),
        (Shape::Record { keys, value }, Value::Map(entries)) => {
            for (key, element) in entries {
                let key_path = join(path, &key.name);
                if let Some(known) = keys.filter(|known| !known.contains(&key.name.as_str())) {
                    diags
                        .at(key)
                        .error(Code::G107, format!("unknown key `{}`", key.name))
                        .field(key_path.as_str())
                        .hint(suggestion(&key.name, known));
                }
                check(element, value, &key_path, diags);
            }
        }
        _ => {}
    }
}

fn check_object(node: &Node, fields: &[Field], path: &str, diags: &mut Diagnostics) {
    let Some(mut walker) = Fields::of(node, path, diags) else {
        return;
    };
    for field in fields {
        let value = if field.required {
            walker.require(field.key, &field.shape.describe(), diags)
        } else {
            walker.take(field.key)
        };
        let Some(value) = value else { continue };
        let key_path = walker.path_of(field.key);
        if value.is_null() && !field.required && !matches!(field.shape, Shape::Nullable(_)) {
            // `key: null` is not "left out" for zod: say how to get the default.
            wrong_type(value, &field.shape, &key_path, diags)
                .hint("leave the key out to get the default");
            continue;
        }
        check(value, &field.shape, &key_path, diags);
    }
    walker.finish(diags);
}

fn wrong_type<'d>(
    node: &Node,
    shape: &Shape,
    path: &str,
    diags: &'d mut Diagnostics,
) -> DiagnosticBuilder<'d> {
    node.wrong_type(&shape.describe(), diags).field(path)
}

fn out_of_range(node: &Node, path: &str, message: String, diags: &mut Diagnostics) {
    diags.at(node).error(Code::G111, message).field(path);
}

/// `parent.key`, or `key` at the top level.
fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

/// The node at `keys` below `node`, for reading values the shape check has already vetted.
pub(super) fn lookup<'a>(node: &'a Node, keys: &[&str]) -> Option<&'a Node> {
    keys.iter().try_fold(node, |node, key| node.get(key))
}

/// A boolean node's value.
pub(super) fn flag(node: &Node) -> Option<bool> {
    match node.value {
        Value::Bool(value) => Some(value),
        _ => None,
    }
}

/// Puts the diagnostics recorded since `start` in file order: the shape is walked in schema
/// order, but readers fix a file top to bottom.
pub(super) fn sort_from(diags: &mut Diagnostics, start: usize) {
    diags.items[start..].sort_by_key(|d| (d.location.line, d.location.column));
}
