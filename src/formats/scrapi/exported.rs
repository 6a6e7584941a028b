//! The Evaluation the platform exports (`displayName`, `golden.turns[].steps[]`, YAML or JSON):
//! one file, one [`Case`]. SCRAPI passes it to the platform as is, so every step kind the
//! platform defines is known here; the few goldgate cannot check yet load with a G108 warning.

use serde_json::{Map, Value as Json};

use super::{criteria, file_stem, items, matcher, parameters, tags, take_container, turn};
use crate::diagnostic::{Code, Diagnostics};
use crate::model::{
    ArgsMatcher, Case, Expectation, ExpectationKind, ExpectedToolCall, Input, MatchType, Matcher,
    ToolMock, Turn,
};
use crate::yaml::{Fields, Node, expect_text, indexed};

/// Bookkeeping the platform adds to an export: results, timestamps, dataset membership and
/// threshold overrides for the platform's own scorer. Nothing in them is a test.
const METADATA_KEYS: &[&str] = &[
    "evaluationDatasets",
    "createTime",
    "createdBy",
    "updateTime",
    "lastUpdatedBy",
    "etag",
    "evaluationRuns",
    "aggregatedMetrics",
    "lastCompletedResult",
    "lastTenResults",
    "invalid",
    "evaluationMetricsThresholdOverride",
];
/// Inputs goldgate's agent protocol cannot carry yet.
const UNSUPPORTED_INPUTS: &[&str] = &["dtmf", "audio", "blob"];
/// Knobs of the platform's own scorer; goldgate scores with its own settings.
const SCORER_OVERRIDES: &[&str] = &[
    "agentResponseHallucinationMetricsConfigOverride",
    "agentResponseSemanticSimilarityMetricsConfigOverride",
    "comparisonType",
    "expectationLevelMetricsThresholdsOverride",
];
/// Expectations goldgate cannot check yet.
const UNSUPPORTED_EXPECTATIONS: &[&str] = &["updatedVariables", "noToolCalls"];
/// Message chunks other than `text`: payloads, media and the like, which goldgate skips.
const OTHER_CHUNKS: &[&str] = &[
    "transcript",
    "payload",
    "image",
    "blob",
    "toolCall",
    "toolResponse",
    "agentTransfer",
    "updatedVariables",
    "defaultVariables",
];

pub(super) fn load(root: &Node, diags: &mut Diagnostics) -> Vec<Case> {
    let Some(mut fields) = Fields::of(root, "", diags) else {
        return Vec::new();
    };
    let display_name = fields.string("displayName", diags);
    let resource_name = fields.string("name", diags);
    let description = fields.string("description", diags);
    let tags = tags(&mut fields, diags);
    for key in METADATA_KEYS {
        fields.take(key);
    }
    let mut session_parameters = Map::new();
    for key in ["session_parameters", "variables"] {
        if let Some(node) = take_container(&mut fields, key, "{}", diags) {
            session_parameters.extend(parameters(node, key, diags));
        }
    }
    let mut checks = take_container(&mut fields, "expectations", "[]", diags)
        .map(|node| criteria(node, "expectations", diags))
        .unwrap_or_default();
    let golden = fields.require("golden", "the golden conversation", diags);
    fields.finish(diags);

    let mut turns = Vec::new();
    if let Some(mut golden) = golden.and_then(|node| Fields::of(node, "golden", diags)) {
        for key in ["session_parameters", "variables"] {
            if let Some(node) = take_container(&mut golden, key, "{}", diags) {
                session_parameters.extend(parameters(node, &golden.path_of(key), diags));
            }
        }
        if let Some(node) = take_container(&mut golden, "evaluationExpectations", "[]", diags) {
            checks.extend(criteria(node, "golden.evaluationExpectations", diags));
        }
        let turn_list = golden.require("turns", "a list of turns", diags);
        golden.finish(diags);
        let list = turn_list.map_or(&[][..], |list| {
            items(list, "golden.turns", "a list of turns", diags)
        });
        // SCRAPI also takes dataset-style turns (`user`, `agent`) under `golden`, and tells the
        // two apart by the first turn.
        let steps_shape = list
            .first()
            .is_none_or(|first| first.get("steps").is_some());
        for (i, node) in list.iter().enumerate() {
            let path = format!("golden.turns[{i}]");
            let parsed = if steps_shape {
                steps_turn(node, i + 1, &path, diags)
            } else {
                turn::parse(node, i + 1, &path, diags).map(|parsed| parsed.turn)
            };
            turns.extend(parsed);
        }
    }

    let id = display_name
        .or(resource_name)
        .unwrap_or_else(|| file_stem(diags));
    let location = diags.location(root.line, root.column);
    vec![Case {
        description,
        ..super::golden_case(id, location, tags, session_parameters, turns, checks)
    }]
}

