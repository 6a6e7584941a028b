//! Deterministic mutants of golden and config files, for `tests/lint_mutants.rs`.
//!
//! Each [`Kind`] is one way real files get damaged or abused: bit rot, a cut-off download, a
//! hostile document (deep nesting, huge scalars, alias bombs), an editor's byte order mark or
//! line endings, binary junk, and the CSV quoting mistakes spreadsheets make. A mutant is a pure
//! function of the seed file, its kind and a PRNG seeded from the file's name and the mutant's
//! index, so any failure reproduces from those three alone.

pub mod verdict;

use fastrand::Rng;

/// One way of damaging a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// XOR a few bytes with random values.
    ByteFlip,
    /// Overwrite a few bytes with characters that mean something to YAML or CSV.
    Syntax,
    /// Cut the file at a random point (possibly inside a UTF-8 sequence).
    Truncate,
    /// Duplicate, delete or swap lines: duplicate keys, lost parents, misplaced items.
    Lines,
    /// Shift a line's indentation or turn it into tabs.
    Indent,
    /// Replace a value with an odd scalar: `.nan`, `1e999`, `~`, a tag, a huge integer.
    Scalar,
    /// `[`, `{a: ` or `- k:` nested past the budget (in YAML, or in a CSV JSON cell).
    DeepNesting,
    /// A long value, key, quoted string or block scalar (1 MiB at `Budget::Full`).
    LongScalar,
    /// Anchors and aliases: undefined, recursive, merged, amplified, billion laughs.
    Aliases,
    /// A UTF-8 byte order mark at the start (sometimes twice, or in the middle).
    Bom,
    /// CRLF or lone CR line endings.
    LineEndings,
    /// NUL bytes.
    Nul,
    /// Bytes that are not UTF-8: lone continuation bytes, truncated sequences, surrogates.
    InvalidUtf8,
    /// Unbalanced quotes, newlines in cells, broken JSON cells, wrong field counts.
    CsvQuoting,
}

pub const KINDS: [Kind; 14] = [
    Kind::ByteFlip,
    Kind::Syntax,
    Kind::Truncate,
    Kind::Lines,
    Kind::Indent,
    Kind::Scalar,
    Kind::DeepNesting,
    Kind::LongScalar,
    Kind::Aliases,
    Kind::Bom,
    Kind::LineEndings,
    Kind::Nul,
    Kind::InvalidUtf8,
    Kind::CsvQuoting,
];

/// Light kinds that may be stacked after the main one.
const STACKABLE: [Kind; 8] = [
    Kind::ByteFlip,
    Kind::Syntax,
    Kind::Lines,
    Kind::Indent,
    Kind::Scalar,
    Kind::Bom,
    Kind::LineEndings,
    Kind::CsvQuoting,
];

const MIB: usize = 1024 * 1024;

/// Values that stress number parsing, null handling, tags and YAML's implicit typing.
const ODD_SCALARS: [&str; 44] = [
    "null",
    "~",
    "[]",
    "{}",
    "''",
    "\"\"",
    "-1",
    "0",
    "-0",
    "1e999",
    "-1e999",
    ".nan",
    ".NaN",
    ".inf",
    "-.inf",
    "NaN",
    "1.7976931348623157e309",
    "18446744073709551616",
    "-9223372036854775809",
    "0x7fffffffffffffff",
    "0o777",
    "+1",
    "1_000",
    "1.5",
    "true",
    "no",
    "2026-13-45",
    "!!binary aGVsbG8=",
    "!!str 1",
    "!!int x",
    "!custom value",
    "!<tag:x> y",
    "*undefined",
    "&anchor",
    "|",
    ">-",
    "? complex",
    "- - -",
    "\"\\uD800\"",
    "\"\\0\\x00\"",
    "'unterminated",
    "[unclosed",
    "\u{202e}txt.exe",
    "\u{1F600}\u{0301}",
];

/// Characters with a meaning in YAML or CSV.
const SYNTAX_BYTES: &[u8] = b":-[]{}\"'&*!|>#,%@`?\t\n\r \\";

/// How big a mutant may get: `Small` (64 KiB scalars, 65 to 1,000 levels), `Full` (1 MiB,
/// 10k levels) or `Heavy` (4 MiB, 100k levels, a full billion-laughs bomb). The caller keeps
/// the big ones few, so that the whole run stays fast in a debug build.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Budget {
    Small,
    Full,
    Heavy,
}

/// The mutant of `seed` of the given kind; the same arguments give the same bytes.
pub fn mutate(seed: &[u8], kind: Kind, budget: Budget, rng: &mut Rng) -> Vec<u8> {
    let mut bytes = apply(seed, kind, budget, rng);
    if rng.u8(..4) == 0 {
        let extra = STACKABLE[rng.usize(..STACKABLE.len())];
        bytes = apply(&bytes, extra, Budget::Small, rng);
    }
    bytes
}

