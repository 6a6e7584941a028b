//! Pushing cases as evaluations, idempotently: each evaluation goldgate pushes carries
//! `goldgate:<content hash> <file>:<line>` as its description. One with the same display name
//! and hash is used as it is; one of goldgate's with another hash is PATCHed; one goldgate did
//! not create is never touched (the case is an error saying so). Free-text expectations find or
//! create their `EvaluationExpectation` (`llmCriteria.prompt`) as SCRAPI does.

use std::collections::BTreeMap;
use std::sync::Arc;

use reqwest::Method;
use serde_json::json;

use super::golden::{self, Draft, Names};
use crate::agent::ces::CesAgent;
use crate::model::Case;
use crate::net::EndpointError;

/// What begins the description of every evaluation goldgate pushed.
pub(super) const MARK: &str = "goldgate:";
/// Display names of created expectations are cut to this many characters.
const MAX_DISPLAY_NAME: usize = 60;

/// The app's evaluations and expectations as listed before the push.
struct Listed {
    /// Display name to (resource name, description).
    evaluations: BTreeMap<String, (String, String)>,
    /// Prompt to resource name.
    expectations: BTreeMap<String, String>,
}

impl CesAgent {
    /// Pushes each case: its evaluation's resource name, or why it could not be pushed.
    pub(super) async fn push(
        &self,
        cases: &[Arc<Case>],
    ) -> Result<Vec<Result<String, String>>, EndpointError> {
        let names = self.names().await?;
        let mut listed = self.listed().await?;
        let mut pushed = Vec::with_capacity(cases.len());
        let mut sources = golden::Sources::new();
        // The platform names evaluations uniquely: a second case of the same name is refused.
        let mut taken: BTreeMap<String, String> = BTreeMap::new();
        for case in cases {
            let place = format!("{}:{}", case.location.file.display(), case.location.line);
            let one = match golden::draft(case, &names, &mut sources) {
                Ok(draft) => match taken.get(&draft.display_name) {
                    Some(first) => Err(format!(
                        "the case {first} pushes an evaluation named `{}` already: the app names evaluations uniquely, so this one is not run",
                        draft.display_name
                    )),
                    None => {
                        taken.insert(draft.display_name.clone(), place);
                        self.push_one(case, draft, &mut listed).await
                    }
                },
                Err(why) => Err(why),
            };
            pushed.push(one);
        }
        Ok(pushed)
    }

    async fn push_one(
        &self,
        case: &Case,
        draft: Draft,
        listed: &mut Listed,
    ) -> Result<String, String> {
        let mut expectations = Vec::new();
        for prompt in &draft.prompts {
            let name = self
                .expectation(prompt, listed)
                .await
                .map_err(|e| e.to_string())?;
            expectations.push(name);
        }
        let mut evaluation = json!({
            "displayName": draft.display_name,
            "tags": draft.tags,
            "golden": { "turns": draft.turns, "evaluationExpectations": expectations },
        });
        let hash = golden::content_hash(&evaluation);
        evaluation["description"] = json!(format!(
            "{MARK}{hash} {}:{}",
            case.location.file.display(),
            case.location.line
        ));
        let app = &self.config.app;
        match listed.evaluations.get(&draft.display_name) {
            None => {
                let path = format!("{app}/evaluations");
                let created = self.api(Method::POST, &path, Some(evaluation)).await;
                let created = created.map_err(|e| e.to_string())?;
                created["name"]
                    .as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| "the created evaluation has no name".to_owned())
            }
            Some((name, description)) if !description.starts_with(MARK) => Err(format!(
                "the app already has an evaluation named `{}` ({name}) that goldgate did not create: it is left untouched; rename the case or the evaluation",
                draft.display_name
            )),
            Some((name, description)) if description[MARK.len()..].starts_with(&hash) => {
                Ok(name.clone())
            }
            Some((name, _)) => {
                let path = format!("{name}?updateMask=displayName,tags,description,golden");
                self.api(Method::PATCH, &path, Some(evaluation))
                    .await
                    .map_err(|e| e.to_string())?;
                Ok(name.clone())
            }
        }
    }

    /// The expectation with this prompt, created when the app has none.
    async fn expectation(
        &self,
        prompt: &str,
        listed: &mut Listed,
    ) -> Result<String, EndpointError> {
        if let Some(name) = listed.expectations.get(prompt) {
            return Ok(name.clone());
        }
        let display_name: String = prompt.chars().take(MAX_DISPLAY_NAME).collect();
        let body = json!({ "displayName": display_name, "llmCriteria": { "prompt": prompt } });
        let path = format!("{}/evaluationExpectations", self.config.app);
        let created = self.api(Method::POST, &path, Some(body)).await?;
        let name = created["name"].as_str().unwrap_or_default().to_owned();
        listed.expectations.insert(prompt.to_owned(), name.clone());
        Ok(name)
    }

    /// The app's tools and agents by display name.
    async fn names(&self) -> Result<Names, EndpointError> {
        let app = &self.config.app;
        let catalog = self.tools.get_or_try_init(|| self.catalog()).await?;
        let agents = self.list(&format!("{app}/agents"), "agents").await?;
        let mut names = Names {
            app: app.clone(),
            ..Names::default()
        };
        names.tools = catalog
            .all()
            .map(|(d, n)| (d.to_owned(), n.to_owned()))
            .collect();
        for agent in agents {
            if let (Some(name), Some(display)) =
                (agent["name"].as_str(), agent["displayName"].as_str())
            {
                names.agents.insert(display.to_owned(), name.to_owned());
            }
        }
        Ok(names)
    }

    async fn listed(&self) -> Result<Listed, EndpointError> {
        let app = &self.config.app;
        let mut listed = Listed {
            evaluations: BTreeMap::new(),
            expectations: BTreeMap::new(),
        };
        for evaluation in self
            .list(&format!("{app}/evaluations"), "evaluations")
            .await?
        {
            let text = |key: &str| evaluation[key].as_str().unwrap_or_default().to_owned();
            listed
                .evaluations
                .insert(text("displayName"), (text("name"), text("description")));
        }
        let path = format!("{app}/evaluationExpectations");
        for expectation in self.list(&path, "evaluationExpectations").await? {
            if let (Some(name), Some(prompt)) = (
                expectation["name"].as_str(),
                expectation["llmCriteria"]["prompt"].as_str(),
            ) {
                listed
                    .expectations
                    .insert(prompt.to_owned(), name.to_owned());
            }
        }
        Ok(listed)
    }
}
