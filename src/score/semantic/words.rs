//! Reading a text into words for [`super`]: contractions expanded, idioms rewritten, numbers,
//! ids and dates recognised, words stemmed and mapped through the synonym table.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::lexicon;

/// Reads `text` into pieces, in order.
pub(super) fn read(text: &str) -> Vec<Piece> {
    let words = rewrite_phrases(raw_words(&expand_contractions(text)));
    join_dates(words.into_iter().map(classify).collect())
}

#[derive(Clone, Debug)]
pub(super) struct Number {
    pub(super) text: String,
    pub(super) value: f64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Date {
    pub(super) year: Option<u32>,
    /// 1-based.
    pub(super) month: usize,
    pub(super) day: Option<u32>,
}

/// A word as read: a plain word, or one that states a fact.
#[derive(Clone, Debug)]
pub(super) enum Piece {
    /// A plain word, with what the word lists make of it (read once, when it was classified).
    Word(String, lexicon::Roles),
    Number(Number),
    /// Letters and digits together: `ord-12345`, `10:30`.
    Id(String),
    /// Index into `lexicon::WEEKDAYS`.
    Weekday(usize),
    Date(Date),
}

/// A word before dates are joined: a month name waits for its day and year.
enum Raw {
    Piece(Piece),
    /// 1-based month and the word as written (`may` is a month only next to a number).
    Month(usize, String),
}

/// Lowercases and expands the contractions that carry a negation.
fn expand_contractions(text: &str) -> String {
    let mut text = text.to_lowercase();
    if text.contains(['\u{2019}', '\u{2018}']) {
        text = text.replace(['\u{2019}', '\u{2018}'], "'");
    }
    // Most texts have none of these: copy the text only when one is there.
    for (from, to) in [
        ("won't", "will not"),
        ("can't", "can not"),
        ("cannot", "can not"),
        ("n't", " not"),
    ] {
        if text.contains(from) {
            text = text.replace(from, to);
        }
    }
    text
}

/// Splits into words. Hyphens join letters and digits (`ord-12345`, `follow-up`); `.`, `/`
/// and `:` join digits (`49.99`, `4/18`, `10:30`); `,` joins thousands (`1,200`).
fn raw_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    // A word is a run of the text: where the one being read starts, if one is.
    let mut start = None;
    let mut before = None;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let after = chars.peek().map(|&(_, next)| next);
        let between = |test: fn(&char) -> bool| {
            before.as_ref().is_some_and(test) && after.as_ref().is_some_and(test)
        };
        let joins = match c {
            '-' => between(|c| c.is_alphanumeric()),
            '.' | '/' | ':' => between(char::is_ascii_digit),
            ',' => {
                between(char::is_ascii_digit)
                    && text[at + 1..]
                        .bytes()
                        .take_while(u8::is_ascii_digit)
                        .count()
                        == 3
            }
            _ => false,
        };
        if c.is_alphanumeric() || (joins && start.is_some()) {
            start.get_or_insert(at);
        } else if let Some(from) = start.take() {
            words.push(text[from..at].to_owned());
        }
        before = Some(c);
    }
    if let Some(from) = start {
        words.push(text[from..].to_owned());
    }
    words
}

/// Applies `lexicon::PHRASES` on whole words.
fn rewrite_phrases(mut words: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(words.len());
    let mut i = 0;
    'words: while i < words.len() {
        for (phrase, replacement) in lexicon::phrases() {
            let matches = words
                .get(i..i + phrase.len())
                .is_some_and(|window| window.iter().zip(phrase).all(|(w, p)| w == p));
            if matches {
                out.extend(replacement.split_whitespace().map(str::to_owned));
                i += phrase.len();
                continue 'words;
            }
        }
        out.push(std::mem::take(&mut words[i]));
        i += 1;
    }
    out
}

fn classify(word: String) -> Raw {
    if word.bytes().any(|b| b.is_ascii_digit()) {
        if let Some(date) = numeric_date(&word) {
            return Raw::Piece(Piece::Date(date));
        }
        if let Some(number) = number(&word) {
            return Raw::Piece(Piece::Number(number));
        }
        return Raw::Piece(Piece::Id(word));
    }
    let roles = lexicon::roles(&word);
    if let Some(month) = roles.month {
        return Raw::Month(month, word);
    }
    if let Some(day) = roles.weekday {
        return Raw::Piece(Piece::Weekday(day));
    }
    if let Some(value) = roles.number {
        return Raw::Piece(Piece::Number(Number {
            text: value.to_string(),
            value: f64::from(value),
        }));
    }
    Raw::Piece(Piece::Word(word, roles))
}

/// `2026-04-18`, `4/18`, `4/18/2026`, `18/4/26` (day first only when it cannot be a month).
fn numeric_date(word: &str) -> Option<Date> {
    let parts: Vec<u32> = word
        .split(['-', '/'])
        .map(|p| {
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                None
            } else {
                p.parse().ok()
            }
        })
        .collect::<Option<_>>()?;
    let (year, mut month, mut day) = match (word.contains('-'), parts.as_slice()) {
        (true, &[year, month, day]) if word.len() == 10 => (Some(year), month, day),
        (false, &[month, day]) => (None, month, day),
        (false, &[month, day, year]) => (
            Some(if year < 100 { year + 2000 } else { year }),
            month,
            day,
        ),
        _ => return None,
    };
    if month > 12 && day <= 12 {
        std::mem::swap(&mut month, &mut day);
    }
    ((1..=12).contains(&month) && (1..=31).contains(&day)).then_some(Date {
        year,
        month: month as usize,
        day: Some(day),
    })
}

