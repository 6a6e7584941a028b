//! Local semantic similarity: decides, without an LLM, whether an answer says what the expected
//! text says. Used for `semantic` matchers when no judge is configured (the report names the
//! method `local-similarity`), and for Regtrace factuality in shallow mode.
//!
//! # How it works
//! 1. **Normalise** both texts: lowercase; expand contractions (`wasn't` -> `was not`,
//!    `can't`/`cannot` -> `can not`); split into words, keeping ids (`ORD-12345`), decimals
//!    (`49.99`), thousands (`1,200`), times and dates (`2026-04-18`, `4/18`) whole; rewrite a
//!    few idioms (`lexicon::PHRASES`: `no problem`, `don't hesitate`, `no later than` -> `by`);
//!    read ordinals as numbers (`18th` -> 18), number words as digits (`five` -> 5), and a month
//!    name next to a day or year as a date (`April 18th`, `18 April 2026`).
//! 2. **Content words** are what is left without stopwords and courtesy words, each stemmed
//!    lightly (plural `s`, `-ies`/`-ied`, `-ed`, `-ing`, final `e`, doubled final consonant:
//!    `shipped`, `ships`, `shipping` -> `ship`) and mapped through a small synonym table
//!    (`lexicon::SYNONYMS`: `number` ~ `id`, `provide` ~ `share`, `dispatched` ~ `shipped`...).
//! 3. **Hard fact checks**, any of which fails the comparison with a score of 0 and a reason
//!    naming the fact:
//!    - every *fact* of the expected text must appear in the answer: numbers, ids (letters and
//!      digits; `ORD-12345` is also matched by a bare `12345`), dates (month and day must agree;
//!      the year when both give one), weekdays, and status words (`lexicon::STATUSES`:
//!      shipped, delivered, cancelled, refunded, pending, approved, denied, found...) in any
//!      inflection or synonym;
//!    - the answer may not use a status that conflicts with an expected one
//!      (`lexicon::CONFLICTS`: shipped vs cancelled, approved vs denied...);
//!    - negation must agree: either both texts contain a negation word (`not`, `no`, `never`,
//!      `unable`, `n't`...) or neither does.
//! 4. **Score** = share of the expected content words found in the answer (exactly, or for
//!    words of five letters or more, with Jaro-Winkler similarity >= 0.92). It passes at the
//!    threshold, [`DEFAULT_THRESHOLD`] unless configured.
//!
//! # Where it is weak
//! It has no world knowledge: a paraphrase that shares no words and no listed synonym with the
//! expected text fails ("What can I do for you?" vs "How can I help?"), and an answer that keeps
//! the words but changes an unlisted fact passes. The synonym and status tables are small.
//! Negation scope is naive: one negation anywhere makes the whole text negative, so "It
//! shipped; I can't change the address" reads as negative. Slash dates are read month first
//! (`4/18`) unless the first number cannot be a month. A judge is the better tool; this is the
//! deterministic floor.

mod lexicon;
mod words;

use std::collections::HashSet;
use std::fmt;
use std::sync::LazyLock;

use words::{Date, Number, Piece, normalize_word, number_key};

/// The default pass mark of [`compare`]: the share of expected content words the answer must
/// contain. Low enough for paraphrases that drop a word or two, high enough that an unrelated
/// answer fails; the fact checks do the rest.
pub const DEFAULT_THRESHOLD: f64 = 0.6;

/// How close a word must be to count as the same word when spelled differently.
const FUZZY_WORD: f64 = 0.92;

/// The verdict of [`compare`].
#[derive(Clone, Debug, PartialEq)]
pub struct Similarity {
    /// Share of expected content words found in the answer, in 0..=1; 0 when a fact is missing
    /// or contradicted.
    pub score: f64,
    pub passed: bool,
    /// Why it did not pass: the missing or contradicting fact, or the missing words.
    pub reason: Option<String>,
}

/// Does `actual` say what `expected` says? See the module docs for the method.
pub fn compare(expected: &str, actual: &str, threshold: f64) -> Similarity {
    let expected_read = Analysis::of(expected);
    // An answer word for word the expected text (as a recorded or deterministic agent gives)
    // is read once.
    let actual_read;
    let (expected, actual) = if actual == expected {
        (&expected_read, &expected_read)
    } else {
        actual_read = Analysis::of(actual);
        (&expected_read, &actual_read)
    };
    if let Some(problem) = contradiction(expected, actual) {
        return Similarity {
            score: 0.0,
            passed: false,
            reason: Some(problem),
        };
    }
    let recall = expected.recall_in(actual);
    let passed = recall.score >= threshold;
    Similarity {
        score: recall.score,
        passed,
        reason: (!passed).then(|| recall.to_string()),
    }
}

/// How much of the expected text's content the answer repeats.
#[derive(Clone, Debug, PartialEq)]
pub struct Recall {
    /// Share of expected content words found, in 0..=1.
    pub score: f64,
    /// The expected content words not found, as written.
    pub missing: Vec<String>,
}

