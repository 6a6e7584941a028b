//! Cases into a CES golden CSV: an evaluation row per case, then one conversation row per
//! input and expectation, numbered by turn, in the columns of seed 001. What CES cannot say is
//! reported in [`Losses`].

use serde_json::Value;

use super::columns::Column;
use crate::formats::write::{Losses, exact_args_json};
use crate::model::{Case, CheckKind, ExpectationKind, Input, MatchType, Turn};

const FORMAT: &str = "CES";

/// The columns written, in this order (every column but `evaluation_groups`: groups load as
/// tags, and tags are written in `tags`).
const COLUMNS: [Column; 16] = [
    Column::DisplayName,
    Column::TurnIndex,
    Column::ActionType,
    Column::EvaluationId,
    Column::Description,
    Column::Tags,
    Column::ResponseAgent,
    Column::TextContent,
    Column::ImageMimeType,
    Column::ImageContent,
    Column::ToolName,
    Column::ToolCallArgsJson,
    Column::ToolResponseJson,
    Column::UpdatedVariablesJson,
    Column::AgentTransferTarget,
    Column::ExpectationNote,
];

/// What `response_agent` holds when the model names no agent: CES requires one.
pub const DEFAULT_RESPONSE_AGENT: &str = "root_agent";

/// One row under construction.
#[derive(Default)]
struct Row {
    cells: [String; COLUMNS.len()],
}

impl Row {
    fn set(mut self, column: Column, value: impl Into<String>) -> Self {
        if let Some(i) = COLUMNS.iter().position(|&c| c == column) {
            self.cells[i] = value.into();
        }
        self
    }
}

/// The CES golden CSV holding `cases`.
pub fn write(cases: &[Case], losses: &mut Losses) -> String {
    let mut rows: Vec<Row> = Vec::new();
    for case in cases {
        evaluation(case, &mut rows, losses);
    }
    let mut writer = csv::WriterBuilder::new().from_writer(Vec::new());
    let header: Vec<&str> = COLUMNS.iter().map(|c| c.name()).collect();
    // Writing to memory cannot fail.
    let _ = writer.write_record(&header);
    for row in &rows {
        let _ = writer.write_record(&row.cells);
    }
    let bytes = writer.into_inner().unwrap_or_default();
    String::from_utf8(bytes).unwrap_or_default()
}

fn evaluation(case: &Case, rows: &mut Vec<Row>, losses: &mut Losses) {
    let mut head = Row::default().set(Column::DisplayName, &case.name);
    if case.id != case.name {
        head = head.set(Column::EvaluationId, &case.id);
    }
    if let Some(description) = &case.description {
        head = head.set(Column::Description, description);
    }
    let mut tags = Vec::new();
    for tag in &case.tags {
        if tag.contains(';') {
            losses.add(
                &case.location,
                format!("CES separates tags with `;`: the tag `{tag}` is split"),
            );
        }
        tags.push(tag.as_str());
    }
    let head = head.set(Column::Tags, tags.join(";"));
    let mut case_rows = Vec::new();
    losses.regtrace_only(case, FORMAT);
    for check in &case.checks {
        let what = match &check.kind {
            CheckKind::Criterion(_) => "free-text expectation".to_owned(),
            _ => format!("`{}` check", check.label),
        };
        losses.add(
            &check.location,
            format!("CES has no {what} over the whole conversation: it is left out"),
        );
    }
    let mut index = 0;
    for (position, turn) in case.turns.iter().enumerate() {
        let mut turn_rows = Vec::new();
        if position == 0 && !case.session_parameters.is_empty() {
            losses.add(
                &case.location,
                "CES has no session parameters: they are sent as an INPUT_UPDATED_VARIABLES row of the first turn",
            );
            turn_rows.push(
                Row::default()
                    .set(Column::ActionType, "INPUT_UPDATED_VARIABLES")
                    .set(
                        Column::UpdatedVariablesJson,
                        Value::Object(case.session_parameters.clone()).to_string(),
                    ),
            );
        }
        turn_rows.extend(turn_rows_of(turn, losses));
        if turn_rows.is_empty() {
            losses.add(
                &turn.location,
                "nothing in this turn has a CES row: the turn is left out",
            );
            continue;
        }
        index += 1;
        for row in turn_rows {
            case_rows.push(row.set(Column::TurnIndex, index.to_string()));
        }
    }
    // An evaluation without conversation rows does not load: leave the case out instead.
    if case_rows.is_empty() {
        losses.add(
            &case.location,
            "nothing in this case has a CES row: the case is left out",
        );
        return;
    }
    rows.push(head);
    rows.append(&mut case_rows);
}

