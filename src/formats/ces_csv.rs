//! CX Agent Studio (CES) golden CSV, the upload format of seed 001.
//!
//! One file holds many evaluations. An evaluation row (a non-blank `display_name`) starts a
//! case and carries its metadata; the conversation rows below it, grouped by `turn_index`,
//! become its turns, each row one input, mock or expectation ([`action`]). The csv crate reads
//! the records in flexible mode so that a row with the wrong number of fields is reported
//! (E001) and skipped rather than ending the file. Every problem in a row is reported at the
//! line where the row starts and column 1 (a cell is a field, not a character offset), with the
//! CSV column's name as the diagnostic's `field`.
//!
//! Two readings the CSV columns leave to the reader, both SCRAPI's on the platform: a turn that
//! sends no text, image or tool response (nothing, or only variables) is sent with the
//! `welcome` event, as SCRAPI sends a turn without `user`; and `response_agent` holding the
//! generic role `agent` (what SCRAPI writes as the role of every expected reply it pushes)
//! names no particular agent, so any agent's text is compared.

mod action;
mod columns;
pub mod write;

use std::collections::HashMap;

use csv::StringRecord;

use self::action::Action;
use self::columns::{Column, HEADER_HINT, Header, Row};
use crate::diagnostic::{Code, Diagnostics, Position, suggestion};
use crate::model::{Case, Format, Input, Turn, WELCOME_EVENT};
/// The `response_agent` that names no particular agent: the role SCRAPI gives every expected
/// reply it pushes to the platform.
pub const ANY_AGENT: &str = "agent";

/// Loads every evaluation of a CES golden CSV.
pub fn load(text: &str, diags: &mut Diagnostics) -> Vec<Case> {
    // Spreadsheet exports often start with a UTF-8 byte order mark.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let records = read_records(text, diags);
    let Some(((header_line, header_record), rows)) = records.split_first() else {
        // A quote opened in the header swallows the file and is already reported.
        if !diags.has_errors() {
            diags
                .at(Position::START)
                .error(
                    Code::G102,
                    "the file is empty: a CES golden CSV needs a header row",
                )
                .hint(HEADER_HINT);
        }
        return Vec::new();
    };
    let Some(header) = Header::parse(header_record, *header_line, diags) else {
        return Vec::new();
    };
    let mut loader = Loader::default();
    for (line, record) in rows {
        if record.len() != header.len {
            let message = format!(
                "this row has {} fields but the header has {}",
                record.len(),
                header.len
            );
            diags
                .at(Position::new(*line, 1))
                .error(Code::E001, message)
                .hint(r#"quote cells that hold commas, and double the quotes inside them: "{""a"": 1, ""b"": 2}""#);
            continue;
        }
        loader.row(&Row::new(*line, record, &header), diags);
    }
    if loader.cases.is_empty() && loader.current.is_none() {
        diags
            .at(Position::new(*header_line, 1))
            .error(Code::G102, "no evaluations below the header")
            .hint("add an evaluation row, with its display_name, then its conversation rows");
    }
    loader.finish(diags)
}

/// The non-blank records with the line each starts on. Blank lines and rows of empty cells
/// (spreadsheet padding) are dropped.
fn read_records(text: &str, diags: &mut Diagnostics) -> Vec<(u32, StringRecord)> {
    let lines = LineIndex::new(text);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut records = Vec::new();
    for result in reader.records() {
        match result {
            Ok(record) => {
                let line = record.position().map_or(1, |p| lines.record_line(p.byte()));
                if !record.iter().all(|cell| cell.trim().is_empty()) {
                    records.push((line, record));
                }
            }
            Err(err) => {
                let line = err.position().map_or(1, |p| lines.record_line(p.byte()));
                diags
                    .at(Position::new(line, 1))
                    .error(Code::E001, err.to_string());
            }
        }
    }
    if let Some(line) = unterminated_quote(text) {
        // The record holding the open quote ran to the end of the file: it is the last one,
        // and its fields are garbage.
        records.pop();
        diags
            .at(Position::new(line, 1))
            .error(
                Code::E001,
                "a quoted cell opened on this line is never closed",
            )
            .hint(r#"close the cell with `"`, and write a quote inside it as `""`"#);
    }
    records
}

/// Line numbers of records. csv's own `Position::line` skips blank lines and counts CRLF
/// wrongly, so lines are counted here from the record's byte offset, which points at the line
/// ends before the record.
struct LineIndex<'a> {
    text: &'a [u8],
    /// Offsets of every `\n`.
    newlines: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a str) -> Self {
        let text = text.as_bytes();
        let newlines = text
            .iter()
            .enumerate()
            .filter_map(|(offset, &byte)| (byte == b'\n').then_some(offset))
            .collect();
        Self { text, newlines }
    }

    fn record_line(&self, byte: u64) -> u32 {
        let from = usize::try_from(byte)
            .unwrap_or(usize::MAX)
            .min(self.text.len());
        let start = self.text[from..]
            .iter()
            .position(|&b| b != b'\r' && b != b'\n')
            .map_or(self.text.len(), |skip| from + skip);
        let line = self.newlines.partition_point(|&newline| newline < start) + 1;
        u32::try_from(line).unwrap_or(u32::MAX)
    }
}

