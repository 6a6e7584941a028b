//! The scalar table: each row what the three reference loaders make of one plain scalar, as
//! their sources (cited in the module above) resolve and construct it. `T` is text, `D` a
//! date. The PyYAML column was also checked against PyYAML 6.0.3's `safe_load` itself (all
//! rows agree, but for the integer past `i64`, which Python keeps exact and goldgate holds as
//! the nearest double).

use super::{Reading, Schema};

use Reading::{Bool, Date as D, Float, Int, Null, Text as T};

const INF: f64 = f64::INFINITY;

/// `(plain scalar, PyYAML safe_load, js-yaml load, yaml parse)`.
#[rustfmt::skip]
const TABLE: &[(&str, Reading, Reading, Reading)] = &[
    // Null: `~`, null in three casings, and the empty scalar, in all three.
    ("~", Null, Null, Null), ("null", Null, Null, Null), ("Null", Null, Null, Null),
    ("NULL", Null, Null, Null), ("", Null, Null, Null), ("nULL", T, T, T), ("none", T, T, T),
    // Booleans: YAML 1.1's yes/no/on/off only in PyYAML, and only in three casings.
    ("true", Bool(true), Bool(true), Bool(true)), ("True", Bool(true), Bool(true), Bool(true)),
    ("TRUE", Bool(true), Bool(true), Bool(true)), ("tRUE", T, T, T),
    ("false", Bool(false), Bool(false), Bool(false)), ("FALSE", Bool(false), Bool(false), Bool(false)),
    ("yes", Bool(true), T, T), ("Yes", Bool(true), T, T), ("YES", Bool(true), T, T), ("yEs", T, T, T),
    ("no", Bool(false), T, T), ("No", Bool(false), T, T), ("NO", Bool(false), T, T), ("nO", T, T, T),
    ("on", Bool(true), T, T), ("On", Bool(true), T, T), ("ON", Bool(true), T, T), ("oN", T, T, T),
    ("off", Bool(false), T, T), ("Off", Bool(false), T, T), ("OFF", Bool(false), T, T),
    ("y", T, T, T), ("Y", T, T, T), ("n", T, T, T), ("N", T, T, T),
    // Decimal integers: a leading zero is octal in PyYAML only; `_` not in the yaml package.
    ("0", Int(0), Int(0), Int(0)), ("-0", Int(0), Int(0), Int(0)), ("+5", Int(5), Int(5), Int(5)),
    ("42", Int(42), Int(42), Int(42)), ("-17", Int(-17), Int(-17), Int(-17)),
    ("010", Int(8), Int(10), Int(10)), ("0777", Int(511), Int(777), Int(777)),
    ("08", T, Int(8), Int(8)), ("1_000", Int(1000), Int(1000), T), ("1_", Int(1), T, T),
    ("_1", T, T, T), ("0_7", Int(7), Float(7.0), T),
    ("9007199254740993", Int(9_007_199_254_740_993), Float(9_007_199_254_740_992.0), Float(9_007_199_254_740_992.0)),
    ("9223372036854775808", Float(9.223_372_036_854_776e18), Float(9.223_372_036_854_776e18), Float(9.223_372_036_854_776e18)),
    // Other radixes: 0b and 0x in PyYAML; 0o in YAML 1.2; a sign on them in js-yaml.
    ("0b101", Int(5), Int(5), T), ("-0b1_1", Int(-3), Int(-3), T), ("0b", T, T, T),
    ("0x1F", Int(31), Int(31), Int(31)), ("0x1f_ff", Int(8191), Int(8191), T),
    ("-0x10", Int(-16), Int(-16), T), ("0X1F", T, T, T), ("0x", T, T, T),
    ("0o17", T, Int(15), Int(15)), ("-0o17", T, Int(-15), T), ("0o8", T, T, T),
    // Base 60, PyYAML only.
    ("1:30", Int(90), T, T), ("-1:30:00", Int(-5400), T, T), ("1:60", T, T, T),
    ("1:30.5", Float(90.5), T, T),
    // Floats: PyYAML needs a dot and a signed exponent; the others take `1e3`.
    ("1.5", Float(1.5), Float(1.5), Float(1.5)), ("-0.25", Float(-0.25), Float(-0.25), Float(-0.25)),
    ("1.", Float(1.0), Float(1.0), Float(1.0)), (".5", Float(0.5), Float(0.5), Float(0.5)),
    ("-.5", T, T, Float(-0.5)), ("1e3", T, Float(1000.0), Float(1000.0)),
    ("1E3", T, Float(1000.0), Float(1000.0)), ("1.0e3", T, Float(1000.0), Float(1000.0)),
    ("1.0e+3", Float(1000.0), Float(1000.0), Float(1000.0)), ("1.5e-1", Float(0.15), Float(0.15), Float(0.15)),
    (".5e+1", Float(5.0), Float(5.0), Float(5.0)), ("1_000.5", Float(1000.5), Float(1000.5), T),
    ("1.2.3", T, T, T), ("1e", T, T, T), ("e3", T, T, T),
    // Infinity and NaN: `.inf` in three casings, signed; `.nan` unsigned.
    (".inf", Float(INF), Float(INF), Float(INF)), ("-.Inf", Float(-INF), Float(-INF), Float(-INF)),
    ("+.INF", Float(INF), Float(INF), Float(INF)), (".iNf", T, T, T), ("inf", T, T, T),
    (".nan", Float(f64::NAN), Float(f64::NAN), Float(f64::NAN)), (".NaN", Float(f64::NAN), Float(f64::NAN), Float(f64::NAN)),
    ("-.nan", T, T, T), ("nan", T, T, T),
    // Timestamps: a date in PyYAML and js-yaml, text in the yaml package's core schema.
    ("2024-01-31", D, D, T), ("2024-1-31", T, T, T), ("2024-01-31T10:00:00Z", D, D, T),
    ("2024-01-31 10:00:00.5 +02:00", D, D, T), ("2024-01-31T10:00", T, T, T),
    // Text in all three.
    // (`=` and a `<<` value are left out: PyYAML resolves them to tags safe_load cannot
    // construct, so the file fails to load there.)
    ("hello", T, T, T), ("N/A", T, T, T), ("1 2", T, T, T), ("0_", Int(0), T, T),
];