fn turn_rows_of(turn: &Turn, losses: &mut Losses) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut used_mocks = vec![false; turn.tool_mocks.len()];
    for input in &turn.inputs {
        let row = Row::default();
        rows.push(match input {
            Input::Text(text) => {
                cell_text(text, turn, losses);
                row.set(Column::ActionType, "INPUT_TEXT")
                    .set(Column::TextContent, text)
            }
            Input::Image { mime_type, data } => row
                .set(Column::ActionType, "INPUT_IMAGE")
                .set(Column::ImageMimeType, mime_type)
                .set(Column::ImageContent, data),
            Input::ToolResponse { name, response } => {
                // The loader makes the response a mock as well: that mock is this row.
                if let Some(i) = turn.tool_mocks.iter().enumerate().position(|(i, m)| {
                    !used_mocks[i] && m.tool == *name && m.args.is_none() && m.output == *response
                }) {
                    used_mocks[i] = true;
                }
                let row = row
                    .set(Column::ActionType, "INPUT_TOOL_RESPONSE")
                    .set(Column::ToolName, name);
                if *response == Value::Object(serde_json::Map::new()) {
                    row
                } else {
                    row.set(Column::ToolResponseJson, response.to_string())
                }
            }
            Input::Variables(variables) => {
                row.set(Column::ActionType, "INPUT_UPDATED_VARIABLES").set(
                    Column::UpdatedVariablesJson,
                    Value::Object(variables.clone()).to_string(),
                )
            }
            Input::Event(name) => {
                losses.add(
                    &turn.location,
                    format!("CES has no events: the `{name}` event is left out"),
                );
                continue;
            }
            Input::ApproveToolCall(tag) | Input::DenyToolCall(tag) => {
                losses.add(
                    &turn.location,
                    format!(
                        "CES cannot approve or deny a tool call: the answer to `{tag}` is left out"
                    ),
                );
                continue;
            }
            Input::ExecuteTool(execution) => {
                losses.add(
                    &turn.location,
                    format!(
                        "a CES golden is a conversation: the direct execution of `{}` is left out",
                        execution.tool
                    ),
                );
                continue;
            }
        });
    }
    for expectation in &turn.expectations {
        let location = &expectation.location;
        let row = match &expectation.kind {
            ExpectationKind::AgentText { matcher, agent } => {
                if matcher.match_type != MatchType::Semantic {
                    losses.add(
                        location,
                        format!(
                            "CES compares agent text by meaning: this `{}` match becomes semantic",
                            matcher.match_type.name()
                        ),
                    );
                }
                let agent = agent.clone().unwrap_or_else(|| {
                    losses.add(
                        location,
                        format!("CES names the agent of every expected text: written as `{DEFAULT_RESPONSE_AGENT}`, change it to your agent's display name"),
                    );
                    DEFAULT_RESPONSE_AGENT.to_owned()
                });
                let text = match &matcher.expected {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                cell_text(&text, turn, losses);
                Row::default()
                    .set(Column::ActionType, "EXPECTATION_TEXT")
                    .set(Column::ResponseAgent, agent)
                    .set(Column::TextContent, text)
            }
            ExpectationKind::NoAgentText => {
                losses.add(location, "CES cannot expect silence: the turn's check that the agent says nothing is left out");
                continue;
            }
            ExpectationKind::UnexpectedResponse => {
                losses.add(location, "CES does not flag an UNEXPECTED RESPONSE: the turn's check that the agent says nothing is left out");
                continue;
            }
            ExpectationKind::Reply(_) => {
                losses.add(
                    location,
                    "a CES golden has no SCRAPI turn-eval checks: the check is left out",
                );
                continue;
            }
            ExpectationKind::ToolResult(_) => {
                losses.add(
                    location,
                    "a CES golden has no checks on a tool's result: the check is left out",
                );
                continue;
            }
            ExpectationKind::ToolCall(call) => {
                if let Some(agent) = &call.agent {
                    losses.add(
                        location,
                        format!("CES's expected tool call names no agent: `{agent}` is left out"),
                    );
                }
                let row = Row::default()
                    .set(Column::ActionType, "EXPECTATION_TOOL_CALL")
                    .set(Column::ToolName, &call.name);
                if call.args.fields.is_empty() {
                    row
                } else {
                    let args = exact_args_json(&call.args, location, FORMAT, losses);
                    row.set(Column::ToolCallArgsJson, Value::Object(args).to_string())
                }
            }
            ExpectationKind::ToolResponse {
                tool,
                output: Some(output),
            } if unused_mock(turn, &used_mocks, tool, output).is_some() => {
                // SCRAPI's `output`: the tool's mocked response, which CES sends as a tool
                // response input.
                if let Some(i) = unused_mock(turn, &used_mocks, tool, output) {
                    used_mocks[i] = true;
                }
                let row = Row::default()
                    .set(Column::ActionType, "INPUT_TOOL_RESPONSE")
                    .set(Column::ToolName, tool);
                if *output == Value::Object(serde_json::Map::new()) {
                    row
                } else {
                    row.set(Column::ToolResponseJson, output.to_string())
                }
            }
            ExpectationKind::ToolResponse { tool, output } => {
                if output.is_some() {
                    losses.add(
                        location,
                        format!("CES checks that `{tool}` responded, not what it responded: the expected output is left out"),
                    );
                }
                Row::default()
                    .set(Column::ActionType, "EXPECTATION_TOOL_RESPONSE")
                    .set(Column::ToolName, tool)
            }
            ExpectationKind::Transfer { agent } => Row::default()
                .set(Column::ActionType, "EXPECTATION_AGENT_TRANSFER")
                .set(Column::AgentTransferTarget, agent),
        };
        rows.push(match &expectation.note {
            Some(note) => row.set(Column::ExpectationNote, note),
            None => row,
        });
    }
    for (mock, used) in turn.tool_mocks.iter().zip(used_mocks) {
        if !used {
            losses.add(
                &mock.location,
                format!(
                    "CES cannot mock a tool's output: the mocked output of `{}` is left out",
                    mock.tool
                ),
            );
        }
    }
    rows
}

fn unused_mock(turn: &Turn, used: &[bool], tool: &str, output: &Value) -> Option<usize> {
    turn.tool_mocks
        .iter()
        .enumerate()
        .position(|(i, mock)| !used[i] && mock.tool == tool && mock.output == *output)
}

/// CES trims every cell: surrounding spaces do not survive.
fn cell_text(text: &str, turn: &Turn, losses: &mut Losses) {
    if text.trim() != text {
        losses.add(
            &turn.location,
            "CES trims cells: the spaces around a text are left out",
        );
    }
}
