//! A case as the `Evaluation` SCRAPI's `cxas push-eval` would send for it.
//!
//! A SCRAPI dataset golden is read again from its file, so that its conversation is mapped as
//! written (`$matchType` maps in whatever shape, common parameters and expectations); a case of
//! another format is first written as a SCRAPI golden (`formats::scrapi::write`, the inverse of
//! the loader). Either is then mapped step by step as SCRAPI's
//! `EvalUtils._process_dataset_turn` maps a conversation: the session parameters as a `variables` step before turn 1, `text` or the
//! `welcome` event for a turn without user text, one `agentResponse` per expected chunk (none
//! for `# silent`), tool calls by resource name with their `args` (and `$matchType` maps)
//! unchanged, a `toolResponse` from a call's `output`, and `transfer_to_agent` as an
//! `agentTransfer`. The display name is the conversation's, the tags its tags and the file's
//! stem. Free-text expectations stay prompts here; the caller finds or creates their
//! `EvaluationExpectation` resources.
//!
//! One difference on purpose: SCRAPI gives each expected tool call a random `adk-<uuid4>` id;
//! here the id is derived from the case and the call's place, so that pushing an unchanged
//! golden again sends the same evaluation and its content hash does not change.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Map, Value, json};

use crate::formats::scrapi::write;
use crate::formats::write::Losses;
use crate::model::{Case, Format};
use crate::yaml::{self, Schema};

/// An evaluation before its expectations are resolved into resource names.
#[derive(Debug, PartialEq)]
pub(super) struct Draft {
    pub display_name: String,
    pub tags: Vec<String>,
    pub turns: Vec<Value>,
    /// The conversation's free-text expectations (`llmCriteria` prompts).
    pub prompts: Vec<String>,
}

/// Display names to resource names, as SCRAPI's maps of the app's tools and agents.
#[derive(Debug, Default)]
pub(super) struct Names {
    pub app: String,
    pub tools: BTreeMap<String, String>,
    pub agents: BTreeMap<String, String>,
}

impl Names {
    /// A tool's resource name: the app's tool of that display name, a resource name as given,
    /// else `{app}/tools/{action}` (SCRAPI's fallback).
    fn tool(&self, action: &str) -> String {
        match self.tools.get(action) {
            Some(name) => name.clone(),
            None if action.starts_with("projects/") => action.to_owned(),
            None => format!("{}/tools/{action}", self.app),
        }
    }

    fn agent(&self, name: &str) -> String {
        self.agents
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_owned())
    }
}

/// The SCRAPI dataset files read so far, by path.
pub(super) type Sources = BTreeMap<PathBuf, Option<Value>>;

/// The draft evaluation of `case`, or why the case cannot be one.
pub(super) fn draft(case: &Case, names: &Names, sources: &mut Sources) -> Result<Draft, String> {
    if let Some(draft) = exported(case, sources) {
        return Ok(draft);
    }
    let (conversation, common) = match as_written(case, sources) {
        Some(found) => found,
        None => (rewritten(case)?, Value::Null),
    };
    let mut tags: Vec<String> = strings(&conversation["tags"]);
    let stem = case
        .location
        .file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned());
    if let Some(stem) = stem.filter(|s| !tags.contains(s)) {
        tags.push(stem);
    }
    let mut parameters = common["common_session_parameters"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    if let Some(own) = conversation["session_parameters"].as_object() {
        parameters.extend(own.clone());
    }
    let mut injected = false;
    let mut turns = Vec::new();
    for (t, turn) in conversation["turns"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let mut variables = Map::new();
        if !injected && !parameters.is_empty() {
            variables.extend(parameters.clone());
            injected = true;
        }
        if let Some(own) = turn["variables"].as_object() {
            variables.extend(own.clone());
        }
        let seed = format!("{}\u{0}{}\u{0}{t}", case.location.file.display(), case.id);
        turns.push(json!({ "steps": steps(turn, variables, names, &seed) }));
    }
    let mut prompts = strings(&common["common_expectations"]);
    prompts.extend(strings(&conversation["expectations"]));
    Ok(Draft {
        display_name: case.id.clone(),
        tags,
        turns,
        prompts,
    })
}