fn apply(seed: &[u8], kind: Kind, budget: Budget, rng: &mut Rng) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    match kind {
        Kind::ByteFlip => {
            for _ in 0..rng.usize(1..=8) {
                if let Some(at) = pick(&bytes, rng) {
                    bytes[at] ^= rng.u8(1..);
                }
            }
        }
        Kind::Syntax => {
            for _ in 0..rng.usize(1..=4) {
                let byte = SYNTAX_BYTES[rng.usize(..SYNTAX_BYTES.len())];
                match pick(&bytes, rng) {
                    Some(at) if rng.bool() => bytes[at] = byte,
                    Some(at) => bytes.insert(at, byte),
                    None => bytes.push(byte),
                }
            }
        }
        Kind::Truncate => {
            let at = rng.usize(..=bytes.len());
            bytes.truncate(at);
        }
        Kind::Lines => lines(&mut bytes, rng),
        Kind::Indent => indent(&mut bytes, rng),
        Kind::Scalar => {
            let value = ODD_SCALARS[rng.usize(..ODD_SCALARS.len())];
            replace_value(&mut bytes, value.as_bytes(), rng);
        }
        Kind::DeepNesting => bytes = deep_nesting(&bytes, budget, rng),
        Kind::LongScalar => bytes = long_scalar(&bytes, budget, rng),
        Kind::Aliases => bytes = aliases(&bytes, budget, rng),
        Kind::Bom => {
            const BOM: &[u8] = "\u{feff}".as_bytes();
            let (at, times) = match rng.u8(..4) {
                0 => (0, 2),
                1 => (line_start(&bytes, rng), 1),
                _ => (0, 1),
            };
            bytes.splice(at..at, BOM.repeat(times));
        }
        Kind::LineEndings => {
            let ending: &[u8] = match rng.u8(..4) {
                0 => b"\r",
                1 => b"\n\r",
                _ => b"\r\n",
            };
            let all = rng.u8(..3) != 0;
            bytes = replace_newlines(&bytes, ending, all, rng);
        }
        Kind::Nul => {
            for _ in 0..rng.usize(1..=3) {
                let at = rng.usize(..=bytes.len());
                bytes.insert(at, 0);
            }
        }
        Kind::InvalidUtf8 => {
            const JUNK: [&[u8]; 7] = [
                b"\xff",
                b"\x80",
                b"\xc3",
                b"\xe2\x82",
                b"\xc0\xaf",
                b"\xed\xa0\x80",
                b"\xf4\x90\x80\x80",
            ];
            let junk = JUNK[rng.usize(..JUNK.len())];
            let at = rng.usize(..=bytes.len());
            bytes.splice(at..at, junk.iter().copied());
        }
        Kind::CsvQuoting => csv_quoting(&mut bytes, budget, rng),
    }
    bytes
}

/// A random index into `bytes`, if it has any.
fn pick(bytes: &[u8], rng: &mut Rng) -> Option<usize> {
    (!bytes.is_empty()).then(|| rng.usize(..bytes.len()))
}

/// The byte ranges of the lines, each without its `\n`.
fn line_ranges(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut start = 0;
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'\n' {
            ranges.push((start, i));
            start = i + 1;
        }
    }
    if start < bytes.len() {
        ranges.push((start, bytes.len()));
    }
    ranges
}

/// The start of a random line (0 for an empty file).
fn line_start(bytes: &[u8], rng: &mut Rng) -> usize {
    let ranges = line_ranges(bytes);
    if ranges.is_empty() {
        0
    } else {
        ranges[rng.usize(..ranges.len())].0
    }
}

fn lines(bytes: &mut Vec<u8>, rng: &mut Rng) {
    let ranges = line_ranges(bytes);
    if ranges.is_empty() {
        return;
    }
    let (start, end) = ranges[rng.usize(..ranges.len())];
    match rng.u8(..3) {
        0 => {
            let mut line = bytes[start..end].to_vec();
            line.push(b'\n');
            bytes.splice(start..start, line);
        }
        1 => {
            let end = (end + 1).min(bytes.len());
            bytes.drain(start..end);
        }
        _ => {
            let (other_start, other_end) = ranges[rng.usize(..ranges.len())];
            let (first, second) = if other_start < start {
                ((other_start, other_end), (start, end))
            } else {
                ((start, end), (other_start, other_end))
            };
            if first.1 <= second.0 {
                let a = bytes[first.0..first.1].to_vec();
                let b = bytes[second.0..second.1].to_vec();
                bytes.splice(second.0..second.1, a);
                bytes.splice(first.0..first.1, b);
            }
        }
    }
}

