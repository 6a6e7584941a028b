//! Reading which top-level modules of its crate a file of Rust names, in every path syntax that
//! reaches the crate root: `crate::x`, `$crate::x`, `super::super::x` up to the root, `super::x`
//! from a top-level file, an alias of the root (`use crate as c; c::x`, `use crate::{self as
//! c}`, `extern crate self as c`), `::goldgate::x` and `goldgate::x`. `#[macro_use]` is found
//! apart: a macro it brings in is named without a path.
//!
//! Strings and comments are blanked first (a path in a string or a doc link is not a
//! dependency) and each `#[cfg(test)]` item dropped by its braces, so code after a test module
//! is read too.

use std::collections::BTreeSet;

/// Where a file sits: its module path in its crate (`["gate", "latency"]` for
/// `src/gate/latency.rs`), and whether it is the binary, whose `crate` is the binary itself and
/// which reaches the library only as `goldgate`.
pub(super) struct Place {
    pub(super) module: Vec<String>,
    pub(super) binary: bool,
}

impl Place {
    /// The place of a file of `src/` from its path there, `/`-separated.
    pub(super) fn of(relative: &str, binary: bool) -> Place {
        let mut module: Vec<String> = relative
            .trim_end_matches(".rs")
            .split('/')
            .map(str::to_owned)
            .collect();
        if module.last().is_some_and(|last| last == "mod") {
            module.pop();
        }
        Place { module, binary }
    }
}

/// The code a scan reads: `text` without comments, strings or `#[cfg(test)]` items.
pub(super) fn code_of(text: &str) -> String {
    without_tests(&blank(text))
}

/// The file uses `#[macro_use]` (in code, not in a comment, string or test).
pub(super) fn uses_macro_use(code: &str) -> bool {
    code.split_whitespace()
        .collect::<String>()
        .contains("#[macro_use]")
}

/// The top-level modules of its crate that `code` (read by [`code_of`]) names.
pub(super) fn named_modules(code: &str, place: &Place) -> BTreeSet<String> {
    let mut roots = if place.binary {
        vec!["goldgate".to_owned()]
    } else {
        ["crate", "$crate", "goldgate"].map(String::from).to_vec()
    };
    roots.extend(root_aliases(code, place));
    let inline = inline_modules(code);
    let mut found = BTreeSet::new();
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let Some(word) = path_start(code, at) else {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let (segments, after) = leading_segments(rest);
        let named = resolve(&segments, place, &roots, &inline, at);
        at += after.max(word.len());
        let Some(named) = named else {
            continue;
        };
        let tail = &rest[after..];
        if named.is_empty() && tail.starts_with('{') {
            // `crate::{a::X, b::{c, d}}`: the first segment of each item of the group.
            let end = closing_brace(tail, 0).unwrap_or(tail.len());
            found.extend(items(&tail[1..end]).map(first_segment));
        } else if named.is_empty() {
            found.insert(first_segment(tail));
        } else {
            found.insert(named);
        }
    }
    found.retain(|m| !m.is_empty() && m != "self");
    found
}

/// The identifier (or `$crate`) a path starts with at `at`, when one starts there: not in the
/// middle of a word, and not after `::` unless the `::` itself opens the path (`::goldgate`).
fn path_start(code: &str, at: usize) -> Option<&str> {
    let bytes = code.as_bytes();
    let word_byte = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let first = *bytes.get(at)?;
    if !(first.is_ascii_alphabetic() || first == b'_' || first == b'$') {
        return None;
    }
    let before = &bytes[..at];
    let opens = match before {
        [.., b':', b':'] => before[..at - 2]
            .last()
            .is_none_or(|&b| !(word_byte(b) || b == b'>' || b == b':')),
        [.., b] => !(word_byte(*b) || *b == b'$'),
        [] => true,
    };
    let len = bytes[at + 1..]
        .iter()
        .take_while(|&&b| word_byte(b))
        .count()
        + 1;
    opens.then(|| &code[at..at + len])
}

