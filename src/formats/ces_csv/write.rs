//! Cases into a CES golden CSV: an evaluation row per case, then one conversation row per
//! input and expectation, numbered by turn, in the columns of seed 001. Expected text that
//! names no agent is written from the generic role `agent`, and a turn that sends only the
//! `welcome` event gets no input row, both of which the reader reads back as they were; the
//! checks a gecx scenario or Regtrace case makes over the whole conversation that CES says per
//! turn move onto a turn first ([`per_turn`]). What CES cannot say is reported in [`Losses`].

use serde_json::Value;

use super::ANY_AGENT;
use super::columns::Column;
use crate::formats::write::{Losses, exact_args_json, per_turn, text_of};
use crate::model::{
    Case, CheckKind, Expectation, ExpectationKind, ExpectedToolCall, Input, Location, Matcher,
    Turn, WELCOME_EVENT,
};

const FORMAT: &str = "CES";

/// The columns written: every column but `evaluation_groups` (groups load as tags, and tags
/// are written in `tags`), in the order the reader lists them.
const COLUMNS: [Column; Column::ALL.len() - 1] = written_columns();

/// [`Column::ALL`] without `evaluation_groups`, so that a column added there is written too.
const fn written_columns() -> [Column; Column::ALL.len() - 1] {
    let mut columns = [Column::DisplayName; Column::ALL.len() - 1];
    let (mut from, mut to) = (0, 0);
    while from < Column::ALL.len() {
        if !matches!(Column::ALL[from], Column::EvaluationGroups) {
            columns[to] = Column::ALL[from];
            to += 1;
        }
        from += 1;
    }
    columns
}

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

    fn get(&self, column: Column) -> &str {
        COLUMNS
            .iter()
            .position(|&c| c == column)
            .map_or("", |i| &self.cells[i])
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

/// CES CSV has no comments: the author's, above the case and its turns, are reported.
fn comments_lost(case: &Case, losses: &mut Losses) {
    let places = std::iter::once((&case.location, &case.comments, "case")).chain(
        case.turns
            .iter()
            .map(|t| (&t.location, &t.comments, "turn")),
    );
    for (location, comments, what) in places {
        if !comments.is_empty() {
            losses.note(
                location,
                format!(
                    "CES CSV has no comments: the author's comments above this {what} are left out"
                ),
            );
        }
    }
}

fn evaluation(case: &Case, rows: &mut Vec<Row>, losses: &mut Losses) {
    let case = per_turn::onto_turns(case, FORMAT, losses);
    losses.regtrace_only(&case, FORMAT);
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
    comments_lost(&case, losses);
    let case_rows = conversation_rows(&case, losses);
    // An evaluation without conversation rows does not load: leave the case out instead.
    if case_rows.is_empty() {
        losses.add(
            &case.location,
            "nothing in this case has a CES row: the case is left out",
        );
        return;
    }
    rows.push(evaluation_row(&case, losses));
    rows.extend(case_rows);
}

/// The row that names the evaluation and holds its metadata.
fn evaluation_row(case: &Case, losses: &mut Losses) -> Row {
    let mut head = Row::default().set(Column::DisplayName, &case.name);
    if case.id != case.name {
        head = head.set(Column::EvaluationId, &case.id);
    }
    if let Some(description) = &case.description {
        head = head.set(Column::Description, description);
    }
    for tag in case.tags.iter().filter(|tag| tag.contains(';')) {
        losses.note(
            &case.location,
            format!("CES separates tags with `;`: the tag `{tag}` is split"),
        );
    }
    head.set(Column::Tags, case.tags.join(";"))
}

/// Every turn's rows, numbered; the session parameters open the first turn.
fn conversation_rows(case: &Case, losses: &mut Losses) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut index = 0;
    for (position, turn) in case.turns.iter().enumerate() {
        let mut turn_rows = Vec::new();
        if position == 0 && !case.session_parameters.is_empty() {
            losses.note(
                &case.location,
                "CES has no session parameters: they are sent as an INPUT_UPDATED_VARIABLES row of the first turn",
            );
            turn_rows.push(variables_row(&case.session_parameters));
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
        rows.extend(
            turn_rows
                .into_iter()
                .map(|row| row.set(Column::TurnIndex, index.to_string())),
        );
    }
    rows
}

fn variables_row(variables: &serde_json::Map<String, Value>) -> Row {
    Row::default()
        .set(Column::ActionType, "INPUT_UPDATED_VARIABLES")
        .set(
            Column::UpdatedVariablesJson,
            Value::Object(variables.clone()).to_string(),
        )
}

/// One turn's rows: its inputs, then its expectations; the mocks no row carries are reported.
/// A mocked output (SCRAPI's `output`) is an input row, with the inputs: where CES writes it.
fn turn_rows_of(turn: &Turn, losses: &mut Losses) -> Vec<Row> {
    let mut writer = TurnRows {
        turn,
        used_mocks: vec![false; turn.tool_mocks.len()],
        losses,
    };
    let mut rows = writer.inputs();
    let mut expected = Vec::new();
    for expectation in &turn.expectations {
        let Some(row) = writer.expectation(expectation) else {
            continue;
        };
        let row = match &expectation.note {
            Some(note) => row.set(Column::ExpectationNote, note),
            None => row,
        };
        if row.get(Column::ActionType) == "INPUT_TOOL_RESPONSE" {
            rows.push(row);
        } else {
            expected.push(row);
        }
    }
    rows.extend(expected);
    writer.report_unused_mocks();
    rows
}

/// Writes one turn's rows, keeping count of which of its tool mocks a row carries.
struct TurnRows<'a> {
    turn: &'a Turn,
    used_mocks: Vec<bool>,
    losses: &'a mut Losses,
}

