//! SCRAPI tool tests (`ToolEvals.load_tool_test_cases_from_yaml`): `tests:`, each test one
//! direct execution of an app's tool (`tool`, `args`, `variables` or `context`) and checks on
//! what it returned (`expectations: {response: [...], variables: [...]}`, each
//! `{path, operator, value}` with a JSONPath). Each test becomes a [`Case`] of one [`Turn`]
//! whose input is [`Input::ExecuteTool`].
//!
//! SCRAPI validates these files with pydantic, which ignores keys it does not define: goldgate
//! loads what SCRAPI loads, and warns where SCRAPI silently drops something (`input:` and
//! `assertions:` in some of its own docs, `agrs`, a `value` left out).

use serde_json::{Map, Value as Json};

use super::{items, key_position, tags, unique, warn_at_key};
use crate::diagnostic::{Code, Diagnostics, Position, did_you_mean, suggestion};
use crate::model::{
    Case, Expectation, ExpectationKind, Format, Input, JsonPath, ResultCheck, ResultOperator,
    ResultPart, ToolExecution, ToolState, Turn,
};
use crate::yaml::{Fields, Node, Value, indexed};

/// Keys some SCRAPI docs write for what its loader reads under another name.
const RENAMED: &[(&str, &str)] = &[("input", "args"), ("assertions", "expectations")];
const TESTS_HINT: &str = "list the tests under a top-level `tests:`, each with `name`, `tool`, `args` and `expectations`";

/// Whether a document is a tool test file: `tests` whose items name a `tool` (guardrail tests
/// send a `user_input` instead), or `tests` with no items to tell by (SCRAPI loads none
/// either way), or a bare list of tools to test, which SCRAPI reads as no tests.
pub fn is_tool_test(root: &Node) -> bool {
    match &root.value {
        Value::Seq(list) => list
            .iter()
            .any(|t| t.get("tool").is_some() || t.get("tool_name").is_some()),
        Value::Map(_) if root.get("conversations").is_none() => match root.get("tests") {
            None => false,
            Some(tests) => match tests.as_seq() {
                Some(list) if !list.is_empty() => {
                    list.iter().any(|t| t.get("tool").is_some())
                        && list.iter().all(|t| t.get("user_input").is_none())
                }
                _ => true,
            },
        },
        _ => false,
    }
}

/// Every tool test of a file that [`is_tool_test`].
pub fn load(root: &Node, diags: &mut Diagnostics) -> Vec<Case> {
    if root.as_seq().is_some() {
        diags
            .at(root)
            .error(
                Code::E002,
                "a bare list holds no tool tests: SCRAPI reads them from a top-level `tests:` and loads none from this file",
            )
            .hint(TESTS_HINT);
        return Vec::new();
    }
    let Some(mut fields) = Fields::of(root, "", diags) else {
        return Vec::new();
    };
    let tests = fields.take("tests");
    ignore_unknown(&fields, diags);
    let list = match tests {
        Some(node) if node.is_null() || node.as_seq().is_some_and(<[Node]>::is_empty) => {
            let (line, column) = key_position(root, "tests");
            diags
                .at(Position::new(line, column))
                .error(
                    Code::E002,
                    "`tests` is empty: SCRAPI loads no tool tests from this file",
                )
                .hint(TESTS_HINT);
            return Vec::new();
        }
        Some(node) => items(node, "tests", "a list of tool tests", diags),
        None => return Vec::new(),
    };
    unique("test", (list, "tests"), diags, test, |case| &case.id)
}

/// One test; `None` when anything in it is an error, so that a broken test never runs.
fn test(node: &Node, path: &str, diags: &mut Diagnostics) -> Option<Case> {
    let errors_before = diags.error_count();
    let mut fields = Fields::of(node, path, diags)?;
    let name = required_str(&mut fields, "name", "the test's unique name", diags);
    let tool = required_str(&mut fields, "tool", "the tool's display name", diags);
    let tags = tags(&mut fields, diags);
    let args = args(&mut fields, diags);
    let state = state(&mut fields, diags);
    let expectations = match fields.take("expectations") {
        Some(list) => expectations(list, &fields.path_of("expectations"), diags),
        None => Vec::new(),
    };
    ignore_unknown(&fields, diags);
    if diags.error_count() > errors_before {
        return None;
    }
    // Only for a test that loads: a broken one has its own errors to fix first.
    if expectations.is_empty() {
        diags
            .at(node)
            .warning(
                Code::G102,
                "the test has no expectations: it passes whenever the tool runs",
            )
            .field(path)
            .hint("add `expectations: {response: [{path, operator, value}]}`");
    }
    let (name, tool) = (name?, tool?);
    let location = diags.location(node.line, node.column);
    let execution = ToolExecution { tool, args, state };
    Some(Case {
        tags,
        turns: vec![Turn {
            index: 1,
            location: location.clone(),
            inputs: vec![Input::ExecuteTool(execution)],
            expectations,
            tool_mocks: Vec::new(),
            recorded_reply: None,
            comments: Vec::new(),
        }],
        ..Case::named(name, Format::ScrapiGolden, location)
    })
}

