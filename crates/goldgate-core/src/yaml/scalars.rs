//! What an untagged plain scalar means, by the rules of the loader that reads a format.
//!
//! YAML leaves the meaning of plain scalars (`yes`, `N`, `010`, `1e3`) to a schema, and each
//! format's own tool reads its files with a different one. A golden must mean here what it
//! means there, or a value that passes in its tool fails in goldgate: so the format picks a
//! [`Schema`] at the edge and the YAML layer resolves plain scalars by it. Quoted and block
//! scalars are always text; only plain ones resolve.
//!
//! The rules are the reference loaders' own, copied from their sources (the regular
//! expressions below are theirs, character for character, with Python's verbose layout undone):
//! - PyYAML `safe_load` (`lib/yaml/resolver.py` and `constructor.py`, yaml/pyyaml d51d8a1): the
//!   YAML 1.1 resolver, whose booleans are `yes/no/on/off/true/false` in three casings only (not
//!   `y`, `n` or `yEs`), whose floats need a dot (`1e3` is text, `1.0e+3` a float), with
//!   octal `010`, binary `0b1`, `_` separators and base-60 `1:30`.
//! - js-yaml 4 `load` with its default schema (`lib/type/*.js`, nodeca/js-yaml 4.1.1): the
//!   YAML 1.2 core schema plus `_` separators, `0b`/`0o`/`0x` with a sign, and timestamps.
//! - the `yaml` npm package (eemeli/yaml v2, `src/schema/core/*.ts`), whose default is the YAML
//!   1.2 core schema: `0o17` and `0x1F`, `1e3`, `010` in decimal, no `_`, no timestamps;
//!   under a `%YAML 1.1` directive its `yaml-1.1` schema (`src/schema/yaml-1.1/*.ts`, bf03c0c),
//!   as `Document.setSchema('1.1')` picks it: `y`/`n` booleans too, octal `010`, `_`, base 60,
//!   `1e3`, and timestamps.

use std::sync::LazyLock;

use regex::Regex;

/// The rules plain scalars resolve by, chosen by the format a file is in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Schema {
    /// goldgate's own files (`goldgate.yaml`, thresholds, tools): as serde-saphyr reads them.
    #[default]
    Goldgate,
    /// PyYAML `safe_load`, YAML 1.1: SCRAPI goldens, turn evals, tool tests, simulations.
    PyYaml,
    /// js-yaml 4 `load`, its default schema: Regtrace golden sets and config.
    JsYaml,
    /// The `yaml` npm package, YAML 1.2 core schema: gecx scenarios.
    YamlCore,
    /// The `yaml` npm package's `yaml-1.1` schema, which it reads a document by under a
    /// `%YAML 1.1` directive: a gecx scenario that starts with one.
    Yaml11,
}

impl Schema {
    /// The loaders goldens are read by, in the order lint messages name them.
    pub(crate) const REFERENCE: [Schema; 3] = [Schema::PyYaml, Schema::JsYaml, Schema::YamlCore];

    /// The loader and the formats it reads, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Schema::Goldgate => "goldgate's own files",
            Schema::PyYaml => "PyYAML (SCRAPI)",
            Schema::JsYaml => "js-yaml (Regtrace)",
            Schema::YamlCore => "the yaml package (gecx)",
            Schema::Yaml11 => "the yaml package under `%YAML 1.1` (gecx)",
        }
    }

    /// The schema a document of `text` is read by: the `yaml` package switches from its core
    /// schema to `yaml-1.1` when the document opens with a `%YAML 1.1` directive. PyYAML reads
    /// YAML 1.1 anyway, and js-yaml and serde-saphyr keep their schema under any version.
    pub(crate) fn for_document(self, text: &str) -> Schema {
        if self != Schema::YamlCore {
            return self;
        }
        // Directives come before the document's first content: only comments and blank lines
        // may precede them.
        let directive = text
            .lines()
            .map(str::trim_end)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .take_while(|line| line.starts_with('%'))
            .any(|line| {
                let mut words = line.split_whitespace();
                words.next() == Some("%YAML") && words.next() == Some("1.1")
            });
        if directive { Schema::Yaml11 } else { self }
    }

    /// What the plain scalar `text` reads as under these rules. Not for [`Schema::Goldgate`],
    /// whose rules (serde-saphyr's) are in `resolve`.
    pub fn read(self, text: &str) -> Reading {
        if plainly_text(text) {
            return Reading::Text;
        }
        self.read_by_patterns(text)
    }

    fn read_by_patterns(self, text: &str) -> Reading {
        match self {
            Schema::PyYaml => pyyaml(text),
            Schema::JsYaml => js_yaml(text),
            Schema::YamlCore | Schema::Goldgate => yaml_core(text),
            Schema::Yaml11 => yaml_11(text),
        }
    }
}

