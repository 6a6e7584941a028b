//! [`Fields`], the walk of one mapping that reports every problem with its key path, and the
//! helpers that name a list's items and read a scalar as text.

use super::{Key, Node, Value};
use crate::diagnostic::{Code, Diagnostics, suggestion};

/// Walks one mapping: take keys by name, then [`Fields::finish`] reports the ones nobody took.
/// The keys a reader asks for are the keys it knows: the "did you mean" for an unknown key is
/// chosen among them, so no second list of a mapping's keys can drift from what is read.
pub struct Fields<'a> {
    node: &'a Node,
    entries: &'a [(Key, Node)],
    taken: Vec<bool>,
    /// Every key asked for, present or not, in the order the reader asked.
    asked: Vec<&'static str>,
    path: String,
}

impl<'a> Fields<'a> {
    /// Starts walking `node`, which must be a mapping; otherwise reports a G101 at `path` and
    /// returns `None`.
    pub fn of(node: &'a Node, path: &str, diags: &mut Diagnostics) -> Option<Self> {
        match &node.value {
            Value::Map(entries) => Some(Self {
                node,
                entries,
                taken: vec![false; entries.len()],
                asked: Vec::new(),
                path: path.to_owned(),
            }),
            _ => {
                let builder = node.wrong_type("a mapping", diags);
                // The document itself has no key path to name.
                if !path.is_empty() {
                    builder.field(path);
                }
                None
            }
        }
    }

    pub fn node(&self) -> &'a Node {
        self.node
    }

    /// The key path of a child, for messages: `conversations[0].turns`.
    pub fn path_of(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// A key this mapping may have that the reader does not take here (it is read elsewhere,
    /// or only suggested): named in the "did you mean" all the same.
    pub fn know(&mut self, key: &'static str) {
        if !self.asked.contains(&key) {
            self.asked.push(key);
        }
    }

    /// Takes an optional key.
    pub fn take(&mut self, key: &'static str) -> Option<&'a Node> {
        self.know(key);
        let index = self.entries.iter().position(|(k, _)| k.name == key)?;
        self.taken[index] = true;
        Some(&self.entries[index].1)
    }

    /// Takes a required key, reporting G102 when it is missing.
    pub fn require(
        &mut self,
        key: &'static str,
        expected: &str,
        diags: &mut Diagnostics,
    ) -> Option<&'a Node> {
        let found = self.take(key);
        if found.is_none() {
            diags
                .at(self.node)
                .error(
                    Code::G102,
                    format!("missing required key `{key}` ({expected})"),
                )
                .field(self.path_of(key));
        }
        found
    }

    /// Takes an optional string; a wrong type is reported (numbers and booleans are accepted as text).
    pub fn string(&mut self, key: &'static str, diags: &mut Diagnostics) -> Option<String> {
        let node = self.take(key)?;
        expect_text(node, &self.path_of(key), diags)
    }

    /// Takes a required string.
    pub fn required_string(
        &mut self,
        key: &'static str,
        diags: &mut Diagnostics,
    ) -> Option<String> {
        let node = self.require(key, "a string", diags)?;
        expect_text(node, &self.path_of(key), diags)
    }

    /// Takes an optional list of strings; a single string is accepted as a list of one.
    pub fn strings(&mut self, key: &'static str, diags: &mut Diagnostics) -> Vec<String> {
        let Some(node) = self.take(key) else {
            return Vec::new();
        };
        let path = self.path_of(key);
        match &node.value {
            Value::Seq(items) => indexed(items, &path)
                .filter_map(|(path, item)| expect_text(item, &path, diags))
                .collect(),
            Value::Str(s) => vec![s.clone()],
            _ => {
                node.wrong_type("a list of strings", diags).field(path);
                Vec::new()
            }
        }
    }

    /// Reports every key not taken as G100, with a "did you mean" among the keys asked for. A
    /// typo of a key is one problem, not two: a report on the key it was meant to be, which is
    /// absent ("missing required key", or a format's warning that a turn has none), is about
    /// that absence, so it is taken back and the unknown key says which key was meant.
    pub fn finish(self, diags: &mut Diagnostics) {
        let known = &self.known();
        for key in self.untaken() {
            let missing = crate::diagnostic::did_you_mean(&key.name, known.iter().copied())
                .filter(|meant| !self.entries.iter().any(|(k, _)| k.name == *meant))
                .map(|meant| self.path_of(meant))
                .and_then(|field| {
                    diags
                        .items
                        .iter()
                        .position(|d| d.field.as_deref() == Some(field.as_str()))
                });
            let hint = suggestion(&key.name, known);
            let hint = match missing.map(|index| diags.items.remove(index)) {
                Some(absent) if absent.code == Code::G102 => format!("{hint} It is required."),
                _ => hint,
            };
            key.unknown(diags).field(self.path_of(&key.name)).hint(hint);
        }
    }

    /// The keys asked for so far, the keys this mapping may have: alphabetical, so that an
    /// "expected one of" reads the same whatever order the reader asks in.
    pub fn known(&self) -> Vec<&'static str> {
        let mut known = self.asked.clone();
        known.sort_unstable();
        known
    }

    /// The keys not taken, for a format whose reference system ignores unknown keys (the
    /// loader reports them as warnings rather than through [`Fields::finish`]).
    pub fn untaken(&self) -> impl Iterator<Item = &'a Key> + '_ {
        self.entries
            .iter()
            .zip(&self.taken)
            .filter(|(_, taken)| !**taken)
            .map(|((key, _), _)| key)
    }
}

/// A list's items with the path a diagnostic names each by: `list[0]`, `list[1]`, ...
pub fn indexed<'a>(items: &'a [Node], list: &str) -> impl Iterator<Item = (String, &'a Node)> {
    items
        .iter()
        .enumerate()
        .map(move |(i, item)| (format!("{list}[{i}]"), item))
}

/// A scalar as text, or a G101 naming `path`.
pub fn expect_text(node: &Node, path: &str, diags: &mut Diagnostics) -> Option<String> {
    let text = node.scalar_text();
    if text.is_none() {
        node.wrong_type("a string", diags).field(path);
    }
    text
}