/// A required string. Strict, as pydantic is: `tool: 5` is an error, not the tool `5`.
fn required_str(
    fields: &mut Fields<'_>,
    key: &'static str,
    what: &str,
    diags: &mut Diagnostics,
) -> Option<String> {
    let node = fields.require(key, what, diags)?;
    strict_str(node, &fields.path_of(key), diags)
}

fn strict_str(node: &Node, path: &str, diags: &mut Diagnostics) -> Option<String> {
    let text = node.as_str().map(str::to_owned);
    if text.is_none() {
        node.wrong_type("a string", diags).field(path);
    }
    text
}

/// Warns about each key not taken: pydantic ignores it, so the test still loads, but what it
/// holds (an `input:` meant as `args:`) is not used.
fn ignore_unknown(fields: &Fields<'_>, diags: &mut Diagnostics) {
    let known = fields.known();
    for key in fields.untaken() {
        let renamed = RENAMED.iter().find(|(from, _)| *from == key.name);
        let hint = match renamed.map(|(_, to)| *to) {
            Some(to) if known.contains(&to) => format!("did you mean `{to}`?"),
            _ => match did_you_mean(&key.name, known.iter().copied()) {
                Some(best) => format!("did you mean `{best}`?"),
                None => format!("SCRAPI reads only: {}", known.join(", ")),
            },
        };
        let message = format!(
            "unknown key `{}`: SCRAPI ignores it, and so does goldgate",
            key.name
        );
        diags
            .at(key)
            .warning(Code::G110, message)
            .field(fields.path_of(&key.name))
            .hint(hint);
    }
}

/// `args`, or `agrs`, the misspelling SCRAPI accepts in its place (and ignores beside `args`).
fn args(fields: &mut Fields<'_>, diags: &mut Diagnostics) -> Map<String, Json> {
    let args = fields.take("args");
    let misspelt = fields.take("agrs");
    if misspelt.is_some() {
        let message = if args.is_some() {
            "`agrs` next to `args` is ignored"
        } else {
            "`agrs` is read as `args`, as SCRAPI reads it"
        };
        warn_at_key(fields, "agrs", Code::G110, message, diags).hint("rename it to `args`");
    }
    let (key, node) = match (args, misspelt) {
        (Some(node), _) => ("args", node),
        (None, Some(node)) => ("agrs", node),
        (None, None) => return Map::new(),
    };
    match &node.value {
        Value::Map(_) => as_object(node),
        // SCRAPI's `empty_to_dict` reads null (`args:` with nothing after it) as no arguments.
        Value::Null => Map::new(),
        _ => {
            node.wrong_type("a mapping of argument names to values", diags)
                .field(fields.path_of(key));
            Map::new()
        }
    }
}

fn as_object(node: &Node) -> Map<String, Json> {
    match node.to_json() {
        Json::Object(map) => map,
        _ => Map::new(),
    }
}

/// `variables` or `context` (not both, as SCRAPI's model rules). An empty context is none:
/// SCRAPI passes only a non-empty one to the tool.
fn state(fields: &mut Fields<'_>, diags: &mut Diagnostics) -> ToolState {
    let variables = state_map(fields, "variables", diags);
    let context = state_map(fields, "context", diags);
    if !variables.is_empty() && !context.is_empty() {
        let (line, column) = key_position(fields.node(), "context");
        diags
            .at(Position::new(line, column))
            .error(
                Code::G111,
                "a test can provide either `variables` or `context`, but not both",
            )
            .field(fields.path_of("context"))
            .hint("`variables` for session variables, `context` for a python tool's whole context");
    }
    if context.is_empty() {
        ToolState::Variables(variables)
    } else {
        ToolState::Context(context)
    }
}