#[test]
fn each_loader_reads_each_scalar_as_its_source_says() {
    let mut wrong = Vec::new();
    for &(text, py, js, core) in TABLE {
        for (schema, expected) in [
            (Schema::PyYaml, py),
            (Schema::JsYaml, js),
            (Schema::YamlCore, core),
        ] {
            let read = schema.read(text);
            let same = match (read, expected) {
                (Float(a), Float(b)) => a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                _ => read == expected,
            };
            if !same {
                wrong.push(format!(
                    "{text:?} under {schema:?}: read {read:?}, expected {expected:?}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn loaders_agree_on_numbers_by_value() {
    assert!(Int(1000).agrees_with(Float(1000.0)));
    assert!(Float(f64::NAN).agrees_with(Float(f64::NAN)));
    assert!(!Bool(true).agrees_with(T));
    assert!(!Int(8).agrees_with(Int(10)));
}

/// `(plain scalar, the yaml package under %YAML 1.1)`: its `yaml-1.1` schema's tags, in order.
#[rustfmt::skip]
const YAML_11: &[(&str, Reading)] = &[
    ("~", Null), ("", Null), ("null", Null), ("nULL", T),
    ("y", Bool(true)), ("Y", Bool(true)), ("yes", Bool(true)), ("On", Bool(true)), ("yEs", T),
    ("n", Bool(false)), ("N", Bool(false)), ("NO", Bool(false)), ("off", Bool(false)), ("oFF", T),
    ("0", Int(0)), ("010", Int(8)), ("08", Int(8)), ("0_7", Int(7)), ("1_000", Int(1000)),
    ("-0b1_1", Int(-3)), ("0x1f_ff", Int(8191)), ("-0x10", Int(-16)), ("0o17", T),
    ("0b_", Float(f64::NAN)), ("1e3", Float(1000.0)), ("1.5", Float(1.5)), (".5", Float(0.5)),
    ("-.inf", Float(-INF)), (".NaN", Float(f64::NAN)), ("1:30", Int(90)), ("1:30.5", Float(90.5)),
    ("2024-01-31", D), ("2024-1-31", D), ("2024-01-31T10:00:00Z", D), ("2024-01-31T10:00", T),
    ("hello", T), ("N/A", T),
];

#[test]
fn the_yaml_package_under_yaml_1_1_reads_each_scalar_as_its_source_says() {
    for &(text, expected) in YAML_11 {
        let read = Schema::Yaml11.read(text);
        let same = match (read, expected) {
            (Float(a), Float(b)) => a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            _ => read == expected,
        };
        assert!(same, "{text:?}: read {read:?}, expected {expected:?}");
    }
}

#[test]
fn only_a_leading_yaml_1_1_directive_switches_the_yaml_package() {
    let core = Schema::YamlCore;
    assert_eq!(
        core.for_document("# c\n%YAML 1.1\n---\na: y\n"),
        Schema::Yaml11
    );
    assert_eq!(
        core.for_document("%TAG ! tag:x,2000:\n%YAML 1.1\n---\n"),
        Schema::Yaml11
    );
    assert_eq!(core.for_document("%YAML 1.2\n---\na: y\n"), core);
    assert_eq!(core.for_document("a: |\n  %YAML 1.1\n"), core);
    assert_eq!(
        Schema::PyYaml.for_document("%YAML 1.1\n---\n"),
        Schema::PyYaml
    );
}

/// The shortcut for text agrees with the patterns on every scalar of up to three characters
/// from an alphabet of what they test for, and on the words they name.
#[test]
fn scalars_read_as_text_without_the_patterns_are_text_by_the_patterns() {
    let alphabet = [
        "", "a", "e", "E", "o", "O", "n", "N", "y", "Y", "t", "f", "x", "b", "0", "1", "7", "_",
        ".", ":", "-", "+", "~", " ", "Z", "é",
    ];
    let schemas = [
        Schema::PyYaml,
        Schema::JsYaml,
        Schema::YamlCore,
        Schema::Yaml11,
    ];
    let mut shortcut = 0;
    let mut words = Vec::new();
    for a in alphabet {
        for b in alphabet {
            words.extend(alphabet.map(|c| format!("{a}{b}{c}")));
        }
    }
    let named = [
        "ORD-12345",
        "Order",
        "inf",
        "Infinity",
        "nan",
        "NaN",
        "e-12",
        "E+3",
        "<<",
    ];
    for text in words.into_iter().chain(named.map(String::from)) {
        if !super::plainly_text(&text) {
            continue;
        }
        shortcut += 1;
        for schema in schemas {
            assert_eq!(schema.read_by_patterns(&text), T, "{schema:?} {text:?}");
        }
    }
    for not_plain in [
        "", "~", "no", "Yes", "OFF", "e5", "E-3", "0", "+1", ".5", "-.inf",
    ] {
        assert!(!super::plainly_text(not_plain), "{not_plain:?}");
    }
    assert!(shortcut > 10_000, "{shortcut}");
}
