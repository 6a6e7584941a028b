//! A gecx scorer worded as a free-text criterion, for a format whose only check over the whole
//! conversation is one an LLM judge reads (SCRAPI `expectations`).

use crate::model::Scorer;

/// A gecx scorer as a criterion over the transcript; `None` for what a judge cannot read
/// from it (latencies, per-call accuracy).
pub fn of(scorer: &Scorer) -> Option<String> {
    let with = |text: String, criteria: Option<&str>| match criteria {
        Some(criteria) => format!("{text}: {criteria}"),
        None => text,
    };
    Some(match scorer {
        Scorer::MessageContains { pattern } => {
            format!("The agent's messages contain \"{pattern}\".")
        }
        Scorer::MessageMatchesRegex { regex } => format!(
            "The agent's messages match the regular expression /{}/.",
            regex.as_str()
        ),
        Scorer::FinalMessageEquals { pattern } => {
            format!("The agent's final message is exactly \"{pattern}\".")
        }
        Scorer::ToolCalled { name } => format!("The agent calls the tool `{name}`."),
        Scorer::NoToolCalled { name: Some(name) } => format!("The agent never calls `{name}`."),
        Scorer::NoToolCalled { name: None } => "The agent calls no tool.".to_owned(),
        Scorer::HandoffTriggered => "The conversation is handed off to a human.".to_owned(),
        Scorer::NoHandoff => "The conversation is not handed off to a human.".to_owned(),
        Scorer::ErrorCode { code } => format!("The agent reports the error `{code}`."),
        Scorer::NoError => "The agent reports no error.".to_owned(),
        Scorer::JudgeNotHallucinating {
            grounding_context, ..
        } => format!("The agent states nothing that this does not support: {grounding_context}"),
        Scorer::JudgeHelpfulness { criteria, .. } => {
            with("The agent is helpful".to_owned(), criteria.as_deref())
        }
        Scorer::JudgeToneMatches { tone, .. } => format!("The agent's tone is {tone}."),
        Scorer::ToolCalledWithInput { .. }
        | Scorer::ToolCallAccuracy { .. }
        | Scorer::LatencyP50Under { .. }
        | Scorer::LatencyP95Under { .. } => return None,
    })
}