/// The `word::word::` segments `rest` opens with, and where what follows them starts.
fn leading_segments(rest: &str) -> (Vec<&str>, usize) {
    let mut segments = Vec::new();
    let mut at = 0;
    loop {
        let tail = &rest[at..];
        let len = tail
            .char_indices()
            .take_while(|&(i, c)| c.is_alphanumeric() || c == '_' || (i == 0 && c == '$'))
            .count();
        let after = tail[len..].trim_start();
        if len == 0 || !after.starts_with("::") {
            return (segments, at);
        }
        segments.push(&tail[..len]);
        let skipped = tail.len() - after.len() + 2;
        at += skipped + (tail[skipped..].len() - tail[skipped..].trim_start().len());
    }
}

/// What a path of `segments` (each followed by `::`) names at the crate root: `Some("")` when
/// it reaches the root itself (the module follows), `Some(module)` when it passed the root
/// into a module by a `super` chain, `None` when it does not reach the root.
fn resolve(
    segments: &[&str],
    place: &Place,
    roots: &[String],
    inline: &[(usize, usize, String)],
    at: usize,
) -> Option<String> {
    let first = *segments.first()?;
    if roots.iter().any(|root| root == first) {
        return Some(segments.get(1).map_or(String::new(), |m| (*m).to_owned()));
    }
    if place.binary || first != "super" {
        return None;
    }
    let mut module = place.module.clone();
    module.extend(
        inline
            .iter()
            .filter(|(start, end, _)| (*start..*end).contains(&at))
            .map(|(_, _, name)| name.clone()),
    );
    let supers = segments.iter().take_while(|&&s| s == "super").count();
    if supers != module.len() {
        // Not up to the root: within the file's own top-level module (or not Rust at all).
        return None;
    }
    Some(
        segments
            .get(supers)
            .map_or(String::new(), |m| (*m).to_owned()),
    )
}

/// Names that stand for the crate root in `code`: `use crate as c;`, `use crate::{self as
/// c}`, `use super as c;` from a top-level file, `extern crate self as c;`.
fn root_aliases(code: &str, place: &Place) -> Vec<String> {
    let mut aliases = Vec::new();
    for statement in code.split(';') {
        let words = statement.split_whitespace().collect::<Vec<_>>().join(" ");
        let (path, alias) = if let Some((_, tree)) = words.split_once("extern crate ") {
            match tree.split_once(" as ") {
                Some(("self", alias)) if !place.binary => ("crate".to_owned(), alias.to_owned()),
                _ => continue,
            }
        } else if let Some((_, tree)) = words.split_once("use ") {
            let tree = tree.trim_start_matches(':');
            match tree.split_once("::{") {
                Some((path, group)) => match group
                    .trim_end_matches('}')
                    .split(',')
                    .find_map(|item| item.trim().strip_prefix("self as "))
                {
                    Some(alias) => (path.to_owned(), alias.to_owned()),
                    None => continue,
                },
                None => match tree.split_once(" as ") {
                    Some((path, alias)) => (path.to_owned(), alias.to_owned()),
                    None => continue,
                },
            }
        } else {
            continue;
        };
        let path = path.replace(' ', "");
        let supers = path.split("::").filter(|s| *s == "super").count();
        let is_root = match path.as_str() {
            "goldgate" => true,
            "crate" => !place.binary,
            _ => {
                !place.binary
                    && path.split("::").all(|s| s == "super")
                    && supers == place.module.len()
            }
        };
        let alias = alias.trim();
        if is_root && !alias.is_empty() && alias.chars().all(|c| c.is_alphanumeric() || c == '_') {
            aliases.push(alias.to_owned());
        }
    }
    aliases
}

/// The inline modules of `code` (`mod name { ... }`), as the byte range of their braces and
/// their name.
fn inline_modules(code: &str) -> Vec<(usize, usize, String)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("mod ") {
        let start = from + at;
        from = start + 4;
        let boundary = start == 0 || !code.as_bytes()[start - 1].is_ascii_alphanumeric();
        let rest = code[from..].trim_start();
        let name = first_segment(rest);
        let after = rest[name.len()..].trim_start();
        if boundary && !name.is_empty() && after.starts_with('{') {
            let open = code.len() - after.len();
            if let Some(close) = closing_brace(code, open) {
                found.push((open, close, name));
            }
        }
    }
    found
}