impl fmt::Display for Recall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:.0}% of the expected content found",
            self.score * 100.0
        )?;
        if !self.missing.is_empty() {
            const SHOWN: usize = 6;
            let shown: Vec<&str> = self
                .missing
                .iter()
                .take(SHOWN)
                .map(String::as_str)
                .collect();
            write!(f, "; missing: {}", shown.join(", "))?;
            if self.missing.len() > SHOWN {
                write!(f, ", ...")?;
            }
        }
        Ok(())
    }
}

/// Content-word recall alone, without the fact checks (Regtrace factuality in shallow mode).
pub fn recall(expected: &str, actual: &str) -> Recall {
    Analysis::of(expected).recall_in(&Analysis::of(actual))
}

/// A text read for comparison.
struct Analysis {
    /// Content words, numbers, ids and date parts, deduplicated by key.
    terms: Vec<Term>,
    keys: HashSet<String>,
    facts: Vec<Fact>,
    /// The first negation word, as written.
    negation: Option<String>,
    /// The text has no words at all.
    blank: bool,
}

struct Term {
    key: String,
    surface: String,
}

#[derive(Clone, Debug)]
enum Fact {
    Number(Number),
    Id(String),
    Date(Date),
    Weekday(usize),
    /// A status word: `key` is its normalised form, `surface` how it was written.
    Status {
        key: String,
        surface: String,
    },
}

impl Analysis {
    fn of(text: &str) -> Self {
        let mut analysis = Analysis {
            terms: Vec::new(),
            keys: HashSet::new(),
            facts: Vec::new(),
            negation: None,
            blank: true,
        };
        // Read a part at a time: words as read take about twenty times their text's memory,
        // and an agent's reply may be megabytes.
        for part in parts(text) {
            for piece in words::read(part) {
                analysis.blank = false;
                analysis.add(piece);
            }
        }
        analysis
    }

    fn add(&mut self, piece: Piece) {
        match piece {
            Piece::Word(word, roles) => {
                if roles.negation {
                    self.negation.get_or_insert(word);
                    return;
                }
                if roles.empty {
                    return;
                }
                let key = normalize_word(&word);
                if roles.status {
                    self.facts.push(Fact::Status {
                        key: key.clone(),
                        surface: word.clone(),
                    });
                }
                self.term(key, word);
            }
            Piece::Number(number) => {
                self.term(number_key(number.value), number.text.clone());
                self.facts.push(Fact::Number(number));
            }
            Piece::Id(id) => {
                self.term(id.clone(), id.to_uppercase());
                self.facts.push(Fact::Id(id));
            }
            Piece::Weekday(day) => {
                self.term(
                    lexicon::WEEKDAYS[day].to_owned(),
                    lexicon::WEEKDAYS[day].to_owned(),
                );
                self.facts.push(Fact::Weekday(day));
            }
            Piece::Date(date) => {
                let month = lexicon::MONTHS[date.month - 1][0];
                self.term(month.to_owned(), month.to_owned());
                for part in [date.day, date.year].into_iter().flatten() {
                    self.term(part.to_string(), part.to_string());
                }
                self.facts.push(Fact::Date(date));
            }
        }
    }

    fn term(&mut self, key: String, surface: String) {
        if self.keys.insert(key.clone()) {
            self.terms.push(Term { key, surface });
        }
    }

    fn recall_in(&self, actual: &Analysis) -> Recall {
        if self.terms.is_empty() {
            // Nothing to recall ("Hello!"): any answer at all will do.
            let score = if actual.blank { 0.0 } else { 1.0 };
            return Recall {
                score,
                missing: Vec::new(),
            };
        }
        let missing: Vec<String> = self
            .terms
            .iter()
            .filter(|term| !actual.has_word(&term.key))
            .map(|term| term.surface.clone())
            .collect();
        let found = self.terms.len() - missing.len();
        Recall {
            score: found as f64 / self.terms.len() as f64,
            missing,
        }
    }

    fn has_word(&self, key: &str) -> bool {
        self.keys.contains(key)
            || (key.len() >= 5
                && key.chars().all(char::is_alphabetic)
                && self
                    .keys
                    .iter()
                    .any(|k| strsim::jaro_winkler(k, key) >= FUZZY_WORD))
    }

    fn surface_of<'a>(&'a self, key: &'a str) -> &'a str {
        self.terms
            .iter()
            .find(|t| t.key == key)
            .map_or(key, |t| t.surface.as_str())
    }

    /// Does this (actual) text state `fact`?
    fn states(&self, fact: &Fact) -> bool {
        match fact {
            Fact::Status { key, .. } => self.keys.contains(key),
            Fact::Id(id) => self.facts.iter().any(|f| match f {
                Fact::Id(other) => other == id,
                Fact::Number(n) => n.text == digits_of(id),
                _ => false,
            }),
            _ => self.facts.iter().any(|f| f.restates(fact)),
        }
    }
}

/// The bytes of text read at once (see [`Analysis::of`]).
const PART: usize = 64 * 1024;

