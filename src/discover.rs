//! Finding golden files: directories are walked (honouring `.gitignore`) and matched against
//! globs; files named explicitly are taken whatever their name and sniffed by content.
//!
//! The order is deterministic (sorted by path) so that reports, shards and baselines do not
//! depend on the file system's order.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use globset::{GlobSet, GlobSetBuilder};

use crate::model::Format;

/// How a found file should be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hint {
    /// The name says the format (`*.scenario.yaml`, `*.golden.csv`, ...).
    Format(Format),
    /// `regtrace.config.yaml`.
    RegtraceConfig,
    /// `*.scenario.ts`: reported as unsupported, never skipped silently.
    ScenarioTs,
    /// Named on the command line or matched loosely (YAML under `goldens/`): sniff the content.
    Sniff,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub path: PathBuf,
    pub hint: Hint,
}

/// A file a walk passed by that reads like a golden, though no glob takes it (`evals/refunds.yaml`
/// beside `evals/goldens/`): not loaded, but said, so that a golden put in the wrong place
/// does not leave a run green without having been played.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overlooked {
    pub path: PathBuf,
    /// The line that makes it look like one (`conversations:`, a golden CSV's header).
    pub line: u32,
    pub format: Format,
}

/// What a discovery found: the goldens, and the files it passed by that look like goldens.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Discovered {
    pub found: Vec<Found>,
    pub overlooked: Vec<Overlooked>,
}

/// The globs for each kind of file, matched against paths as walked from the directory named.
#[derive(Clone, Debug)]
pub struct Rules {
    pub scenario: Vec<String>,
    pub scenario_ts: Vec<String>,
    pub scrapi: Vec<String>,
    pub ces_csv: Vec<String>,
    pub regtrace_config: Vec<String>,
}

impl Default for Rules {
    fn default() -> Self {
        let owned = |globs: &[&str]| globs.iter().map(|g| (*g).to_owned()).collect();
        Self {
            scenario: owned(&["**/*.scenario.yaml", "**/*.scenario.yml"]),
            scenario_ts: owned(&["**/*.scenario.ts"]),
            scrapi: owned(&[
                "**/*.golden.yaml",
                "**/*.golden.yml",
                "**/goldens/**/*.yaml",
                "**/goldens/**/*.yml",
                "**/goldens/**/*.json",
                // Where SCRAPI's project template keeps its tool tests; only there, since a
                // `tool_tests/` folder elsewhere may hold any tool's YAML.
                "**/evals/tool_tests/**/*.yaml",
                "**/evals/tool_tests/**/*.yml",
            ]),
            ces_csv: owned(&["**/*.golden.csv", "**/goldens/**/*.csv"]),
            regtrace_config: owned(&["**/regtrace.config.yaml", "**/regtrace.config.yml"]),
        }
    }
}

/// Compiled [`Rules`]; the first matching kind wins, in the order of the fields. Paths are
/// matched as walked from the directory the user named.
struct Matchers {
    /// Every kind's globs in one set (one regex to build, not one a kind), the kinds in order.
    globs: GlobSet,
    /// The kind of each glob of `globs`, by index.
    hints: Vec<Hint>,
    /// The globs that name a SCRAPI project's own folder (`evals/...`), which mark a project
    /// wherever it sits: matched against the absolute path too, so that `goldgate run
    /// tool_tests` from inside `evals/` finds the tool tests without a `.git` above.
    scrapi_project: GlobSet,
}

