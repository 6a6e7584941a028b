//! The four input formats, each a module that turns one file into [`Case`]s, and the sniffing
//! that tells them apart by content.
//!
//! Every loader takes the already-parsed document and a [`Diagnostics`] to report into; it
//! reports every problem it finds and returns the cases it could build. A file with any error
//! must not be run, which the caller decides from the diagnostics.

pub mod ces_csv;
pub mod gecx;
pub mod memory;
pub mod regtrace;
pub mod scrapi;
pub mod write;

use std::path::Path;
use std::sync::Arc;

use crate::diagnostic::{Code, Diagnostic, Diagnostics, Position};
use crate::model::{Case, Format};
use crate::yaml::{self, Node, Schema};

/// What a file is, as far as goldgate can tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    Golden(Format),
    /// `regtrace.config.yaml`: names the golden sets to load.
    RegtraceConfig,
    /// A gecx `*.scenario.ts`: needs a JavaScript runtime.
    ScenarioTs,
    /// SCRAPI simulations (`evals:`, or a bare list of evals with `steps`): an LLM plays the
    /// user ([`scrapi::simulation`]).
    Simulations,
    /// A file of one of the reference systems that goldgate does not run (some simulation
    /// shapes, guardrail tests).
    OtherEval(&'static str),
    Unknown,
}

impl FileKind {
    /// The rules the file's own tool reads plain YAML scalars by.
    pub fn schema(self) -> Schema {
        match self {
            FileKind::Golden(format) => schema(format),
            FileKind::RegtraceConfig => schema(Format::RegtraceSet),
            FileKind::Simulations | FileKind::OtherEval(_) | FileKind::Unknown => {
                schema(Format::ScrapiGolden)
            }
            FileKind::ScenarioTs => schema(Format::GecxScenario),
        }
    }
}

/// The rules a format's own loader reads plain YAML scalars by ([`yaml::scalars`]): SCRAPI's
/// Python reads with PyYAML `safe_load`, Regtrace's TypeScript with js-yaml `load`, gecx's
/// with the `yaml` package. CES goldens are CSV; the JSON in their cells has no such choice.
pub fn schema(format: Format) -> Schema {
    match format {
        Format::ScrapiGolden => Schema::PyYaml,
        Format::RegtraceSet => Schema::JsYaml,
        Format::GecxScenario => Schema::YamlCore,
        Format::CesCsv => Schema::Goldgate,
    }
}

/// The author's comments above the first key of the mapping `node` (the case or turn it
/// holds), goldgate's own annotations left out; none when `node` is not a mapping.
pub(crate) fn author_comments(node: &Node) -> Vec<String> {
    scrapi::annotation::authors(first_key_comments(node))
}

/// The comment lines above the first key of the mapping `node`: where a case's or a turn's
/// comments stand, the author's and goldgate's own alike.
pub(crate) fn first_key_comments(node: &Node) -> &[String] {
    node.as_map()
        .and_then(<[_]>::first)
        .map_or(&[], |(key, _)| &key.comments)
}

/// Below this many items a list is read on one thread: starting another costs more.
const ITEMS_PER_THREAD: usize = 128;