/// The line of a quote left open at the end of the file. The csv crate, like most CSV
/// readers, silently runs such a cell to the end of the file; this follows its rules (a quote
/// opens a cell only at the cell's start, `""` inside is a quote) to find where it opened.
fn unterminated_quote(text: &str) -> Option<u32> {
    let mut line = 1u32;
    let mut at_cell_start = true;
    let mut open: Option<u32> = None;
    let mut bytes = text.bytes().peekable();
    while let Some(byte) = bytes.next() {
        if byte == b'\n' {
            line = line.saturating_add(1);
        }
        if open.is_some() {
            if byte == b'"' {
                if bytes.peek() == Some(&b'"') {
                    bytes.next();
                } else {
                    open = None;
                    at_cell_start = false;
                }
            }
            continue;
        }
        match byte {
            b',' | b'\n' | b'\r' => at_cell_start = true,
            b'"' if at_cell_start => open = Some(line),
            _ => at_cell_start = false,
        }
    }
    open
}

/// Builds the cases row by row.
#[derive(Default)]
struct Loader {
    cases: Vec<Case>,
    current: Option<Evaluation>,
    /// The line of the evaluation that first used each display name, then each case id.
    names: HashMap<String, u32>,
    ids: HashMap<String, u32>,
}

/// The evaluation being read.
struct Evaluation {
    case: Case,
    /// False for rows above the first evaluation row: read for their diagnostics, then dropped.
    keep: bool,
    /// The last valid `turn_index` read.
    last_index: Option<usize>,
}

impl Loader {
    fn row(&mut self, row: &Row<'_>, diags: &mut Diagnostics) {
        row.report_unnamed(diags);
        match row.cell(Column::DisplayName) {
            Some(name) => self.evaluation_row(row, name, diags),
            None => self.conversation_row(row, diags),
        }
    }