/// Whether `text` is text under every schema, told without their patterns: most plain scalars
/// of a golden are sentences or ids. The patterns for anything else (null, booleans, numbers,
/// dates) start with a digit, a sign, `.` or `~`, or are one of [`WORDS`], or an exponent
/// alone (`e5`: a float to the yaml package under YAML 1.1).
fn plainly_text(text: &str) -> bool {
    let exponent = |rest: &str| {
        let digits = rest.strip_prefix(['-', '+']).unwrap_or(rest);
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    };
    match text.as_bytes().first() {
        None | Some(b'~' | b'+' | b'-' | b'.' | b'0'..=b'9') => false,
        Some(b'e' | b'E') => !exponent(&text[1..]),
        Some(_) => !WORDS.contains(&text),
    }
}

/// The nulls and booleans of every schema: PyYAML's, js-yaml's, the yaml package's core and
/// YAML 1.1 ones.
const WORDS: [&str; 26] = [
    "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", "y", "Y", "yes",
    "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", "~",
];

/// A plain scalar's meaning under one schema.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reading {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// A date or timestamp (PyYAML's `date`/`datetime`, js-yaml's `Date`); goldgate keeps the
    /// text, which is what the value is written as in JSON.
    Date,
    Text,
}

impl Reading {
    /// Whether two loaders agree: numbers by value (JavaScript has no integer type), NaN
    /// agreeing with NaN.
    pub(crate) fn agrees_with(self, other: Reading) -> bool {
        match (self.number(), other.number()) {
            (Some(a), Some(b)) => a == b || (a.is_nan() && b.is_nan()),
            _ => self == other,
        }
    }

    fn number(self) -> Option<f64> {
        match self {
            Reading::Int(i) => Some(i as f64),
            Reading::Float(f) => Some(f),
            _ => None,
        }
    }

    /// The reading in words, for lint messages.
    pub fn describe(self) -> String {
        match self {
            Reading::Null => "null".to_owned(),
            Reading::Bool(b) => format!("the boolean {b}"),
            Reading::Int(i) => format!("the number {i}"),
            Reading::Float(f) => format!("the number {f}"),
            Reading::Date => "a date".to_owned(),
            Reading::Text => "text".to_owned(),
        }
    }
}

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a reference loader's pattern compiles")
}

// PyYAML, lib/yaml/resolver.py (Resolver.add_implicit_resolver).
static PY_BOOL: LazyLock<Regex> = LazyLock::new(|| {
    regex("^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$")
});
static PY_FLOAT: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?",
        r"|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?",
        r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*",
        r"|[-+]?\.(?:inf|Inf|INF)",
        r"|\.(?:nan|NaN|NAN))$",
    ))
});
static PY_INT: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"^(?:[-+]?0b[0-1_]+",
        r"|[-+]?0[0-7_]+",
        r"|[-+]?(?:0|[1-9][0-9_]*)",
        r"|[-+]?0x[0-9a-fA-F_]+",
        r"|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$",
    ))
});
static PY_NULL: LazyLock<Regex> = LazyLock::new(|| regex("^(?:~|null|Null|NULL|)$"));
static PY_TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]",
        r"|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?",
        r"(?:[Tt]|[ \t]+)[0-9][0-9]?",
        r":[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?",
        r"(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$",
    ))
});

