//! A mapping as it is built: its own entries, the `<<` merges it takes, and the check that
//! refuses a repeated key before the merged entries it lacks are added.

use std::collections::{HashMap, HashSet};

use super::{located, refuse, relocate};
use crate::diagnostic::Code;
use crate::yaml::{Cause, Key, Node, ParseError, Value};

#[derive(Default)]
pub(super) struct Mapping {
    pub(super) entries: Vec<(Key, Node)>,
    pub(super) pending: Option<Pending>,
    /// What `<<` keys merge in, in order.
    merged: Vec<Node>,
    /// Keys compared by another identity than their text (see [`crate::yaml::resolve::key_identity`]), by
    /// entry index.
    pub(super) identities: Vec<(usize, String)>,
}

/// What a mapping's next value belongs to.
pub(super) enum Pending {
    Key(Key),
    Merge,
}

impl Mapping {
    /// Takes the value of a `<<` key: a mapping, or a list of mappings (a null in either place
    /// merges nothing). Each merged entry is placed where its mapping is written in the merge.
    pub(super) fn merge(&mut self, mut node: Node) -> Result<(), ParseError> {
        let at = (node.line, node.column);
        match node.value {
            // `<<:` alone merges nothing.
            Value::Null => {}
            Value::Map(_) => {
                relocate(&mut node, at);
                self.merged.push(node);
            }
            Value::Seq(items)
                if items
                    .iter()
                    .all(|item| item.is_null() || item.as_map().is_some()) =>
            {
                let maps = items.into_iter().filter(|item| !item.is_null());
                self.merged.extend(maps.map(|mut item| {
                    let at = (item.line, item.column);
                    relocate(&mut item, at);
                    item
                }));
            }
            _ => {
                return Err(refuse(
                    at,
                    "a merge key (`<<`) takes a mapping or a list of mappings".to_owned(),
                ));
            }
        }
        Ok(())
    }

    /// The entries: its own, refusing a repeated key, then the merged ones it lacks.
    pub(super) fn finish(self) -> Result<Vec<(Key, Node)>, ParseError> {
        let Mapping {
            mut entries,
            merged,
            identities,
            ..
        } = self;
        if let Some((first, again)) = repeated_key(&entries, &identities) {
            let (key, first) = (&entries[again].0, &entries[first].0);
            let mut err = located(
                (key.line, key.column),
                format!("duplicate mapping key `{}`", key.name),
                Code::E005,
                Cause::Invalid,
            );
            err.message
                .push_str(&format!(" (first at line {})", first.line));
            return Err(err);
        }
        if merged.is_empty() {
            return Ok(entries);
        }
        let mut present: HashSet<String> =
            entries.iter().map(|(key, _)| key.name.clone()).collect();
        for source in merged {
            let Value::Map(from) = source.value else {
                unreachable!("only mappings are merged");
            };
            for (key, value) in from {
                if present.insert(key.name.clone()) {
                    entries.push((key, value));
                }
            }
        }
        Ok(entries)
    }
}

/// The first key a mapping repeats, as the indices of its first and second occurrence.
fn repeated_key(entries: &[(Key, Node)], identities: &[(usize, String)]) -> Option<(usize, usize)> {
    let identity = |i: usize| {
        identities
            .iter()
            .find(|(index, _)| *index == i)
            .map_or(entries[i].0.name.as_str(), |(_, identity)| {
                identity.as_str()
            })
    };
    // Mappings are small: compare pairs, else remember what was seen.
    if entries.len() <= 16 {
        return (0..entries.len())
            .find_map(|i| (0..i).find(|&j| identity(j) == identity(i)).map(|j| (j, i)));
    }
    let mut seen: HashMap<&str, usize> = HashMap::with_capacity(entries.len());
    (0..entries.len()).find_map(|i| seen.insert(identity(i), i).map(|j| (j, i)))
}
