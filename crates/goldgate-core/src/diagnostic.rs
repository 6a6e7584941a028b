//! Problems found in input files, each with a rule code, a place and a hint.
//!
//! SCRAPI's linter codes (E001-E011) are kept where the rule is the same so that users
//! recognise them; goldgate's own rules use `G`-codes. Every loader reports through
//! [`Diagnostics`] and never stops at the first problem, so `goldgate lint` can show them all.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use crate::model::Location;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Every rule goldgate checks. The doc comment of each is its explanation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Code {
    /// The file does not parse (YAML, CSV or JSON syntax), or is too large or too deep.
    E001,
    /// A SCRAPI golden with no `conversations`, or an empty list.
    E002,
    /// The same key twice in one mapping.
    E005,
    /// Tool calls are expected but no session parameters exist to mock them.
    E006,
    /// `agent` is not a string or a list of strings.
    E007,
    /// A `user` turn without `agent`: any reply will be an UNEXPECTED RESPONSE.
    E008,
    /// Unknown `$matchType`.
    E011,
    /// A key the format does not define.
    G100,
    /// A value of the wrong type.
    G101,
    /// A required key is missing.
    G102,
    /// Two cases (or items that must be unique) share an id or name.
    G103,
    /// A regular expression or a JSONPath that does not compile.
    G104,
    /// A CSV cell that should hold JSON does not parse.
    G105,
    /// CES `turn_index` does not start at 1 or decreases.
    G106,
    /// An unknown value where a fixed set is allowed (action type, scorer, metric, ...).
    G107,
    /// A file goldgate recognises but cannot run (`*.scenario.ts`, SCRAPI turn evals, ...).
    G108,
    /// A null where a map or list is expected: treated as empty.
    G109,
    /// A key the reference system ignores (SCRAPI `arguments`): accepted, but say so.
    G110,
    /// A value outside its allowed range (non-positive weight, threshold outside 0..=1, ...).
    G111,
    /// A file or reference that cannot be read.
    G112,
    /// A plain scalar the reference loaders read differently (`yes`, `010`, `1e3`, a date):
    /// quote it.
    G113,
    /// A file that looks like a golden where discovery does not look for one: not loaded.
    G114,
}

impl fmt::Display for Code {
    /// A code is named by its variant (`G100`); JSON writes it the same way (serde's unit
    /// variant), so the name is written nowhere else.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// One problem in one place.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub code: Code,
    pub location: Location,
    /// Path of the offending key, e.g. `conversations[0].turns[2].agent`, or a CSV column.
    pub field: Option<String>,
    pub message: String,
    /// One line on how to fix it (a "did you mean", the expected shape).
    pub hint: Option<String>,
}

impl Diagnostic {
    /// The line `goldgate lint` prints, naming the file `file` instead (the path a report or
    /// the workspace gives it).
    pub fn line_naming(&self, file: &str) -> String {
        let mut named = self.clone();
        named.location.file = Arc::from(Path::new(file));
        named.to_string()
    }
}

impl fmt::Display for Diagnostic {
    /// `file:line: error [CODE] field: message (hint)`, the shape `goldgate lint` prints.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} [{}] ",
            self.location,
            self.severity.name(),
            self.code
        )?;
        if let Some(field) = &self.field {
            write_one_line(f, field)?;
            f.write_str(": ")?;
        }
        write_one_line(f, &self.message)?;
        if let Some(hint) = &self.hint {
            f.write_str(" (")?;
            write_one_line(f, hint)?;
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// Writes `text` with control characters escaped (`\n`, `\r`, `\u{0}`): messages quote what
/// the file says, and a newline in a key or value must not start a line that names no file.
fn write_one_line(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    let mut written = 0;
    for (at, control) in text.match_indices(char::is_control) {
        f.write_str(&text[written..at])?;
        write!(f, "{}", control.escape_default())?;
        written = at + control.len();
    }
    f.write_str(&text[written..])
}

/// Collects the diagnostics of one file.
#[derive(Debug)]
pub struct Diagnostics {
    pub file: Arc<Path>,
    pub items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn new(file: &Arc<Path>) -> Self {
        Self {
            file: Arc::clone(file),
            items: Vec::new(),
        }
    }

    pub fn location(&self, line: u32, column: u32) -> Location {
        Location::new(&self.file, line, column)
    }

    /// Where the next diagnostic is: `diags.at(node).error(code, message)` records it, and
    /// [`DiagnosticBuilder::field`] and [`DiagnosticBuilder::hint`] add to it as needed.
    pub fn at(&mut self, place: impl Into<Position>) -> At<'_> {
        At {
            diags: self,
            position: place.into(),
        }
    }

    pub fn has_errors(&self) -> bool {
        self.error_count() > 0
    }

    /// How many errors so far: a loader compares counts to tell whether one item had any.
    pub fn error_count(&self) -> usize {
        self.items
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
    }
}

/// A line and column (1-based) in the file being read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: u32,
    pub column: u32,
}

impl Position {
    /// Where a whole file's problem is reported (it cannot be read, it is empty).
    pub const START: Position = Position { line: 1, column: 1 };

    pub fn new(line: u32, column: u32) -> Self {
        Self { line, column }
    }
}

impl From<&Location> for Position {
    fn from(location: &Location) -> Self {
        Position::new(location.line, location.column)
    }
}

