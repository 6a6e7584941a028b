//! The conversation-row action types and what each one adds to its turn.

use serde_json::{Map, Value};

use super::columns::{Column, Row};
use crate::diagnostic::{Code, Diagnostics};
use crate::model::{
    ArgsMatcher, Expectation, ExpectationKind, ExpectedToolCall, Input, MatchType, Matcher,
    ToolMock, Turn,
};

/// The image types the seed lists for `image_mime_type`.
const IMAGE_MIME_TYPES: [&str; 5] = [
    "image/png",
    "image/jpeg",
    "image/webp",
    "image/heic",
    "image/heif",
];

/// A conversation row's `action_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Action {
    InputText,
    InputImage,
    InputToolResponse,
    InputUpdatedVariables,
    ExpectationText,
    ExpectationToolCall,
    ExpectationToolResponse,
    ExpectationAgentTransfer,
}

impl Action {
    pub(super) const ALL: [Action; 8] = [
        Action::InputText,
        Action::InputImage,
        Action::InputToolResponse,
        Action::InputUpdatedVariables,
        Action::ExpectationText,
        Action::ExpectationToolCall,
        Action::ExpectationToolResponse,
        Action::ExpectationAgentTransfer,
    ];

    pub(super) fn name(self) -> &'static str {
        match self {
            Action::InputText => "INPUT_TEXT",
            Action::InputImage => "INPUT_IMAGE",
            Action::InputToolResponse => "INPUT_TOOL_RESPONSE",
            Action::InputUpdatedVariables => "INPUT_UPDATED_VARIABLES",
            Action::ExpectationText => "EXPECTATION_TEXT",
            Action::ExpectationToolCall => "EXPECTATION_TOOL_CALL",
            Action::ExpectationToolResponse => "EXPECTATION_TOOL_RESPONSE",
            Action::ExpectationAgentTransfer => "EXPECTATION_AGENT_TRANSFER",
        }
    }

    pub(super) fn parse(name: &str) -> Option<Self> {
        Action::ALL.into_iter().find(|a| a.name() == name)
    }

    /// The columns the seed's table lists for the action, required or optional.
    fn columns(self) -> &'static [Column] {
        match self {
            Action::InputText => &[Column::TextContent],
            Action::InputImage => &[Column::ImageMimeType, Column::ImageContent],
            Action::InputToolResponse => &[Column::ToolName, Column::ToolResponseJson],
            Action::InputUpdatedVariables => &[Column::UpdatedVariablesJson],
            Action::ExpectationText => &[
                Column::ResponseAgent,
                Column::TextContent,
                Column::ExpectationNote,
            ],
            Action::ExpectationToolCall => &[
                Column::ToolName,
                Column::ToolCallArgsJson,
                Column::ExpectationNote,
            ],
            Action::ExpectationToolResponse => &[Column::ToolName, Column::ExpectationNote],
            Action::ExpectationAgentTransfer => {
                &[Column::AgentTransferTarget, Column::ExpectationNote]
            }
        }
    }

    pub(super) fn uses(self, column: Column) -> bool {
        self.columns().contains(&column)
    }

    /// "an INPUT_TEXT row": every action name starts with a vowel.
    pub(super) fn row_kind(self) -> String {
        format!("an {} row", self.name())
    }

    /// Adds the row's input, tool mock or expectation to `turn`, reporting every blank
    /// required cell and malformed JSON cell.
    pub(super) fn apply(self, row: &Row<'_>, turn: &mut Turn, diags: &mut Diagnostics) {
        let Some(step) = self.step(row, diags) else {
            return;
        };
        let location = diags.location(row.line, 1);
        match step {
            Step::Input(input) => turn.inputs.push(input),
            Step::ToolResponse { tool, output } => {
                turn.inputs.push(Input::ToolResponse {
                    name: tool.clone(),
                    response: output.clone(),
                });
                // CES sends the response as a user-side input; an LLM agent under test instead
                // receives it as the output of its own call to the tool, so it is a mock too.
                turn.tool_mocks.push(ToolMock {
                    tool,
                    args: None,
                    output,
                    location,
                });
            }
            Step::Expect(kind) => turn.expectations.push(Expectation {
                location,
                kind,
                note: row.cell(Column::ExpectationNote).map(str::to_owned),
            }),
        }
    }

    fn step(self, row: &Row<'_>, diags: &mut Diagnostics) -> Option<Step> {
        let what = self.row_kind();
        let required = |column, diags: &mut Diagnostics| row.required(column, &what, diags);
        Some(match self {
            Action::InputText => Step::Input(Input::Text(
                required(Column::TextContent, diags)?.to_owned(),
            )),
            Action::InputImage => {
                let mime = required(Column::ImageMimeType, diags);
                let data = required(Column::ImageContent, diags);
                let mime = image_mime_type(row, mime?, diags)?;
                Step::Input(Input::Image {
                    mime_type: mime,
                    data: data?.to_owned(),
                })
            }
            Action::InputToolResponse => {
                let tool = required(Column::ToolName, diags);
                let output = match row.cell(Column::ToolResponseJson) {
                    Some(text) => json_cell(row, Column::ToolResponseJson, text, diags)?,
                    // No response content: CES responses are JSON objects, so an empty one.
                    None => Value::Object(Map::new()),
                };
                Step::ToolResponse {
                    tool: tool?.to_owned(),
                    output,
                }
            }
            Action::InputUpdatedVariables => {
                let text = required(Column::UpdatedVariablesJson, diags)?;
                let json = json_cell(row, Column::UpdatedVariablesJson, text, diags)?;
                Step::Input(Input::Variables(json_object(
                    row,
                    Column::UpdatedVariablesJson,
                    json,
                    diags,
                )?))
            }
            Action::ExpectationText => {
                let agent = required(Column::ResponseAgent, diags);
                let text = required(Column::TextContent, diags);
                Step::Expect(ExpectationKind::AgentText {
                    // The platform judges expected text by meaning, never character by character.
                    matcher: Matcher::new(MatchType::Semantic, Value::String(text?.to_owned())),
                    agent: Some(agent?)
                        .filter(|a| *a != super::ANY_AGENT)
                        .map(str::to_owned),
                })
            }
            Action::ExpectationToolCall => {
                let name = required(Column::ToolName, diags);
                let args = match row.cell(Column::ToolCallArgsJson) {
                    Some(text) => {
                        let json = json_cell(row, Column::ToolCallArgsJson, text, diags)?;
                        ArgsMatcher::exact(json_object(row, Column::ToolCallArgsJson, json, diags)?)
                    }
                    None => ArgsMatcher::default(),
                };
                Step::Expect(ExpectationKind::ToolCall(ExpectedToolCall {
                    name: name?.to_owned(),
                    args,
                    agent: None,
                }))
            }
            Action::ExpectationToolResponse => Step::Expect(ExpectationKind::ToolResponse {
                tool: required(Column::ToolName, diags)?.to_owned(),
                output: None,
            }),
            Action::ExpectationAgentTransfer => Step::Expect(ExpectationKind::Transfer {
                agent: required(Column::AgentTransferTarget, diags)?.to_owned(),
            }),
        })
    }
}