/// One of SCRAPI's `_parse_dict_input` values: a mapping, a list of names (their values are
/// taken from the app's defaults, so null here), or a JSON object as text.
fn state_map(
    fields: &mut Fields<'_>,
    key: &'static str,
    diags: &mut Diagnostics,
) -> Map<String, Json> {
    let Some(node) = fields.take(key) else {
        return Map::new();
    };
    let path = fields.path_of(key);
    match &node.value {
        Value::Null => Map::new(),
        Value::Map(_) => as_object(node),
        Value::Seq(names) => indexed(names, &path)
            .filter_map(|(item_path, name)| {
                let name = name.scalar_text().or_else(|| {
                    name.wrong_type("a variable name", diags).field(item_path);
                    None
                })?;
                Some((name, Json::Null))
            })
            .collect(),
        Value::Str(text) => match serde_json::from_str::<Json>(text) {
            Ok(Json::Object(map)) => map,
            Ok(other) => {
                let found = match other {
                    Json::Array(_) => "a list",
                    _ => "a scalar",
                };
                node.wrong_type("a JSON object", diags)
                    .field(path)
                    .hint(format!("the text parses as {found}; write a mapping"));
                Map::new()
            }
            Err(_) => ignored_state(node, key, &path, "text that is not JSON", diags),
        },
        _ => ignored_state(node, key, &path, node.kind(), diags),
    }
}

/// SCRAPI reads a value it cannot use as no state at all; goldgate does too, and says so.
fn ignored_state(
    node: &Node,
    key: &str,
    path: &str,
    found: &str,
    diags: &mut Diagnostics,
) -> Map<String, Json> {
    diags
        .at(node)
        .warning(
            Code::G110,
            format!("`{key}` is {found}; SCRAPI reads it as empty, and so does goldgate"),
        )
        .field(path)
        .hint("write a mapping of names to values, or a list of names");
    Map::new()
}

/// `expectations: {response: [...], variables: [...]}`.
fn expectations(node: &Node, path: &str, diags: &mut Diagnostics) -> Vec<Expectation> {
    if node.is_null() {
        return Vec::new();
    }
    let Some(mut fields) = Fields::of(node, path, diags) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for part in [ResultPart::Response, ResultPart::Variables] {
        let key = part.name();
        let Some(list) = fields.take(key).filter(|l| !l.is_null()) else {
            continue;
        };
        let list_path = fields.path_of(key);
        let list = items(list, &list_path, "a list of checks", diags);
        for (path, item) in indexed(list, &list_path) {
            if let Some(check) = check(item, part, &path, diags) {
                out.push(Expectation {
                    location: diags.location(item.line, item.column),
                    kind: ExpectationKind::ToolResult(check),
                    note: None,
                });
            }
        }
    }
    ignore_unknown(&fields, diags);
    out
}

/// One `{path, operator, value}`.
fn check(
    node: &Node,
    part: ResultPart,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<ResultCheck> {
    let mut fields = Fields::of(node, path, diags)?;
    let json_path = required_str(
        &mut fields,
        "path",
        "a JSONPath such as `$.result.status`",
        diags,
    )
    .and_then(|source| match JsonPath::parse(&source) {
        Ok(compiled) => Some(compiled),
        Err(err) => {
            let at = node.get("path").unwrap_or(node);
            diags
                .at(at)
                .error(Code::G104, format!("invalid JSONPath `{source}`: {err}"))
                .field(fields.path_of("path"))
                .hint("write a JSONPath from the root, e.g. `$.result.status`");
            None
        }
    });
    let operator = required_str(&mut fields, "operator", "how to compare", diags)
        .and_then(|name| operator(node, &name, &fields.path_of("operator"), diags));
    let value = fields.take("value");
    ignore_unknown(&fields, diags);
    let operator = operator?;
    if value.is_none() && operator.takes_value() {
        diags
            .at(node)
            .warning(
                Code::G102,
                format!(
                    "`{}` has no `value`: SCRAPI compares with null",
                    operator.name()
                ),
            )
            .field(fields.path_of("value"))
            .hint("add the `value` to compare with");
    }
    Some(ResultCheck {
        part,
        path: json_path?,
        operator,
        value: value.map_or(Json::Null, Node::to_json),
    })
}

fn operator(
    node: &Node,
    name: &str,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<ResultOperator> {
    let parsed = ResultOperator::parse(name);
    if parsed.is_none() {
        let names: Vec<&str> = ResultOperator::ALL.iter().map(|op| op.name()).collect();
        let (line, column) = key_position(node, "operator");
        diags
            .at(Position::new(line, column))
            .error(Code::G107, format!("unknown operator `{name}`"))
            .field(path)
            .hint(suggestion(name, &names));
    }
    parsed
}

#[cfg(test)]
mod tests;
