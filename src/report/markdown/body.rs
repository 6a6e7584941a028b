//! The body assembled from whole blocks under a byte budget.
//!
//! The head (verdict, aggregates) and the foot (the run link) are always shown. Between them,
//! each section adds its items (a list line, a whole `<details>` block) while they fit, and
//! counts the ones that do not; [`Body::finish`] says what was left out. Because an item is
//! either in whole or out, no cut can land inside a code fence or an open `<details>`.

use std::fmt::Write as _;

use super::{COMMENT_LIMIT, thousands};

pub(super) struct Body {
    pub head: String,
    pub foot: String,
    blocks: Vec<String>,
    /// Bytes that the head, the blocks and the foot may take together.
    budget: usize,
    /// What did not fit: (how many, of what).
    left_out: Vec<(usize, &'static str)>,
}

impl Body {
    pub fn new(budget: usize) -> Self {
        Self {
            head: String::new(),
            foot: String::new(),
            blocks: Vec::new(),
            budget,
            left_out: Vec::new(),
        }
    }

    /// Adds a section: its heading with as many of `items` as fit (nothing when none does).
    pub fn section(&mut self, heading: String, items: Vec<String>, what: &'static str) {
        if items.is_empty() {
            return;
        }
        let used =
            self.head.len() + self.foot.len() + self.blocks.iter().map(String::len).sum::<usize>();
        let mut block = heading;
        let mut shown = 0;
        for item in &items {
            if used + block.len() + item.len() + 1 > self.budget {
                break;
            }
            block.push_str(item);
            shown += 1;
        }
        if shown > 0 {
            block.push('\n');
            self.blocks.push(block);
        }
        if shown < items.len() {
            self.left_out.push((items.len() - shown, what));
        }
    }

    /// The text, with a note naming what did not fit.
    pub fn finish(self) -> String {
        let mut out = self.head;
        for block in self.blocks {
            out.push_str(&block);
        }
        if !self.left_out.is_empty() {
            let parts: Vec<String> = self
                .left_out
                .iter()
                .map(|(n, what)| format!("{n} {what}"))
                .collect();
            let _ = writeln!(
                out,
                "> [!NOTE]\n> Not shown, to stay within GitHub's {} characters: {}. The JSON report has everything.\n",
                thousands(COMMENT_LIMIT as u64),
                parts.join(", ")
            );
        }
        out.push_str(&self.foot);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_go_in_whole_until_the_budget_and_the_rest_is_counted() {
        let mut body = Body::new(70);
        body.head.push_str("head\n");
        body.foot.push_str("foot\n");
        let items = (0..5).map(|i| format!("- item {i}, 22 bytes.\n")).collect();
        body.section("## list\n".to_owned(), items, "items");
        body.section("## more\n".to_owned(), vec!["x".repeat(100)], "blocks");
        let text = body.finish();
        assert!(text.starts_with("head\n## list\n- item 0"), "{text}");
        assert!(
            text.contains("- item 1") && !text.contains("- item 2"),
            "{text}"
        );
        assert!(!text.contains("## more"), "{text}");
        assert!(
            text.contains(
                "Not shown, to stay within GitHub's 65,536 characters: 3 items, 1 blocks."
            ),
            "{text}"
        );
        assert!(text.ends_with("foot\n"), "{text}");
    }
}
