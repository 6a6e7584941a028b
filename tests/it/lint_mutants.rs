//! A few thousand damaged copies of every fixture (and of ../shared/corpus when it is there)
//! go through the real `goldgate lint`, and every `goldgate.yaml` fixture through
//! `Config::load`. Whatever the input, goldgate must not panic, must finish in time, must exit
//! 0, 1 or 2 (1 exactly when it reports an error), must report every file it was given, and
//! every problem it prints must start with the name of a file it checked.
//!
//! The mutants are deterministic (`tests/mutants/mod.rs`, a PRNG seeded from [`SEED`], the
//! file's name and the mutant's index), so a failure reproduces on every run. Each is written
//! under its original file name, because discovery and sniffing depend on names, and the
//! mutants are linted in batches, half named on the command line and half found by walking a
//! directory. When a batch breaks a rule, each of its mutants is linted alone to name the one
//! that did, and its bytes are saved under `target/tmp/lint-mutants/`.
//!
//! More mutants for a longer local run: `GOLDGATE_MUTANTS=400 GOLDGATE_MUTANTS_SEED=7 cargo
//! test --release --test it lint_mutants::`.

mod mutants;

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use fastrand::Rng;

use mutants::verdict::{check, clip};
use mutants::{Budget, KINDS, Kind};

const SEED: u64 = 0x601d_6a7e_f022_0012;
/// Mutants of each fixture, and of each corpus file.
const PER_FIXTURE: usize = 42;
const PER_CORPUS_FILE: usize = 14;
/// Mutants of each `goldgate.yaml` fixture.
const PER_CONFIG: usize = 120;
/// Mutants per `goldgate lint` invocation.
const BATCH: usize = 100;
const BATCH_LIMIT: Duration = Duration::from_secs(20);
const FILE_LIMIT: Duration = Duration::from_secs(10);

/// One file the mutants are made from.
struct Seed {
    /// Where it comes from, for messages: `fixtures/gecx/welcome.scenario.yaml`.
    label: String,
    bytes: Vec<u8>,
    /// The directory of a `regtrace.config.yaml` above or beside it, copied with it so that
    /// the config finds its sets.
    group: Option<PathBuf>,
    /// The path of the seed inside `group`.
    in_group: PathBuf,
}

struct Mutant<'s> {
    seed: &'s Seed,
    index: usize,
    kind: Kind,
    /// Named on the command line (sniffed by content), or found by walking a directory.
    named: bool,
    bytes: Vec<u8>,
}

impl Mutant<'_> {
    fn name(&self) -> String {
        format!("{} #{} ({:?})", self.seed.label, self.index, self.kind)
    }
}

fn count(default: usize) -> usize {
    std::env::var("GOLDGATE_MUTANTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn seed_value() -> u64 {
    std::env::var("GOLDGATE_MUTANTS_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(SEED)
}

/// FNV-1a, so that each file's mutants do not depend on which other files exist.
fn hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn is_regtrace_config(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n == "regtrace.config.yaml" || n == "regtrace.config.yml")
}

/// The golden files under `root`: YAML, JSON and CSV, not the `.expected` snapshots, not the
/// `goldgate.yaml` fixtures under `config/`.
fn seeds(root: &Path, prefix: &str) -> Vec<Seed> {
    files_under(root)
        .into_iter()
        .filter(|p| {
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            let rel = p.strip_prefix(root).unwrap();
            matches!(ext, "yaml" | "yml" | "json" | "csv")
                && !rel.starts_with("config")
                && rel != Path::new("manifest.json")
        })
        .map(|path| {
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            // The nearest directory at or above the file that holds a regtrace config.
            let group = path
                .ancestors()
                .skip(1)
                .take_while(|dir| dir.starts_with(root) && *dir != root)
                .find(|dir| dir.join("regtrace.config.yaml").is_file())
                .map(Path::to_path_buf);
            let in_group = match &group {
                Some(dir) => path.strip_prefix(dir).unwrap().to_path_buf(),
                None => PathBuf::from(path.file_name().unwrap()),
            };
            Seed {
                label: format!("{prefix}/{}", rel.display()).replace('\\', "/"),
                bytes: fs::read(&path).unwrap(),
                group,
                in_group,
            }
        })
        .collect()
}

fn make_mutants(seeds: &[Seed], per_seed: usize) -> Vec<Mutant<'_>> {
    let base = seed_value();
    let mut out = Vec::new();
    for (number, seed) in seeds.iter().enumerate() {
        for index in 0..per_seed {
            let (round, kind) = (index / KINDS.len(), KINDS[index % KINDS.len()]);
            // The first round at full size for every other file, heavy for a few (a
            // billion-laughs bomb alone takes a second or two in a debug build), the rest
            // small: megabytes are what make a debug build slow.
            let heavy =
                number.is_multiple_of(16) && (kind != Kind::Aliases || number.is_multiple_of(32));
            let budget = match round {
                0 if heavy => Budget::Heavy,
                0 if number.is_multiple_of(2) => Budget::Full,
                _ => Budget::Small,
            };
            let mut rng = Rng::with_seed(
                base ^ hash(&seed.label) ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            );
            let bytes = mutants::mutate(&seed.bytes, kind, budget, &mut rng);
            out.push(Mutant {
                seed,
                index,
                kind,
                named: (round + number / 2).is_multiple_of(2),
                bytes,
            });
        }
    }
    out
}