/// Reads each item of `items` (with its index) into what `read` makes of it, keeping the
/// items' order and their diagnostics' alike. A long list (a golden of a thousand
/// conversations) is read in parts, one per thread, as the items do not depend on each other.
pub(crate) fn read_items<'a, T, R>(items: &'a [Node], diags: &mut Diagnostics, read: R) -> Vec<T>
where
    T: Send,
    R: Fn(usize, &'a Node, &mut Diagnostics) -> Option<T> + Sync,
{
    let parts = items.len() / ITEMS_PER_THREAD;
    // Asked only of a long list: the answer takes a few system calls (cgroup quotas).
    let threads = if parts < 2 {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |cores| parts.min(cores.get()))
    };
    let read_part = |first: usize, part: &'a [Node], diags: &mut Diagnostics| -> Vec<T> {
        let mut read_items = Vec::with_capacity(part.len());
        let read_one = |(i, item)| read(first + i, item, diags);
        read_items.extend(part.iter().enumerate().filter_map(read_one));
        read_items
    };
    if threads == 1 {
        return read_part(0, items, diags);
    }
    let part_len = items.len().div_ceil(threads);
    let parts: Vec<(Vec<T>, Diagnostics)> = std::thread::scope(|scope| {
        let running: Vec<_> = items
            .chunks(part_len)
            .enumerate()
            .map(|(n, part)| {
                let mut part_diags = Diagnostics::new(&diags.file);
                let read_part = &read_part;
                scope.spawn(move || (read_part(n * part_len, part, &mut part_diags), part_diags))
            })
            .collect();
        running
            .into_iter()
            .map(|part| {
                part.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let mut all = Vec::with_capacity(items.len());
    for (read_items, part_diags) in parts {
        all.extend(read_items);
        diags.items.extend(part_diags.items);
    }
    all
}

/// The cases and problems of one file.
#[derive(Debug)]
pub struct LoadedFile {
    pub path: Arc<Path>,
    pub format: Option<Format>,
    pub cases: Vec<Arc<Case>>,
    pub diagnostics: Vec<Diagnostic>,
    /// Bars the whole run must clear, stated by this file (a Regtrace config's
    /// `quality_gates`).
    pub floors: Vec<crate::model::Floor>,
}

impl LoadedFile {
    /// A file that loaded no case, only `diagnostics`.
    pub fn problems(path: Arc<Path>, format: Option<Format>, diagnostics: Vec<Diagnostic>) -> Self {
        Self {
            path,
            format,
            cases: Vec::new(),
            diagnostics,
            floors: Vec::new(),
        }
    }

    /// Puts the problems in the order of the file, as a reader meets them: the loaders report
    /// them in the order they walk it, and a check over a whole mapping comes after its keys.
    pub fn sort_diagnostics(&mut self) {
        self.diagnostics
            .sort_by_key(|d| (d.location.line, d.location.column));
    }

    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == crate::diagnostic::Severity::Error)
    }
}

/// Tells the kind of a YAML document from its top-level keys.
pub fn sniff_yaml(root: &Node) -> FileKind {
    if scrapi::tool_test::is_tool_test(root) {
        // Tool tests load through the SCRAPI loader, which also refuses a bare list of them.
        return FileKind::Golden(Format::ScrapiGolden);
    }
    if let Some(items) = root.as_seq() {
        // SCRAPI simulations may be a bare list of evals, or (another tool's shape) of goals.
        return if items.iter().any(|i| i.get("steps").is_some()) {
            FileKind::Simulations
        } else if items
            .iter()
            .any(|i| i.get("goal").is_some() || i.get("user_goal").is_some())
        {
            FileKind::OtherEval("a SCRAPI simulation list")
        } else {
            FileKind::Unknown
        };
    }
    let has = |key: &str| root.get(key).is_some();
    if has("conversations") || scrapi::turn_eval::is_turn_eval(root) {
        // Turn evals load through the SCRAPI loader too.
        FileKind::Golden(Format::ScrapiGolden)
    } else if has("golden") && (has("displayName") || has("name")) {
        FileKind::Golden(Format::ScrapiGolden)
    } else if has("test_cases") {
        FileKind::Golden(Format::RegtraceSet)
    } else if has("golden_sets") {
        FileKind::RegtraceConfig
    } else if has("when") || has("then") {
        FileKind::Golden(Format::GecxScenario)
    } else if has("evals") {
        FileKind::Simulations
    } else if has("simulations") {
        FileKind::OtherEval("a SCRAPI simulation file")
    } else if has("tests") {
        // Tool tests are told apart above; what is left under `tests` sends `user_input`.
        FileKind::OtherEval("a SCRAPI guardrail test file")
    } else {
        FileKind::Unknown
    }
}

/// True when a CSV header names the three required CES columns.
pub fn sniff_csv(text: &str) -> bool {
    let header = text
        .lines()
        .next()
        .unwrap_or("")
        .trim_start_matches('\u{feff}');
    let columns: Vec<&str> = header
        .split(',')
        .map(|c| c.trim().trim_matches('"'))
        .collect();
    ["display_name", "turn_index", "action_type"]
        .iter()
        .all(|required| columns.contains(required))
}

/// Loads one golden file of a known format from its text.
pub fn load_golden(path: &Arc<Path>, text: &str, format: Format) -> LoadedFile {
    if format == Format::CesCsv {
        let mut diags = Diagnostics::new(path);
        let cases = ces_csv::load(text, &mut diags);
        return loaded(path, format, cases, diags);
    }
    match yaml::parse_as(text, schema(format)) {
        Ok(root) => load_root(path, &root, format),
        Err(err) => {
            let mut diags = Diagnostics::new(path);
            yaml::report_parse_error(&err, &mut diags);
            loaded(path, format, Vec::new(), diags)
        }
    }
}

/// Loads a SCRAPI simulation file: each simulation a case the runner plays with a simulated
/// user.
pub fn load_simulations(path: &Arc<Path>, root: &Node) -> LoadedFile {
    let mut diags = Diagnostics::new(path);
    let cases = scrapi::simulation::load(root, &mut diags)
        .into_iter()
        .map(crate::model::Simulation::into_case)
        .collect();
    loaded(path, Format::ScrapiGolden, cases, diags)
}

/// Loads an already-parsed YAML document of a known format.
pub fn load_root(path: &Arc<Path>, root: &Node, format: Format) -> LoadedFile {
    let mut diags = Diagnostics::new(path);
    let cases = match format {
        Format::ScrapiGolden => scrapi::load(root, &mut diags),
        Format::GecxScenario => gecx::load(root, &mut diags),
        Format::RegtraceSet => {
            regtrace::load_set(root, &regtrace::SetDefaults::default(), &mut diags)
        }
        Format::CesCsv => {
            diags
                .at(root)
                .error(Code::G108, "a CES golden is CSV, not YAML")
                .hint("name the file `*.golden.csv`");
            Vec::new()
        }
    };
    loaded(path, format, cases, diags)
}

fn loaded(path: &Arc<Path>, format: Format, cases: Vec<Case>, diags: Diagnostics) -> LoadedFile {
    LoadedFile {
        path: Arc::clone(path),
        format: Some(format),
        cases: cases.into_iter().map(Arc::new).collect(),
        diagnostics: diags.items,
        floors: Vec::new(),
    }
}

/// A one-diagnostic result for a file that could not be loaded at all, the problem at
/// `(line, column)`.
pub fn failed(
    path: &Arc<Path>,
    format: Option<Format>,
    (code, (line, column)): (Code, (u32, u32)),
    message: String,
    hint: Option<&str>,
) -> LoadedFile {
    let mut diags = Diagnostics::new(path);
    let builder = diags.at(Position::new(line, column)).error(code, message);
    if let Some(hint) = hint {
        builder.hint(hint);
    }
    LoadedFile::problems(Arc::clone(path), format, diags.items)
}