impl Matchers {
    fn new(rules: &Rules) -> Result<Self, globset::Error> {
        let glob = |glob: &str| {
            globset::GlobBuilder::new(glob)
                .literal_separator(true)
                .build()
        };
        let kinds = [
            (&rules.scenario_ts, Hint::ScenarioTs),
            (&rules.scenario, Hint::Format(Format::GecxScenario)),
            (&rules.regtrace_config, Hint::RegtraceConfig),
            (&rules.ces_csv, Hint::Format(Format::CesCsv)),
            // YAML under goldens/ may be any of the YAML formats: sniff it.
            (&rules.scrapi, Hint::Sniff),
        ];
        let (mut globs, mut hints) = (GlobSetBuilder::new(), Vec::new());
        for (patterns, hint) in kinds {
            for pattern in patterns {
                globs.add(glob(pattern)?);
                hints.push(hint);
            }
        }
        let mut scrapi_project = GlobSetBuilder::new();
        for pattern in rules.scrapi.iter().filter(|g| g.starts_with("**/evals/")) {
            scrapi_project.add(glob(pattern)?);
        }
        Ok(Self {
            globs: globs.build()?,
            hints,
            scrapi_project: scrapi_project.build()?,
        })
    }

    fn hint(&self, path: &Path) -> Option<Hint> {
        let first = self.globs.matches(path).into_iter().min()?;
        Some(self.hints[first])
    }
}

/// Why discovery could not run.
#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    #[error("{path}: no such file or directory")]
    Missing { path: PathBuf },
    #[error("invalid glob: {0}")]
    Glob(#[from] globset::Error),
    #[error("{path}: {source}")]
    Walk {
        path: PathBuf,
        #[source]
        source: ignore::Error,
    },
}

/// Finds the golden files under `targets` (files or directories), sorted, without duplicates:
/// a file reached twice (`evals ./evals`, a folder and a file in it, a link and its target) is
/// found once, under the first path that reached it, so that its cases are not run twice.
pub fn discover(targets: &[PathBuf], rules: &Rules) -> Result<Discovered, DiscoverError> {
    let matchers = Matchers::new(rules)?;
    let cwd = std::env::current_dir().ok();
    let mut found = FoundSet::default();
    let mut overlooked = Vec::new();
    for target in targets {
        if target.is_file() {
            found.add(target, Hint::Sniff);
            continue;
        }
        if !target.is_dir() {
            return Err(DiscoverError::Missing {
                path: target.clone(),
            });
        }
        // Linked goldens count like any others; the walker detects link loops.
        let walker = ignore::WalkBuilder::new(target)
            .require_git(false)
            .follow_links(true)
            .sort_by_file_path(Ord::cmp)
            .build();
        for entry in walker {
            let entry = entry.map_err(|source| DiscoverError::Walk {
                path: target.clone(),
                source,
            })?;
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let path = entry.path();
            // Matched as the user typed it: `goldgate lint evals/goldens` must see
            // `evals/goldens/x.yaml`, a goldens/ folder, not a bare `x.yaml`. From inside such
            // a folder (`goldgate run .` in `evals/goldens`) the path from the project root
            // still has it, so that a suite is the same wherever it is run from.
            let hint = matchers.hint(path).or_else(|| {
                let name = crate::project::name(path, cwd.as_deref()?);
                // Only a name inside a project: an absolute one could match any folder above.
                (!name.starts_with('/'))
                    .then(|| matchers.hint(Path::new(&name)))
                    .flatten()
                    .or_else(|| {
                        let absolute = cwd.as_deref()?.join(path);
                        matchers
                            .scrapi_project
                            .is_match(&absolute)
                            .then_some(Hint::Sniff)
                    })
            });
            match hint {
                Some(hint) => found.add(path, hint),
                None => overlooked.extend(looks_like_a_golden(path)),
            }
        }
    }
    let overlooked = found.not_found(overlooked);
    Ok(Discovered {
        found: found.into_sorted(),
        overlooked,
    })
}

/// How much of a file the walk reads to tell whether it looks like a golden.
const SNIFFED_BYTES: u64 = 16 * 1024;

