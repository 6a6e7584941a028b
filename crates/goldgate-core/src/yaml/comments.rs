//! The comment lines written directly above a mapping key, kept on its [`Key`].
//!
//! YAML gives comments no meaning, but a golden's comments are what its author wrote for the
//! next reader, and goldgate's own writers keep what a format has no key for in comments
//! (`# goldgate name: ...`) that its readers read back. The comments are taken from the text
//! after parsing, by line (the parser's comment events place them only as a hint): the `#`
//! lines right above a key that opens its line (after any `- ` of a sequence item), at that
//! line's indentation.

use super::{Key, Node, Value};

/// Fills in [`Key::comments`] throughout the tree parsed from `text`.
pub(super) fn attach(root: &mut Node, text: &str) {
    if !text.contains('#') {
        return;
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match &mut node.value {
            Value::Seq(items) => stack.extend(items.iter_mut()),
            Value::Map(entries) => {
                for (key, value) in entries.iter_mut() {
                    key.comments = above(&lines, key);
                    stack.push(value);
                }
            }
            _ => {}
        }
    }
}

/// The comments directly above `key`, top first, without their `#` and the space after it.
fn above(lines: &[&str], key: &Key) -> Vec<String> {
    let Some(own) = (key.line as usize)
        .checked_sub(1)
        .and_then(|at| lines.get(at))
    else {
        return Vec::new();
    };
    let opens_its_line = own
        .chars()
        .take(key.column.saturating_sub(1) as usize)
        .all(|c| c == ' ' || c == '-');
    if !opens_its_line {
        return Vec::new();
    }
    let indent = own.len() - own.trim_start().len();
    let mut found: Vec<String> = lines[..key.line as usize - 1]
        .iter()
        .rev()
        .map_while(|line| {
            let body = line.trim_start();
            let at_indent = line.len() - body.len() == indent;
            let text = body.strip_prefix('#').filter(|_| at_indent)?;
            Some(text.strip_prefix(' ').unwrap_or(text).trim_end().to_owned())
        })
        .collect();
    found.reverse();
    found
}

#[cfg(test)]
mod tests {
    use crate::yaml::{Node, parse};

    fn comments_of<'a>(node: &'a Node, key: &str) -> &'a [String] {
        let map = node.as_map().unwrap();
        &map.iter().find(|(k, _)| k.name == key).unwrap().0.comments
    }

    #[test]
    fn comments_right_above_a_key_at_its_indentation_are_kept() {
        let text = "# top\n# second\na: 1\n\n# apart\nb:\n  # inner\n  - # not above\n    c: |\n      # in a block\n    d: 2\n  # item\n  - e: 3\n";
        let root = parse(text).unwrap();
        assert_eq!(comments_of(&root, "a"), ["top", "second"]);
        assert_eq!(comments_of(&root, "b"), ["apart"]);
        let items = root.get("b").unwrap().as_seq().unwrap();
        // `c` does not open its line: the comment on the `-` line is not above it.
        assert!(comments_of(&items[0], "c").is_empty());
        assert!(
            comments_of(&items[0], "d").is_empty(),
            "a block's text is no comment"
        );
        assert_eq!(comments_of(&items[1], "e"), ["item"]);
    }

    #[test]
    fn a_flow_mapping_and_an_anchored_document_keep_them_too() {
        let root = parse("# on x\nx: &a {y: 1}\n# on z\nz: *a\n").unwrap();
        assert_eq!(comments_of(&root, "x"), ["on x"]);
        assert_eq!(comments_of(&root, "z"), ["on z"]);
    }
}
