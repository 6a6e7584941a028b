//! SCRAPI turn evals (`TurnEvals.load_turn_test_cases_from_yaml`): `conversations:` or
//! `tests:`, each test one [`Case`] played in a fresh session, either one exchange (`user` or
//! `event`, `variables`, `expectations`) or `turns:` of such steps.
//!
//! Typed expectations (`{type, value}`) become [`ReplyCheck`]s on their turn; plain strings
//! become [`CheckKind::Criterion`]s an LLM judge checks over the conversation. `config` (the
//! modality and model SCRAPI passes to its session calls) is accepted and not used.
//! `historical_contexts` needs a recorded session or an injected history, which goldgate does
//! not replay: a test that names one is an error rather than a run without its context.

use serde_json::Value as Json;

use super::{Names, items, key_position, parameters, tags};
use crate::diagnostic::{Code, Diagnostics, Position, suggestion};
use crate::model::{
    Case, CaseCheck, CheckKind, Expectation, ExpectationKind, Input, ReplyCheck, Turn,
};
use crate::yaml::{Fields, Node, expect_text, indexed};

/// SCRAPI's operators.
const TYPES: &[&str] = &[
    "contains",
    "equals",
    "fuzzy_match",
    "tool_called",
    "tool_input",
    "tool_output",
    "no_tools_called",
    "agent_transfer",
];

/// Whether a document is a turn eval rather than a golden, a tool test or a guardrail test:
/// a `config` beside `conversations`, or tests that say what the user sends at their top
/// level, or expectations written as `{type, ...}`, or steps with their own expectations.
pub fn is_turn_eval(root: &Node) -> bool {
    let tests = match (root.get("conversations"), root.get("tests")) {
        (Some(_), _) if root.get("config").is_some() => return true,
        (Some(list), _) | (None, Some(list)) => list,
        (None, None) => return false,
    };
    let Some(tests) = tests.as_seq() else {
        return false;
    };
    let typed = |node: Option<&Node>| {
        node.and_then(Node::as_seq)
            .is_some_and(|list| list.iter().any(|e| e.get("type").is_some()))
    };
    !tests.is_empty()
        && tests.iter().all(|t| {
            t.get("tool").is_none() && t.get("user_input").is_none() && t.get("agent").is_none()
        })
        && (tests.iter().any(|t| {
            t.get("user").is_some()
                || t.get("event").is_some()
                || typed(t.get("expectations"))
                || t.get("turns")
                    .and_then(Node::as_seq)
                    .is_some_and(|steps| steps.iter().any(|s| s.get("expectations").is_some()))
        }) || tests
            .iter()
            .all(|t| t.get("turns").is_none() && t.get("expectations").is_some()))
}

pub(super) fn load(root: &Node, diags: &mut Diagnostics) -> Vec<Case> {
    let Some(mut fields) = Fields::of(root, "", diags) else {
        return Vec::new();
    };
    if let Some(config) = fields.take("config") {
        config_map(config, "config", diags);
    }
    let (key, list) = match (fields.take("conversations"), fields.take("tests")) {
        (Some(list), other) => {
            if let Some(other) = other {
                diags
                    .at(other)
                    .warning(
                        Code::G110,
                        "`tests` is ignored when `conversations` is present",
                    )
                    .field("tests")
                    .hint("SCRAPI reads `conversations` first; keep one list");
            }
            ("conversations", list)
        }
        (None, Some(list)) => ("tests", list),
        (None, None) => unreachable!("sniffed as a turn eval without a test list"),
    };
    fields.finish(diags);
    let mut seen = Names::of("test");
    indexed(items(list, key, "a list of tests", diags), key)
        .filter_map(|(path, node)| test(node, &path, &mut seen, diags))
        .collect()
}

/// `config` only tunes SCRAPI's session calls; it must still be a mapping.
fn config_map(node: &Node, path: &str, diags: &mut Diagnostics) {
    if node.as_map().is_none() && !node.is_null() {
        node.wrong_type("a mapping", diags).field(path);
    }
}

