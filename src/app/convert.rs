//! `goldgate convert FILE --to FORMAT -o OUT`: load a golden file, write its cases in another
//! format with that format's writer (`formats::<format>::write`), and say what did not carry.
//!
//! Everything is decided before anything is written: a source with errors, an output that
//! would overwrite a source, or several scenarios for one scenario file stop the conversion.
//! Each output is written atomically. A SCRAPI source's file stem, which SCRAPI adds to every
//! conversation's tags, is taken off again (a SCRAPI output gets its own file's stem on load).

use std::collections::HashSet;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::atomic;
use crate::discover::{self, Rules};
use crate::formats::write::Losses;
use crate::formats::{ces_csv, gecx, scrapi};
use crate::load::{self, Suite};
use crate::model::{Case, CaseKind, Format, NOT_CARRIED};

/// The formats convert writes.
pub const TARGETS: [Format; 3] = [Format::ScrapiGolden, Format::CesCsv, Format::GecxScenario];

/// One file to write.
#[derive(Debug)]
pub struct Document {
    pub path: PathBuf,
    pub text: String,
}

/// Why nothing was converted.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error("cannot read {path}: {source}")]
    Discover {
        path: String,
        #[source]
        source: discover::DiscoverError,
    },
    #[error("{0} holds no case to convert")]
    NoCases(String),
    #[error(transparent)]
    TooLarge(#[from] crate::formats::memory::TooLarge),
    #[error("{format} cannot be written by convert (it writes scrapi, ces-csv and scenario)")]
    Target { format: Format },
    #[error("refusing to overwrite {0}, which is being converted\nhint: give -o another path")]
    Overwrite(String),
    #[error(
        "{count} cases, and a scenario file holds one: {out} must be a directory, to hold one `<id>.scenario.yaml` per case"
    )]
    ScenarioDirectory { count: usize, out: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: io::Error,
    },
}

/// Loads `input` as `goldgate run` would load a file named on its command line (a Regtrace
/// config brings its sets). Problems are in the suite's diagnostics.
pub fn load(input: &Path) -> Result<Suite, ConvertError> {
    let found =
        discover::discover(&[input.to_path_buf()], &Rules::default()).map_err(|source| {
            ConvertError::Discover {
                path: input.display().to_string(),
                source,
            }
        })?;
    Ok(load::load(&found.found)?)
}

/// The cases of a loaded suite as they were written: without the file stem SCRAPI adds to
/// every conversation's tags.
pub fn source_cases(suite: &Suite) -> Vec<Case> {
    let mut cases = Vec::new();
    for file in &suite.files {
        // A simulation has no scripted turns and a tool test no conversation for another
        // format to hold.
        for case in file
            .cases
            .iter()
            .filter(|c| c.kind() == CaseKind::Conversation)
        {
            let mut case = Case::clone(case);
            if case.format == Format::ScrapiGolden {
                let stem = file.path.file_stem().unwrap_or_default().to_string_lossy();
                case.tags.retain(|tag| *tag != stem);
            }
            cases.push(case);
        }
    }
    cases
}

/// `cases` in `to`: one text for SCRAPI and CES, one per case for scenarios (with the case's
/// id), and every loss. A case `to` cannot hold whole is marked so ([`marked`]).
pub fn render(
    cases: &[Case],
    to: Format,
    losses: &mut Losses,
) -> Result<Vec<(Option<String>, String)>, ConvertError> {
    if to == Format::RegtraceSet {
        return Err(ConvertError::Target { format: to });
    }
    let cases: Vec<Case> = cases.iter().map(|case| marked(case, to)).collect();
    let cases = cases.as_slice();
    Ok(match to {
        Format::ScrapiGolden => vec![(None, scrapi::write::write(cases, losses))],
        Format::CesCsv => vec![(None, ces_csv::write::write(cases, losses))],
        Format::GecxScenario => cases
            .iter()
            .map(|case| (Some(case.id.clone()), gecx::write::write(case, losses)))
            .collect(),
        Format::RegtraceSet => return Err(ConvertError::Target { format: to }),
    })
}

/// How many losses a [`NOT_CARRIED`] tag names (the rest are counted).
const SAID: usize = 3;