/// `42`, `49.99`, `1,200`, `18th`.
fn number(word: &str) -> Option<Number> {
    let digits = ["st", "nd", "rd", "th"]
        .iter()
        .find_map(|suffix| word.strip_suffix(suffix))
        .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        .unwrap_or(word);
    let text = digits.replace(',', "");
    let numeric = text.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && text.bytes().next().is_some_and(|b| b.is_ascii_digit());
    let value: f64 = text.parse().ok().filter(|_| numeric)?;
    Some(Number { text, value })
}

pub(super) fn number_key(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        value.to_string()
    }
}

/// Joins a month with its day and year (`april 18 2026`, `18 of april`) into a date. A month
/// alone is a date without a day, except `may`, which alone is the verb.
fn join_dates(raw: Vec<Raw>) -> Vec<Piece> {
    let whole = |i: usize, range: std::ops::RangeInclusive<f64>| match raw.get(i) {
        Some(Raw::Piece(Piece::Number(n)))
            if n.value.fract() == 0.0 && range.contains(&n.value) =>
        {
            Some(n.value as u32)
        }
        _ => None,
    };
    let day_at = |i: usize| whole(i, 1.0..=31.0);
    let year_at = |i: usize| whole(i, 1900.0..=2100.0);
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match &raw[i] {
            Raw::Month(month, word) => {
                let day = day_at(i + 1);
                let after_day = i + 1 + usize::from(day.is_some());
                let year = year_at(after_day);
                out.push(if day.is_none() && year.is_none() && word == "may" {
                    Piece::Word(word.clone(), lexicon::roles(word))
                } else {
                    Piece::Date(Date {
                        year,
                        month: *month,
                        day,
                    })
                });
                i = after_day + usize::from(year.is_some());
            }
            Raw::Piece(piece) => {
                let of = matches!(raw.get(i + 1), Some(Raw::Piece(Piece::Word(w, _))) if w == "of");
                let at = i + 1 + usize::from(of);
                match (day_at(i), raw.get(at)) {
                    (Some(day), Some(Raw::Month(month, _))) => {
                        let year = year_at(at + 1);
                        out.push(Piece::Date(Date {
                            year,
                            month: *month,
                            day: Some(day),
                        }));
                        i = at + 1 + usize::from(year.is_some());
                    }
                    _ => {
                        out.push(piece.clone());
                        i += 1;
                    }
                }
            }
        }
    }
    out
}

/// Light stemming, then the synonym table.
pub(super) fn normalize_word(word: &str) -> String {
    let stem = stem(word);
    SYNONYM_KEYS.get(&stem).cloned().unwrap_or(stem)
}

static SYNONYM_KEYS: LazyLock<HashMap<String, String>> = LazyLock::new(|| {
    lexicon::SYNONYMS
        .iter()
        .map(|(from, to)| (stem(from), stem(to)))
        .collect()
});

/// Strips the inflections that paraphrases change most. Not a linguistic stemmer: it only has
/// to map both texts' forms of a word to the same key.
fn stem(word: &str) -> String {
    let mut w = word.to_owned();
    let len = w.chars().count();
    if len > 4 && (w.ends_with("ies") || w.ends_with("ied")) {
        w.truncate(w.len() - 3);
        w.push('y');
    } else if len > 3 && w.ends_with('s') && !["ss", "us", "is"].iter().any(|s| w.ends_with(s)) {
        w.pop();
    }
    let len = w.chars().count();
    if len > 5 && w.ends_with("ing") {
        w.truncate(w.len() - 3);
    } else if len > 4 && w.ends_with("ed") {
        w.truncate(w.len() - 2);
    }
    if w.chars().count() > 3 && w.ends_with('e') {
        w.pop();
    }
    let mut tail = w.chars().rev();
    if let (Some(last), Some(before)) = (tail.next(), tail.next())
        && w.chars().count() > 3
        && last == before
        && last.is_alphabetic()
        && !"aeiou".contains(last)
    {
        w.pop();
    }
    w
}

#[cfg(test)]
mod tests {
    use super::stem;

    #[test]
    fn stems_meet() {
        for group in [
            &["shipped", "ships", "shipping", "ship"][..],
            &["cancelled", "canceled", "cancel", "cancels"],
            &["arrive", "arrives", "arrived", "arriving"],
            &["denied", "deny"],
            &["approved", "approve"],
            &["processing", "process", "processed"],
        ] {
            let stems: Vec<String> = group.iter().map(|w| stem(w)).collect();
            assert!(
                stems.iter().all(|s| *s == stems[0]),
                "{group:?} -> {stems:?}"
            );
        }
    }
}
