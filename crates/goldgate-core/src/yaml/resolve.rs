//! What a scalar means: a plain one by the schema of the file's reader (goldgate's own, or a
//! golden's format's loader), a quoted or block one as text, and a tagged one by its tag.
//!
//! goldgate's own schema is the one serde-saphyr, the parser goldgate used before, reads: YAML
//! 1.2 numbers with YAML 1.1 booleans (`yes`, `off`). The tests hold the tree to what
//! serde-saphyr builds.

use std::borrow::Cow;

use base64::Engine as _;
use granit_parser::{ScalarStyle, Tag};

use super::Value;
use super::scalars::{Reading, Schema};

/// The namespace of the tags YAML defines (`!!str` is `tag:yaml.org,2002:str`).
const YAML_TAGS: &str = "tag:yaml.org,2002:";

/// The types of YAML's namespace goldgate reads a tag of.
const CORE: [&str; 8] = [
    "str", "int", "float", "bool", "null", "binary", "map", "seq",
];

/// What a tag asks of its node.
enum Tagged {
    /// No tag: a plain scalar reads by the file's schema.
    Untagged,
    /// The non-specific `!`: a scalar is text.
    Text,
    /// One of YAML's own types (`str`, `int`, ...).
    Core(String),
}

/// What `tag` asks; any tag but YAML's own types and `!` is refused, since goldgate cannot
/// tell what it would mean (`!include`, `!Ref`): read as text, the golden would check
/// something its author did not write. PyYAML's `safe_load` and js-yaml refuse them too.
fn tagged(tag: Option<&Tag>) -> Result<Tagged, String> {
    let Some(tag) = tag else {
        return Ok(Tagged::Untagged);
    };
    let core = tag.suffix_in_namespace(YAML_TAGS);
    if let Some(name) = &core
        && CORE.contains(&name.as_ref())
    {
        return Ok(Tagged::Core(name.clone().into_owned()));
    }
    if tag
        .suffix_in_namespace("!")
        .is_some_and(|suffix| suffix.is_empty() || suffix == "!")
    {
        return Ok(Tagged::Text);
    }
    let written = tag.original();
    Err(if core.is_some_and(|name| name == "timestamp") {
        format!("goldgate keeps dates as text: remove the tag `{written}`")
    } else {
        format!(
            "goldgate reads no tag `{written}`: remove it (it reads YAML's `!!str`, `!!int`, \
             `!!float`, `!!bool`, `!!null`, `!!binary`, `!!map` and `!!seq`)"
        )
    })
}

/// The value of a scalar, or why it has none (the caller places the message).
pub(super) fn scalar(
    value: Cow<'_, str>,
    style: ScalarStyle,
    tag: Option<&Tag>,
    schema: Schema,
) -> Result<Value, String> {
    match tagged(tag)? {
        Tagged::Untagged if style == ScalarStyle::Plain => plain(value, schema),
        Tagged::Untagged | Tagged::Text => Ok(Value::Str(value.into_owned())),
        Tagged::Core(name) => core(&value, &name, tag.map_or_else(String::new, Tag::original)),
    }
}

/// Whether a tag fits a collection: none, `!`, or YAML's own `map` or `seq` on a mapping or a
/// list.
pub(super) fn collection(tag: Option<&Tag>, is_map: bool) -> Result<(), String> {
    match tagged(tag)? {
        Tagged::Untagged | Tagged::Text => Ok(()),
        Tagged::Core(name) if name == if is_map { "map" } else { "seq" } => Ok(()),
        Tagged::Core(_) => Err(format!(
            "the tag `{}` does not fit {}",
            tag.map_or_else(String::new, Tag::original),
            if is_map { "a mapping" } else { "a list" }
        )),
    }
}

/// Why a null scalar cannot be a key.
pub(super) const NULL_KEY: &str = "a mapping key may not be null";

/// Whether a scalar may be a mapping key, which is text: untagged, `!` or `!!str`, and not
/// null.
pub(super) fn key(name: &str, style: ScalarStyle, tag: Option<&Tag>) -> Result<(), String> {
    match tagged(tag)? {
        Tagged::Core(core) if core != "str" => Err(format!(
            "a mapping key must be text, not tagged `{}`",
            tag.map_or_else(String::new, Tag::original)
        )),
        Tagged::Untagged if style == ScalarStyle::Plain && is_null(name) => {
            Err(NULL_KEY.to_owned())
        }
        _ => Ok(()),
    }
}

/// A plain untagged scalar read by `schema`.
fn plain(value: Cow<'_, str>, schema: Schema) -> Result<Value, String> {
    let resolved = match schema {
        Schema::Goldgate => goldgate(&value),
        schema => value_of(schema.read(&value)),
    };
    match resolved {
        Some(Resolved::Value(value)) => Ok(value),
        Some(Resolved::Text) => Ok(Value::Str(value.into_owned())),
        None if schema == Schema::Goldgate => Err(format!(
            "`{value}` is not a finite number, which JSON cannot hold; quote it to keep the text"
        )),
        None => Err(format!(
            "`{value}` is {} to {}, which JSON cannot hold; quote it to keep the text",
            schema.read(&value).describe(),
            schema.describe()
        )),
    }
}

