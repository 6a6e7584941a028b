//! G113: plain scalars in a golden that the reference loaders read differently (`yes`, `on`,
//! `010`, `1e3`, `0o17`, a date). Each format's tool reads its own files by its own rules, but
//! goldens move between tools (`goldgate convert`, copy and paste): quoted, the value is the
//! same text everywhere.

use super::scalars::{Reading, Schema};
use crate::diagnostic::{Code, Diagnostics, Position};

/// The YAML 1.1 type spec's booleans (yaml.org/type/bool.html) that PyYAML leaves out: other
/// YAML 1.1 readers make them booleans.
const SPEC_ONLY_BOOLEANS: [&str; 4] = ["y", "Y", "n", "N"];

/// A plain scalar value the reference loaders read differently, where it stands.
#[derive(Clone, Debug, PartialEq)]
pub struct Ambiguous {
    line: u32,
    column: u32,
    value: String,
    message: String,
}

/// The reference loaders as they read `text`: a `%YAML 1.1` directive changes how the yaml
/// package (gecx) reads the file.
pub(super) fn loaders(text: &str) -> [Schema; 3] {
    Schema::REFERENCE.map(|schema| schema.for_document(text))
}

/// The plain scalar value `value` at `(line, column)`, when the `loaders` read it differently.
pub(super) fn check(
    value: &str,
    loaders: [Schema; 3],
    (line, column): (u32, u32),
) -> Option<Ambiguous> {
    disagreement(value, loaders).map(|message| Ambiguous {
        line,
        column,
        value: value.to_owned(),
        message,
    })
}

/// The ambiguous plain values of `text`, by a parse of their own: what the tree builder must
/// find in its one pass. Keys are left alone: the formats read every key as a name.
#[cfg(test)]
fn scan(text: &str) -> Vec<Ambiguous> {
    use granit_parser::{Event, Parser, ScalarStyle, StrInput};

    let loaders = loaders(text);
    let mut found = Vec::new();
    // Per open collection: `None` for a sequence, `Some(awaiting a key)` for a mapping.
    let mut open: Vec<Option<bool>> = Vec::new();
    for (event, span) in Parser::new(StrInput::new(text)).map_while(Result::ok) {
        let is_key = matches!(open.last(), Some(Some(true)));
        let starts_node = matches!(
            event,
            Event::Scalar(..)
                | Event::Alias(..)
                | Event::SequenceStart(..)
                | Event::MappingStart(..)
        );
        if starts_node && let Some(Some(awaiting_key)) = open.last_mut() {
            *awaiting_key = !*awaiting_key;
        }
        match event {
            Event::SequenceStart(..) => open.push(None),
            Event::MappingStart(..) => open.push(Some(true)),
            Event::SequenceEnd | Event::MappingEnd => {
                open.pop();
            }
            Event::Scalar(value, ScalarStyle::Plain, _, None) if !is_key => {
                let at = (span.start.line() as u32, span.start.col() as u32 + 1);
                found.extend(check(&value, loaders, at));
            }
            _ => {}
        }
    }
    found
}

/// Reports a G113 warning at each of `found`.
pub fn report_ambiguous(found: &[Ambiguous], diags: &mut Diagnostics) {
    for Ambiguous {
        line,
        column,
        value,
        message,
    } in found
    {
        diags
            .at(Position::new(*line, *column))
            .warning(Code::G113, message.clone())
            .hint(format!(
                "quote it (`\"{value}\"`) to mean the text everywhere, or write the value so \
                 that every loader reads it alike"
            ));
    }
}

/// What SCRAPI does with a value PyYAML reads as a date, from its source (cxas-scrapi 4bd9cce,
/// `utils/eval_utils.py`): its pydantic models refuse a date where they want text (`user`,
/// `agent`, `tags`, ...), and a date in `args`, `output` or session parameters makes
/// `json_format.ParseDict` fail when the golden is pushed. Either way SCRAPI refuses the file.
const SCRAPI_DATE: &str =
    "; SCRAPI refuses the golden then (its models want text, and a date cannot be sent as JSON)";