fn indent(bytes: &mut Vec<u8>, rng: &mut Rng) {
    let at = line_start(bytes, rng);
    match rng.u8(..4) {
        0 => bytes.insert(at, b'\t'),
        1 => bytes.insert(at, b' '),
        2 => {
            if bytes.get(at) == Some(&b' ') {
                bytes.remove(at);
            }
        }
        _ => {
            let spaces = bytes[at..].iter().take_while(|b| **b == b' ').count();
            bytes.splice(
                at..at + spaces,
                std::iter::repeat_n(b'\t', spaces.div_ceil(2)),
            );
        }
    }
}

/// Replaces what follows a random `: ` (YAML) or a random cell (CSV) up to the line's end or
/// the next comma with `value`; appends it as a new line when the file has neither.
fn replace_value(bytes: &mut Vec<u8>, value: &[u8], rng: &mut Rng) {
    let separators: Vec<usize> = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b':' || **b == b',')
        .map(|(i, _)| i + 1)
        .collect();
    if separators.is_empty() {
        bytes.extend_from_slice(b"\nkey: ");
        bytes.extend_from_slice(value);
        return;
    }
    let start = separators[rng.usize(..separators.len())];
    let end = bytes[start..]
        .iter()
        .position(|b| matches!(b, b'\n' | b',' | b'}' | b']'))
        .map_or(bytes.len(), |n| start + n);
    let mut replacement = Vec::with_capacity(value.len() + 1);
    if bytes[start - 1] == b':' {
        replacement.push(b' ');
    }
    replacement.extend_from_slice(value);
    bytes.splice(start..end, replacement);
}

/// Inserts `text` at the start of a random line, or replaces a random value with it.
fn insert_somewhere(bytes: &mut Vec<u8>, text: &[u8], rng: &mut Rng) {
    if rng.bool() {
        replace_value(bytes, text, rng);
    } else {
        let at = line_start(bytes, rng);
        bytes.splice(at..at, text.iter().copied());
    }
}

fn deep_nesting(seed: &[u8], budget: Budget, rng: &mut Rng) -> Vec<u8> {
    let depth = match budget {
        Budget::Heavy => 100_000,
        Budget::Full => 10_000,
        Budget::Small => [65, 129, 1_000][rng.usize(..3)],
    };
    let closed = rng.bool();
    let mut bytes = seed.to_vec();
    let nest = match rng.u8(..4) {
        0 => {
            let mut text = b"[".repeat(depth);
            if closed {
                text.extend(b"]".repeat(depth));
            }
            text
        }
        1 => {
            let mut text = b"{a: ".repeat(depth);
            text.push(b'1');
            if closed {
                text.extend(b"}".repeat(depth));
            }
            text
        }
        2 => {
            // A JSON cell in a CSV, quoted the CSV way.
            let mut text = b"\"".to_vec();
            text.extend(b"{\"\"a\"\": [".repeat(depth.min(10_000)));
            text.extend(b"]}".repeat(if closed { depth.min(10_000) } else { 1 }));
            text.push(b'"');
            text
        }
        _ => {
            // Block style: each level indented one more space (quadratic, so shallower).
            let depth = depth.min(1_000);
            let mut text = Vec::new();
            for level in 0..depth {
                text.extend(std::iter::repeat_n(b' ', level));
                text.extend_from_slice(b"- k:\n");
            }
            text
        }
    };
    insert_somewhere(&mut bytes, &nest, rng);
    bytes
}

fn long_scalar(seed: &[u8], budget: Budget, rng: &mut Rng) -> Vec<u8> {
    let len = match budget {
        Budget::Heavy => 4 * MIB,
        Budget::Full => MIB,
        Budget::Small => 64 * 1024,
    };
    let unit: &[u8] = [b"x".as_slice(), b"ab ", "\u{e9}".as_bytes(), b"\\n"][rng.usize(..4)];
    let mut long: Vec<u8> = unit.repeat(len / unit.len());
    let mut bytes = seed.to_vec();
    match rng.u8(..4) {
        0 => replace_value(&mut bytes, &long, rng),
        1 => {
            // A long key.
            long.extend_from_slice(b": 1\n");
            let at = line_start(&bytes, rng);
            bytes.splice(at..at, long);
        }
        2 => {
            // A long quoted scalar (a CSV cell or a YAML string).
            let mut quoted = vec![b'"'];
            quoted.extend(long);
            quoted.push(b'"');
            replace_value(&mut bytes, &quoted, rng);
        }
        _ => {
            // A long block scalar: many lines, indented deeper than any key.
            let mut block = b"|\n".to_vec();
            let mut line = vec![b' '; 20];
            line.extend(unit.repeat(64 / unit.len()));
            line.push(b'\n');
            block.extend(line.repeat(len / line.len()));
            replace_value(&mut bytes, &block, rng);
        }
    }
    bytes
}