/// PyYAML's resolver, then its constructors (`construct_yaml_int`, `construct_yaml_float`).
fn pyyaml(text: &str) -> Reading {
    if PY_NULL.is_match(text) {
        Reading::Null
    } else if PY_BOOL.is_match(text) {
        // construct_yaml_bool: `bool_values[value.lower()]`.
        Reading::Bool(matches!(
            text.to_ascii_lowercase().as_str(),
            "yes" | "true" | "on"
        ))
    } else if PY_FLOAT.is_match(text) {
        let (negative, value) = sign(&text.replace('_', "").to_ascii_lowercase());
        let magnitude = match value.as_str() {
            ".inf" => f64::INFINITY,
            ".nan" => return Reading::Float(f64::NAN),
            v if v.contains(':') => base_60(v.split(':').map(|p| p.parse::<f64>().ok())),
            v => v.parse().unwrap_or(f64::NAN),
        };
        Reading::Float(if negative { -magnitude } else { magnitude })
    } else if PY_INT.is_match(text) {
        let (negative, value) = sign(&text.replace('_', ""));
        if value.contains(':') {
            let parts = value.split(':').map(|p| p.parse::<f64>().ok());
            let magnitude = base_60(parts);
            return Reading::Int(if negative { -magnitude } else { magnitude } as i64);
        }
        let (radix, digits) = match value.get(..2) {
            Some("0b") => (2, &value[2..]),
            Some("0x") => (16, &value[2..]),
            _ if value.starts_with('0') => (8, value.as_str()),
            _ => (10, value.as_str()),
        };
        // `0b_` passes the pattern but has no digits: PyYAML fails on it; keep the text.
        if digits.is_empty() {
            return Reading::Text;
        }
        integer(negative, digits, radix, false)
    } else if PY_TIMESTAMP.is_match(text) {
        Reading::Date
    } else {
        Reading::Text
    }
}

/// `value` without its sign, and whether the sign was `-`.
fn sign(value: &str) -> (bool, String) {
    match value.strip_prefix('-') {
        Some(rest) => (true, rest.to_owned()),
        None => (false, value.strip_prefix('+').unwrap_or(value).to_owned()),
    }
}

/// A base-60 number (`1:30` is 90) from its parts, most significant first.
fn base_60(parts: impl DoubleEndedIterator<Item = Option<f64>>) -> f64 {
    let mut value = 0.0;
    let mut base = 1.0;
    for part in parts.rev() {
        value += part.unwrap_or(f64::NAN) * base;
        base *= 60.0;
    }
    value
}

/// The integer `digits` (valid in `radix`, no `_`) as the loader holds it: past `i64` (or,
/// in JavaScript, past the 2^53 a double holds exactly) it is the nearest double.
fn integer(negative: bool, digits: &str, radix: u32, javascript: bool) -> Reading {
    const EXACT_IN_A_DOUBLE: u128 = 1 << 53;
    let Ok(magnitude) = u128::from_str_radix(digits, radix) else {
        // More digits than a u128 holds.
        let value = digits.chars().fold(0.0, |v, d| {
            v * f64::from(radix) + f64::from(d.to_digit(radix).unwrap_or(0))
        });
        return Reading::Float(if negative { -value } else { value });
    };
    let signed = i64::try_from(magnitude)
        .ok()
        .map(|m| if negative { -m } else { m });
    match signed {
        Some(i) if !javascript || magnitude <= EXACT_IN_A_DOUBLE => Reading::Int(i),
        _ => Reading::Float(if negative {
            -(magnitude as f64)
        } else {
            magnitude as f64
        }),
    }
}

// js-yaml, lib/type/float.js (YAML_FLOAT_PATTERN) and lib/type/timestamp.js.
static JS_FLOAT: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"^(?:[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?",
        r"|\.[0-9_]+(?:[eE][-+]?[0-9]+)?",
        r"|[-+]?\.(?:inf|Inf|INF)",
        r"|\.(?:nan|NaN|NAN))$",
    ))
});
static JS_DATE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^([0-9][0-9][0-9][0-9])-([0-9][0-9])-([0-9][0-9])$"));
static JS_TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"^([0-9][0-9][0-9][0-9])-([0-9][0-9]?)-([0-9][0-9]?)(?:[Tt]|[ \t]+)",
        r"([0-9][0-9]?):([0-9][0-9]):([0-9][0-9])(?:\.([0-9]*))?",
        r"(?:[ \t]*(Z|([-+])([0-9][0-9]?)(?::([0-9][0-9]))?))?$",
    ))
});

