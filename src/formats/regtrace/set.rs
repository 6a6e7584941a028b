//! One Regtrace golden set: its schema, the rules that span several test cases, and the
//! mapping of each test case to a [`Case`].
//!
//! A test case is a single exchange scored by metrics, so it becomes a case with one turn
//! (the `input`, and `actual_output` as a recorded reply when given) and one
//! [`CheckKind::Metric`] per metric; turns carry no expectations of their own. Text is taken
//! as written: `{{name}}` and `${...}` in prompts and outputs are never interpolated.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use super::SetDefaults;
use super::shape::{self, NON_EMPTY_TEXT, Range, Shape, TEXT, optional, required};
use crate::diagnostic::{Code, Diagnostics};
use crate::model::{
    Case, CaseCheck, CheckKind, ContextDocument, Format, Input, Location, Metric, Turn,
};
use crate::yaml::Node;

const METRIC: Shape = Shape::OneOf(&super::METRIC_NAMES);
const TAGS: Shape = Shape::List {
    item: &TEXT,
    non_empty: false,
};
const UNIT_OR_NULL: Shape = Shape::Nullable(&Shape::Number(Range::UNIT));

const DOCUMENT: Shape = Shape::Object(&[
    required("source", TEXT),
    required("content", TEXT),
    optional("retrieval_score", UNIT_OR_NULL),
]);

/// The seed asks for at least one document; zod would take an empty list.
const CONTEXT: Shape = Shape::Object(&[required(
    "documents",
    Shape::List {
        item: &DOCUMENT,
        non_empty: true,
    },
)]);

const TEST_CASE: Shape = Shape::Object(&[
    required("id", NON_EMPTY_TEXT),
    required("description", NON_EMPTY_TEXT),
    required("input", NON_EMPTY_TEXT),
    required("system_prompt", Shape::Nullable(&TEXT)),
    required("expected_output", NON_EMPTY_TEXT),
    required("actual_output", Shape::Nullable(&TEXT)),
    required(
        "metrics",
        Shape::List {
            item: &METRIC,
            non_empty: true,
        },
    ),
    // A per-metric override; a `null` value means "use the default threshold".
    optional(
        "thresholds",
        Shape::Record {
            keys: Some(&super::METRIC_NAMES),
            value: &UNIT_OR_NULL,
        },
    ),
    required("tags", TAGS),
    // zod allows 0, but a zero weight drops the case from the suite score (and can make the
    // weighted mean divide by zero); the seed says positive.
    optional("weight", Shape::Number(Range::POSITIVE)),
    optional("context", Shape::Nullable(&CONTEXT)),
]);

const GOLDEN_SET: Shape = Shape::Object(&[
    required("name", NON_EMPTY_TEXT),
    required("version", NON_EMPTY_TEXT),
    required("description", NON_EMPTY_TEXT),
    required("interaction_type", Shape::OneOf(&["single_turn", "rag"])),
    required("tags", TAGS),
    required("author", NON_EMPTY_TEXT),
    required("created_at", NON_EMPTY_TEXT),
    required("updated_at", NON_EMPTY_TEXT),
    required(
        "test_cases",
        Shape::List {
            item: &TEST_CASE,
            non_empty: true,
        },
    ),
]);

/// Loads one golden set. Every problem is reported; a test case is still returned when its
/// `id`, `input` and `expected_output` are readable, so callers can count and list it.
pub fn load_set(root: &Node, defaults: &SetDefaults, diags: &mut Diagnostics) -> Vec<Case> {
    if root.as_map().is_none() {
        root.wrong_type("a golden set mapping", diags)
            .hint("a golden set has `name`, `interaction_type` and `test_cases` at the top level");
        return Vec::new();
    }
    let start = diags.items.len();
    shape::check(root, &GOLDEN_SET, "", diags);
    let test_cases = root
        .get("test_cases")
        .and_then(Node::as_seq)
        .unwrap_or_default();
    check_unique_ids(test_cases, diags);
    if root.get("interaction_type").and_then(Node::as_str) == Some("rag") {
        check_rag_context(test_cases, diags);
    }
    shape::sort_from(diags, start);
    let set_tags = texts(root.get("tags"));
    test_cases
        .iter()
        .filter_map(|node| to_case(node, &set_tags, defaults, &diags.file))
        .collect()
}

