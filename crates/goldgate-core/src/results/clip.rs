//! What a report keeps of what an agent said. A reply is judged whole, then cut to a bounded
//! slice before it joins the results: a reply may be 16 MiB (and a million tool calls), and
//! kept whole it was copied into every report, every log and memory for every case of the run.
//! Every cut says so where it is read: a cut text ends with how many bytes were left out, and
//! a turn's [`Cut`] counts the messages and tool calls not kept.
//!
//! The case is masked before it is cut: a secret cut in half would no longer be recognised.

use std::io::Write;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{CaseResult, CheckResult, TurnResult};
use crate::secrets::Secrets;
use crate::transcript::Reply;

/// The bytes of text a reply keeps: its messages, then its tool calls' arguments and
/// responses, its variables and its error, in that order, share them.
const REPLY_KEPT: usize = 64 * 1024;
/// The bytes each text of a check (expected, actual, why) and each error keep.
const CHECK_KEPT: usize = 8 * 1024;
/// The messages, and the tool calls, a reply keeps.
pub const ITEMS_KEPT: usize = 100;

/// What a report left out of a turn's reply. Absent when nothing was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Cut {
    /// Bytes of text left out, from the kept items' texts and the items not kept.
    pub bytes: u64,
    /// Messages not kept, past the first [`ITEMS_KEPT`].
    pub messages: u64,
    /// Tool calls not kept, past the first [`ITEMS_KEPT`].
    pub tool_calls: u64,
}

impl std::fmt::Display for Cut {
    /// `goldgate kept part of this reply: 3 messages, 0 tool calls and 12345 bytes left out`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "goldgate kept part of this reply: {} messages, {} tool calls and {} bytes of text \
             left out",
            self.messages, self.tool_calls, self.bytes
        )
    }
}

impl CaseResult {
    /// Masks the case with `secrets`, then cuts every reply and check to what a report keeps.
    pub fn clip(&mut self, secrets: &Secrets) {
        if !secrets.is_empty() {
            super::mask::mask_case(self, secrets);
        }
        if let Some(error) = &mut self.error {
            cut_text(error, CHECK_KEPT);
        }
        self.checks.iter_mut().for_each(clip_check);
        for turn in &mut self.turns {
            clip_turn(turn);
        }
    }
}

fn clip_turn(turn: &mut TurnResult) {
    turn.checks.iter_mut().for_each(clip_check);
    if let Some(error) = &mut turn.error {
        cut_text(error, CHECK_KEPT);
    }
    if let Some(reply) = &mut turn.reply {
        let cut = clip_reply(reply);
        turn.cut = (cut != Cut::default()).then_some(cut);
    }
}

fn clip_check(check: &mut CheckResult) {
    cut_text(&mut check.expected, CHECK_KEPT);
    cut_text(&mut check.actual, CHECK_KEPT);
    if let Some(reason) = &mut check.reason {
        cut_text(reason, CHECK_KEPT);
    }
}

/// Cuts `reply` to [`ITEMS_KEPT`] messages and tool calls and [`REPLY_KEPT`] bytes of text.
fn clip_reply(reply: &mut Reply) -> Cut {
    let mut kept = Kept {
        left: REPLY_KEPT,
        cut: Cut::default(),
    };
    let dropped = reply.messages.len().saturating_sub(ITEMS_KEPT);
    for message in reply.messages.drain(ITEMS_KEPT.min(reply.messages.len())..) {
        kept.cut.bytes += message.text.len() as u64;
    }
    kept.cut.messages = dropped as u64;
    let dropped = reply.tool_calls.len().saturating_sub(ITEMS_KEPT);
    for call in reply
        .tool_calls
        .drain(ITEMS_KEPT.min(reply.tool_calls.len())..)
    {
        kept.cut.bytes += json_len(&call.args) + call.response.as_ref().map_or(0, json_len);
    }
    kept.cut.tool_calls = dropped as u64;
    reply.messages.shrink_to_fit();
    reply.tool_calls.shrink_to_fit();
    for message in &mut reply.messages {
        kept.text(&mut message.text);
    }
    for call in &mut reply.tool_calls {
        kept.value(&mut call.args);
        if let Some(response) = &mut call.response {
            kept.value(response);
        }
    }
    for value in reply.variables.iter_mut().flat_map(|v| v.values_mut()) {
        kept.value(value);
    }
    if let Some(error) = &mut reply.error {
        kept.text(&mut error.message);
    }
    kept.cut
}