/// What one conversation row adds to its turn.
enum Step {
    Input(Input),
    /// `INPUT_TOOL_RESPONSE`: an input and a mock at once.
    ToolResponse {
        tool: String,
        output: Value,
    },
    Expect(ExpectationKind),
}

/// The row kinds that use `column`, for the hint of an ignored cell.
pub(super) fn users_of(column: Column) -> String {
    match column {
        Column::TurnIndex | Column::ActionType => "conversation rows".to_owned(),
        Column::DisplayName => "evaluation rows".to_owned(),
        metadata if Column::METADATA.contains(&metadata) => "evaluation rows".to_owned(),
        _ => {
            let users: Vec<&str> = Action::ALL
                .into_iter()
                .filter(|action| action.uses(column))
                .map(Action::name)
                .collect();
            format!("{} rows", users.join(", "))
        }
    }
}

/// MIME types are case-insensitive (RFC 2045), so `IMAGE/PNG` is accepted as `image/png`.
fn image_mime_type(row: &Row<'_>, given: &str, diags: &mut Diagnostics) -> Option<String> {
    let mime = given.to_ascii_lowercase();
    if IMAGE_MIME_TYPES.contains(&mime.as_str()) {
        return Some(mime);
    }
    diags
        .at(row)
        .error(Code::G107, format!("unsupported image type `{given}`"))
        .field(Column::ImageMimeType.name())
        // The list, not a near miss: every candidate shares the `image/` prefix, so a
        // similarity score would offer `image/heif` for `image/gif`.
        .hint(format!("supported: {}", IMAGE_MIME_TYPES.join(", ")));
    None
}

/// Parses a JSON cell; serde_json's message carries the position inside the cell.
fn json_cell(row: &Row<'_>, column: Column, text: &str, diags: &mut Diagnostics) -> Option<Value> {
    match serde_json::from_str(text) {
        Ok(value) => Some(value),
        Err(err) => {
            diags.at(row).error(Code::G105, format!("not valid JSON: {err} of the cell"))
                .field(column.name())
                .hint(r#"write one JSON value; in a quoted CSV cell, double each quote: "{""id"": 1}""#);
            None
        }
    }
}

/// Arguments and variables are JSON objects (protobuf `Struct`s on the platform).
fn json_object(
    row: &Row<'_>,
    column: Column,
    json: Value,
    diags: &mut Diagnostics,
) -> Option<Map<String, Value>> {
    match json {
        Value::Object(map) => Some(map),
        other => {
            diags
                .at(row)
                .error(
                    Code::G101,
                    format!("expected a JSON object, found {}", json_kind(&other)),
                )
                .field(column.name())
                .hint(r#"write an object of names and values, e.g. {"order_id": "A-1"}"#);
            None
        }
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