/// A SCRAPI golden in the platform's own shape (an exported evaluation, YAML or JSON, whose
/// turns are already steps): pushed with its turns as they are, as SCRAPI pushes it.
fn exported(case: &Case, sources: &mut Sources) -> Option<Draft> {
    let source = source(case, sources)?;
    let golden = source.get("golden").unwrap_or(source);
    let turns = golden["turns"].as_array()?;
    turns.first()?.get("steps")?;
    let mut tags = strings(&source["tags"]);
    if let Some(stem) = case.location.file.file_stem() {
        let stem = stem.to_string_lossy().into_owned();
        if !tags.contains(&stem) {
            tags.push(stem);
        }
    }
    let written = golden["evaluationExpectations"]
        .as_array()
        .or(source["expectations"].as_array());
    let prompts = written
        .into_iter()
        .flatten()
        .filter_map(|x| {
            x.as_str()
                .or(x["prompt"].as_str())
                .or(x["llmCriteria"]["prompt"].as_str())
                .map(str::to_owned)
        })
        .collect();
    Some(Draft {
        display_name: case.id.clone(),
        tags,
        turns: turns.clone(),
        prompts,
    })
}

/// The file of a SCRAPI golden, parsed (once per push), looked for where the report names
/// it: from the current directory and from the project root.
fn source<'s>(case: &Case, sources: &'s mut Sources) -> Option<&'s Value> {
    if case.format != Format::ScrapiGolden {
        return None;
    }
    let file = case.location.file.to_path_buf();
    let source = sources.entry(file.clone()).or_insert_with(|| {
        let cwd = std::env::current_dir().ok()?;
        let root = crate::project::root(&cwd, &cwd);
        [cwd.join(&file), root.join(&file)]
            .iter()
            .find_map(|path| std::fs::read_to_string(path).ok())
            .and_then(|text| yaml::parse_as(&text, Schema::PyYaml).ok())
            .map(|root| root.to_json())
    });
    source.as_ref()
}

/// A SCRAPI dataset case's conversation as its file has it, and the file's common
/// parameters and expectations.
fn as_written(case: &Case, sources: &mut Sources) -> Option<(Value, Value)> {
    let source = source(case, sources)?;
    let conversation =
        source["conversations"]
            .as_array()?
            .iter()
            .find(|c| match &c["conversation"] {
                Value::String(name) => *name == case.id,
                Value::Number(number) => number.to_string() == case.id,
                _ => false,
            })?;
    let common = json!({
        "common_session_parameters": source["common_session_parameters"],
        "common_expectations": source["common_expectations"],
    });
    Some((conversation.clone(), common))
}

/// The case written as a one-conversation SCRAPI golden, that conversation.
fn rewritten(case: &Case) -> Result<Value, String> {
    let text = write::write(std::slice::from_ref(case), &mut Losses::default());
    let golden = yaml::parse_as(&text, Schema::PyYaml)
        .map_err(|e| format!("the case could not be written as a SCRAPI golden: {e}"))?
        .to_json();
    Ok(golden["conversations"][0].clone())
}