/// A diagnostic's place, waiting for its severity, code and message.
pub struct At<'d> {
    diags: &'d mut Diagnostics,
    position: Position,
}

impl<'d> At<'d> {
    pub fn error(self, code: Code, message: impl Into<String>) -> DiagnosticBuilder<'d> {
        self.push(Severity::Error, code, message.into())
    }

    pub fn warning(self, code: Code, message: impl Into<String>) -> DiagnosticBuilder<'d> {
        self.push(Severity::Warning, code, message.into())
    }

    fn push(self, severity: Severity, code: Code, message: String) -> DiagnosticBuilder<'d> {
        let Position { line, column } = self.position;
        let location = self.diags.location(line, column);
        let items = &mut self.diags.items;
        items.push(Diagnostic {
            severity,
            code,
            location,
            field: None,
            message,
            hint: None,
        });
        DiagnosticBuilder {
            diagnostic: items.last_mut().expect("just pushed"),
        }
    }
}

/// Adds the optional parts of a diagnostic that was just recorded.
pub struct DiagnosticBuilder<'a> {
    diagnostic: &'a mut Diagnostic,
}

impl DiagnosticBuilder<'_> {
    pub fn field(self, field: impl Into<String>) -> Self {
        self.diagnostic.field = Some(field.into());
        self
    }

    pub fn hint(self, hint: impl Into<String>) -> Self {
        self.diagnostic.hint = Some(hint.into());
        self
    }
}

/// Longer than any typo of a name goldgate knows. Jaro-Winkler costs the product of the two
/// lengths, and a megabyte of junk in a key took seconds per candidate to compare.
const MAX_NEAR_MISS_BYTES: usize = 256;

/// The shortest name a single edit of is taken for a typo of it: one edit of a two-letter
/// name is half of it (`id` and `ip` are two names, not a typo).
const MIN_ONE_EDIT_CHARS: usize = 3;

/// "did you mean `x`?" for a near-miss among `candidates`: a name one edit away (a letter
/// added, dropped, changed, or two neighbours swapped), else the closest by Jaro-Winkler.
/// Jaro-Winkler alone misses short names: it matches letters only within half the length of
/// the longer name, so `ulr` shares one letter in place with `url` and scores 0.6.
pub fn did_you_mean<'a>(
    given: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    if given.len() > MAX_NEAR_MISS_BYTES {
        return None;
    }
    candidates
        .into_iter()
        .map(|c| {
            let one_edit =
                c.chars().count() >= MIN_ONE_EDIT_CHARS && strsim::osa_distance(given, c) == 1;
            ((one_edit, strsim::jaro_winkler(given, c)), c)
        })
        .filter(|((one_edit, score), _)| *one_edit || *score > 0.8)
        .max_by(|(a, _), (b, _)| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)))
        .map(|(_, c)| c)
}

/// A hint for an unknown name: the near-miss if any, else the full list when it is short.
pub fn suggestion(given: &str, candidates: &[&str]) -> String {
    match did_you_mean(given, candidates.iter().copied()) {
        Some(best) => format!("did you mean `{best}`?"),
        None => format!("expected one of: {}", candidates.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by tests/it/lint_mutants.rs: an unknown `$matchType` holding newlines printed lines
    /// of `goldgate lint` output that named no file.
    #[test]
    fn a_rendered_diagnostic_is_one_line_whatever_the_file_says() {
        let file: Arc<Path> = Arc::from(Path::new("goldens/a.yaml"));
        let mut diags = Diagnostics::new(&file);
        diags
            .at(Position::new(3, 5))
            .error(Code::E011, "unknown `$matchType` `a\nb\r\u{0}`")
            .field("args.x\ny")
            .hint("did you mean\n`exact`?");
        assert_eq!(
            diags.items[0].to_string(),
            r"goldens/a.yaml:3: error [E011] args.x\ny: unknown `$matchType` `a\nb\r\u{0}` (did you mean\n`exact`?)"
        );
    }

    /// A swapped pair or one wrong letter in a short key is a typo of it, which Jaro-Winkler
    /// alone (0.6 for `ulr` against `url`) did not see; a two-letter key is too short for one.
    #[test]
    fn one_edit_of_a_short_name_is_a_near_miss() {
        let keys = ["url", "headers", "body", "response", "timeout"];
        for typo in ["ulr", "rul", "urk", "ur", "urrl", "bdoy"] {
            assert!(did_you_mean(typo, keys).is_some(), "{typo}");
        }
        assert_eq!(did_you_mean("ulr", keys), Some("url"));
        assert_eq!(did_you_mean("bdoy", keys), Some("body"));
        assert_eq!(did_you_mean("ip", ["id", "url"]), None);
        assert_eq!(did_you_mean("xyz", keys), None);
    }

    /// Found by tests/it/lint_mutants.rs: an unknown scorer a megabyte long took seconds to lint.
    #[test]
    fn junk_longer_than_any_typo_gets_no_near_miss_and_costs_nothing() {
        let junk = format!("message-contains{}", "x".repeat(1 << 20));
        let start = std::time::Instant::now();
        assert_eq!(did_you_mean(&junk, ["message-contains", "no-error"]), None);
        assert!(start.elapsed().as_millis() < 100, "{:?}", start.elapsed());
        assert_eq!(
            did_you_mean("mesage-contains", ["message-contains", "no-error"]),
            Some("message-contains")
        );
    }
}