fn aliases(seed: &[u8], budget: Budget, rng: &mut Rng) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    if budget == Budget::Heavy {
        // The billion laughs: nine levels of nine aliases each.
        let mut bomb = String::from("lol0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for level in 1..9 {
            let refs = vec![format!("*l{}", level - 1); 9].join(", ");
            bomb.push_str(&format!("lol{level}: &l{level} [{refs}]\n"));
        }
        bytes.splice(0..0, bomb.into_bytes());
        replace_value(&mut bytes, b"*l8", rng);
        return bytes;
    }
    match rng.u8(..6) {
        0 => replace_value(&mut bytes, b"*nowhere", rng),
        1 => replace_value(&mut bytes, b"&self [*self]", rng),
        2 => {
            // An anchor on one value, an alias in place of another.
            replace_value(&mut bytes, b"&a {x: 1, y: [2, 3]}", rng);
            replace_value(&mut bytes, b"*a", rng);
        }
        3 => {
            let at = line_start(&bytes, rng);
            bytes.splice(at..at, b"<<: *nowhere\n".iter().copied());
        }
        4 => {
            // A small amplification: 9^3 nodes, well inside the budget.
            let mut text = String::from("&m0 [a, b, c, d, e, f, g, h, i]");
            for level in 1..3 {
                let refs = vec![format!("*m{}", level - 1); 9].join(", ");
                text = format!("[{text}, &m{level} [{refs}]]");
            }
            replace_value(&mut bytes, text.as_bytes(), rng);
        }
        _ => {
            // An anchored mapping merged into another.
            let at = line_start(&bytes, rng);
            bytes.splice(at..at, b"base: &base {k: v}\n".iter().copied());
            replace_value(&mut bytes, b"{<<: *base, k: w}", rng);
        }
    }
    bytes
}

fn replace_newlines(bytes: &[u8], ending: &[u8], all: bool, rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 16);
    for &b in bytes {
        if b == b'\n' && (all || rng.bool()) {
            out.extend_from_slice(ending);
        } else {
            out.push(b);
        }
    }
    out
}

fn csv_quoting(bytes: &mut Vec<u8>, budget: Budget, rng: &mut Rng) {
    let quotes: Vec<usize> = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'"')
        .map(|(i, _)| i)
        .collect();
    match rng.u8(..7) {
        // An unbalanced quote.
        0 => {
            let at = rng.usize(..=bytes.len());
            bytes.insert(at, b'"');
        }
        // A closing quote lost.
        1 if !quotes.is_empty() => {
            bytes.remove(quotes[rng.usize(..quotes.len())]);
        }
        // A newline (or CRLF) inside a quoted cell.
        2 if quotes.len() >= 2 => {
            let at = quotes[rng.usize(..quotes.len() - 1)] + 1;
            let newline: &[u8] = if rng.bool() { b"\n" } else { b"\r\n" };
            bytes.splice(at..at, newline.iter().copied());
        }
        // A doubled quote inside a JSON cell undone (`""a""` becomes `"a"`), or one added.
        3 => {
            let doubled = bytes.windows(2).position(|w| w == b"\"\"");
            match doubled {
                Some(at) if rng.bool() => {
                    bytes.remove(at);
                }
                _ => replace_value(bytes, br#""{""a"": "b""}""#, rng),
            }
        }
        // A JSON cell that is not JSON, or JSON of the wrong shape.
        4 => {
            let cells: [&[u8]; 6] = [
                br#""{""a"": }""#,
                br#""[1, 2""#,
                br#""{""a"": NaN}""#,
                br#""1e999""#,
                br#""null""#,
                br#""""""#,
            ];
            replace_value(bytes, cells[rng.usize(..cells.len())], rng);
        }
        // A row with more or fewer fields.
        5 => {
            let at = line_start(bytes, rng);
            let extra: &[u8] = if rng.bool() { b",,," } else { b"" };
            let end = bytes[at..]
                .iter()
                .position(|b| *b == b'\n')
                .map_or(bytes.len(), |n| at + n);
            if extra.is_empty() {
                if let Some(comma) = bytes[at..end].iter().rposition(|b| *b == b',') {
                    bytes.remove(at + comma);
                }
            } else {
                bytes.splice(end..end, extra.iter().copied());
            }
        }
        // Many rows: a header repeated or a row copied a few thousand times.
        _ => {
            let ranges = line_ranges(bytes);
            if let Some(&(start, end)) = ranges.get(rng.usize(..ranges.len().max(1))) {
                let times = match budget {
                    Budget::Heavy => 20_000,
                    Budget::Full => 2_000,
                    Budget::Small => 200,
                };
                let mut line = bytes[start..end].to_vec();
                line.push(b'\n');
                let copies = line.repeat(times);
                bytes.splice(start..start, copies);
            }
        }
    }
}
