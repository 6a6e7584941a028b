//! Outside text (agent replies, golden files, reasons that quote them) made inert in GitHub
//! Markdown.
//!
//! A PR comment is posted by a bot with write access, so whatever an agent answers must not
//! act through it: no @mention may notify anyone, no `#123` may cross-reference another issue,
//! no HTML may render, and no reply may close the code fence it is shown in. Each context gets
//! one helper:
//! - [`fenced`]: multi-line text in a fenced code block whose fence is longer than any run of
//!   backticks inside, so nothing can close it early (GitHub neither renders HTML nor links
//!   mentions inside code).
//! - [`code_span`] and [`html_code`]: one line as inline code, in Markdown or in HTML (the
//!   `<summary>` of a `<details>` block).
//! - [`prose`]: one line as plain text: Markdown punctuation backslash-escaped, and a zero-width
//!   joiner after `@` and `#` so that the text still reads the same but links nothing.
//!
//! Control characters and invisible bidi or zero-width characters are shown as escapes first
//! (the terminal's rule, [`console::escape`]), so a reply cannot hide text from a reviewer.

use std::borrow::Cow;

use crate::report::console;

/// Joins `@` or `#` to nothing visible, so that `@octocat` and `#12` no longer match
/// GitHub's mention and reference patterns.
const ZERO_WIDTH_JOINER: char = '\u{200d}';

/// A fenced code block (ending with a newline) showing `text` verbatim, line by line.
pub fn fenced(text: &str) -> String {
    let lines: Vec<Cow<str>> = text
        .strip_suffix('\n')
        .unwrap_or(text)
        .split('\n')
        .map(console::escape)
        .collect();
    let body = lines.join("\n");
    let fence = "`".repeat(longest_run(&body, '`').max(2) + 1);
    format!("{fence}text\n{body}\n{fence}\n")
}

/// Inline code for Markdown: one line, delimited by more backticks than it contains.
/// `|` is escaped too, because GitHub splits table cells on it even inside code.
pub fn code_span(text: &str) -> String {
    let line = console::escape(text).replace('|', "\\|");
    let ticks = "`".repeat(longest_run(&line, '`') + 1);
    // A space on each side keeps a leading or trailing backtick out of the delimiter.
    let pad = if line.starts_with('`') || line.ends_with('`') || line.is_empty() {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{line}{pad}{ticks}")
}

/// `<code>` for an HTML context such as `<summary>`: HTML-escaped, one line.
pub fn html_code(text: &str) -> String {
    let line = console::escape(text);
    let mut out = String::with_capacity(line.len() + 16);
    out.push_str("<code>");
    for c in line.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out.push_str("</code>");
    out
}

/// Plain running text: one line, no Markdown or HTML syntax, no mentions, no references.
pub fn prose(text: &str) -> String {
    let line = console::escape(text);
    let mut out = String::with_capacity(line.len() + 16);
    for c in line.chars() {
        match c {
            '@' | '#' => {
                if c == '#' {
                    out.push('\\');
                }
                out.push(c);
                out.push(ZERO_WIDTH_JOINER);
            }
            '\\' | '`' | '*' | '_' | '{' | '}' | '[' | ']' | '(' | ')' | '<' | '>' | '+' | '-'
            | '.' | '!' | '|' | '~' | '&' | '=' | ':' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// `text` cut to at most `max_bytes` bytes at a character boundary, and how many characters
/// were left out.
pub fn cut(text: &str, max_bytes: usize) -> (&str, usize) {
    if text.len() <= max_bytes {
        return (text, 0);
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], text[end..].chars().count())
}

/// The length of the longest run of `c` in `text`.
fn longest_run(text: &str, c: char) -> usize {
    let (mut longest, mut run) = (0, 0);
    for ch in text.chars() {
        run = if ch == c { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_outlasts_every_backtick_run_inside() {
        let block = fenced("before\n````\nafter ``````` end");
        assert!(block.starts_with("````````text\n"), "{block}");
        assert!(block.ends_with("\n````````\n"), "{block}");
        assert_eq!(fenced("plain\n"), "```text\nplain\n```\n");
    }

    #[test]
    fn mentions_references_and_html_are_broken_in_prose() {
        let text = prose("ping @octocat about #12 <script>alert(1)</script> [x](http://e)");
        assert!(!text.contains("@octocat"), "{text}");
        assert!(!text.contains("#12"), "{text}");
        assert!(text.contains("\\<script\\>"), "{text}");
        assert!(!text.contains("[x]("), "{text}");
        assert!(text.contains("@\u{200d}octocat"), "{text}");
    }

    #[test]
    fn code_spans_and_html_code_hold_any_line() {
        for (text, span) in [
            ("a`b", "``a`b``"),
            ("`x`", "`` `x` ``"),
            ("a|b", "`a\\|b`"),
            ("two\nlines", "`two\\nlines`"),
        ] {
            assert_eq!(code_span(text), span, "{text:?}");
        }
        assert_eq!(
            html_code("<b>&\"</b>"),
            "<code>&lt;b&gt;&amp;&quot;&lt;/b&gt;</code>"
        );
    }

    #[test]
    fn controls_and_bidi_are_shown_not_obeyed() {
        assert_eq!(
            fenced("a\x1b[31mb\u{202e}c"),
            "```text\na\\u{1b}[31mb\\u{202e}c\n```\n"
        );
    }

    #[test]
    fn cut_never_splits_a_character() {
        let text = "ééé"; // two bytes each
        assert_eq!(cut(text, 3), ("é", 2));
        assert_eq!(cut(text, 6), ("ééé", 0));
        assert_eq!(cut("abc", 0), ("", 3));
    }
}