    fn evaluation_row(&mut self, row: &Row<'_>, name: &str, diags: &mut Diagnostics) {
        self.finish_current(diags);
        warn_unused(
            row,
            "an evaluation row",
            |column| column == Column::DisplayName || Column::METADATA.contains(&column),
            diags,
        );
        let evaluation_id = row.cell(Column::EvaluationId);
        let name_clash = self.names.get(name).copied();
        if let Some(first) = name_clash {
            diags
                .at(row)
                .error(
                    Code::G103,
                    format!(
                        "display_name `{name}` is already used by the evaluation on line {first}"
                    ),
                )
                .field(Column::DisplayName.name())
                .hint("give each evaluation its own display_name");
        } else {
            self.names.insert(name.to_owned(), row.line);
        }
        // goldgate identifies a case by its evaluation_id, else by its display_name.
        let id = evaluation_id.unwrap_or(name);
        match self.ids.get(id).copied() {
            // The display_name clash above already says it.
            Some(_) if evaluation_id.is_none() && name_clash.is_some() => {}
            Some(first) => {
                let (column, message) = match evaluation_id {
                    Some(_) => (
                        Column::EvaluationId,
                        format!(
                            "evaluation_id `{id}` is already used by the evaluation on line {first}"
                        ),
                    ),
                    None => (
                        Column::DisplayName,
                        format!(
                            "`{id}`, this evaluation's id as it has no evaluation_id, is already the id of the evaluation on line {first}"
                        ),
                    ),
                };
                diags.at(row).error(Code::G103, message)
                    .field(column.name())
                    .hint("an evaluation's id is its evaluation_id, else its display_name: make them unique");
            }
            None => {
                self.ids.insert(id.to_owned(), row.line);
            }
        }
        // Evaluation groups select evaluations as tags do, and `--filter TAG` is how goldgate
        // selects, so each group is kept as a tag.
        let mut tags: Vec<String> = Vec::new();
        for tag in [Column::Tags, Column::EvaluationGroups]
            .into_iter()
            .filter_map(|column| row.cell(column))
            .flat_map(|cell| cell.split(';'))
            .map(str::trim)
        {
            if !tag.is_empty() && !tags.iter().any(|t| t == tag) {
                tags.push(tag.to_owned());
            }
        }
        let mut case = empty_case(row, diags);
        case.id = id.to_owned();
        case.name = name.to_owned();
        case.description = row.cell(Column::Description).map(str::to_owned);
        case.tags = tags;
        self.current = Some(Evaluation {
            case,
            keep: true,
            last_index: None,
        });
    }

    fn conversation_row(&mut self, row: &Row<'_>, diags: &mut Diagnostics) {
        let has_metadata = Column::METADATA.iter().any(|&c| row.cell(c).is_some());
        if has_metadata
            && row.cell(Column::TurnIndex).is_none()
            && row.cell(Column::ActionType).is_none()
        {
            diags
                .at(row)
                .error(
                    Code::G102,
                    "this row holds evaluation metadata but no display_name",
                )
                .field(Column::DisplayName.name())
                .hint("an evaluation row starts with the evaluation's name");
            return;
        }
        let evaluation = self.current.get_or_insert_with(|| {
            diags
                .at(row)
                .error(
                    Code::G102,
                    "the first row after the header must be an evaluation row, with a display_name",
                )
                .field(Column::DisplayName.name())
                .hint("add a row naming the evaluation above its conversation rows");
            Evaluation {
                case: empty_case(row, diags),
                keep: false,
                last_index: None,
            }
        });
        let index = turn_index(row, diags);
        let turn = evaluation.turn(index, row, diags);
        let what = "a conversation row";
        let Some(given) = row.required(Column::ActionType, what, diags) else {
            return;
        };
        let Some(action) = Action::parse(given) else {
            let names = Action::ALL.map(Action::name);
            // Suggest over the upper-cased name so that `input_text` finds `INPUT_TEXT`.
            diags
                .at(row)
                .error(Code::G107, format!("unknown action_type `{given}`"))
                .field(Column::ActionType.name())
                .hint(suggestion(&given.to_ascii_uppercase(), &names));
            return;
        };
        action.apply(row, turn, diags);
        warn_unused(
            row,
            &action.row_kind(),
            |column| {
                matches!(column, Column::TurnIndex | Column::ActionType) || action.uses(column)
            },
            diags,
        );
    }

    fn finish_current(&mut self, diags: &mut Diagnostics) {
        let Some(evaluation) = self.current.take() else {
            return;
        };
        if !evaluation.keep {
            return;
        }
        let mut case = evaluation.case;
        for turn in &mut case.turns {
            welcome_when_silent(turn);
        }
        if case.turns.is_empty() {
            let message = format!("evaluation `{}` has no conversation rows", case.name);
            diags
                .at(Position::new(case.location.line, 1))
                .error(Code::G102, message)
                .field(Column::DisplayName.name())
                .hint("below the evaluation row, add rows with a blank display_name, a turn_index and an action_type");
        }
        self.cases.push(case);
    }