impl TurnRows<'_> {
    fn inputs(&mut self) -> Vec<Row> {
        let turn = self.turn;
        // The reader sends a turn that says nothing with the `welcome` event.
        let welcome_only = turn.inputs.iter().all(|input| match input {
            Input::Variables(_) => true,
            Input::Event(name) => name == WELCOME_EVENT,
            _ => false,
        });
        turn.inputs
            .iter()
            .filter(|input| !(welcome_only && matches!(input, Input::Event(_))))
            .filter_map(|input| self.input(input))
            .collect()
    }

    fn input(&mut self, input: &Input) -> Option<Row> {
        let row = Row::default();
        let at = &self.turn.location;
        match input {
            Input::Text(text) => {
                self.cell_text(text);
                Some(
                    row.set(Column::ActionType, "INPUT_TEXT")
                        .set(Column::TextContent, text),
                )
            }
            Input::Image { mime_type, data } => Some(
                row.set(Column::ActionType, "INPUT_IMAGE")
                    .set(Column::ImageMimeType, mime_type)
                    .set(Column::ImageContent, data),
            ),
            Input::ToolResponse { name, response } => {
                // The loader makes the response a mock as well: that mock is this row.
                self.take_mock(name, response, true);
                Some(tool_response_row(name, response))
            }
            Input::Variables(variables) => Some(variables_row(variables)),
            Input::Event(name) => self.lost(
                at,
                format!(
                    "CES has no events but the `{WELCOME_EVENT}` of a turn that sends nothing: the `{name}` event is left out"
                ),
            ),
            Input::ApproveToolCall(tag) | Input::DenyToolCall(tag) => self.lost(
                at,
                format!("CES cannot approve or deny a tool call: the answer to `{tag}` is left out"),
            ),
            Input::ExecuteTool(execution) => self.lost(
                at,
                format!(
                    "a CES golden is a conversation: the direct execution of `{}` is left out",
                    execution.tool
                ),
            ),
        }
    }

    /// The row of one expectation; `None` (reported) when CES has none.
    fn expectation(&mut self, expectation: &Expectation) -> Option<Row> {
        let at = &expectation.location;
        match &expectation.kind {
            ExpectationKind::AgentText { matcher, agent } => {
                Some(self.text_row(matcher, agent.as_deref(), at))
            }
            ExpectationKind::NoAgentText => self.lost(
                at,
                "CES cannot expect silence: the turn's check that the agent says nothing is left out",
            ),
            ExpectationKind::UnexpectedResponse => self.lost(
                at,
                "CES does not flag an UNEXPECTED RESPONSE: the turn's check that the agent says nothing is left out",
            ),
            ExpectationKind::Reply(_) => self.lost(
                at,
                "a CES golden has no SCRAPI turn-eval checks: the check is left out",
            ),
            ExpectationKind::ToolResult(_) => self.lost(
                at,
                "a CES golden has no checks on a tool's result: the check is left out",
            ),
            ExpectationKind::ToolCall(call) => Some(tool_call_row(call, at, self.losses)),
            ExpectationKind::ToolResponse { tool, output } => {
                Some(self.tool_response_expectation(tool, output.as_ref(), at))
            }
            ExpectationKind::Transfer { agent } => Some(
                Row::default()
                    .set(Column::ActionType, "EXPECTATION_AGENT_TRANSFER")
                    .set(Column::AgentTransferTarget, agent),
            ),
        }
    }

    /// `EXPECTATION_TEXT`, from the agent the model names, else from any agent ([`ANY_AGENT`]).
    fn text_row(&mut self, matcher: &Matcher, agent: Option<&str>, at: &Location) -> Row {
        self.losses.semantic_only(matcher, at, FORMAT);
        let text = text_of(&matcher.expected);
        self.cell_text(&text);
        Row::default()
            .set(Column::ActionType, "EXPECTATION_TEXT")
            .set(Column::ResponseAgent, agent.unwrap_or(ANY_AGENT))
            .set(Column::TextContent, text)
    }

    /// SCRAPI's `output` (the tool's mocked response) is sent as a tool response input, which
    /// CES reads back as the same mock; any other expected response is
    /// `EXPECTATION_TOOL_RESPONSE`.
    fn tool_response_expectation(
        &mut self,
        tool: &str,
        output: Option<&Value>,
        at: &Location,
    ) -> Row {
        if let Some(output) = output {
            if self.take_mock(tool, output, false) {
                return tool_response_row(tool, output);
            }
            self.losses.add(
                at,
                format!("CES checks that `{tool}` responded, not what it responded: the expected output is left out"),
            );
        }
        Row::default()
            .set(Column::ActionType, "EXPECTATION_TOOL_RESPONSE")
            .set(Column::ToolName, tool)
    }

    /// Marks the first mock of `tool` with `output` that no row carries yet (only one for every
    /// call, without arguments, when `any_call`) as carried; false when there is none.
    fn take_mock(&mut self, tool: &str, output: &Value, any_call: bool) -> bool {
        let used = &self.used_mocks;
        let found = self
            .turn
            .tool_mocks
            .iter()
            .enumerate()
            .position(|(i, mock)| {
                !used[i]
                    && mock.tool == tool
                    && mock.output == *output
                    && (!any_call || mock.args.is_none())
            });
        if let Some(i) = found {
            self.used_mocks[i] = true;
        }
        found.is_some()
    }

    fn report_unused_mocks(self) {
        for (mock, used) in self.turn.tool_mocks.iter().zip(self.used_mocks) {
            if !used {
                self.losses.add(
                    &mock.location,
                    format!(
                        "CES cannot mock a tool's output: the mocked output of `{}` is left out",
                        mock.tool
                    ),
                );
            }
        }
    }

    /// CES trims every cell: surrounding spaces do not survive.
    fn cell_text(&mut self, text: &str) {
        if text.trim() != text {
            self.losses.note(
                &self.turn.location,
                "CES trims cells: the spaces around a text are left out",
            );
        }
    }

    /// No row: what CES has none for, reported at `at`.
    fn lost(&mut self, at: &Location, what: impl Into<String>) -> Option<Row> {
        self.losses.add(at, what);
        None
    }
}

fn tool_response_row(tool: &str, response: &Value) -> Row {
    let row = Row::default()
        .set(Column::ActionType, "INPUT_TOOL_RESPONSE")
        .set(Column::ToolName, tool);
    if *response == Value::Object(serde_json::Map::new()) {
        row
    } else {
        row.set(Column::ToolResponseJson, response.to_string())
    }
}

fn tool_call_row(call: &ExpectedToolCall, location: &Location, losses: &mut Losses) -> Row {
    if let Some(agent) = &call.agent {
        losses.add(
            location,
            format!("CES's expected tool call names no agent: `{agent}` is left out"),
        );
    }
    let row = Row::default()
        .set(Column::ActionType, "EXPECTATION_TOOL_CALL")
        .set(Column::ToolName, &call.name);
    let args = exact_args_json(&call.args, location, FORMAT, losses);
    if args.is_empty() {
        return row;
    }
    row.set(Column::ToolCallArgsJson, Value::Object(args).to_string())
}
