//! `goldgate convert FILE --to FORMAT -o OUT`: load, write in the target format, list what did
//! not carry over. Exit 0 when written (warnings included), 2 when nothing could be. Whether the
//! output can take the cases is decided before any warning is printed.

use std::io;
use std::path::Path;

use goldgate::app::convert::{self, ConvertError, Document};
use goldgate::exit::Exit;
use goldgate::formats::write::Losses;
use goldgate::load::Suite;
use goldgate::model::Format;
use goldgate::report::{lint, plural};

use crate::cli::{ConvertArgs, ConvertTo};

pub fn run(args: &ConvertArgs) -> anyhow::Result<Exit> {
    let to = match args.to {
        ConvertTo::Scrapi => Format::ScrapiGolden,
        ConvertTo::CesCsv => Format::CesCsv,
        ConvertTo::Scenario => Format::GecxScenario,
    };
    let suite = match convert::load(&args.file) {
        Ok(suite) => suite,
        Err(err) => return Ok(fail(&err)),
    };
    let cases = convert::source_cases(&suite);
    if suite.error_count() == 0
        && let Err(err) = convert::check_output(to, cases.len(), &args.output)
    {
        return Ok(fail(&err));
    }
    if suite.warning_count() + suite.error_count() > 0 {
        lint::write_human(&suite, &mut io::stderr().lock())?;
    }
    if suite.error_count() > 0 {
        eprintln!(
            "goldgate: {} in {}; nothing was converted",
            lint::summary(&suite),
            args.file.display()
        );
        return Ok(Exit::Error);
    }
    if cases.is_empty() {
        return Ok(fail(&ConvertError::NoCases(
            args.file.display().to_string(),
        )));
    }
    let mut losses = Losses::default();
    let written = convert_cases(&suite, &cases, to, &args.output, &mut losses);
    for loss in &losses.items {
        eprintln!("{loss}");
    }
    match written {
        Ok(documents) => {
            eprintln!(
                "{}",
                summary(cases.len(), &documents, &args.output, to, &losses)
            );
            Ok(Exit::Success)
        }
        Err(err) => Ok(fail(&err)),
    }
}

/// Renders, places and writes the cases; the documents written.
fn convert_cases(
    suite: &Suite,
    cases: &[goldgate::model::Case],
    to: Format,
    output: &Path,
    losses: &mut Losses,
) -> Result<Vec<Document>, ConvertError> {
    let rendered = convert::render(cases, to, losses)?;
    let sources: Vec<&Path> = suite.files.iter().map(|f| f.path.as_ref()).collect();
    let documents = convert::place(rendered, output, &sources)?;
    convert::write(&documents)?;
    Ok(documents)
}

/// `goldgate convert: N cases written to OUT as FORMAT[; N warnings above: ...]`.
fn summary(
    cases: usize,
    documents: &[Document],
    output: &Path,
    to: Format,
    losses: &Losses,
) -> String {
    let place = match documents {
        [one] => one.path.display().to_string(),
        many => format!("{} files in {}", many.len(), output.display()),
    };
    let warned = match losses.items.len() {
        0 => String::new(),
        n => format!(
            "; {} above: what has no {to} counterpart",
            plural(n, "warning")
        ),
    };
    format!(
        "goldgate convert: {} written to {place} as {to}{warned}",
        plural(cases, "case")
    )
}

fn fail(err: &ConvertError) -> Exit {
    eprintln!("goldgate: {err}");
    Exit::Error
}