fn steps_turn(node: &Node, index: usize, path: &str, diags: &mut Diagnostics) -> Option<Turn> {
    let mut fields = Fields::of(node, path, diags)?;
    let steps = fields.require("steps", "a list of steps", diags);
    // Audio replay data for the platform's voice mode.
    fields.take("rootSpan");
    fields.finish(diags);
    let mut turn = Turn {
        index,
        location: diags.location(node.line, node.column),
        inputs: Vec::new(),
        expectations: Vec::new(),
        tool_mocks: Vec::new(),
        recorded_reply: None,
        comments: Vec::new(),
    };
    let steps_path = format!("{path}.steps");
    let steps = steps.map_or(&[][..], |list| {
        items(list, &steps_path, "a list of steps", diags)
    });
    for (path, step_node) in indexed(steps, &steps_path) {
        step(step_node, &path, &mut turn, diags);
    }
    Some(turn)
}

fn step(node: &Node, path: &str, turn: &mut Turn, diags: &mut Diagnostics) {
    let Some(mut fields) = Fields::of(node, path, diags) else {
        return;
    };
    if let Some(input) = fields.take("userInput") {
        user_input(input, &fields.path_of("userInput"), turn, diags);
    }
    if let Some(expectation) = fields.take("expectation") {
        golden_expectation(expectation, &fields.path_of("expectation"), turn, diags);
    }
    if let Some(transfer) = fields.take("agentTransfer") {
        let path = fields.path_of("agentTransfer");
        unsupported(
            transfer,
            &path,
            "a step that forces an agent transfer",
            diags,
        );
    }
    fields.finish(diags);
}

fn user_input(node: &Node, path: &str, turn: &mut Turn, diags: &mut Diagnostics) {
    let Some(mut fields) = Fields::of(node, path, diags) else {
        return;
    };
    if let Some(text) = fields.string("text", diags) {
        turn.inputs.push(Input::Text(text));
    }
    if let Some(event) = fields.take("event") {
        let event_path = fields.path_of("event");
        // The proto wraps the name (`event: {event: welcome}`); a bare name is accepted too.
        let name = if event.as_map().is_some() {
            Fields::of(event, &event_path, diags).and_then(|mut inner| {
                let name = inner.required_string("event", diags);
                inner.finish(diags);
                name
            })
        } else {
            expect_text(event, &event_path, diags)
        };
        turn.inputs.extend(name.map(Input::Event));
    }
    if let Some(variables) = take_container(&mut fields, "variables", "{}", diags) {
        let variables = parameters(variables, &fields.path_of("variables"), diags);
        turn.inputs.push(Input::Variables(variables));
    }
    if let Some(responses) = fields.take("toolResponses") {
        tool_responses(responses, &fields.path_of("toolResponses"), turn, diags);
    }
    if let Some(image) = fields.take("image") {
        let image_path = fields.path_of("image");
        if let Some(mut inner) = Fields::of(image, &image_path, diags) {
            let mime_type = inner.required_string("mimeType", diags);
            let data = inner.required_string("data", diags);
            inner.finish(diags);
            if let (Some(mime_type), Some(data)) = (mime_type, data) {
                turn.inputs.push(Input::Image { mime_type, data });
            }
        }
    }
    for key in UNSUPPORTED_INPUTS {
        if let Some(input) = fields.take(key) {
            unsupported(
                input,
                &fields.path_of(key),
                &format!("`{key}` input"),
                diags,
            );
        }
    }
    // Streaming hint for partial input; a golden turn is always sent whole.
    fields.take("willContinue");
    fields.finish(diags);
}

/// `toolResponses: {toolResponses: [{id, tool, displayName, response}]}`, as the proto nests it.
fn tool_responses(node: &Node, path: &str, turn: &mut Turn, diags: &mut Diagnostics) {
    let Some(mut fields) = Fields::of(node, path, diags) else {
        return;
    };
    let list = fields.require("toolResponses", "a list of tool responses", diags);
    let list_path = fields.path_of("toolResponses");
    fields.finish(diags);
    let Some(list) = list else {
        return;
    };
    let list = items(list, &list_path, "a list of tool responses", diags);
    for (path, item) in indexed(list, &list_path) {
        if let Some((name, response)) = tool_response(item, &path, diags) {
            let response = response.unwrap_or(Json::Null);
            turn.inputs.push(Input::ToolResponse { name, response });
        }
    }
}

