//! From found files to loaded cases: read each file once, sniff what it is, hand it to its
//! format's loader, then check what only the whole suite can tell (duplicate scenario ids).

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diagnostic::{Code, Diagnostics, Position, Severity};
use crate::discover::{Found, Hint, Overlooked};
use crate::formats::memory::{Tally, TooLarge};
use crate::formats::{self, FileKind, LoadedFile};
use crate::model::Format;
use crate::yaml::{self, MAX_FILE_BYTES, Node};

/// Every file found, loaded, in discovery order (a Regtrace config is followed by its sets).
#[derive(Debug, Default)]
pub struct Suite {
    pub files: Vec<LoadedFile>,
    /// Files discovery passed by that look like goldens ([`overlooked`]): their warnings only.
    /// Kept apart from `files`, which are the suite: a change to one of these is a change to
    /// a file goldgate does not play, not to a golden.
    pub overlooked: Vec<LoadedFile>,
}

impl Suite {
    pub fn error_count(&self) -> usize {
        self.count(Severity::Error)
    }

    /// The floors the goldens set for the whole run (Regtrace's `quality_gates`).
    pub fn floors(&self) -> impl Iterator<Item = &crate::model::Floor> {
        self.files.iter().flat_map(|f| &f.floors)
    }

    /// The files with something to say: the suite's, then the overlooked.
    pub fn reported(&self) -> impl Iterator<Item = &LoadedFile> {
        self.files.iter().chain(&self.overlooked)
    }

    /// Drops the warnings under `codes` (goldgate.yaml's `lint.allow`); errors stay.
    pub fn allow(&mut self, codes: &[crate::diagnostic::Code]) {
        for file in self.files.iter_mut().chain(&mut self.overlooked) {
            file.diagnostics
                .retain(|d| d.severity == Severity::Error || !codes.contains(&d.code));
        }
    }

    pub fn warning_count(&self) -> usize {
        self.count(Severity::Warning)
    }

    fn count(&self, severity: Severity) -> usize {
        self.reported()
            .flat_map(|f| &f.diagnostics)
            .filter(|d| d.severity == severity)
            .count()
    }

    pub fn case_count(&self) -> usize {
        self.files.iter().map(|f| f.cases.len()).sum()
    }

    /// Names each case's file as reports do, relative to its project root
    /// ([`crate::project::name`]), so that its key is the same whatever directory goldgate ran
    /// in and however the path was typed. Diagnostics keep the path as given, which the user
    /// can open from where they typed it.
    pub fn name_for_reports(&mut self, cwd: &Path) {
        for file in &mut self.files {
            let name: Arc<Path> = Arc::from(Path::new(&crate::project::name(&file.path, cwd)));
            for case in &mut file.cases {
                Arc::make_mut(case).set_file(&name);
            }
        }
    }
}

/// A file discovery passed by that looks like a golden ([`Overlooked`]): a warning on
/// the line that makes it look like one, and nothing loaded.
pub fn overlooked(file: &Overlooked) -> LoadedFile {
    let path: Arc<Path> = Arc::from(file.path.as_path());
    let mut diags = Diagnostics::new(&path);
    let (what, named) = match file.format {
        Format::CesCsv => ("a CX Agent Studio golden CSV", "`*.golden.csv`"),
        _ => ("a SCRAPI golden (`conversations:`)", "`*.golden.yaml`"),
    };
    diags
        .at(Position::new(file.line, 1))
        .warning(
            Code::G114,
            format!("this file looks like {what}, but is not where goldgate looks for goldens: it is not loaded"),
        )
        .hint(format!(
            "move it under a `goldens/` folder or name it {named}; a file named on the command line is read whatever its name"
        ));
    LoadedFile::problems(path, None, diags.items)
}

/// Loads every found file. Problems never abort the others; they are in each file's diagnostics.
/// Goldens that expand past the bound on the whole ([`formats::memory::MAX_GOLDENS_BYTES`])
/// are an error that stops loading at the file past it.
pub fn load(found: &[Found]) -> Result<Suite, TooLarge> {
    let mut suite = Suite::default();
    // Where each file went in `suite.files`, and whether a config listed it.
    let mut seen: HashMap<PathBuf, (usize, bool)> = HashMap::new();
    let mut tally = Tally::default();
    for item in found {
        // Only a Regtrace config loads more than one file: itself, then the sets it lists.
        for (index, file) in load_one(&item.path, item.hint, &mut tally)?
            .into_iter()
            .enumerate()
        {
            let listed = index > 0;
            // A golden set listed by a config may also be named directly: load it once, and as
            // its config reads it (its thresholds and weights), whichever was found first.
            let key = if file.format == Some(Format::RegtraceSet) {
                formats::regtrace::set_identity(&file.path)
            } else {
                file.path.to_path_buf()
            };
            match seen.get(&key) {
                None => {
                    seen.insert(key, (suite.files.len(), listed));
                    suite.files.push(file);
                }
                Some(&(at, false)) if listed => {
                    seen.insert(key, (at, true));
                    suite.files[at] = file;
                }
                Some(_) => {}
            }
        }
    }
    check_unique_scenario_ids(&mut suite.files);
    for file in &mut suite.files {
        file.sort_diagnostics();
    }
    Ok(suite)
}

