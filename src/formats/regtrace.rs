//! Regtrace golden sets (`test_cases:`) and the `regtrace.config.yaml` that lists them.
//!
//! A golden set loads alone with Regtrace's defaults ([`load_set`]), or through its config
//! ([`load_config_file`]), which reads every enabled set relative to the config's directory and
//! hands each the config's defaults. Both files are checked against tables that mirror
//! Regtrace's own schemas (the `shape` module), so what Regtrace refuses is refused here, at
//! its line.

mod config;
mod set;
mod shape;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use config::{GoldenSetEntry, QualityGates, RegtraceConfig, load_config};
pub use set::load_set;

use crate::diagnostic::{Code, Diagnostics, Position};
use crate::formats::LoadedFile;
use crate::formats::memory::{Tally, TooLarge};
use crate::model::{Floor, FloorKind, Format, Location, Metric};
use crate::yaml::{self, MAX_FILE_BYTES, Node};

/// Settings a `regtrace.config.yaml` gives the golden sets it lists.
#[derive(Clone, Debug)]
pub struct SetDefaults {
    /// `metrics.default_threshold`: the threshold of a metric the case does not override.
    pub default_threshold: f64,
    /// The `weight` of the set's entry in `golden_sets`. A case's weight is its own `weight`
    /// times this, so a set weighted 2 counts its cases twice in the suite score.
    pub weight: f64,
}

impl Default for SetDefaults {
    fn default() -> Self {
        Self {
            default_threshold: 0.7,
            weight: 1.0,
        }
    }
}

/// Loads a `regtrace.config.yaml` and the golden sets it enables.
///
/// The first file is the config itself (its own diagnostics, no cases); one file follows per
/// enabled set that could be read. A set file that cannot be read is reported on the config, at
/// the line of its `path`.
pub fn load_config_file(
    config_path: &Arc<Path>,
    root: &Node,
    tally: &mut Tally,
) -> Result<Vec<LoadedFile>, TooLarge> {
    let mut diags = Diagnostics::new(config_path);
    let config = load_config(root, &mut diags);
    let dir = config_path.parent().unwrap_or(Path::new(""));
    let mut sets = Vec::new();
    for (index, entry) in config.golden_sets.iter().enumerate() {
        if !entry.enabled {
            continue;
        }
        let set_path: Arc<Path> = Arc::from(dir.join(&entry.path));
        match read(&set_path) {
            Ok(text) => {
                let defaults = config.set_defaults(entry);
                sets.push(load_set_text(&set_path, &text, &defaults, tally)?);
            }
            Err(message) => {
                diags
                    .at(Position::new(entry.line, entry.column))
                    .error(
                        Code::G112,
                        format!("cannot read golden set {}: {message}", set_path.display()),
                    )
                    .field(format!("golden_sets[{index}].path"))
                    .hint("set paths are relative to the directory of regtrace.config.yaml");
            }
        }
    }
    let floors = quality_floors(config_path, root, &mut diags);
    let mut files = vec![LoadedFile {
        path: Arc::clone(config_path),
        format: Some(Format::RegtraceSet),
        cases: Vec::new(),
        diagnostics: diags.items,
        floors,
    }];
    files.append(&mut sets);
    Ok(files)
}

/// The `quality_gates` a run must meet, as written: `suite_score_minimum` and
/// `max_failed_test_cases` become floors of the run. Gates goldgate cannot apply are said to
/// be ignored, never silently: it has no judge confidence to bound, and its own regression
/// gate is `--fail-on-regress`. Regtrace's defaults for keys not written are not applied:
/// goldgate's gate takes their place.
fn quality_floors(config_path: &Arc<Path>, root: &Node, diags: &mut Diagnostics) -> Vec<Floor> {
    let written = |key: &str| shape::lookup(root, &["quality_gates", key]);
    let mut floors = Vec::new();
    for (key, kind) in [
        ("suite_score_minimum", FloorKind::MinSuiteScore),
        ("max_failed_test_cases", FloorKind::MaxFailedCases),
    ] {
        if let Some(node) = written(key)
            && let Some(limit) = node.as_f64()
        {
            floors.push(Floor {
                kind,
                limit,
                location: Location::new(config_path, node.line, node.column),
            });
        }
    }
    for (key, instead) in [
        (
            "metric_score_minimums",
            "goldgate checks each case's metric thresholds; a suite-wide minimum per metric is not applied",
        ),
        (
            "max_low_confidence_ratio",
            "goldgate's judges give no confidence to bound",
        ),
        (
            "regression_gate",
            "goldgate's regression gate is `goldgate run --baseline FILE --fail-on-regress`",
        ),
    ] {
        if let Some(node) = written(key) {
            diags
                .at(node)
                .warning(
                    Code::G110,
                    format!("`quality_gates.{key}` is not applied by goldgate"),
                )
                .field(format!("quality_gates.{key}"))
                .hint(instead);
        }
    }
    floors
}

/// Parses and loads one set file with the defaults of its config entry, its tree counted in
/// `tally` before any case is built from it.
fn load_set_text(
    path: &Arc<Path>,
    text: &str,
    defaults: &SetDefaults,
    tally: &mut Tally,
) -> Result<LoadedFile, TooLarge> {
    let mut diags = Diagnostics::new(path);
    let cases = match yaml::parse_golden(text, super::schema(Format::RegtraceSet)) {
        Ok((root, ambiguous)) => {
            tally.add_set(set_identity(path), path, &root)?;
            let cases = load_set(&root, defaults, &mut diags);
            yaml::report_ambiguous(&ambiguous, &mut diags);
            cases
        }
        Err(err) => {
            yaml::report_parse_error(&err, &mut diags);
            Vec::new()
        }
    };
    Ok(LoadedFile {
        path: Arc::clone(path),
        format: Some(Format::RegtraceSet),
        cases: cases.into_iter().map(Arc::new).collect(),
        diagnostics: diags.items,
        floors: Vec::new(),
    })
}

/// The one path of a golden set however it was reached (named directly, or listed by its
/// config relative to it): only sets can be reached twice, so only they pay for
/// canonicalizing.
pub fn set_identity(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Reads a set file as text, refusing huge files before reading them.
fn read(path: &Path) -> Result<String, String> {
    let describe = |err: io::Error| match err.kind() {
        io::ErrorKind::NotFound => "the file does not exist".to_owned(),
        _ => err.to_string(),
    };
    let meta = fs::metadata(path).map_err(describe)?;
    if meta.len() > MAX_FILE_BYTES as u64 {
        return Err(format!(
            "the file is over goldgate's limit of {} MiB",
            MAX_FILE_BYTES / (1024 * 1024)
        ));
    }
    fs::read_to_string(path).map_err(describe)
}

/// Regtrace's metric names, as its files write them.
pub const METRIC_NAMES: [&str; 4] = ["factuality", "format", "tone", "regression"];

/// The metric called `name`.
pub fn parse_metric(name: &str) -> Option<Metric> {
    Some(match name {
        "factuality" => Metric::Factuality,
        "format" => Metric::Format,
        "tone" => Metric::Tone,
        "regression" => Metric::Regression,
        _ => return None,
    })
}

/// The name Regtrace files write for `metric`.
pub fn metric_name(metric: Metric) -> &'static str {
    METRIC_NAMES[metric as usize]
}