/// One G103 per repeated id, at its second use, naming every index and line like Regtrace's
/// `Duplicate test case id "x" found at indices [0, 1]`.
fn check_unique_ids(test_cases: &[Node], diags: &mut Diagnostics) {
    let mut groups: Vec<(&str, Vec<(usize, &Node)>)> = Vec::new();
    let mut group_of: HashMap<&str, usize> = HashMap::new();
    for (index, case) in test_cases.iter().enumerate() {
        let Some(id_node) = case.get("id") else {
            continue;
        };
        let Some(id) = id_node.as_str() else {
            continue;
        };
        let group = *group_of.entry(id).or_insert_with(|| {
            groups.push((id, Vec::new()));
            groups.len() - 1
        });
        groups[group].1.push((index, id_node));
    }
    for (id, uses) in groups.iter().filter(|(_, uses)| uses.len() > 1) {
        let list = |part: fn(&(usize, &Node)) -> String| {
            uses.iter().map(part).collect::<Vec<_>>().join(", ")
        };
        let indices = list(|(index, _)| index.to_string());
        let lines = list(|(_, node)| node.line.to_string());
        let (index, node) = uses[1];
        diags
            .at(node)
            .error(
                Code::G103,
                format!(
                    "duplicate test case id \"{id}\" found at indices [{indices}], lines {lines}"
                ),
            )
            .field(format!("test_cases[{index}].id"))
            .hint("test case ids must be unique within a golden set");
    }
}

/// Every test case of a `rag` set needs a non-null `context`.
fn check_rag_context(test_cases: &[Node], diags: &mut Diagnostics) {
    for (index, case) in test_cases.iter().enumerate() {
        if case.as_map().is_none() {
            continue; // reported by the shape check
        }
        let context = case.get("context");
        if context.is_some_and(|context| !context.is_null()) {
            continue;
        }
        let at = context.unwrap_or(case);
        let message = match case.get("id").and_then(Node::as_str) {
            Some(id) => format!("RAG test case \"{id}\" must have a context block"),
            None => "RAG test case must have a context block".to_owned(),
        };
        diags
            .at(at)
            .error(Code::G102, message)
            .field(format!("test_cases[{index}].context"))
            .hint("add `context: {documents: [{source: ..., content: ...}]}`");
    }
}

/// The author's comments above `input`, the case's one turn, unless `input` comes first: then
/// they are above the case, and its.
fn input_comments(case: &Node) -> Vec<String> {
    let entries = case.as_map().unwrap_or_default();
    entries
        .iter()
        .skip(1)
        .find(|(key, _)| key.name == "input")
        .map_or_else(Vec::new, |(key, _)| {
            crate::formats::scrapi::annotation::authors(&key.comments)
        })
}

fn to_case(
    node: &Node,
    set_tags: &[String],
    defaults: &SetDefaults,
    file: &Arc<Path>,
) -> Option<Case> {
    let text = |key: &str| node.get(key).and_then(Node::as_str).map(str::to_owned);
    let id = text("id")?;
    let input_node = node.get("input")?;
    let input = input_node.as_str()?.to_owned();
    let expected_output = text("expected_output")?;
    let thresholds = node.get("thresholds");
    let threshold_of = |metric: Metric| {
        thresholds
            .and_then(|t| t.get(super::metric_name(metric)))
            .and_then(Node::as_f64)
            .unwrap_or(defaults.default_threshold)
    };
    let checks = node
        .get("metrics")
        .and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(|item| {
            let metric = super::parse_metric(item.as_str()?)?;
            Some(CaseCheck {
                location: Location::new(file, item.line, item.column),
                label: super::metric_name(metric).to_owned(),
                kind: CheckKind::Metric {
                    metric,
                    threshold: threshold_of(metric),
                    expected_output: expected_output.clone(),
                },
            })
        })
        .collect();
    let mut tags = set_tags.to_vec();
    for tag in texts(node.get("tags")) {
        if !tags.contains(&tag) {
            tags.push(tag);
        }
    }
    let turn = Turn {
        index: 1,
        location: Location::new(file, input_node.line, input_node.column),
        inputs: vec![Input::Text(input)],
        expectations: Vec::new(),
        tool_mocks: Vec::new(),
        recorded_reply: text("actual_output"),
        comments: input_comments(node),
    };
    let weight = node.get("weight").and_then(Node::as_f64).unwrap_or(1.0);
    let location = Location::new(file, node.line, node.column);
    Some(Case {
        description: text("description"),
        tags,
        system_prompt: text("system_prompt"),
        context: documents(node.get("context")),
        turns: vec![turn],
        checks,
        weight: weight * defaults.weight,
        comments: crate::formats::author_comments(node),
        ..Case::named(id, Format::RegtraceSet, location)
    })
}

fn documents(context: Option<&Node>) -> Vec<ContextDocument> {
    let items = context
        .and_then(|context| context.get("documents"))
        .and_then(Node::as_seq)
        .unwrap_or_default();
    items
        .iter()
        .filter_map(|doc| {
            Some(ContextDocument {
                source: doc.get("source")?.as_str()?.to_owned(),
                content: doc.get("content")?.as_str()?.to_owned(),
                retrieval_score: doc.get("retrieval_score").and_then(Node::as_f64),
            })
        })
        .collect()
}

/// The strings of a list node; anything else was reported by the shape check.
fn texts(node: Option<&Node>) -> Vec<String> {
    node.and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(|item| item.as_str().map(str::to_owned))
        .collect()
}