/// One turn's steps, in SCRAPI's order.
fn steps(turn: &Value, variables: Map<String, Value>, names: &Names, seed: &str) -> Vec<Value> {
    let mut steps = Vec::new();
    if !variables.is_empty() {
        steps.push(json!({ "userInput": { "variables": variables } }));
    }
    let input = match (&turn["user"], turn["event"].as_str()) {
        (Value::Null, Some(event)) => json!({ "event": { "event": event } }),
        (Value::Null, None) => json!({ "event": { "event": crate::model::WELCOME_EVENT } }),
        (Value::String(text), _) => json!({ "text": text }),
        (other, _) => json!({ "text": other.to_string() }),
    };
    steps.push(json!({ "userInput": input }));
    let chunks = match &turn["agent"] {
        Value::String(text) => vec![text.clone()],
        Value::Array(texts) => texts
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    for text in chunks.into_iter().filter(|t| !t.contains("# silent")) {
        steps.push(json!({ "expectation": { "agentResponse": {
            "role": "agent", "chunks": [{ "text": text }] } } }));
    }
    let calls = turn["tool_calls"].as_array().into_iter().flatten();
    for (c, call) in calls.enumerate() {
        let Some(action) = call["action"].as_str().filter(|a| !a.is_empty()) else {
            continue;
        };
        let args = call.get("args").cloned().unwrap_or_else(|| json!({}));
        let target = args["agent"].as_str().or(call["agent"].as_str());
        if let (crate::transcript::TRANSFER_TOOL, Some(agent)) = (action, target) {
            steps.push(json!({ "expectation": { "agentTransfer": {
                "targetAgent": names.agent(agent) } } }));
            continue;
        }
        let id = call_id(&format!("{seed}\u{0}{c}"));
        let tool = names.tool(action);
        steps.push(json!({ "expectation": { "toolCall": {
            "id": id, "tool": tool, "args": args } } }));
        if let Some(output) = call.get("output").filter(|o| !o.is_null()) {
            steps.push(json!({ "expectation": { "toolResponse": {
                "id": id, "tool": tool, "response": output } } }));
        }
    }
    steps
}

/// `adk-` and a UUID (version 4 in form) made from `seed`: SCRAPI's shape, stable per place.
fn call_id(seed: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, seed.as_bytes());
    let mut b: [u8; 16] = digest.as_ref()[..16].try_into().unwrap_or_default();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "adk-{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// The strings of a YAML list (or of one string).
fn strings(value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        Value::String(s) => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// The first 16 hex digits of the SHA-256 of `value`'s JSON: what tells an unchanged
/// evaluation from one to PATCH.
pub(super) fn content_hash(value: &Value) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, value.to_string().as_bytes());
    digest.as_ref()[..8]
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Names, call_id, content_hash};

    #[test]
    fn call_ids_have_scrapis_shape_and_stay_the_same_for_the_same_place() {
        let id = call_id("goldens/a.yaml\u{0}case\u{0}0\u{0}0");
        let uuid = id.strip_prefix("adk-").unwrap();
        let parts: Vec<usize> = uuid.split('-').map(str::len).collect();
        assert_eq!(parts, [8, 4, 4, 4, 12]);
        assert_eq!(&uuid[14..15], "4", "version 4");
        assert!(
            matches!(&uuid[19..20], "8" | "9" | "a" | "b"),
            "RFC 4122 variant"
        );
        assert_eq!(id, call_id("goldens/a.yaml\u{0}case\u{0}0\u{0}0"));
        assert_ne!(id, call_id("goldens/a.yaml\u{0}case\u{0}0\u{0}1"));
    }

    #[test]
    fn the_content_hash_changes_with_the_content_only() {
        let a = json!({"displayName": "x", "golden": {"turns": []}});
        assert_eq!(content_hash(&a), content_hash(&a.clone()));
        assert_ne!(content_hash(&a), content_hash(&json!({"displayName": "y"})));
        assert_eq!(content_hash(&a).len(), 16);
    }

    #[test]
    fn tools_are_named_by_the_apps_resource_else_under_the_app() {
        let mut names = Names {
            app: "projects/p/locations/l/apps/a".to_owned(),
            ..Names::default()
        };
        names.tools.insert(
            "lookup".to_owned(),
            "projects/p/locations/l/apps/a/tools/9f".to_owned(),
        );
        assert_eq!(
            names.tool("lookup"),
            "projects/p/locations/l/apps/a/tools/9f"
        );
        assert_eq!(
            names.tool("other"),
            "projects/p/locations/l/apps/a/tools/other"
        );
        let given = "projects/q/locations/l/apps/b/tools/t";
        assert_eq!(names.tool(given), given);
        assert_eq!(names.agent("Billing"), "Billing");
    }
}