/// js-yaml's implicit types in their order: null, bool, int, float, timestamp.
fn js_yaml(text: &str) -> Reading {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Reading::Null,
        "true" | "True" | "TRUE" => return Reading::Bool(true),
        "false" | "False" | "FALSE" => return Reading::Bool(false),
        _ => {}
    }
    if js_yaml_is_integer(text) {
        // constructYamlInteger: `_` dropped, the sign, then the radix prefix or base 10.
        let (negative, value) = sign(&text.replace('_', ""));
        let (radix, digits) = match value.get(..2) {
            Some("0b") => (2, &value[2..]),
            Some("0x") => (16, &value[2..]),
            Some("0o") => (8, &value[2..]),
            _ => (10, value.as_str()),
        };
        return integer(negative, digits, radix, true);
    }
    if JS_FLOAT.is_match(text) && !text.ends_with('_') {
        let (negative, value) = sign(&text.replace('_', "").to_ascii_lowercase());
        return Reading::Float(match value.as_str() {
            ".inf" if negative => f64::NEG_INFINITY,
            ".inf" => f64::INFINITY,
            ".nan" => f64::NAN,
            v => js_parse_float(v, negative),
        });
    }
    if JS_DATE.is_match(text) || JS_TIMESTAMP.is_match(text) {
        return Reading::Date;
    }
    Reading::Text
}

fn js_parse_float(value: &str, negative: bool) -> f64 {
    let magnitude: f64 = value.parse().unwrap_or(f64::NAN);
    if negative { -magnitude } else { magnitude }
}

/// js-yaml's `resolveYamlInteger` (lib/type/int.js), step for step: an optional sign, then
/// `0`, or `0b`/`0x`/`0o` digits, or decimal digits; `_` anywhere after the first digit but
/// not last.
fn js_yaml_is_integer(text: &str) -> bool {
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if unsigned == "0" {
        return true;
    }
    let prefixed = |prefix: &str, digit: fn(&u8) -> bool| {
        unsigned.strip_prefix(prefix).map(|digits| {
            let bytes = digits.as_bytes();
            bytes.iter().all(|b| *b == b'_' || digit(b))
                && bytes.iter().any(digit)
                && bytes.last() != Some(&b'_')
        })
    };
    let radix = prefixed("0b", |b| matches!(b, b'0' | b'1'))
        .or_else(|| prefixed("0x", u8::is_ascii_hexdigit))
        .or_else(|| prefixed("0o", |b| matches!(b, b'0'..=b'7')));
    if let Some(is) = radix {
        return is;
    }
    // Neither `_1` nor `0_1`: the character after a leading `0` is checked like a first one.
    let bytes = unsigned.as_bytes();
    bytes.first().is_some_and(u8::is_ascii_digit)
        && !(bytes[0] == b'0' && bytes.get(1) == Some(&b'_'))
        && bytes.iter().all(|b| *b == b'_' || b.is_ascii_digit())
        && bytes.last() != Some(&b'_')
}

// eemeli/yaml, src/schema/common/null.ts, core/bool.ts, core/int.ts, core/float.ts.
static CORE_INT: LazyLock<Regex> = LazyLock::new(|| regex(r"^[-+]?[0-9]+$"));
static CORE_FLOAT_EXP: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$"));
static CORE_FLOAT: LazyLock<Regex> = LazyLock::new(|| regex(r"^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$"));