/// `text` in parts of about [`PART`] bytes, each ending at a line's end or else at a space
/// where the text has one, so that a date or an id is rarely cut in two (and only past the
/// first [`PART`] bytes of a text).
fn parts(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let at = if rest.len() <= PART {
            rest.len()
        } else {
            let head = &rest[..crate::results::char_start_before(rest, PART)];
            let last = |space: fn(char) -> bool| head.char_indices().rev().find(|&(_, c)| space(c));
            let end = last(|c| c == '\n').or_else(|| last(char::is_whitespace));
            end.map_or(head.len(), |(at, c)| at + c.len_utf8())
        };
        let (part, tail) = rest.split_at(at);
        rest = tail;
        Some(part)
    })
}

impl Fact {
    /// Does `self` (from the answer) restate `expected`?
    fn restates(&self, expected: &Fact) -> bool {
        match (self, expected) {
            (Fact::Number(a), Fact::Number(e)) => (a.value - e.value).abs() < 1e-9,
            (Fact::Id(a), Fact::Id(e)) => a == e,
            (Fact::Weekday(a), Fact::Weekday(e)) => a == e,
            (Fact::Date(a), Fact::Date(e)) => {
                a.month == e.month
                    && (e.day.is_none() || a.day == e.day)
                    && (a.year.is_none() || e.year.is_none() || a.year == e.year)
            }
            (Fact::Status { key: a, .. }, Fact::Status { key: e, .. }) => a == e,
            _ => false,
        }
    }

    fn same_kind(&self, other: &Fact) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

impl fmt::Display for Fact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fact::Number(n) => f.write_str(&n.text),
            Fact::Id(id) => f.write_str(&id.to_uppercase()),
            Fact::Weekday(day) => f.write_str(lexicon::WEEKDAYS[*day]),
            Fact::Status { surface, .. } => write!(f, "'{surface}'"),
            Fact::Date(date) => {
                f.write_str(lexicon::MONTHS[date.month - 1][0])?;
                if let Some(day) = date.day {
                    write!(f, " {day}")?;
                }
                if let Some(year) = date.year {
                    write!(f, " {year}")?;
                }
                Ok(())
            }
        }
    }
}

/// The first way `actual` contradicts `expected`: a conflicting status, disagreeing negation,
/// or a missing fact (named with what the answer says in its place).
fn contradiction(expected: &Analysis, actual: &Analysis) -> Option<String> {
    for fact in &expected.facts {
        let Fact::Status { key, surface } = fact else {
            continue;
        };
        let conflicting = CONFLICT_KEYS
            .iter()
            .filter_map(|(a, b)| (a == key).then_some(b).or_else(|| (b == key).then_some(a)));
        for other in conflicting {
            if actual.keys.contains(other) && !expected.keys.contains(other) {
                return Some(format!(
                    "says '{}' where '{surface}' was expected",
                    actual.surface_of(other)
                ));
            }
        }
    }
    match (&expected.negation, &actual.negation) {
        (Some(word), None) => {
            return Some(format!(
                "affirmative where a negative answer ('{word}') was expected"
            ));
        }
        (None, Some(word)) => {
            return Some(format!(
                "negative ('{word}') where an affirmative answer was expected"
            ));
        }
        _ => {}
    }
    for fact in &expected.facts {
        if actual.states(fact) {
            continue;
        }
        let instead: Vec<String> = actual
            .facts
            .iter()
            .filter(|f| f.same_kind(fact) && !expected.facts.iter().any(|e| f.restates(e)))
            .map(ToString::to_string)
            .collect();
        return Some(if instead.is_empty() {
            format!("does not mention {fact}")
        } else {
            format!("says {} where {fact} was expected", instead.join(", "))
        });
    }
    None
}

/// The digits of an id, so that `ORD-12345` is also found as `12345`.
fn digits_of(id: &str) -> String {
    id.chars().filter(char::is_ascii_digit).collect()
}

static CONFLICT_KEYS: LazyLock<Vec<(String, String)>> = LazyLock::new(|| {
    lexicon::CONFLICTS
        .iter()
        .map(|(a, b)| (normalize_word(a), normalize_word(b)))
        .collect()
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_is_read_in_parts_that_end_at_a_line_or_a_space() {
        let line = "Your order ORD-12345 shipped on April 18.\n";
        let text = format!(
            "{}{}",
            line.repeat(PART / line.len() + 3),
            "\u{3000}x".repeat(PART)
        );
        let read: Vec<&str> = parts(&text).collect();
        assert_eq!(read.concat(), text);
        assert!(read.len() > 2, "{}", read.len());
        assert!(read[0].ends_with('\n') && read[0].len() <= PART);
        let ends = |p: &&str| p.ends_with('\n') || p.ends_with('\u{3000}');
        assert!(read[..read.len() - 1].iter().all(ends));
        assert!(compare("It shipped on April 18.", &text, DEFAULT_THRESHOLD).passed);
    }
}