fn test(node: &Node, path: &str, seen: &mut Names, diags: &mut Diagnostics) -> Option<Case> {
    let mut fields = Fields::of(node, path, diags)?;
    // SCRAPI uses `conversation` as the name; a `name` beside it is not read.
    let (name_key, name_node) = match fields.take("conversation") {
        Some(node) => {
            fields.take("name");
            ("conversation", Some(node))
        }
        None => (
            "name",
            fields.require("name", "the test's unique name", diags),
        ),
    };
    let name_path = fields.path_of(name_key);
    let name = name_node.and_then(|n| expect_text(n, &name_path, diags));
    let tags = tags(&mut fields, diags);
    unplayed_keys(&mut fields, diags);

    let mut checks = Vec::new();
    let turns = match fields.take("turns") {
        Some(list) => steps(list, &mut fields, &mut checks, diags),
        None => exchange(node, &mut fields, 1, "", &mut checks, diags)
            .into_iter()
            .collect(),
    };
    fields.finish(diags);

    let name = name?;
    if !seen.first_definition(&name, (name_node?, &name_path), diags) {
        return None;
    }
    let case = super::golden_case(
        name,
        diags.location(node.line, node.column),
        tags,
        serde_json::Map::new(),
        turns,
        checks,
    );
    Some(Case {
        comments: crate::formats::author_comments(node),
        ..case
    })
}

/// The keys of a test that tune or precede SCRAPI's session: `historical_contexts` is an
/// error (goldgate cannot replay it), `turn_count` and `config` are read and not used.
fn unplayed_keys(fields: &mut Fields<'_>, diags: &mut Diagnostics) {
    if let Some(history) = fields.take("historical_contexts") {
        diags
            .at(history)
            .error(
                Code::G108,
                "goldgate does not replay `historical_contexts`: the test would run without the history it expects",
            )
            .field(fields.path_of("historical_contexts"))
            .hint("write the earlier exchanges as `turns:` of this test, or remove the key");
    }
    fields.take("turn_count");
    if let Some(config) = fields.take("config") {
        config_map(config, &fields.path_of("config"), diags);
    }
}

/// A test's `turns:`, each step one exchange; the test's own one-exchange keys beside them
/// are ignored with a warning.
fn steps(
    list: &Node,
    fields: &mut Fields<'_>,
    checks: &mut Vec<CaseCheck>,
    diags: &mut Diagnostics,
) -> Vec<Turn> {
    for key in ["user", "event", "expectations"] {
        if let Some(ignored) = fields.take(key) {
            diags
                .at(ignored)
                .warning(
                    Code::G110,
                    format!("`{key}` is ignored in a test with `turns`"),
                )
                .field(fields.path_of(key))
                .hint("SCRAPI plays only the steps of `turns`; move it into a step");
        }
    }
    let variables = fields.take("variables");
    let turns_path = fields.path_of("turns");
    let mut turns: Vec<Turn> = indexed(
        items(list, &turns_path, "a list of turns", diags),
        &turns_path,
    )
    .enumerate()
    .filter_map(|(i, (step_path, step))| {
        let mut step_fields = Fields::of(step, &step_path, diags)?;
        let label = step_fields
            .string("turn", diags)
            .unwrap_or_else(|| format!("turn {}", i + 1));
        let mut turn = exchange(step, &mut step_fields, i + 1, &label, checks, diags);
        step_fields.finish(diags);
        // A one-exchange test's comments are the case's: only a step has its own.
        if let Some(turn) = &mut turn {
            turn.comments = crate::formats::author_comments(step);
        }
        turn
    })
    .collect();
    // A test's own `variables` are not sent by SCRAPI with `turns`; goldgate sends them with
    // the first step rather than dropping them.
    if let (Some(node), Some(first)) = (variables, turns.first_mut()) {
        let vars = parameters(node, &fields.path_of("variables"), diags);
        first.inputs.insert(0, Input::Variables(vars));
    }
    turns
}

/// One exchange: `variables`, then `user` (or `<event>NAME</event>`) or `event`, and its
/// `expectations`. Free-text expectations go to `checks`, labelled with `label` when the
/// test has several turns.
fn exchange(
    node: &Node,
    fields: &mut Fields<'_>,
    index: usize,
    label: &str,
    checks: &mut Vec<CaseCheck>,
    diags: &mut Diagnostics,
) -> Option<Turn> {
    let inputs = inputs(node, fields, diags);
    let expectations = match fields.take("expectations") {
        Some(list) => expectations(list, &fields.path_of("expectations"), label, checks, diags),
        None => Vec::new(),
    };
    Some(Turn {
        index,
        location: diags.location(node.line, node.column),
        inputs,
        expectations,
        tool_mocks: Vec::new(),
        recorded_reply: None,
        comments: Vec::new(),
    })
}

