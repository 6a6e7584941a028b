//! The columns of a CES golden CSV, the header row that places them, and a data row read
//! through that header.

use csv::StringRecord;

use crate::diagnostic::{Code, Diagnostics, Position, suggestion};

/// The hint for a file that does not start with a CES header.
pub(super) const HEADER_HINT: &str =
    "start the file with a header row such as `display_name,turn_index,action_type,text_content`";

/// Every column the seed defines, in the order of its tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Column {
    DisplayName,
    TurnIndex,
    ActionType,
    EvaluationId,
    Description,
    Tags,
    EvaluationGroups,
    ResponseAgent,
    TextContent,
    ImageMimeType,
    ImageContent,
    ToolName,
    ToolCallArgsJson,
    ToolResponseJson,
    UpdatedVariablesJson,
    AgentTransferTarget,
    ExpectationNote,
}

impl Column {
    pub(super) const ALL: [Column; 17] = [
        Column::DisplayName,
        Column::TurnIndex,
        Column::ActionType,
        Column::EvaluationId,
        Column::Description,
        Column::Tags,
        Column::EvaluationGroups,
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

    /// The header must name these.
    const REQUIRED: [Column; 3] = [Column::DisplayName, Column::TurnIndex, Column::ActionType];

    /// The evaluation row's own columns besides `display_name`.
    pub(super) const METADATA: [Column; 4] = [
        Column::EvaluationId,
        Column::Description,
        Column::Tags,
        Column::EvaluationGroups,
    ];

    pub(super) fn name(self) -> &'static str {
        match self {
            Column::DisplayName => "display_name",
            Column::TurnIndex => "turn_index",
            Column::ActionType => "action_type",
            Column::EvaluationId => "evaluation_id",
            Column::Description => "description",
            Column::Tags => "tags",
            Column::EvaluationGroups => "evaluation_groups",
            Column::ResponseAgent => "response_agent",
            Column::TextContent => "text_content",
            Column::ImageMimeType => "image_mime_type",
            Column::ImageContent => "image_content",
            Column::ToolName => "tool_name",
            Column::ToolCallArgsJson => "tool_call_args_json",
            Column::ToolResponseJson => "tool_response_json",
            Column::UpdatedVariablesJson => "updated_variables_json",
            Column::AgentTransferTarget => "agent_transfer_target",
            Column::ExpectationNote => "expectation_note",
        }
    }

    fn parse(name: &str) -> Option<Column> {
        Column::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// Where each column sits in the file.
pub(super) struct Header {
    /// Field position of each [`Column`], indexed by `Column as usize`.
    positions: [Option<usize>; Column::ALL.len()],
    /// Fields whose header cell is blank: spreadsheets pad rows with them, so they are ignored
    /// while their cells stay blank.
    unnamed: Vec<usize>,
    /// Fields in every row, for the field-count check.
    pub(super) len: usize,
}

impl Header {
    /// Reads the header row, reporting unknown, repeated and missing columns. `None` when the
    /// rows cannot be read: a required column is missing.
    pub(super) fn parse(record: &StringRecord, line: u32, diags: &mut Diagnostics) -> Option<Self> {
        let mut header = Header {
            positions: [None; Column::ALL.len()],
            unnamed: Vec::new(),
            len: record.len(),
        };
        let names: Vec<&str> = record.iter().map(str::trim).collect();
        if !names.iter().any(|name| Column::parse(name).is_some()) {
            diags
                .at(Position::new(line, 1))
                .error(
                    Code::G102,
                    "the first row is not a CES header: it names none of the CES columns",
                )
                .hint(HEADER_HINT);
            return None;
        }
        let known = Column::ALL.map(Column::name);
        for (position, &name) in names.iter().enumerate() {
            if name.is_empty() {
                header.unnamed.push(position);
                continue;
            }
            let Some(column) = Column::parse(name) else {
                // Suggest over the lower-cased name so that `Display_Name` finds `display_name`.
                diags
                    .at(Position::new(line, 1))
                    .error(Code::G100, format!("unknown column `{name}`"))
                    .field(name)
                    .hint(suggestion(&name.to_ascii_lowercase(), &known));
                continue;
            };
            match header.positions[column as usize] {
                Some(first) => {
                    diags
                        .at(Position::new(line, 1))
                        .error(
                            Code::E005,
                            format!(
                                "column `{name}` appears twice in the header (fields {} and {})",
                                first + 1,
                                position + 1
                            ),
                        )
                        .field(name)
                        .hint("keep one; goldgate reads the first");
                }
                None => header.positions[column as usize] = Some(position),
            }
        }
        let mut complete = true;
        for column in Column::REQUIRED {
            if header.positions[column as usize].is_none() {
                complete = false;
                diags
                    .at(Position::new(line, 1))
                    .error(
                        Code::G102,
                        format!("the header has no `{}` column", column.name()),
                    )
                    .field(column.name())
                    .hint("the header must name display_name, turn_index and action_type");
            }
        }
        complete.then_some(header)
    }

    pub(super) fn has(&self, column: Column) -> bool {
        self.positions[column as usize].is_some()
    }
}

/// One data row, read through the header. Every problem in it is reported at `line` (where
/// the row starts) and column 1, with the column's name as the diagnostic's field.
pub(super) struct Row<'a> {
    pub(super) line: u32,
    record: &'a StringRecord,
    header: &'a Header,
}

impl From<&Row<'_>> for Position {
    fn from(row: &Row<'_>) -> Self {
        Position::new(row.line, 1)
    }
}

impl<'a> Row<'a> {
    pub(super) fn new(line: u32, record: &'a StringRecord, header: &'a Header) -> Self {
        Self {
            line,
            record,
            header,
        }
    }

    /// The trimmed value of `column`; `None` when it is blank or the header lacks the column.
    pub(super) fn cell(&self, column: Column) -> Option<&'a str> {
        let position = self.header.positions[column as usize]?;
        let value = self.record.get(position)?.trim();
        (!value.is_empty()).then_some(value)
    }

    /// Like [`Row::cell`], reporting a G102 when the cell is blank: `what` names the row kind
    /// that needs it ("an INPUT_TEXT row").
    pub(super) fn required(
        &self,
        column: Column,
        what: &str,
        diags: &mut Diagnostics,
    ) -> Option<&'a str> {
        let value = self.cell(column);
        if value.is_none() {
            let name = column.name();
            let hint = if self.header.has(column) {
                format!("fill the `{name}` cell")
            } else {
                format!("add the column `{name}` to the header")
            };
            diags
                .at(self)
                .error(Code::G102, format!("{what} requires `{name}`"))
                .field(name)
                .hint(hint);
        }
        value
    }

    /// The known columns whose cell in this row is not blank.
    pub(super) fn filled_columns(&self) -> impl Iterator<Item = Column> + '_ {
        Column::ALL
            .into_iter()
            .filter(|&column| self.cell(column).is_some())
    }

    /// Reports values written under a header cell that is blank: they would be lost.
    pub(super) fn report_unnamed(&self, diags: &mut Diagnostics) {
        for &position in &self.header.unnamed {
            if self
                .record
                .get(position)
                .is_some_and(|cell| !cell.trim().is_empty())
            {
                diags
                    .at(self)
                    .error(
                        Code::G100,
                        format!(
                            "field {} holds a value but its header cell is blank",
                            position + 1
                        ),
                    )
                    .hint("name the column in the header, or empty the cell");
            }
        }
    }
}
