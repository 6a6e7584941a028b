//! The hand-written dataset golden: `common_session_parameters`, `common_expectations` and the
//! `conversations` list, each conversation one [`Case`].

use serde_json::{Map, Value as Json};

use super::{
    CONVERSATIONS_HINT, Names, annotation, criteria, items, key_position, parameters, tags,
    take_container, turn,
};
use crate::diagnostic::{Code, Diagnostics, Position};
use crate::model::{Case, CaseCheck, Turn};
use crate::yaml::{Fields, Node, expect_text, indexed};

/// What the file's top level gives every conversation.
struct Common {
    session_parameters: Map<String, Json>,
    checks: Vec<CaseCheck>,
}

pub(super) fn load(root: &Node, diags: &mut Diagnostics) -> Vec<Case> {
    let Some(mut fields) = Fields::of(root, "", diags) else {
        return Vec::new();
    };
    let session_parameters = take_container(&mut fields, "common_session_parameters", "{}", diags)
        .map(|node| parameters(node, "common_session_parameters", diags))
        .unwrap_or_default();
    let checks = take_container(&mut fields, "common_expectations", "[]", diags)
        .map(|node| criteria(node, "common_expectations", diags))
        .unwrap_or_default();
    let common = Common {
        session_parameters,
        checks,
    };
    let conversations = conversation_nodes(&mut fields, diags);
    fields.finish(diags);

    let named = super::super::read_items(conversations, diags, |i, node, diags| {
        conversation(node, i, &common, diags)
    });
    // Name -> line of its first definition, for G103: the first of each name is played.
    let mut seen = Names::of("conversation");
    named
        .into_iter()
        .filter_map(|named| {
            seen.first_definition(&named.case.id, (named.name_node, &named.name_path), diags)
                .then_some(named.case)
        })
        .collect()
}

/// A conversation read, with where its name stands.
struct Named<'a> {
    case: Case,
    name_node: &'a Node,
    name_path: String,
}

/// The `conversations` list; E002 when it is missing, null or empty.
fn conversation_nodes<'a>(fields: &mut Fields<'a>, diags: &mut Diagnostics) -> &'a [Node] {
    let root = fields.node();
    let problem = match fields.take("conversations") {
        None => "missing `conversations`",
        Some(node) if node.is_null() || node.as_seq().is_some_and(<[Node]>::is_empty) => {
            "`conversations` is empty"
        }
        Some(node) => return items(node, "conversations", "a list of conversations", diags),
    };
    let (line, column) = key_position(root, "conversations");
    diags
        .at(Position::new(line, column))
        .error(Code::E002, problem)
        .hint(CONVERSATIONS_HINT);
    &[]
}

fn conversation<'a>(
    node: &'a Node,
    index: usize,
    common: &Common,
    diags: &mut Diagnostics,
) -> Option<Named<'a>> {
    let path = format!("conversations[{index}]");
    let mut fields = Fields::of(node, &path, diags)?;
    let name_path = fields.path_of("conversation");
    let name_node = fields.require("conversation", "the conversation's unique name", diags);
    let name = name_node.and_then(|n| expect_text(n, &name_path, diags));

    let tags = tags(&mut fields, diags);

    let mut session_parameters = common.session_parameters.clone();
    if let Some(own) = take_container(&mut fields, "session_parameters", "{}", diags) {
        session_parameters.extend(parameters(
            own,
            &fields.path_of("session_parameters"),
            diags,
        ));
    }
    let mut checks = common.checks.clone();
    if let Some(own) = take_container(&mut fields, "expectations", "[]", diags) {
        checks.extend(criteria(own, &fields.path_of("expectations"), diags));
    }

    let turns_path = fields.path_of("turns");
    let turn_list = fields.require("turns", "a list of turns", diags);
    fields.finish(diags);
    let turns = turns(
        turn_list,
        &turns_path,
        !session_parameters.is_empty(),
        diags,
    );

    let name = name?;
    let name_node = name_node?;
    let mut case = super::golden_case(
        name,
        diags.location(node.line, node.column),
        tags,
        session_parameters,
        turns,
        checks,
    );
    label(&mut case, node);
    Some(Named {
        case,
        name_node,
        name_path,
    })
}

/// The author's comments above the conversation, and the name and description goldgate keeps
/// in comments there.
fn label(case: &mut Case, node: &Node) {
    case.comments = crate::formats::author_comments(node);
    for (field, value) in annotation::read(crate::formats::first_key_comments(node)) {
        match field {
            "name" => case.name = value,
            "description" => case.description = Some(value),
            _ => {}
        }
    }
}

/// The conversation's turns; E006 when a tool call expects an output that neither the call nor
/// any session parameter provides.
fn turns(
    turn_list: Option<&Node>,
    turns_path: &str,
    has_session_parameters: bool,
    diags: &mut Diagnostics,
) -> Vec<Turn> {
    let mut turns = Vec::new();
    let mut unmocked_call = None;
    let turn_nodes = turn_list.map_or(&[][..], |list| {
        items(list, turns_path, "a list of turns", diags)
    });
    for (i, (path, item)) in indexed(turn_nodes, turns_path).enumerate() {
        if let Some(parsed) = turn::parse(item, i + 1, &path, diags) {
            unmocked_call = unmocked_call.or(parsed.unmocked_call);
            turns.push(parsed.turn);
        }
    }

    if let Some(call) = unmocked_call.filter(|_| !has_session_parameters) {
        diags
            .at(Position::new(call.line, call.column))
            .warning(
                Code::E006,
                "tool calls are expected but there are no session parameters to mock them",
            )
            .field(call.path)
            .hint(
                "add `common_session_parameters` or `session_parameters`, or an `output` per call (the mock the agent gets, and the response its reply must show for the call); an agent that runs its own tools needs none: `lint: { allow: [E006] }` in goldgate.yaml silences this (SCRAPI lints this alike)",
            );
    }
    turns
}