/// What is left of a reply's bytes, and what was cut so far.
struct Kept {
    left: usize,
    cut: Cut,
}

impl Kept {
    fn text(&mut self, text: &mut String) {
        let len = text.len();
        self.cut.bytes += cut_text(text, self.left) as u64;
        self.left = self.left.saturating_sub(len);
    }

    /// A value past what is left becomes the start of its JSON text, cut as a text is.
    fn value(&mut self, value: &mut Value) {
        let len = json_len(value) as usize;
        if len > self.left {
            let mut text = value.to_string();
            self.cut.bytes += cut_text(&mut text, self.left) as u64;
            *value = Value::String(text);
        }
        self.left = self.left.saturating_sub(len);
    }
}

/// Cuts `text` to its first `keep` bytes (at a character's start) and says how many were left
/// out; returns that number.
fn cut_text(text: &mut String, keep: usize) -> usize {
    let len = text.len();
    if len <= keep {
        return 0;
    }
    let at = char_start_before(text, keep);
    text.truncate(at);
    text.shrink_to_fit();
    let cut = len - at;
    text.push_str(&format!("… [goldgate cut {cut} of {len} bytes]"));
    cut
}

/// The last character start in `text` at or before byte `at` (`str::floor_char_boundary`,
/// newer than the Rust this crate supports).
pub fn char_start_before(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The length of `value` as JSON, counted without writing it out.
fn json_len(value: &Value) -> u64 {
    struct Count(u64);
    impl Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a Value into a counter cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::transcript::{Message, ToolCall};

    fn message(text: String) -> Message {
        Message { text, agent: None }
    }

    #[test]
    fn a_long_reply_keeps_its_start_and_says_how_much_was_cut() {
        let mut reply = Reply {
            messages: vec![message("é".repeat(REPLY_KEPT)), message("later".into())],
            tool_calls: vec![ToolCall::new("lookup", json!({"q": "x".repeat(100)}))],
            ..Reply::default()
        };
        let cut = clip_reply(&mut reply);
        let first = &reply.messages[0].text;
        assert!(first.starts_with("éé"), "{first}");
        assert!(
            first.ends_with(&format!(
                "… [goldgate cut {} of {} bytes]",
                REPLY_KEPT,
                2 * REPLY_KEPT
            )),
            "{}",
            &first[first.len() - 60..]
        );
        // Nothing is left for what follows: each says it was cut whole.
        assert_eq!(reply.messages[1].text, "… [goldgate cut 5 of 5 bytes]");
        assert!(reply.tool_calls[0].args.is_string());
        assert_eq!(cut.messages, 0);
        assert_eq!(cut.bytes, REPLY_KEPT as u64 + 5 + 108);
    }

    #[test]
    fn messages_and_tool_calls_past_the_bound_are_counted_not_kept() {
        let mut reply = Reply {
            messages: (0..ITEMS_KEPT + 5).map(|_| message("ab".into())).collect(),
            tool_calls: (0..ITEMS_KEPT + 2)
                .map(|_| ToolCall::new("t", json!(1)))
                .collect(),
            ..Reply::default()
        };
        let cut = clip_reply(&mut reply);
        assert_eq!((reply.messages.len(), reply.tool_calls.len()), (100, 100));
        assert_eq!(
            cut,
            Cut {
                bytes: 5 * 2 + 2,
                messages: 5,
                tool_calls: 2
            }
        );
    }
}