fn load_one(path: &Path, hint: Hint, tally: &mut Tally) -> Result<Vec<LoadedFile>, TooLarge> {
    let file: Arc<Path> = Arc::from(path);
    if hint == Hint::ScenarioTs {
        return Ok(vec![typescript_scenario(file)]);
    }
    let text = match read(path) {
        Ok(text) => text,
        Err(unreadable) => return Ok(vec![unread(&file, unreadable)]),
    };
    let is_csv = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    if is_csv || hint == Hint::Format(Format::CesCsv) {
        tally.add_csv(path, &text)?;
        return Ok(vec![load_csv(&file, &text)]);
    }
    load_yaml_text(file, &text, hint, tally)
}

/// A gecx TypeScript scenario: named, with a warning, and nothing loaded.
fn typescript_scenario(file: Arc<Path>) -> LoadedFile {
    let mut diags = Diagnostics::new(&file);
    diags
        .at(Position::START)
        .warning(
            Code::G108,
            "gecx TypeScript scenarios cannot be run by goldgate",
        )
        .hint("it needs a JavaScript runtime; write the scenario as `*.scenario.yaml` (same keys)");
    LoadedFile::problems(file, Some(Format::GecxScenario), diags.items)
}

/// A file [`read`] could not read (G112), or not as UTF-8 (E001, where the bad byte is).
fn unread(file: &Arc<Path>, (message, at): (String, Option<(u32, u32)>)) -> LoadedFile {
    match at {
        None => formats::failed(file, None, (Code::G112, (1, 1)), message, None),
        Some(at) => {
            let hint = Some("save the file as UTF-8");
            formats::failed(file, None, (Code::E001, at), message, hint)
        }
    }
}

/// A YAML file loaded as its name or its keys say, with its ambiguous plain scalars flagged;
/// its tree counted in `tally` before any case is built from it.
fn load_yaml_text(
    file: Arc<Path>,
    text: &str,
    hint: Hint,
    tally: &mut Tally,
) -> Result<Vec<LoadedFile>, TooLarge> {
    // A golden's plain scalars are read by its format's loader's rules: the format is known
    // from the name, or else from the keys, which read alike under every schema. A sniffed
    // file is read as SCRAPI's, the most common, and read again only when it is another.
    let schema = match hint {
        Hint::Format(format) => formats::schema(format),
        Hint::RegtraceConfig => FileKind::RegtraceConfig.schema(),
        Hint::ScenarioTs | Hint::Sniff => formats::schema(Format::ScrapiGolden),
    };
    // The loaders' disagreements do not depend on the schema: found once, in the first parse.
    let parsed = yaml::parse_golden(text, schema).and_then(|(root, ambiguous)| {
        let kind = kind_of(&root, hint);
        match kind.schema() {
            wanted if wanted == schema => Ok((root, kind, ambiguous)),
            wanted => yaml::parse_as(text, wanted).map(|root| (root, kind, ambiguous)),
        }
    });
    let (root, kind, ambiguous) = match parsed {
        Ok(parsed) => parsed,
        Err(err) => {
            let mut diags = Diagnostics::new(&file);
            yaml::report_parse_error(&err, &mut diags);
            let format = match hint {
                Hint::Format(format) => Some(format),
                _ => None,
            };
            return Ok(vec![LoadedFile::problems(file, format, diags.items)]);
        }
    };
    match kind {
        FileKind::Golden(Format::RegtraceSet) => {
            let identity = formats::regtrace::set_identity(&file);
            tally.add_set(identity, &file, &root)?;
        }
        _ => tally.add_tree(&file, &root)?,
    }
    let mut files = load_yaml(file, &root, kind, tally)?;
    if let (FileKind::Golden(_) | FileKind::Simulations, Some(golden)) = (kind, files.first_mut()) {
        let mut diags = Diagnostics::new(&golden.path);
        yaml::report_ambiguous(&ambiguous, &mut diags);
        golden.diagnostics.extend(diags.items);
    }
    Ok(files)
}

/// What a parsed YAML file is: as its name says, else as its keys say.
fn kind_of(root: &Node, hint: Hint) -> FileKind {
    match hint {
        Hint::Format(format) => FileKind::Golden(format),
        Hint::RegtraceConfig => FileKind::RegtraceConfig,
        _ => formats::sniff_yaml(root),
    }
}

