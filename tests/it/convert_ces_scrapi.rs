//! CES CSV -> SCRAPI -> CES CSV gives back the same rows: what SCRAPI has no key for (the
//! display name, description, expectation notes, the responding agent, the rows' order in a
//! turn) travels in `# goldgate` comments that the SCRAPI reader reads back and SCRAPI ignores.
//! Driven through the binary on the example suite's CSV, a CSV written for the test, and every
//! valid SCRAPI golden of ../shared/corpus converted to CSV first (the corpus has no CES CSV).

use crate::common;
use std::path::{Path, PathBuf};

use common::goldgate;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `goldgate convert from --to to -o out`, which must succeed: its stderr.
fn convert(from: &Path, to: &str, out: &Path) -> String {
    let done = common::convert(&root(), from, to, out);
    assert_eq!(
        done.code,
        Some(0),
        "{} --to {to}: {}",
        from.display(),
        done.stderr
    );
    done.stderr
}

/// A CSV's rows as (column, cell) pairs, the empty cells left out (a writer may list more
/// columns than the source), JSON cells compared as JSON (spacing is not a difference).
fn rows(path: &Path) -> Vec<Vec<(String, String)>> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    reader
        .records()
        .map(|record| {
            header
                .iter()
                .zip(record.unwrap().iter())
                .filter(|(_, cell)| !cell.is_empty())
                .map(|(column, cell)| {
                    let cell = match serde_json::from_str::<serde_json::Value>(cell) {
                        Ok(json) if column.ends_with("_json") => json.to_string(),
                        _ => cell.to_owned(),
                    };
                    (column.clone(), cell)
                })
                .collect()
        })
        .collect()
}

/// `csv` to SCRAPI and back under `dir`: the SCRAPI text, the CSV written back and what the
/// way back warned.
fn there_and_back(csv: &Path, dir: &Path) -> (String, PathBuf, String) {
    let scrapi = dir.join("there.yaml");
    convert(csv, "scrapi", &scrapi);
    let back = dir.join("back.golden.csv");
    let stderr = convert(&scrapi, "ces-csv", &back);
    (std::fs::read_to_string(&scrapi).unwrap(), back, stderr)
}

#[test]
fn the_example_csv_comes_back_row_for_row() {
    let dir = tempfile::tempdir().unwrap();
    let source = root().join("examples/suite/goldens/invoices.golden.csv");
    let (scrapi, back, warned) = there_and_back(&source, dir.path());
    assert!(
        !warned.contains("warning"),
        "nothing is lost on the way back: {warned}"
    );
    common::assert_contains(
        &scrapi,
        &[
            "  # goldgate name: Invoice lookup\n  # goldgate description: Customer asks about an invoice\n  - conversation: invoice-lookup\n",
            "      # goldgate order: tool_calls first\n      # goldgate tool_calls[0] note: Looks the invoice up by id\n      # goldgate agent[0] response_agent: support_agent\n      - user: Can you check invoice INV-5678?\n",
        ],
    );
    assert_eq!(rows(&back), rows(&source));
}

/// Everything CES says that SCRAPI cannot, several times over in one file: two evaluations,
/// notes on a text, a call and a transfer, text that needs quoting, a tool response with the
/// inputs, and turns whose rows put the call first or last.
const EVERY_LABEL: &str = r#"display_name,turn_index,action_type,evaluation_id,description,tags,response_agent,text_content,tool_name,tool_call_args_json,tool_response_json,agent_transfer_target,expectation_note
Refund: the "big" one,,,refund-big,"Two lines,
of description",billing,,,,,,,
,1,INPUT_TEXT,,,,,I want a refund,,,,,
,1,EXPECTATION_TEXT,,,,billing_agent,Sure. Which order?,,,,,yes
,1,EXPECTATION_TOOL_CALL,,,,,,find_orders,"{""all"": true}",,,  lists them first
,2,INPUT_TEXT,,,,,ORD-1,,,,,
,2,INPUT_TOOL_RESPONSE,,,,,,refund,,"{""ok"": true}",,
,2,EXPECTATION_TOOL_CALL,,,,,,refund,"{""order"": ""ORD-1""}",,,12
,2,EXPECTATION_AGENT_TRANSFER,,,,,,,,,human_agent,# hand over
,2,EXPECTATION_TEXT,,,,agent,Handing you over.,,,,,
Plain,,,,,,,,,,,,
,1,INPUT_TEXT,,,,,Hi,,,,,
,1,EXPECTATION_TEXT,,,,agent,Hello!,,,,,
"#;