    fn finish(mut self, diags: &mut Diagnostics) -> Vec<Case> {
        self.finish_current(diags);
        self.cases
    }
}

impl Evaluation {
    /// The turn a row with `turn_index` `index` belongs to, checking that indices start at 1
    /// and never decrease. A row with no valid index joins the current turn.
    fn turn(&mut self, index: Option<usize>, row: &Row<'_>, diags: &mut Diagnostics) -> &mut Turn {
        let field = Column::TurnIndex.name();
        let starts_turn = match (self.last_index, index) {
            (_, None) => false,
            (None, Some(index)) => {
                if index != 1 {
                    diags
                        .at(row)
                        .error(
                            Code::G106,
                            format!(
                                "the first turn_index of an evaluation must be 1, found {index}"
                            ),
                        )
                        .field(field);
                }
                true
            }
            (Some(last), Some(index)) if index < last => {
                diags
                    .at(row)
                    .error(
                        Code::G106,
                        format!("turn_index {index} is smaller than the {last} before it"),
                    )
                    .field(field)
                    .hint("rows of one turn share its index; indices never decrease");
                false
            }
            (Some(last), Some(index)) => {
                // `index >= last` here, so the subtraction cannot overflow where `last + 1` could.
                if index - last > 1 {
                    let message = format!(
                        "turn_index jumps from {last} to {index}; turns are numbered by position"
                    );
                    diags.at(row).warning(Code::G106, message).field(field);
                }
                index > last
            }
        };
        if let Some(index) = index {
            self.last_index = Some(self.last_index.map_or(index, |last| last.max(index)));
        }
        let turns = &mut self.case.turns;
        if starts_turn || turns.is_empty() {
            turns.push(Turn {
                index: turns.len() + 1,
                location: diags.location(row.line, 1),
                inputs: Vec::new(),
                expectations: Vec::new(),
                tool_mocks: Vec::new(),
                recorded_reply: None,
                comments: Vec::new(),
            });
        }
        let last = turns.len() - 1;
        &mut turns[last]
    }
}

/// A turn whose user side sends nothing but variables starts with the `welcome` event.
fn welcome_when_silent(turn: &mut Turn) {
    let says_something = turn
        .inputs
        .iter()
        .any(|input| !matches!(input, Input::Variables(_)));
    if !says_something {
        turn.inputs.push(Input::Event(WELCOME_EVENT.to_owned()));
    }
}

/// A row's `turn_index`: a positive integer, reported when missing or malformed.
fn turn_index(row: &Row<'_>, diags: &mut Diagnostics) -> Option<usize> {
    let text = row.required(Column::TurnIndex, "a conversation row", diags)?;
    match text.parse::<usize>() {
        Ok(index) if index > 0 => Some(index),
        _ => {
            diags
                .at(row)
                .error(
                    Code::G101,
                    format!("turn_index must be a positive integer, found `{text}`"),
                )
                .field(Column::TurnIndex.name());
            None
        }
    }
}

/// Warns about each filled cell that `what` does not use.
///
/// G110 (a key the reference system ignores) rather than G111 (a value out of range): the
/// platform reads only the columns the row's kind lists, so anything else is accepted and
/// dropped, which is exactly what G110 reports.
fn warn_unused(row: &Row<'_>, what: &str, uses: impl Fn(Column) -> bool, diags: &mut Diagnostics) {
    for column in row.filled_columns().filter(|&column| !uses(column)) {
        let name = column.name();
        diags
            .at(row)
            .warning(
                Code::G110,
                format!("{what} does not use `{name}`; the value is ignored"),
            )
            .field(name)
            .hint(format!("`{name}` is for {}", action::users_of(column)));
    }
}

/// A case with nothing but its place; the evaluation row fills in the rest.
fn empty_case(row: &Row<'_>, diags: &Diagnostics) -> Case {
    Case::named(String::new(), Format::CesCsv, diags.location(row.line, 1))
}