/// `path` as an [`Overlooked`] golden, when its first bytes say it is one: a YAML file with a
/// top-level `conversations:` (a SCRAPI golden) or a CSV file with a CES golden's header.
/// Other YAML (workflows, configs) has no such key, so only a golden out of place is named.
fn looks_like_a_golden(path: &Path) -> Option<Overlooked> {
    let extension = path.extension()?.to_str()?.to_ascii_lowercase();
    let (format, starts): (Format, fn(&str) -> bool) = match extension.as_str() {
        "yaml" | "yml" => (Format::ScrapiGolden, |line| {
            line.strip_prefix("conversations:")
                .is_some_and(|rest| rest.trim_start().is_empty() || rest.starts_with(' '))
        }),
        "csv" => (Format::CesCsv, |line| {
            line.trim_start_matches('\u{feff}')
                .starts_with("display_name,turn_index,action_type")
        }),
        _ => return None,
    };
    let mut head = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(fs::File::open(path).ok()?, SNIFFED_BYTES),
        &mut head,
    )
    .ok()?;
    let text = String::from_utf8_lossy(&head);
    let line = text.lines().position(starts)?;
    Some(Overlooked {
        path: path.to_path_buf(),
        line: u32::try_from(line + 1).ok()?,
        format,
    })
}

/// The files found so far, by the path that first reached each, and every file's canonical
/// path (which tells a file reached again under another spelling).
#[derive(Default)]
struct FoundSet {
    by_path: BTreeMap<PathBuf, Hint>,
    canonical: HashSet<PathBuf>,
}

impl FoundSet {
    fn add(&mut self, path: &Path, hint: Hint) {
        let canonical = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if self.canonical.insert(canonical) {
            self.by_path.insert(path.to_path_buf(), hint);
        }
    }

    /// The `overlooked` files that were not found after all (a file named on the command line
    /// beside its folder), each once however many paths reached it.
    fn not_found(&self, overlooked: Vec<Overlooked>) -> Vec<Overlooked> {
        let mut seen = self.canonical.clone();
        overlooked
            .into_iter()
            .filter(|o| seen.insert(fs::canonicalize(&o.path).unwrap_or_else(|_| o.path.clone())))
            .collect()
    }

    fn into_sorted(self) -> Vec<Found> {
        self.by_path
            .into_iter()
            .map(|(path, hint)| Found { path, hint })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn touch(root: &Path, relative: &str) {
        let path = root.join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "x").unwrap();
    }

    #[test]
    fn finds_each_kind_sorted_and_honours_gitignore() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for file in [
            "b/welcome.scenario.yaml",
            "a/old.scenario.ts",
            "evals/goldens/orders.yaml",
            "evals/goldens/nested/more.yml",
            "evals/goldens/cases.csv",
            "x.golden.csv",
            "rt/regtrace.config.yaml",
            "notes/readme.yaml",
            "ignored/goldens/skip.yaml",
            "evals/tool_tests/lookup.yaml",
            "ci/tool_tests/settings.yaml",
        ] {
            touch(root, file);
        }
        fs::write(root.join(".gitignore"), "ignored/\n").unwrap();
        let found = discover(&[root.to_path_buf()], &Rules::default())
            .unwrap()
            .found;
        let got: Vec<(String, Hint)> = found
            .iter()
            .map(|f| {
                (
                    f.path.strip_prefix(root).unwrap().display().to_string(),
                    f.hint,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("a/old.scenario.ts".into(), Hint::ScenarioTs),
                (
                    "b/welcome.scenario.yaml".into(),
                    Hint::Format(Format::GecxScenario)
                ),
                (
                    "evals/goldens/cases.csv".into(),
                    Hint::Format(Format::CesCsv)
                ),
                ("evals/goldens/nested/more.yml".into(), Hint::Sniff),
                ("evals/goldens/orders.yaml".into(), Hint::Sniff),
                // SCRAPI's template layout; a `tool_tests/` elsewhere is not ours to read.
                ("evals/tool_tests/lookup.yaml".into(), Hint::Sniff),
                ("rt/regtrace.config.yaml".into(), Hint::RegtraceConfig),
                ("x.golden.csv".into(), Hint::Format(Format::CesCsv)),
            ]
        );
    }