/// A scalar's value, or that it is its own text.
enum Resolved {
    Value(Value),
    Text,
}

/// The tree's value for a reading of a plain scalar; `None` for a non-finite float.
fn value_of(reading: Reading) -> Option<Resolved> {
    Some(Resolved::Value(match reading {
        Reading::Null => Value::Null,
        Reading::Bool(b) => Value::Bool(b),
        Reading::Int(i) => Value::Int(i),
        Reading::Float(f) if f.is_finite() => Value::Float(f),
        Reading::Float(_) => return None,
        Reading::Date | Reading::Text => return Some(Resolved::Text),
    }))
}

/// A plain scalar by goldgate's own schema: null, a YAML 1.1 boolean, an integer, a float, or
/// else text. `None` for a non-finite float.
fn goldgate(value: &str) -> Option<Resolved> {
    if is_null(value) {
        return Some(Resolved::Value(Value::Null));
    }
    let text = trim(value);
    if let Some(b) = boolean(text) {
        return Some(Resolved::Value(Value::Bool(b)));
    }
    if let Some(number) = int(text) {
        return Some(Resolved::Value(number));
    }
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    if matches!(
        unsigned,
        ".inf" | ".Inf" | ".INF" | ".nan" | ".NaN" | ".NAN"
    ) {
        return None;
    }
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() => Some(Resolved::Value(Value::Float(f))),
        // A numeral that overflows (`1e999`) is a non-finite float; `inf` or `nan` is text.
        Ok(_) if unsigned.starts_with(|c: char| c.is_ascii_digit()) => None,
        _ => Some(Resolved::Text),
    }
}

/// An integer as an `i64`, or as a float when it is a `u64` past `i64`; `None` otherwise.
fn int(text: &str) -> Option<Value> {
    match integer(text)? {
        (true, magnitude) => {
            let negative = i64::try_from(-i128::try_from(magnitude).ok()?).ok()?;
            Some(Value::Int(negative))
        }
        (false, magnitude) => {
            let u = u64::try_from(magnitude).ok()?;
            Some(i64::try_from(u).map_or(Value::Float(u as f64), Value::Int))
        }
    }
}

/// A scalar tagged with one of YAML's own types.
fn core(value: &str, name: &str, written: String) -> Result<Value, String> {
    let text = trim(value);
    let refused = |what: &str| format!("`{value}` is not {what}, as its tag `{written}` says");
    match name {
        "str" => Ok(Value::Str(value.to_owned())),
        "null" if is_null(value) => Ok(Value::Null),
        "null" => Err(refused("null")),
        "bool" => boolean(text)
            .map(Value::Bool)
            .ok_or_else(|| refused("a boolean")),
        "int" => int(text).ok_or_else(|| refused("an integer")),
        "float" => match int(text) {
            Some(Value::Int(i)) => Ok(Value::Float(i as f64)),
            Some(other) => Ok(other),
            None => match text.parse::<f64>() {
                Ok(f) if f.is_finite() => Ok(Value::Float(f)),
                _ => Err(refused("a finite number")),
            },
        },
        "binary" => {
            let packed: String = value.split_whitespace().collect();
            base64::engine::general_purpose::STANDARD
                .decode(packed)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .map(Value::Str)
                .ok_or_else(|| refused("base64 of UTF-8 text"))
        }
        "map" | "seq" => Err(format!("the tag `{written}` does not fit a scalar")),
        _ => unreachable!("`tagged` refuses other names"),
    }
}

/// How a mapping key is compared with its siblings when that is not by its text: a plain
/// integer key by its value, so that `0x1` repeats `1`. `None` when the text is the identity.
pub(super) fn key_identity(name: &str, style: ScalarStyle) -> Option<String> {
    if style != ScalarStyle::Plain {
        return None;
    }
    let (negative, magnitude) = integer(trim(name))?;
    let sign = if negative && magnitude != 0 { "-" } else { "" };
    let canonical = format!("{sign}{magnitude}");
    (canonical != name).then_some(canonical)
}

fn is_null(plain: &str) -> bool {
    matches!(plain, "" | "~" | "null" | "Null" | "NULL")
}

/// The padding trimmed before a scalar is read as a boolean or number.
fn trim(text: &str) -> &str {
    text.trim_matches([' ', '\t', '\r', '\n'])
}

/// YAML 1.1 booleans, any case.
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

/// A YAML 1.2 integer: an optional sign, then decimal without a leading zero, or `0x`, `0o`
/// or `0b` digits, with single `_` between digits. Answers the sign and the magnitude.
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