/// `case` with a [`NOT_CARRIED`] tag saying what `to` cannot hold of it, when it loses
/// anything there: played, the converted case is then skipped with that reason rather than
/// passed, since what was left out (a check, an input, a mock) might have failed it. A mark
/// already there (an earlier conversion's) stays the only one.
fn marked(case: &Case, to: Format) -> Case {
    let mut case = case.clone();
    if case.not_carried().is_some() {
        return case;
    }
    let mut lost_all = Losses::default();
    let one = std::slice::from_ref(&case);
    match to {
        Format::ScrapiGolden => {
            scrapi::write::write(one, &mut lost_all);
        }
        Format::CesCsv => {
            ces_csv::write::write(one, &mut lost_all);
        }
        Format::GecxScenario => {
            gecx::write::write(&case, &mut lost_all);
        }
        Format::RegtraceSet => {}
    }
    // What may change a verdict, each message once.
    let mut lost: Vec<&str> = Vec::new();
    for loss in lost_all.items.iter().filter(|loss| loss.verdict) {
        if !lost.contains(&loss.message.as_str()) {
            lost.push(&loss.message);
        }
    }
    if !lost.is_empty() {
        let mut why = lost[..lost.len().min(SAID)].join(" / ");
        if lost.len() > SAID {
            why.push_str(&format!(" / and {} more", lost.len() - SAID));
        }
        // CES separates tags with `;`.
        case.tags
            .push(format!("{NOT_CARRIED}{}", why.replace(';', ",")));
    }
    case
}

/// Whether `out` can take `count` cases in `to`, decided before anything is rendered or
/// reported: several scenarios need a directory, one file each.
pub fn check_output(to: Format, count: usize, out: &Path) -> Result<(), ConvertError> {
    if to == Format::GecxScenario && count > 1 && (out.is_file() || has_yaml_extension(out)) {
        return Err(ConvertError::ScenarioDirectory {
            count,
            out: out.display().to_string(),
        });
    }
    Ok(())
}

/// Where each rendered text goes: `out` itself, or for several scenarios `out/<id>.scenario.yaml`
/// (also for one scenario when `out` is a directory). Refuses to overwrite a source file.
pub fn place(
    rendered: Vec<(Option<String>, String)>,
    out: &Path,
    sources: &[&Path],
) -> Result<Vec<Document>, ConvertError> {
    let scenarios = rendered.iter().filter(|(id, _)| id.is_some()).count();
    let into_directory = scenarios > 1 || (scenarios == 1 && out.is_dir());
    check_output(Format::GecxScenario, scenarios, out)?;
    let mut names = HashSet::new();
    let documents: Vec<Document> = rendered
        .into_iter()
        .map(|(id, text)| {
            let path = match id.filter(|_| into_directory) {
                Some(id) => out.join(unique_name(&id, &mut names)),
                None => out.to_path_buf(),
            };
            Document { path, text }
        })
        .collect();
    let sources: Vec<PathBuf> = sources
        .iter()
        .filter_map(|p| fs::canonicalize(p).ok())
        .collect();
    for document in &documents {
        let target = fs::canonicalize(&document.path).ok();
        if target.is_some_and(|t| sources.contains(&t)) {
            return Err(ConvertError::Overwrite(document.path.display().to_string()));
        }
    }
    Ok(documents)
}

fn has_yaml_extension(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

/// `<id>.scenario.yaml` with characters unsafe in file names replaced, unique in `names`.
fn unique_name(id: &str, names: &mut HashSet<String>) -> String {
    let safe: String = id
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let safe = if safe.trim_matches('.').is_empty() {
        "scenario".to_owned()
    } else {
        safe
    };
    let mut name = format!("{safe}.scenario.yaml");
    let mut n = 2;
    while !names.insert(name.clone()) {
        name = format!("{safe}-{n}.scenario.yaml");
        n += 1;
    }
    name
}

/// Writes every document atomically, creating the directory of several scenarios.
pub fn write(documents: &[Document]) -> Result<(), ConvertError> {
    for document in documents {
        let failed = |source| ConvertError::Write {
            path: document.path.display().to_string(),
            source,
        };
        if let Some(parent) = document.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent).map_err(failed)?;
        }
        atomic::write(&document.path, |out: &mut dyn Write| {
            out.write_all(document.text.as_bytes())
        })
        .map_err(|source| ConvertError::Write {
            path: document.path.display().to_string(),
            source,
        })?;
    }
    Ok(())
}