    #[test]
    fn the_directories_as_typed_count() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "goldens/orders.yaml");
        touch(dir.path(), "goldens/sub/other.yaml");
        let found = discover(&[dir.path().join("goldens")], &Rules::default())
            .unwrap()
            .found;
        assert_eq!(found.len(), 2);
        let found = discover(&[dir.path().join("goldens/sub")], &Rules::default())
            .unwrap()
            .found;
        assert_eq!(found.len(), 1, "a folder inside goldens/ is still goldens");
    }

    #[cfg(unix)]
    #[test]
    fn linked_goldens_are_found_once_each() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "real/orders.yaml");
        touch(dir.path(), "real/billing.yaml");
        fs::create_dir_all(dir.path().join("suite/goldens")).unwrap();
        let link = |to: &str, from: &str| {
            std::os::unix::fs::symlink(dir.path().join(to), dir.path().join(from)).unwrap();
        };
        link("real/orders.yaml", "suite/goldens/linked.yaml");
        // The folder's link reaches orders.yaml again: found once, where the sorted walk
        // meets it first (`dir/` before `linked.yaml`).
        link("real", "suite/goldens/dir");
        let found = discover(&[dir.path().join("suite")], &Rules::default())
            .unwrap()
            .found;
        let names: Vec<_> = found
            .iter()
            .map(|f| f.path.strip_prefix(dir.path()).unwrap())
            .collect();
        let expected = [
            "suite/goldens/dir/billing.yaml",
            "suite/goldens/dir/orders.yaml",
        ];
        assert_eq!(names, expected.map(Path::new), "{found:?}");
    }

    #[test]
    fn a_golden_reached_under_two_spellings_is_found_once() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "evals/goldens/orders.yaml");
        let evals = dir.path().join("evals");
        let targets = [
            evals.clone(),
            dir.path().join("./evals"),
            evals.join("goldens/../goldens/orders.yaml"),
        ];
        let found = discover(&targets, &Rules::default()).unwrap().found;
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, evals.join("goldens/orders.yaml"));
    }

    #[test]
    fn a_golden_out_of_place_is_overlooked_once_and_never_when_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("evals/goldens")).unwrap();
        fs::write(root.join("evals/goldens/a.yaml"), "conversations: []\n").unwrap();
        fs::write(
            root.join("evals/refunds.yaml"),
            "# refunds\nconversations:\n",
        )
        .unwrap();
        fs::write(root.join("evals/ci.yaml"), "on: push\n").unwrap();
        let evals = root.join("evals");
        let refunds = evals.join("refunds.yaml");
        let overlooked = |targets: &[PathBuf]| {
            let found = discover(targets, &Rules::default()).unwrap();
            (found.overlooked.iter())
                .map(|o| (o.path.clone(), o.line))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            overlooked(std::slice::from_ref(&evals)),
            [(refunds.clone(), 2)]
        );
        // Reached twice, said once.
        assert_eq!(overlooked(&[evals.clone(), evals.join(".")]).len(), 1);
        // Named, it is read: nothing is overlooked, whichever path comes first.
        assert!(overlooked(&[evals.clone(), refunds.clone()]).is_empty());
        assert!(overlooked(&[refunds, evals]).is_empty());
    }

    #[test]
    fn a_named_file_is_taken_whatever_its_name() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "anything.txt");
        let path = dir.path().join("anything.txt");
        let found = discover(std::slice::from_ref(&path), &Rules::default())
            .unwrap()
            .found;
        assert_eq!(
            found,
            vec![Found {
                path,
                hint: Hint::Sniff
            }]
        );
    }

    #[test]
    fn a_missing_path_is_an_error_naming_it() {
        let err = discover(&[PathBuf::from("no/such/dir")], &Rules::default()).unwrap_err();
        assert_eq!(err.to_string(), "no/such/dir: no such file or directory");
    }
}
