//! SCRAPI (`cxas`) platform goldens, in both shapes SCRAPI's loader accepts: the hand-written
//! dataset (`conversations:` with `turns`, `tool_calls` and `$matchType`) and the Evaluation the
//! platform exports (`displayName`, `golden.turns[].steps[]`, as YAML or JSON); SCRAPI's
//! turn evals ([`turn_eval`]) and tool tests ([`tool_test`], one direct execution of a tool per
//! test), which load into the same model.
//!
//! The rules follow SCRAPI's own loader (`EvalUtils.load_golden_evals_from_yaml`, see
//! shared/FORMATS.md) so that files written for it load unchanged: a null turn `user` is the
//! `welcome` event, an `agent` chunk containing `# silent` expects no text, a tool call's
//! `output` both mocks the tool and is expected in the transcript, the file's stem becomes a tag.
//! Where that loader crashes or silently drops data (a null where a list belongs, `arguments:`
//! instead of `args:`), goldgate loads what was meant and warns. Lint codes E002-E011 keep
//! SCRAPI's numbers.

pub(crate) mod annotation;
mod dataset;
mod exported;
mod matcher;
pub mod simulation;
pub mod tool_test;
mod turn;
pub mod turn_eval;
pub mod write;

use serde_json::{Map, Value as Json};

use crate::diagnostic::{Code, DiagnosticBuilder, Diagnostics, Position};
use crate::model::{Case, CaseCheck, CheckKind, Format, Location, Turn};
use crate::yaml::{Fields, Node, Value, expect_text, indexed};

/// How to fix a file without conversations (E002).
const CONVERSATIONS_HINT: &str =
    "list the cases under `conversations:`, each with `conversation` and `turns`";

/// Loads every conversation of a SCRAPI golden file.
pub fn load(root: &Node, diags: &mut Diagnostics) -> Vec<Case> {
    match &root.value {
        Value::Map(_) if root.get("conversations").is_none() && root.get("golden").is_some() => {
            exported::load(root, diags)
        }
        Value::Map(_) if turn_eval::is_turn_eval(root) => turn_eval::load(root, diags),
        // Before the dataset: a tool test file may also be a bare list, which SCRAPI refuses.
        _ if tool_test::is_tool_test(root) => tool_test::load(root, diags),
        Value::Map(_) => dataset::load(root, diags),
        _ => {
            let found = if root.is_null() {
                "the file is empty".to_owned()
            } else {
                format!("the file holds {}", root.kind())
            };
            diags
                .at(root)
                .error(
                    Code::E002,
                    format!("a SCRAPI golden is a mapping with `conversations`; {found}"),
                )
                .hint(CONVERSATIONS_HINT);
            Vec::new()
        }
    }
}

/// A SCRAPI golden conversation as a case, named by `name`.
fn golden_case(
    name: String,
    location: Location,
    tags: Vec<String>,
    session_parameters: Map<String, Json>,
    turns: Vec<Turn>,
    checks: Vec<CaseCheck>,
) -> Case {
    Case {
        tags,
        session_parameters,
        turns,
        checks,
        ..Case::named(name, Format::ScrapiGolden, location)
    }
}

/// The names defined so far in one file, with the line of each: cases are keyed by file and
/// name, so a second definition is an error (G103).
struct Names {
    /// `conversation`, `simulation`, `test`.
    what: &'static str,
    first_line: std::collections::HashMap<String, u32>,
}

impl Names {
    fn of(what: &'static str) -> Self {
        Self {
            what,
            first_line: std::collections::HashMap::new(),
        }
    }

    /// Records `name` as defined at `at` (field `path`); G103 and `false` when the file already
    /// defined it.
    fn first_definition(
        &mut self,
        name: &str,
        (at, path): (&Node, &str),
        diags: &mut Diagnostics,
    ) -> bool {
        let what = self.what;
        if let Some(first) = self.first_line.get(name) {
            diags
                .at(at)
                .error(
                    Code::G103,
                    format!(
                        "{what} `{name}` is defined twice, at lines {first} and {}",
                        at.line
                    ),
                )
                .field(path)
                .hint(format!("{what} names must be unique within a file"));
            return false;
        }
        self.first_line.insert(name.to_owned(), at.line);
        true
    }
}

/// Each item of `list` that `read` reads, the first of each name only: a later item with a
/// name already defined is G103 (`what`: `simulation`, `test`).
fn unique<T>(
    what: &'static str,
    (list, path): (&[Node], &str),
    diags: &mut Diagnostics,
    read: impl Fn(&Node, &str, &mut Diagnostics) -> Option<T>,
    name: impl Fn(&T) -> &str,
) -> Vec<T> {
    let mut seen = Names::of(what);
    indexed(list, path)
        .filter_map(|(path, node)| {
            let item = read(node, &path, diags)?;
            let name_path = format!("{path}.name");
            seen.first_definition(name(&item), (node, &name_path), diags)
                .then_some(item)
        })
        .collect()
}