/// What the exchange sends: its `variables`, then the text or event; G102 when it has neither.
fn inputs(node: &Node, fields: &mut Fields<'_>, diags: &mut Diagnostics) -> Vec<Input> {
    let mut inputs = Vec::new();
    if let Some(variables) = fields.take("variables").filter(|v| !v.is_null()) {
        inputs.push(Input::Variables(parameters(
            variables,
            &fields.path_of("variables"),
            diags,
        )));
    }
    let user = fields.string("user", diags);
    let event = fields.string("event", diags);
    match (user, event) {
        (Some(text), _) => match text
            .strip_prefix("<event>")
            .and_then(|rest| rest.strip_suffix("</event>"))
        {
            Some(event) => inputs.push(Input::Event(event.to_owned())),
            None => inputs.push(Input::Text(text)),
        },
        (None, Some(event)) => inputs.push(Input::Event(event)),
        (None, None) => {
            diags
                .at(node)
                .error(
                    Code::G102,
                    "a turn needs `user` (what the user says) or `event` (an event name)",
                )
                .field(fields.path_of("user"));
        }
    }
    inputs
}

/// An exchange's typed expectations; its plain-text ones go to `checks` as criteria.
fn expectations(
    list: &Node,
    list_path: &str,
    label: &str,
    checks: &mut Vec<CaseCheck>,
    diags: &mut Diagnostics,
) -> Vec<Expectation> {
    let list = if list.is_null() {
        &[][..]
    } else {
        items(list, list_path, "a list of expectations", diags)
    };
    let mut expectations = Vec::new();
    for (item_path, item) in indexed(list, list_path) {
        if item.as_map().is_none() {
            if let Some(prompt) = expect_text(item, &item_path, diags) {
                checks.push(CaseCheck {
                    location: diags.location(item.line, item.column),
                    label: if label.is_empty() {
                        "criterion".to_owned()
                    } else {
                        format!("criterion ({label})")
                    },
                    kind: CheckKind::Criterion(prompt),
                });
            }
            continue;
        }
        if let Some(check) = typed(item, &item_path, diags) {
            expectations.push(Expectation {
                location: diags.location(item.line, item.column),
                kind: ExpectationKind::Reply(check),
                note: None,
            });
        }
    }
    expectations
}

/// One `{type, value}` expectation.
fn typed(node: &Node, path: &str, diags: &mut Diagnostics) -> Option<ReplyCheck> {
    let mut fields = Fields::of(node, path, diags)?;
    let kind = fields.required_string("type", diags);
    let value = fields.take("value");
    let value_path = fields.path_of("value");
    fields.finish(diags);
    let kind = kind?;
    let text = |diags: &mut Diagnostics| match value {
        Some(v) if !v.is_null() => expect_text(v, &value_path, diags),
        _ => {
            diags
                .at(node)
                .error(
                    Code::G102,
                    format!("a `{kind}` expectation needs a text `value`"),
                )
                .field(value_path.clone());
            None
        }
    };
    let mapping = |diags: &mut Diagnostics| match value.map(Node::to_json) {
        Some(Json::Object(map)) => Some(map),
        _ => {
            let (line, column) = value.map_or((node.line, node.column), |v| (v.line, v.column));
            diags
                .at(Position::new(line, column))
                .error(
                    Code::G101,
                    format!("a `{kind}` expectation's `value` is a mapping"),
                )
                .field(value_path.clone())
                .hint(if kind == "tool_output" {
                    "map a tool name (or a response key) to the part of the response to check"
                } else {
                    "map argument names to the values to check; `{}` only requires the key"
                });
            None
        }
    };
    Some(match kind.as_str() {
        "contains" => ReplyCheck::TextContains(text(diags)?),
        "equals" => ReplyCheck::TextEquals(text(diags)?),
        "fuzzy_match" => ReplyCheck::TextSimilar(text(diags)?),
        "tool_called" => ReplyCheck::ToolCalled(text(diags)?),
        "agent_transfer" => ReplyCheck::TransferTo(text(diags)?),
        "no_tools_called" => ReplyCheck::NoToolCalls,
        "tool_input" => ReplyCheck::ToolInput(mapping(diags)?),
        "tool_output" => ReplyCheck::ToolOutput(mapping(diags)?),
        other => {
            let (line, column) = key_position(node, "type");
            let hint = suggestion(other, TYPES);
            diags
                .at(Position::new(line, column))
                .error(Code::G107, format!("unknown expectation type `{other}`"))
                .field(format!("{path}.type"))
                .hint(hint);
            return None;
        }
    })
}
