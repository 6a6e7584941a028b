//! Outside text made inert in the HTML page, one helper per place it can land:
//! - [`text`]: element content and double-quoted attribute values written by the Rust side
//!   (`&`, `<`, `>`, `"` and `'` become character references, so no tag or attribute can start).
//! - [`script_json`]: the report as JSON inside `<script type="application/json">`. JSON's own
//!   string escapes are kept and `<`, `>`, `&`, U+2028 and U+2029 are written as `\uXXXX`
//!   escapes too: no `</script>` or `<!--` can end or change the block, and the text parses
//!   back to the same value (those characters can only occur inside JSON strings).
//!
//! The page's script never turns data into markup: it builds elements and sets `textContent`.

use std::fmt::Write as _;

/// `text` as HTML element content or a double-quoted attribute value.
pub fn text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `json` (serde_json's output) made safe to sit between `<script type="application/json">`
/// and `</script>`.
pub fn script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 16);
    for c in json.chars() {
        match c {
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{script_json, text};

    const PAYLOADS: [&str; 6] = [
        "<script>window.pwned=1</script>",
        "<img src=x onerror=\"window.pwned=2\">",
        "</script><script>window.pwned=3</script>",
        "<!-- <script>",
        "a\u{2028}b\u{2029}c & d",
        "\" onmouseover='window.pwned=4' x=\"",
    ];

    #[test]
    fn text_leaves_no_tag_or_attribute_open() {
        for payload in PAYLOADS {
            let escaped = text(payload);
            assert!(
                !escaped.contains(['<', '>', '"', '\'']),
                "{payload} -> {escaped}"
            );
        }
        assert_eq!(
            text("<b class=\"x\">Tom's & Jerry</b>"),
            "&lt;b class=&quot;x&quot;&gt;Tom&#39;s &amp; Jerry&lt;/b&gt;"
        );
    }

    #[test]
    fn script_json_cannot_end_the_block_and_reads_back_the_same() {
        for payload in PAYLOADS {
            let json = serde_json::to_string(&serde_json::json!({ "reply": payload })).unwrap();
            let safe = script_json(&json);
            assert!(!safe.contains(['<', '>', '&']), "{safe}");
            assert!(!safe.contains(['\u{2028}', '\u{2029}']), "{safe}");
            let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
            assert_eq!(back["reply"], payload);
        }
        assert_eq!(
            script_json(r#"{"a":"</script>"}"#),
            r#"{"a":"\u003c/script\u003e"}"#
        );
    }
}