/// The `yaml` package's core schema tags in their order: null, bool, intOct, int, intHex,
/// floatNaN, floatExp, float.
fn yaml_core(text: &str) -> Reading {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Reading::Null,
        "true" | "True" | "TRUE" => return Reading::Bool(true),
        "false" | "False" | "FALSE" => return Reading::Bool(false),
        ".nan" | ".NaN" | ".NAN" => return Reading::Float(f64::NAN),
        _ => {}
    }
    let prefixed = |prefix: &str, radix: u32, digit: fn(&u8) -> bool| {
        let digits = text.strip_prefix(prefix)?;
        let valid = !digits.is_empty() && digits.as_bytes().iter().all(digit);
        valid.then(|| integer(false, digits, radix, true))
    };
    if let Some(reading) = prefixed("0o", 8, |b| matches!(b, b'0'..=b'7')) {
        return reading;
    }
    if CORE_INT.is_match(text) {
        let (negative, digits) = sign(text);
        return integer(negative, &digits, 10, true);
    }
    if let Some(reading) = prefixed("0x", 16, u8::is_ascii_hexdigit) {
        return reading;
    }
    let (negative, unsigned) = sign(text);
    if matches!(unsigned.as_str(), ".inf" | ".Inf" | ".INF") {
        return Reading::Float(if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    if CORE_FLOAT_EXP.is_match(text) || CORE_FLOAT.is_match(text) {
        return Reading::Float(js_parse_float(&unsigned, negative));
    }
    Reading::Text
}

// eemeli/yaml, src/schema/yaml-1.1/{bool,int,float,timestamp}.ts, in the schema's order.
static Y11_NULL: LazyLock<Regex> = LazyLock::new(|| regex(r"^(?:~|[Nn]ull|NULL)?$"));
static Y11_TRUE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^(?:Y|y|[Yy]es|YES|[Tt]rue|TRUE|[Oo]n|ON)$"));
static Y11_FALSE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^(?:N|n|[Nn]o|NO|[Ff]alse|FALSE|[Oo]ff|OFF)$"));
static Y11_INTS: LazyLock<[(Regex, u32, usize); 4]> = LazyLock::new(|| {
    [
        (regex(r"^[-+]?0b[0-1_]+$"), 2, 2),
        (regex(r"^[-+]?0[0-7_]+$"), 8, 1),
        (regex(r"^[-+]?[0-9][0-9_]*$"), 10, 0),
        (regex(r"^[-+]?0x[0-9a-fA-F_]+$"), 16, 2),
    ]
});
static Y11_FLOAT_NAN: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$"));
static Y11_FLOAT_EXP: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^[-+]?(?:[0-9][0-9_]*)?(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"));
static Y11_FLOAT: LazyLock<Regex> = LazyLock::new(|| regex(r"^[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*$"));
static Y11_INT_TIME: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+$"));
static Y11_FLOAT_TIME: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*$"));
static Y11_TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}",
        r"(?:(?:t|T|[ \t]+)[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?",
        r"(?:[ \t]*(?:Z|[-+][012]?[0-9](?::[0-9]{2})?))?)?$",
    ))
});

/// The `yaml` package's `yaml-1.1` schema: the first tag whose test matches, then its
/// `resolve` (`parseInt` after the prefix with `_` removed, `parseFloat`, base 60).
fn yaml_11(text: &str) -> Reading {
    if Y11_NULL.is_match(text) {
        return Reading::Null;
    }
    if Y11_TRUE.is_match(text) || Y11_FALSE.is_match(text) {
        return Reading::Bool(Y11_TRUE.is_match(text));
    }
    let (negative, unsigned) = sign(&text.replace('_', ""));
    if let Some((_, radix, prefix)) = Y11_INTS.iter().find(|(test, ..)| test.is_match(text)) {
        return match unsigned.get(*prefix..).filter(|digits| !digits.is_empty()) {
            Some(digits) => integer(negative, digits, *radix, true),
            // `parseInt('')`: `0b_` and `0_` match their tag but hold no digit.
            None => Reading::Float(f64::NAN),
        };
    }
    if Y11_FLOAT_NAN.is_match(text) {
        return Reading::Float(match unsigned.to_ascii_lowercase().as_str() {
            ".nan" => f64::NAN,
            _ if negative => f64::NEG_INFINITY,
            _ => f64::INFINITY,
        });
    }
    if Y11_FLOAT_EXP.is_match(text) || Y11_FLOAT.is_match(text) {
        return Reading::Float(js_parse_float(&unsigned, negative));
    }
    if Y11_INT_TIME.is_match(text) || Y11_FLOAT_TIME.is_match(text) {
        let magnitude = base_60(unsigned.split(':').map(|p| p.parse::<f64>().ok()));
        let value = if negative { -magnitude } else { magnitude };
        return match Y11_INT_TIME.is_match(text) {
            true => Reading::Int(value as i64),
            false => Reading::Float(value),
        };
    }
    if Y11_TIMESTAMP.is_match(text) {
        return Reading::Date;
    }
    Reading::Text
}

#[cfg(test)]
mod tests;
