//! Evaluations that already live in the app, chosen in goldgate.yaml
//! (`platform: { evaluations: { prefix, tags } }`) as `cxas run --display-name-prefix / --tags`
//! chooses them: each becomes a case with no local file of its own, run and reported with the
//! goldens. Its file is `{app}/evaluations` (which is how reports, baselines and the gate key
//! it, with its display name as its id), its description the evaluation's resource name, its
//! turns the user inputs of its golden (a scenario's task for a scenario). Evaluations goldgate
//! pushed itself are its local goldens' and are not chosen again.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::push::MARK;
use crate::agent::ces::CesAgent;
use crate::config::ces::platform::Existing;
use crate::model::{Case, Format, Input, Location, Turn, WELCOME_EVENT};

/// The case when the app's evaluations could not be listed: it errs with why.
const NOT_LISTED: &str = "evaluations chosen in goldgate.yaml";

/// The file every existing evaluation's case names.
fn file_of(app: &str) -> String {
    format!("{app}/evaluations")
}

/// For a case of an existing evaluation, its resource name, or why it cannot run; `None` for
/// a local golden.
pub(super) fn resource_of(case: &Case, app: &str) -> Option<Result<String, String>> {
    if case.location.file.as_ref() != Path::new(&file_of(app)) {
        return None;
    }
    let description = case.description.clone().unwrap_or_default();
    Some(match description.strip_prefix("projects/") {
        Some(_) => Ok(description),
        None => Err(description),
    })
}

impl CesAgent {
    /// The cases of the evaluations chosen in goldgate.yaml; none when none are chosen.
    pub(super) async fn existing_cases(&self) -> Vec<Case> {
        let platform = self.config.platform.as_ref();
        let Some(chosen) = platform.and_then(|p| p.existing.as_ref()) else {
            return Vec::new();
        };
        let app = &self.config.app;
        let file: Arc<Path> = Arc::from(Path::new(&file_of(app)));
        match self.list(&file_of(app), "evaluations").await {
            Ok(listed) => listed
                .iter()
                .filter(|e| is_chosen(e, chosen))
                .map(|e| case_of(e, &file))
                .collect(),
            Err(error) => {
                let mut case = Case::named(NOT_LISTED.to_owned(), Format::ScrapiGolden, at(&file));
                let why = format!(
                    "the app's evaluations could not be listed: {}",
                    self.masked(error)
                );
                case.description = Some(why);
                case.turns
                    .push(turn(&file, 1, vec![Input::Event(WELCOME_EVENT.to_owned())]));
                vec![case]
            }
        }
    }
}

/// Chosen by its display name's prefix and, with tags, one of its tags; never one goldgate
/// pushed.
fn is_chosen(evaluation: &Value, chosen: &Existing) -> bool {
    let display = evaluation["displayName"].as_str().unwrap_or_default();
    let ours = evaluation["description"]
        .as_str()
        .is_some_and(|d| d.starts_with(MARK));
    let tags: Vec<&str> = list(&evaluation["tags"])
        .filter_map(Value::as_str)
        .collect();
    let prefixed = chosen
        .prefix
        .as_ref()
        .is_none_or(|p| display.starts_with(p.as_str()));
    let tagged = chosen.tags.is_empty() || chosen.tags.iter().any(|t| tags.contains(&t.as_str()));
    !ours && !display.is_empty() && prefixed && tagged
}

fn case_of(evaluation: &Value, file: &Arc<Path>) -> Case {
    let display = evaluation["displayName"].as_str().unwrap_or_default();
    let mut case = Case::named(display.to_owned(), Format::ScrapiGolden, at(file));
    case.description = evaluation["name"].as_str().map(str::to_owned);
    case.tags = list(&evaluation["tags"])
        .filter_map(|t| t.as_str().map(str::to_owned))
        .collect();
    for (i, golden) in list(&evaluation["golden"]["turns"]).enumerate() {
        let inputs: Vec<Input> = list(&golden["steps"])
            .filter_map(|step| input_of(&step["userInput"]))
            .collect();
        case.turns.push(turn(file, i + 1, inputs));
    }
    if let Some(task) = evaluation["scenario"]["task"].as_str() {
        case.turns
            .push(turn(file, 1, vec![Input::Text(task.to_owned())]));
    }
    if case.turns.is_empty() {
        case.turns
            .push(turn(file, 1, vec![Input::Event(WELCOME_EVENT.to_owned())]));
    }
    case
}

fn input_of(input: &Value) -> Option<Input> {
    if let Some(text) = input["text"].as_str() {
        return Some(Input::Text(text.to_owned()));
    }
    if let Some(event) = input["event"]["event"].as_str() {
        return Some(Input::Event(event.to_owned()));
    }
    input["variables"]
        .as_object()
        .cloned()
        .map(Input::Variables)
}

fn turn(file: &Arc<Path>, index: usize, inputs: Vec<Input>) -> Turn {
    Turn {
        index,
        location: at(file),
        inputs,
        expectations: Vec::new(),
        tool_mocks: Vec::new(),
        recorded_reply: None,
        comments: Vec::new(),
    }
}

fn at(file: &Arc<Path>) -> Location {
    Location::new(file, 1, 1)
}

fn list(value: &Value) -> impl Iterator<Item = &Value> {
    value.as_array().into_iter().flatten()
}