/// What the loaders (read by `schemas`) make of the plain scalar `text`, when they do not all
/// agree.
fn disagreement(text: &str, schemas: [Schema; 3]) -> Option<String> {
    let readings = schemas.map(|schema| (schema, schema.read(text)));
    let spec_boolean = SPEC_ONLY_BOOLEANS.contains(&text);
    let agree = readings.iter().all(|(_, r)| r.agrees_with(readings[0].1));
    if agree && !spec_boolean {
        return None;
    }
    // Loaders that agree are named together: "text to js-yaml (Regtrace) and the yaml package".
    let mut groups: Vec<(Reading, Vec<&str>)> = Vec::new();
    for (schema, reading) in readings {
        match groups.iter_mut().find(|(r, _)| r.agrees_with(reading)) {
            Some((_, names)) => names.push(schema.describe()),
            None => groups.push((reading, vec![schema.describe()])),
        }
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|(reading, names)| format!("{} to {}", reading.describe(), names.join(" and ")))
        .collect();
    let mut message = format!("`{text}` reads differently by loader: {}", parts.join(", "));
    if readings[0].1 == Reading::Date {
        message.push_str(SCRAPI_DATE);
    }
    if spec_boolean {
        let truth = matches!(text, "y" | "Y");
        message.push_str(&format!(
            "; the YAML 1.1 type spec, which other YAML 1.1 readers follow, makes it the boolean {truth}"
        ));
    }
    Some(message)
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::*;

    fn warnings(text: &str) -> Vec<(u32, u32, String)> {
        let mut diags = Diagnostics::new(&Arc::from(Path::new("g.yaml")));
        let (_, found) = crate::yaml::parse_golden(text, Schema::Goldgate).unwrap();
        assert_eq!(
            found,
            scan(text),
            "the tree builder finds what a scan of its own does"
        );
        report_ambiguous(&found, &mut diags);
        diags
            .items
            .iter()
            .map(|d| (d.location.line, d.location.column, d.message.clone()))
            .collect()
    }

    #[test]
    fn plain_values_the_loaders_disagree_on_are_warned_about() {
        let text = "yes: yes\nargs: {opt_in: Y, code: 010, n: 1e3, o: 0o17, 'q': 'yes'}\n\
                    when: 2024-01-31\nok: [true, 12, 1.5, text, ~, \"on\"]\nlist:\n  - on\n";
        let found = warnings(text);
        let at: Vec<(u32, u32)> = found.iter().map(|(l, c, _)| (*l, *c)).collect();
        assert_eq!(
            at,
            [(1, 6), (2, 16), (2, 25), (2, 33), (2, 41), (3, 7), (6, 5)]
        );
        assert_eq!(
            found[0].2,
            "`yes` reads differently by loader: the boolean true to PyYAML (SCRAPI), text to \
             js-yaml (Regtrace) and the yaml package (gecx)"
        );
        assert!(found[1].2.contains("YAML 1.1 type spec"), "{}", found[1].2);
        assert!(
            found[2]
                .2
                .contains("the number 8 to PyYAML (SCRAPI), the number 10 to js-yaml")
        );
        assert!(
            found[5]
                .2
                .contains("a date to PyYAML (SCRAPI) and js-yaml (Regtrace), text to")
        );
    }

    #[test]
    fn a_document_with_anchors_and_aliases_is_scanned_alike() {
        // A value replayed by an alias is warned about once, where it is written.
        let text = "base: &b {opt_in: on}\nturns:\n  - args: *b\n    when: 2024-01-31\n";
        let at: Vec<(u32, u32)> = warnings(text).iter().map(|(l, c, _)| (*l, *c)).collect();
        assert_eq!(at, [(1, 19), (4, 11)]);
    }
}
