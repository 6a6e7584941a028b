//! `goldgate convert FILE --to FORMAT -o OUT`: load, write in the target format, list what did
//! not carry over. Exit 0 when written (warnings included), 2 when nothing could be.

use std::io;

use goldgate::app::convert::{self, ConvertError};
use goldgate::exit::Exit;
use goldgate::formats::write::Losses;
use goldgate::model::Format;
use goldgate::report::lint;

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
    let cases = convert::source_cases(&suite);
    if cases.is_empty() {
        return Ok(fail(&ConvertError::NoCases(
            args.file.display().to_string(),
        )));
    }
    let mut losses = Losses::default();
    let documents = convert::render(&cases, to, &mut losses).and_then(|rendered| {
        let sources: Vec<&std::path::Path> = suite.files.iter().map(|f| f.path.as_ref()).collect();
        convert::place(rendered, &args.output, &sources)
    });
    let documents = match documents {
        Ok(documents) => documents,
        Err(err) => {
            for loss in &losses.items {
                eprintln!("{loss}");
            }
            return Ok(fail(&err));
        }
    };
    if let Err(err) = convert::write(&documents) {
        return Ok(fail(&err));
    }
    for loss in &losses.items {
        eprintln!("{loss}");
    }
    let written: Vec<String> = documents
        .iter()
        .map(|d| d.path.display().to_string())
        .collect();
    eprintln!(
        "goldgate convert: {} case{} written to {} as {to}{}",
        cases.len(),
        if cases.len() == 1 { "" } else { "s" },
        if written.len() == 1 {
            written[0].clone()
        } else {
            format!("{} files in {}", written.len(), args.output.display())
        },
        match losses.items.len() {
            0 => String::new(),
            n => format!(
                "; {n} warning{} above: what has no {to} counterpart",
                if n == 1 { "" } else { "s" }
            ),
        }
    );
    Ok(Exit::Success)
}

fn fail(err: &ConvertError) -> Exit {
    eprintln!("goldgate: {err}");
    Exit::Error
}
