//! gecx `*.scenario.yaml`: one file is one scenario (`id`, `name`, `tags`, `when`, `then`).
//!
//! `when` lists the turns, each sending exactly one input: a user message or the approval or
//! denial of a pending tool call. gecx scores the scenario as a whole, so turns carry no
//! expectations; every `then` entry becomes a [`CaseCheck`] holding a typed [`Scorer`] (see
//! [`scorers`]). The `.scenario.ts` twin needs a JavaScript runtime and is reported during
//! discovery, not here.

pub mod scorers;
pub mod write;

use crate::diagnostic::{Code, Diagnostics, suggestion};
use crate::model::{Case, Format, Input, NOT_CARRIED, Turn};
use crate::yaml::{Fields, Node, expect_text, indexed};

/// The keys of a `when` item; each item holds exactly one.
const TURN_KEYS: [&str; 3] = ["user", "approveToolCall", "denyToolCall"];

/// Loads the one scenario of a file. Returns no case only when the file has no usable `id`;
/// any other problem is reported and the case is returned with what could be read, so that
/// suite-level checks (duplicate ids) still see it.
pub fn load(root: &Node, diags: &mut Diagnostics) -> Vec<Case> {
    // Checked here rather than by `Fields::of`, which would name an empty key path and give no
    // hint of what a scenario looks like.
    if root.as_map().is_none() {
        root.wrong_type("a scenario mapping", diags)
            .hint("a scenario has `id`, `when` and `then` at the top level");
        return Vec::new();
    }
    let Some(mut fields) = Fields::of(root, "", diags) else {
        return Vec::new();
    };
    // Every key is taken before `finish` so that unknown top-level keys are reported before
    // the problems inside `when` and `then`, in the order of the file.
    let id = fields
        .require("id", "a string", diags)
        .and_then(|node| scenario_id(node, diags));
    let name = fields.string("name", diags);
    let description = fields.string("description", diags);
    let tags = fields.strings("tags", diags);
    let when = fields.require("when", "a list of turns", diags);
    let then = fields.take("then");
    fields.finish(diags);

    // `convert` writes a case none of whose inputs a scenario can send with no turns and its
    // `not-carried` tag: it loads, and is played as skipped with that reason.
    let not_carried = tags.iter().any(|tag| tag.starts_with(NOT_CARRIED));
    let turns = when.map_or_else(Vec::new, |when| load_turns(when, not_carried, diags));
    let checks = then.map_or_else(Vec::new, |then| scorers::load_checks(then, diags));
    if then.is_none_or(|then| then.as_seq().is_some_and(<[Node]>::is_empty)) {
        diags
            .at(root)
            .warning(
                Code::G102,
                "the scenario has no `then` scorers, so it checks nothing and always passes",
            )
            .field("then")
            .hint("add e.g. `- scorer: no-error`");
    }
    let Some(id) = id else {
        return Vec::new();
    };
    let location = diags.location(root.line, root.column);
    vec![Case {
        name: name.unwrap_or_else(|| id.clone()),
        description,
        tags,
        turns,
        checks,
        comments: super::author_comments(root),
        ..Case::named(id, Format::GecxScenario, location)
    }]
}

/// The `id`: text that is not blank (it names the scenario in reports and baselines).
fn scenario_id(node: &Node, diags: &mut Diagnostics) -> Option<String> {
    let id = expect_text(node, "id", diags)?;
    if id.trim().is_empty() {
        diags
            .at(node)
            .error(Code::G111, "`id` must not be empty")
            .field("id")
            .hint("the id names the scenario in reports and baselines");
    }
    Some(id)
}

/// The `when` list: one [`Turn`] per item that names a valid input; empty only when the case
/// is `not_carried`.
fn load_turns(when: &Node, not_carried: bool, diags: &mut Diagnostics) -> Vec<Turn> {
    let Some(items) = when.as_seq() else {
        when.wrong_type("a list of turns", diags)
            .field("when")
            .hint("write `when:` then `- user: hello` items");
        return Vec::new();
    };
    if items.is_empty() && !not_carried {
        diags
            .at(when)
            .error(Code::G111, "the scenario has no turns")
            .field("when")
            .hint("add at least one `- user: ...` item");
    }
    indexed(items, "when")
        .enumerate()
        .filter_map(|(i, (path, item))| {
            let input = load_input(item, &path, diags)?;
            Some(Turn {
                index: i + 1,
                location: diags.location(item.line, item.column),
                inputs: vec![input],
                expectations: Vec::new(),
                tool_mocks: Vec::new(),
                recorded_reply: None,
                comments: super::author_comments(item),
            })
        })
        .collect()
}

/// One `when` item: exactly one of [`TURN_KEYS`], whose value is text.
fn load_input(item: &Node, path: &str, diags: &mut Diagnostics) -> Option<Input> {
    let Some(entries) = item.as_map() else {
        item.wrong_type("a turn mapping", diags)
            .field(path)
            .hint("write `- user: hello`, `- approveToolCall: tag` or `- denyToolCall: tag`");
        return None;
    };
    let mut input = None;
    let mut first_key: Option<&str> = None;
    let mut unknown = false;
    for (key, value) in entries {
        let key_path = format!("{path}.{}", key.name);
        if !TURN_KEYS.contains(&key.name.as_str()) {
            unknown = true;
            key.unknown(diags)
                .field(key_path)
                .hint(suggestion(&key.name, &TURN_KEYS));
            continue;
        }
        if let Some(first) = first_key {
            diags
                .at(key)
                .error(
                    Code::G100,
                    format!("`{}` in the same turn as `{first}`", key.name),
                )
                .field(key_path)
                .hint("a turn sends one input; split it into two `when` items");
            continue;
        }
        first_key = Some(&key.name);
        let Some(text) = expect_text(value, &key_path, diags) else {
            continue;
        };
        input = Some(match key.name.as_str() {
            "user" => Input::Text(text),
            "approveToolCall" => Input::ApproveToolCall(text),
            _ => Input::DenyToolCall(text),
        });
    }
    if first_key.is_none() && !unknown {
        diags
            .at(item)
            .error(Code::G102, "the turn sends nothing")
            .field(path)
            .hint("give it one of `user`, `approveToolCall`, `denyToolCall`");
    }
    input
}