/// `code` with comments removed and the insides of string and character literals blanked,
/// line breaks kept.
fn blank(code: &str) -> String {
    let chars: Vec<char> = code.chars().collect();
    let mut out = String::with_capacity(code.len());
    let mut i = 0;
    while i < chars.len() {
        let rest = &chars[i..];
        let raw_hashes = raw_string_start(rest);
        if rest.starts_with(&['/', '/']) {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if rest.starts_with(&['/', '*']) {
            let end = find(&chars, i + 2, &['*', '/']).map_or(chars.len(), |at| at + 2);
            out.extend(chars[i..end].iter().filter(|&&c| c == '\n'));
            i = end;
        } else if let Some((prefix, hashes)) = raw_hashes {
            let mut close = vec!['"'];
            close.extend(std::iter::repeat_n('#', hashes));
            let start = i + prefix;
            let end = find(&chars, start, &close).map_or(chars.len(), |at| at + close.len());
            out.push('"');
            out.extend(chars[start..end].iter().map(|&c| blanked(c)));
            i = end;
        } else if chars[i] == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                let step = if chars[i] == '\\' { 2 } else { 1 };
                out.extend(
                    chars[i..(i + step).min(chars.len())]
                        .iter()
                        .map(|&c| blanked(c)),
                );
                i += step;
            }
            out.push('"');
            i += 1;
        } else if chars[i] == '\'' {
            // A character literal ('x', '\n', '{'); otherwise a lifetime ('a).
            let end = match rest.get(1) {
                Some('\\') => find(&chars, i + 2, &['\'']).map(|at| at + 1),
                Some(_) if rest.get(2) == Some(&'\'') => Some(i + 3),
                _ => None,
            };
            out.push('\'');
            match end {
                Some(end) => {
                    out.push_str(&" ".repeat(end - i - 1));
                    i = end;
                }
                None => i += 1,
            }
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

fn blanked(c: char) -> char {
    if c == '\n' { c } else { ' ' }
}

/// `r"`, `r#"`, `br##"` ...: how many characters open it, and its number of `#`.
fn raw_string_start(rest: &[char]) -> Option<(usize, usize)> {
    let after_b = usize::from(rest.first() == Some(&'b'));
    if rest.get(after_b) != Some(&'r') {
        return None;
    }
    let hashes = rest[after_b + 1..]
        .iter()
        .take_while(|&&c| c == '#')
        .count();
    (rest.get(after_b + 1 + hashes) == Some(&'"')).then_some((after_b + 2 + hashes, hashes))
}

fn find(chars: &[char], from: usize, needle: &[char]) -> Option<usize> {
    (from..chars.len()).find(|&at| chars[at..].starts_with(needle))
}

/// `code` (blanked) without its `#[cfg(test)]` items: each attribute, and the item after it
/// up to its `;` or the brace that closes it.
fn without_tests(code: &str) -> String {
    const ATTRIBUTE: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find(ATTRIBUTE) {
        out.push_str(&rest[..at]);
        let item = &rest[at + ATTRIBUTE.len()..];
        let end = match (item.find('{'), item.find(';')) {
            (Some(open), Some(semi)) if semi < open => semi + 1,
            (Some(open), _) => closing_brace(item, open).map_or(item.len(), |close| close + 1),
            (None, Some(semi)) => semi + 1,
            (None, None) => item.len(),
        };
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

fn closing_brace(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (at, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + at);
                }
            }
            _ => {}
        }
    }
    None
}

/// The items of a `use` group, split at its top-level commas.
fn items(group: &str) -> impl Iterator<Item = &str> {
    let mut depth = 0;
    let mut start = 0;
    let mut cuts = Vec::new();
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                cuts.push(&group[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    cuts.push(&group[start..]);
    cuts.into_iter().map(str::trim)
}

fn first_segment(path: &str) -> String {
    path.trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}