#[test]
fn names_descriptions_notes_agents_and_row_order_come_back() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("labels.golden.csv");
    std::fs::write(&source, EVERY_LABEL).unwrap();
    let (scrapi, back, warned) = there_and_back(&source, dir.path());
    assert!(
        !warned.contains(": warning: "),
        "nothing is lost on the way back: {warned}"
    );
    // The goldgate comments are comments to SCRAPI: the file loads as it did, without them.
    let lint = goldgate(
        &root(),
        &["lint", dir.path().join("there.yaml").to_str().unwrap()],
    );
    assert_eq!(lint.code, Some(0), "{}{}", lint.stdout, lint.stderr);
    common::assert_contains(
        &scrapi,
        &[
            "  # goldgate name: \"Refund: the \\\"big\\\" one\"\n",
            "  # goldgate description: \"Two lines,\\nof description\"\n",
            "      # goldgate tool_calls[1] note: \"# hand over\"\n",
        ],
    );
    let mut want = rows(&source);
    // CES trims cells: the note's leading spaces are not there to come back.
    for row in &mut want {
        for (_, cell) in row.iter_mut() {
            *cell = cell.trim().to_owned();
        }
    }
    assert_eq!(rows(&back), want);
}

/// The corpus's valid SCRAPI goldens, each converted to CES first: that CSV to SCRAPI and back
/// gives the same rows.
#[test]
fn corpus_goldens_as_csv_come_back_row_for_row() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let goldens = corpus.valid("scrapi-golden");
    assert!(goldens.len() > 5, "only {} corpus goldens", goldens.len());
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for (n, (golden, _)) in goldens.iter().enumerate() {
        let dir = dir.path().join(n.to_string());
        std::fs::create_dir_all(&dir).unwrap();
        let csv = dir.join("source.golden.csv");
        let done = common::convert(&root(), golden, "ces-csv", &csv);
        if done.code != Some(0) {
            // Nothing of it has a CES row, which convert said.
            assert!(done.stderr.contains("warning"), "{}", done.stderr);
            continue;
        }
        // A turn that expects no text warns on the way (SCRAPI flags any reply to it, CES
        // does not): the rows come back all the same, but for the tag that marks the SCRAPI
        // file's UNEXPECTED RESPONSE check (or the source's `$matchType`) as not carried into CES.
        let (_, back, _) = there_and_back(&csv, &dir);
        assert_eq!(
            unmarked(rows(&back)),
            unmarked(rows(&csv)),
            "{}",
            golden.display()
        );
        checked += 1;
    }
    assert!(checked > 5, "only {checked} corpus goldens had a CSV");
}

/// `rows` without the `not-carried:` tag convert adds to a case it could not carry whole.
fn unmarked(mut rows: Vec<Vec<(String, String)>>) -> Vec<Vec<(String, String)>> {
    for row in &mut rows {
        for (_, value) in row.iter_mut().filter(|(column, _)| column == "tags") {
            let kept: Vec<&str> = value
                .split(';')
                .take_while(|tag| !tag.starts_with("not-carried: "))
                .collect();
            *value = kept.join(";");
        }
        row.retain(|(column, value)| column != "tags" || !value.is_empty());
    }
    rows
}
