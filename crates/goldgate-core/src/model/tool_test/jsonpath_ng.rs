//! The member names jsonpath_ng reads in dot notation, written as RFC 9535 reads them.
//!
//! SCRAPI's tool tests query results with jsonpath_ng (`jsonpath_ng.parse`), whose lexer
//! (jsonpath_ng/lexer.py, h2non/jsonpath-ng 4b36862) takes after a `.` a name of
//! `[a-zA-Z_@]` then `[a-zA-Z0-9_@\-]` (so `$.result.tracking-number`), or a single- or
//! double-quoted name with `\` escapes (`$.result.'a b'`). RFC 9535 wants those in brackets:
//! `$.result['tracking-number']`. Indexes, `[*]`, `..` and everything inside brackets read the
//! same in both and are left as written.

/// `path` with every dot-notation name that RFC 9535 would refuse put in brackets.
pub(super) fn to_rfc9535(path: &str) -> String {
    let mut out = String::with_capacity(path.len() + 8);
    let mut chars = path.char_indices().peekable();
    let mut depth = 0usize;
    while let Some((_, c)) = chars.next() {
        out.push(c);
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            '.' if depth == 0 => {
                if chars.peek().is_some_and(|(_, n)| *n == '.') {
                    continue;
                }
                let rest = chars.peek().map_or("", |&(i, _)| &path[i..]);
                if let Some((name, used)) = member_name(rest) {
                    // `.name` becomes `['name']`; `..name` keeps its `..`.
                    if !out.ends_with("..") {
                        out.pop();
                    }
                    out.push_str(&format!("['{}']", escape(&name)));
                    for _ in 0..used {
                        chars.next();
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// A dot-notation name at the start of `rest` that needs brackets, and how many characters it
/// took; `None` for a name RFC 9535 reads as written (or for anything else).
fn member_name(rest: &str) -> Option<(String, usize)> {
    let first = rest.chars().next()?;
    if first == '\'' || first == '"' {
        let mut name = String::new();
        let mut chars = rest.chars().enumerate().skip(1);
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => name.push(chars.next()?.1),
                c if c == first => return Some((name, i + 1)),
                c => name.push(c),
            }
        }
        return None;
    }
    let is_start = |c: char| c.is_ascii_alphabetic() || c == '_' || c == '@';
    if !is_start(first) {
        return None;
    }
    let name: String = rest
        .chars()
        .take_while(|&c| c.is_ascii_alphanumeric() || matches!(c, '_' | '@' | '-'))
        .collect();
    let needs_brackets = name.contains(['-', '@']);
    needs_brackets.then(|| {
        let used = name.chars().count();
        (name, used)
    })
}

/// A name as an RFC 9535 single-quoted string.
fn escape(name: &str) -> String {
    name.replace('\\', "\\\\").replace('\'', "\\'")
}

#[cfg(test)]
mod tests {
    use super::to_rfc9535;

    #[test]
    fn jsonpath_ng_dot_names_become_bracketed_names() {
        let cases = [
            ("$.result.tracking-number", "$.result['tracking-number']"),
            ("$.result.'a b'", "$.result['a b']"),
            ("$.result.\"a b\".x", "$.result['a b'].x"),
            ("$.result.'it\\'s'", "$.result['it\\'s']"),
            ("$.a.@id", "$.a['@id']"),
            ("$..tracking-number", "$..['tracking-number']"),
            // RFC 9535 already reads these; brackets are left as written.
            ("$.result.items[0].name", "$.result.items[0].name"),
            ("$.result.items[*]", "$.result.items[*]"),
            ("$..name", "$..name"),
            ("$.result[?(@.a-b)]", "$.result[?(@.a-b)]"),
        ];
        for (ng, rfc) in cases {
            assert_eq!(to_rfc9535(ng), rfc, "{ng}");
        }
    }

    #[test]
    fn jsonpath_ng_paths_select_what_jsonpath_ng_selects() {
        let result = serde_json::json!({"result": {"tracking-number": "1Z9", "a b": 2}});
        for (path, value) in [
            ("$.result.tracking-number", "1Z9".into()),
            ("result.'a b'", 2.into()),
        ] {
            let path = super::super::JsonPath::parse(path).unwrap();
            assert_eq!(path.select(&result), Some(value));
        }
    }
}