/// A file that is CSV by its name or its hint: a CES golden if its header says so.
fn load_csv(file: &Arc<Path>, text: &str) -> LoadedFile {
    if formats::sniff_csv(text) {
        return formats::load_golden(file, text, Format::CesCsv);
    }
    formats::failed(
        file,
        Some(Format::CesCsv),
        (Code::G108, (1, 1)),
        "not a CES golden CSV: the header lacks `display_name`, `turn_index` and `action_type`"
            .into(),
        Some(
            "the first line must name the columns, e.g. `display_name,turn_index,action_type,text_content`",
        ),
    )
}

/// Parsed YAML, handed to the loader of what the hint or the document's keys say it is (a
/// Regtrace config's sets counted in `tally` as they are read).
fn load_yaml(
    file: Arc<Path>,
    root: &Node,
    kind: FileKind,
    tally: &mut Tally,
) -> Result<Vec<LoadedFile>, TooLarge> {
    Ok(match kind {
        FileKind::Golden(format) => vec![formats::load_root(&file, root, format)],
        FileKind::RegtraceConfig => formats::regtrace::load_config_file(&file, root, tally)?,
        FileKind::Simulations => vec![formats::load_simulations(&file, root)],
        FileKind::OtherEval(what) => {
            let mut diags = Diagnostics::new(&file);
            diags
                .at(root)
                .warning(
                    Code::G108,
                    format!("this is {what}; goldgate does not run it"),
                )
                .hint("goldgate runs SCRAPI goldens, turn evals, simulations and tool tests, CES golden CSV, gecx scenarios and Regtrace golden sets");
            vec![LoadedFile {
                path: file,
                format: None,
                cases: Vec::new(),
                diagnostics: diags.items,
                floors: Vec::new(),
            }]
        }
        FileKind::ScenarioTs | FileKind::Unknown => vec![not_a_golden(&file, root)],
    })
}

/// A YAML file that is none of the formats: empty (E002) or something else (G108).
fn not_a_golden(file: &Arc<Path>, root: &Node) -> LoadedFile {
    let (code, message) = if root.is_null() {
        (
            Code::E002,
            "the file is empty: no conversations, scenario or test cases",
        )
    } else {
        (Code::G108, "not a golden file goldgate knows")
    };
    formats::failed(
        file,
        None,
        (code, (1, 1)),
        message.to_owned(),
        Some(
            "expected top-level `conversations` (SCRAPI golden), `tests` (SCRAPI turn evals or tool tests), \
             `id`/`when`/`then` (gecx scenario), `test_cases` (Regtrace golden set) or `golden_sets` (regtrace.config.yaml)",
        ),
    )
}

/// Reads a file as UTF-8 text, refusing huge files before reading them. The error says why,
/// and where (line, column) when a byte is not UTF-8.
fn read(path: &Path) -> Result<String, (String, Option<(u32, u32)>)> {
    let unreadable = |e: std::io::Error| (format!("cannot read file: {e}"), None);
    let meta = fs::metadata(path).map_err(unreadable)?;
    if meta.len() > MAX_FILE_BYTES as u64 {
        return Err((
            format!(
                "file is {} MiB; goldgate refuses golden files over {} MiB",
                meta.len() / (1024 * 1024),
                MAX_FILE_BYTES / (1024 * 1024)
            ),
            None,
        ));
    }
    let bytes = fs::read(path).map_err(unreadable)?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let before = &e.as_bytes()[..offset];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        // Columns count characters, as the YAML errors do.
        let column = String::from_utf8_lossy(&before[line_start..])
            .chars()
            .count()
            + 1;
        (
            format!(
                "not UTF-8 text: byte 0x{:02x} at offset {offset}",
                e.as_bytes()[offset]
            ),
            Some((
                u32::try_from(line).unwrap_or(u32::MAX),
                u32::try_from(column).unwrap_or(u32::MAX),
            )),
        )
    })
}

/// gecx scenario ids are unique within the suite, not just the file.
fn check_unique_scenario_ids(files: &mut [LoadedFile]) {
    let mut first_seen: HashMap<String, crate::model::Location> = HashMap::new();
    for file in files
        .iter_mut()
        .filter(|f| f.format == Some(Format::GecxScenario))
    {
        let mut diags = Diagnostics::new(&file.path);
        for case in &file.cases {
            match first_seen.get(&case.id) {
                Some(first) => {
                    diags
                        .at(&case.location)
                        .error(
                            Code::G103,
                            format!("scenario id `{}` is already used at {first}", case.id),
                        )
                        .field("id")
                        .hint("scenario ids must be unique within the suite");
                }
                None => {
                    first_seen.insert(case.id.clone(), case.location.clone());
                }
            }
        }
        file.diagnostics.append(&mut diags.items);
    }
}