/// Takes an optional map or list key. A null there (`tags:` with nothing after it, or only
/// comments) makes SCRAPI's loader fail; goldgate reads it as empty, warns, and returns `None`.
fn take_container<'a>(
    fields: &mut Fields<'a>,
    key: &'static str,
    empty: &str,
    diags: &mut Diagnostics,
) -> Option<&'a Node> {
    let node = fields.take(key)?;
    if !node.is_null() {
        return Some(node);
    }
    warn_at_key(
        fields,
        key,
        Code::G109,
        format!("`{key}` is null; goldgate reads it as `{empty}`"),
        diags,
    )
    .hint(format!(
        "SCRAPI's loader rejects a null here; write `{empty}` or remove the key"
    ));
    None
}

/// A warning at `key` of the mapping `fields` reads, named by its path; the caller adds the
/// hint.
fn warn_at_key<'d>(
    fields: &Fields<'_>,
    key: &str,
    code: Code,
    message: impl Into<String>,
    diags: &'d mut Diagnostics,
) -> DiagnosticBuilder<'d> {
    let (line, column) = key_position(fields.node(), key);
    diags
        .at(Position::new(line, column))
        .warning(code, message)
        .field(fields.path_of(key))
}

/// Where `key` is written in the mapping `map` (the mapping's own place if absent).
fn key_position(map: &Node, key: &str) -> (u32, u32) {
    map.as_map()
        .and_then(|entries| entries.iter().find(|(k, _)| k.name == key))
        .map_or((map.line, map.column), |(k, _)| (k.line, k.column))
}

/// The items of a list, or a G101 (and no items) when `node` is something else.
fn items<'a>(node: &'a Node, path: &str, what: &str, diags: &mut Diagnostics) -> &'a [Node] {
    node.as_seq().unwrap_or_else(|| {
        node.wrong_type(what, diags).field(path);
        &[]
    })
}

/// Session parameters or variables: a mapping, or the `[{name, value}]` list the platform
/// exports (both accepted by SCRAPI).
fn parameters(node: &Node, path: &str, diags: &mut Diagnostics) -> Map<String, Json> {
    match &node.value {
        Value::Map(entries) => entries
            .iter()
            .map(|(k, v)| (k.name.clone(), v.to_json()))
            .collect(),
        Value::Seq(list) => indexed(list, path)
            .filter_map(|(path, item)| {
                let mut fields = Fields::of(item, &path, diags)?;
                let name = fields.required_string("name", diags);
                let value = fields.take("value").map_or(Json::Null, Node::to_json);
                fields.finish(diags);
                Some((name?, value))
            })
            .collect(),
        _ => {
            node.wrong_type("a mapping of names to values", diags)
                .field(path);
            Map::new()
        }
    }
}

/// Free-text criteria an LLM judge checks over the whole conversation: strings, or
/// `{prompt}` / `{displayName, llmCriteria: {prompt}}` maps.
fn criteria(node: &Node, path: &str, diags: &mut Diagnostics) -> Vec<CaseCheck> {
    indexed(items(node, path, "a list of expectations", diags), path)
        .filter_map(|(path, item)| {
            let prompt = criterion(item, &path, diags)?;
            Some(CaseCheck {
                location: diags.location(item.line, item.column),
                label: "criterion".to_owned(),
                kind: CheckKind::Criterion(prompt),
            })
        })
        .collect()
}

fn criterion(node: &Node, path: &str, diags: &mut Diagnostics) -> Option<String> {
    if node.as_map().is_none() {
        return expect_text(node, path, diags);
    }
    let mut fields = Fields::of(node, path, diags)?;
    let mut prompt = fields.string("prompt", diags);
    // `displayName` only names the criterion on the platform; the prompt is what is judged.
    fields.take("displayName");
    // A nested criteria map without a prompt is reported inside it, not again here.
    let mut nested = false;
    for key in ["llmCriteria", "llm_criteria"] {
        if let Some(inner) = fields.take(key) {
            nested = true;
            let inner_path = fields.path_of(key);
            if let Some(mut inner_fields) = Fields::of(inner, &inner_path, diags) {
                let inner_prompt = inner_fields.required_string("prompt", diags);
                inner_fields.finish(diags);
                prompt = prompt.or(inner_prompt);
            }
        }
    }
    let missing = prompt.is_none() && !nested;
    fields.finish(diags);
    if missing {
        diags
            .at(node)
            .error(
                Code::G102,
                "an expectation needs a `prompt` (or `llmCriteria.prompt`)",
            )
            .field(path);
    }
    prompt
}

/// `tags` with the file's stem added, as SCRAPI does for goldens and tests, so that
/// `--filter <stem>` selects a file.
fn tags(fields: &mut Fields<'_>, diags: &mut Diagnostics) -> Vec<String> {
    let mut tags = listed_tags(fields, diags);
    let stem = file_stem(diags);
    if !tags.contains(&stem) {
        tags.push(stem);
    }
    tags
}

/// `tags` as written: a list, or one comma-separated string as the platform UI writes it.
fn listed_tags(fields: &mut Fields<'_>, diags: &mut Diagnostics) -> Vec<String> {
    match take_container(fields, "tags", "[]", diags) {
        Some(node) => match node.as_str() {
            Some(list) => list
                .split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
                .collect(),
            // Takes the key again, reporting items that are not text.
            None => fields.strings("tags", diags),
        },
        None => Vec::new(),
    }
}

fn file_stem(diags: &Diagnostics) -> String {
    let stem = diags.file.file_stem().unwrap_or_default();
    stem.to_string_lossy().into_owned()
}