fn write(path: &Path, bytes: &[u8]) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, bytes).unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    for file in files_under(from) {
        write(
            &to.join(file.strip_prefix(from).unwrap()),
            &fs::read(&file).unwrap(),
        );
    }
}

/// Where discovery finds a file of this name when walking a directory.
fn discoverable(name: &str) -> PathBuf {
    let named = [
        ".scenario.yaml",
        ".scenario.yml",
        ".golden.yaml",
        ".golden.yml",
        ".golden.csv",
    ]
    .iter()
    .any(|suffix| name.ends_with(suffix))
        || name == "regtrace.config.yaml"
        || name == "regtrace.config.yml";
    if named {
        PathBuf::from(name)
    } else {
        Path::new("goldens").join(name)
    }
}

/// Lays out the mutants under `root`: `named/<n>/...` files to pass on the command line,
/// `walked/<n>/...` to be found under `walked/`. Returns the arguments after `lint` and the
/// file each mutant must be reported as.
fn lay_out(root: &Path, mutants: &[&Mutant<'_>]) -> (Vec<OsString>, Vec<PathBuf>) {
    let mut args: Vec<OsString> = Vec::new();
    let mut expected = Vec::new();
    let walked = root.join("walked");
    for (n, mutant) in mutants.iter().enumerate() {
        let seed = mutant.seed;
        let file_name = seed.in_group.file_name().unwrap().to_str().unwrap();
        let group = seed
            .group
            .as_ref()
            .filter(|_| mutant.named || is_regtrace_config(&seed.in_group));
        let dir = if mutant.named {
            root.join("named").join(n.to_string())
        } else {
            walked.join(n.to_string())
        };
        let file = match group {
            Some(group) => {
                // The mutated file among its unmutated companions, so that the config finds
                // its sets.
                copy_dir(group, &dir);
                dir.join(&seed.in_group)
            }
            None if mutant.named => dir.join(file_name),
            None => dir.join(discoverable(file_name)),
        };
        write(&file, &mutant.bytes);
        if mutant.named {
            if group.is_some() && !is_regtrace_config(&seed.in_group) {
                args.push(dir.join("regtrace.config.yaml").into());
            }
            args.push(file.clone().into());
        }
        expected.push(file);
    }
    if walked.is_dir() {
        args.insert(0, walked.into());
    }
    (args, expected)
}

/// Lints each mutant of a failed batch alone; returns the failures, one per guilty mutant.
fn blame(batch: &[&Mutant<'_>], batch_problems: &[String]) -> Vec<String> {
    let saved = Path::new(env!("CARGO_TARGET_TMPDIR")).join("lint-mutants");
    let mut failures = Vec::new();
    for mutant in batch {
        let dir = tempfile::tempdir().unwrap();
        let (args, expected) = lay_out(dir.path(), &[mutant]);
        let problems = check(&args, &expected, dir.path(), FILE_LIMIT).problems;
        if problems.is_empty() {
            continue;
        }
        let file_name = format!(
            "{}.{}.{:?}",
            mutant.seed.label.replace(['/', '\\', ' '], "_"),
            mutant.index,
            mutant.kind
        );
        write(&saved.join(&file_name), &mutant.bytes);
        let more = problems.len().saturating_sub(3);
        failures.push(format!(
            "{}: {}{}\n  saved as {}",
            mutant.name(),
            problems[..problems.len().min(3)].join("\n  "),
            if more > 0 {
                format!("\n  and {more} more")
            } else {
                String::new()
            },
            saved.join(file_name).display()
        ));
    }
    if failures.is_empty() {
        let names: Vec<String> = batch.iter().map(|m| m.name()).collect();
        failures.push(format!(
            "a batch failed but none of its mutants alone: {}\n  mutants: {}",
            batch_problems.join("\n  "),
            names.join(", ")
        ));
    }
    failures
}

fn lint_mutants_of(seeds: &[Seed], per_seed: usize) -> usize {
    let mutants = make_mutants(seeds, per_seed);
    let all: Vec<&Mutant<'_>> = mutants.iter().collect();
    let mut failures = Vec::new();
    let mut parsed = 0;
    for batch in all.chunks(BATCH) {
        let dir = tempfile::tempdir().unwrap();
        let (args, expected) = lay_out(dir.path(), batch);
        let verdict = check(&args, &expected, dir.path(), BATCH_LIMIT);
        parsed += verdict.parsed;
        if !verdict.problems.is_empty() {
            failures.extend(blame(batch, &verdict.problems));
        }
    }
    eprintln!("{} mutants linted, {parsed} past the parser", mutants.len());
    assert!(
        failures.is_empty(),
        "{} mutant(s) broke goldgate lint:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Mutants the parser refuses exercise only the parser: most must reach a loader.
    assert!(
        parsed * 3 >= mutants.len(),
        "only {parsed} of {} mutants got past the parser",
        mutants.len()
    );
    mutants.len()
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

#[test]
fn lint_survives_mutants_of_every_fixture() {
    let seeds = seeds(&fixtures(), "fixtures");
    assert!(seeds.len() >= 60, "only {} fixtures", seeds.len());
    let linted = lint_mutants_of(&seeds, count(PER_FIXTURE));
    assert!(
        linted >= 2_500 || count(PER_FIXTURE) != PER_FIXTURE,
        "{linted} mutants"
    );
}

/// The shared corpus of real files sits beside the repository on developer machines; CI
/// runs without it, and the fixtures alone keep the test meaningful there.
#[test]
fn lint_survives_mutants_of_the_corpus_when_present() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if !corpus.join("manifest.json").is_file() {
        eprintln!("no ../shared/corpus: only the fixtures are mutated");
        return;
    }
    lint_mutants_of(&seeds(&corpus, "corpus"), count(PER_CORPUS_FILE));
}

/// `Config::load` on one mutant, on a thread so that a hang is a failure rather than a stuck
/// test, and a panic a message rather than an abort.
fn load_config(path: &Path) -> Result<Vec<String>, String> {
    let (tx, rx) = mpsc::channel();
    let owned = path.to_path_buf();
    std::thread::spawn(move || {
        let result = std::panic::catch_unwind(|| goldgate::config::Config::load(&owned));
        let _ = tx.send(result.map(|loaded| match loaded {
            Ok(_) => Vec::new(),
            Err(err) => {
                let mut problems = Vec::new();
                if err.diagnostics.is_empty() {
                    problems.push("an error without diagnostics".to_owned());
                }
                for d in &err.diagnostics {
                    if *d.location.file != *owned || d.location.line < 1 {
                        problems.push(format!("a problem placed at {}: {d}", d.location));
                    }
                }
                let prefix = format!("{}:", owned.display());
                for line in err.to_string().lines() {
                    if !line.starts_with(&prefix) {
                        problems.push(format!(
                            "a line does not start with its file: {}",
                            clip(line)
                        ));
                    }
                }
                problems
            }
        }));
    });
    match rx.recv_timeout(FILE_LIMIT) {
        Ok(Ok(problems)) => Ok(problems),
        Ok(Err(_)) => Err("Config::load panicked".to_owned()),
        Err(_) => Err(format!("Config::load did not finish within {FILE_LIMIT:?}")),
    }
}

#[test]
fn config_loading_survives_mutants_of_every_config_fixture() {
    let dir = fixtures().join("config");
    let companions: Vec<PathBuf> = files_under(&dir)
        .into_iter()
        .filter(|p| p.extension().is_none_or(|e| e != "yaml"))
        .collect();
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let paths: Vec<PathBuf> = files_under(&dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .chain([manifest_dir.join("examples/goldgate.yaml")])
        .collect();
    assert!(paths.len() >= 4, "only {} config fixtures", paths.len());
    let seeds: Vec<Seed> = paths
        .iter()
        .map(|path| {
            // The mutants start from configs that load.
            if let Err(err) = goldgate::config::Config::load(path) {
                panic!("{}: {err}", path.display());
            }
            let label = path.strip_prefix(manifest_dir).unwrap();
            Seed {
                label: label.to_string_lossy().replace('\\', "/"),
                bytes: fs::read(path).unwrap(),
                group: None,
                in_group: PathBuf::from("goldgate.yaml"),
            }
        })
        .collect();
    let root = tempfile::tempdir().unwrap();
    let saved = Path::new(env!("CARGO_TARGET_TMPDIR")).join("config-mutants");
    let mut failures = Vec::new();
    let mutants = make_mutants(&seeds, count(PER_CONFIG));
    for (n, mutant) in mutants.iter().enumerate() {
        let dir = root.path().join(n.to_string());
        for companion in &companions {
            write(
                &dir.join(companion.strip_prefix(fixtures().join("config")).unwrap()),
                &fs::read(companion).unwrap(),
            );
        }
        let path = dir.join("goldgate.yaml");
        write(&path, &mutant.bytes);
        let (problems, fatal) = match load_config(&path) {
            Ok(problems) => (problems, false),
            Err(fatal) => (vec![fatal], true),
        };
        if !problems.is_empty() {
            let saved = saved.join(format!("{n}.goldgate.yaml"));
            write(&saved, &mutant.bytes);
            failures.push(format!(
                "{}: {}\n  saved as {}",
                mutant.name(),
                problems.join("\n  "),
                saved.display()
            ));
        }
        if fatal {
            break; // a hung thread would skew every later timing
        }
    }
    assert!(
        failures.is_empty(),
        "{} config mutant(s) broke Config::load:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