fn golden_expectation(node: &Node, path: &str, turn: &mut Turn, diags: &mut Diagnostics) {
    let Some(mut fields) = Fields::of(node, path, diags) else {
        return;
    };
    let note = fields.string("note", diags);
    for key in SCORER_OVERRIDES {
        fields.take(key);
    }
    let mut kinds = Vec::new();
    if let Some(message) = fields.take("agentResponse") {
        agent_response(message, &fields.path_of("agentResponse"), &mut kinds, diags);
    }
    if let Some(call) = fields.take("toolCall") {
        kinds.extend(tool_call(call, &fields.path_of("toolCall"), diags));
    }
    if let Some(response) = fields.take("toolResponse")
        && let Some((tool, output)) =
            tool_response(response, &fields.path_of("toolResponse"), diags)
    {
        kinds.push((response, ExpectationKind::ToolResponse { tool, output }));
    }
    if let Some(transfer) = fields.take("agentTransfer") {
        kinds.extend(agent_transfer(
            transfer,
            &fields.path_of("agentTransfer"),
            diags,
        ));
    }
    if let Some(mock) = fields.take("mockToolResponse")
        && let Some((tool, output)) =
            tool_response(mock, &fields.path_of("mockToolResponse"), diags)
    {
        turn.tool_mocks.push(ToolMock {
            tool,
            args: None,
            output: output.unwrap_or(Json::Null),
            location: diags.location(mock.line, mock.column),
        });
    }
    for key in UNSUPPORTED_EXPECTATIONS {
        if let Some(expectation) = fields.take(key) {
            let what = format!("`{key}` expectations");
            unsupported(expectation, &fields.path_of(key), &what, diags);
        }
    }
    fields.finish(diags);
    turn.expectations
        .extend(kinds.into_iter().map(|(at, kind)| Expectation {
            location: diags.location(at.line, at.column),
            kind,
            note: note.clone(),
        }));
}

/// An expected agent message: one semantic text expectation per text chunk.
fn agent_response<'a>(
    node: &'a Node,
    path: &str,
    kinds: &mut Vec<(&'a Node, ExpectationKind)>,
    diags: &mut Diagnostics,
) {
    let Some(mut fields) = Fields::of(node, path, diags) else {
        return;
    };
    // The role is always the agent's here.
    fields.take("role");
    let chunks = fields.take("chunks");
    let chunks_path = fields.path_of("chunks");
    fields.finish(diags);
    let Some(chunks) = chunks else {
        return;
    };
    let chunks = items(chunks, &chunks_path, "a list of chunks", diags);
    for (chunk_path, chunk) in indexed(chunks, &chunks_path) {
        let Some(mut chunk_fields) = Fields::of(chunk, &chunk_path, diags) else {
            continue;
        };
        if chunk.get("text").is_none() {
            unsupported(
                chunk,
                &chunk_path,
                "message chunks other than `text`",
                diags,
            );
        }
        if let Some(text) = chunk_fields.string("text", diags) {
            let matcher = Matcher::new(MatchType::Semantic, Json::String(text));
            let kind = ExpectationKind::AgentText {
                matcher,
                agent: None,
            };
            kinds.push((chunk, kind));
        }
        for key in OTHER_CHUNKS {
            chunk_fields.take(key);
        }
        chunk_fields.finish(diags);
    }
}

fn tool_call<'a>(
    node: &'a Node,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<(&'a Node, ExpectationKind)> {
    let mut fields = Fields::of(node, path, diags)?;
    let name = tool_name(&mut fields, diags);
    let args = fields
        .take("args")
        .map_or_else(ArgsMatcher::default, |args| {
            matcher::args(args, &fields.path_of("args"), diags)
        });
    fields.finish(diags);
    let call = ExpectedToolCall {
        name: name?,
        args,
        agent: None,
    };
    Some((node, ExpectationKind::ToolCall(call)))
}

/// A `{id, tool, displayName, response}` tool response: the tool's name and the response.
fn tool_response(
    node: &Node,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<(String, Option<Json>)> {
    let mut fields = Fields::of(node, path, diags)?;
    let name = tool_name(&mut fields, diags);
    let response = fields.take("response").map(Node::to_json);
    fields.finish(diags);
    Some((name?, response))
}

/// The tool's display name, else the last segment of its `tool` resource name. The call `id`
/// is per run and not compared.
fn tool_name(fields: &mut Fields<'_>, diags: &mut Diagnostics) -> Option<String> {
    fields.take("id");
    let display_name = fields.string("displayName", diags);
    let resource = fields.string("tool", diags);
    let name = display_name.or_else(|| resource.as_deref().map(last_segment));
    if name.is_none() {
        let node = fields.node();
        diags
            .at(node)
            .error(
                Code::G102,
                "missing required key `tool` (the tool's name or resource name)",
            )
            .field(fields.path_of("tool"));
    }
    name
}

fn agent_transfer<'a>(
    node: &'a Node,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<(&'a Node, ExpectationKind)> {
    let mut fields = Fields::of(node, path, diags)?;
    let display_name = fields.string("displayName", diags);
    let target = fields.required_string("targetAgent", diags);
    fields.finish(diags);
    let agent = display_name.or_else(|| target.as_deref().map(last_segment))?;
    Some((node, ExpectationKind::Transfer { agent }))
}

/// `projects/p/locations/l/apps/a/tools/lookup` names the tool `lookup`.
fn last_segment(resource: &str) -> String {
    resource.rsplit('/').next().unwrap_or(resource).to_owned()
}

fn unsupported(node: &Node, path: &str, what: &str, diags: &mut Diagnostics) {
    diags
        .at(node)
        .warning(
            Code::G108,
            format!("goldgate does not support {what} yet; it is skipped"),
        )
        .field(path);
}
