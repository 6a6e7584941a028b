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
//! test --release --test lint_mutants`.

mod common;
mod mutants;

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use fastrand::Rng;
use serde_json::Value;

use common::Outcome;
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

/// `goldgate lint`, killed if it is still running after `limit`: a guard against a hang, not a
/// measure of speed (benches/load.rs times lint). A killed run has no exit code.
fn lint(args: &[OsString], format: &[&str], limit: Duration) -> Outcome {
    Outcome::of(
        common::command()
            .arg("lint")
            .args(format)
            .args(args)
            .timeout(limit),
    )
}

fn clip(text: &str) -> String {
    const MAX: usize = 1500;
    if text.len() <= MAX {
        return text.to_owned();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &text[..end], text.len())
}

/// The rules every run must keep, whatever the input.
fn process_problems(run: &Outcome, limit: Duration) -> Vec<String> {
    let mut problems = Vec::new();
    if run.code.is_none() {
        problems.push(format!(
            "no exit status: killed by a signal, or hung and killed after {limit:?}"
        ));
    } else if !matches!(run.code, Some(0..=2)) {
        problems.push(format!("exit status {:?}, not 0, 1 or 2", run.code));
    }
    if run.stderr.contains("panicked") || run.stderr.contains("overflow") {
        problems.push(format!("panicked: {}", clip(&run.stderr)));
    }
    problems
}

/// What one batch (or one mutant) showed: the rules it broke, and how many of its mutants got
/// past the YAML or CSV parser into a format's loader (the mutants must not all be noise).
struct Verdict {
    problems: Vec<String>,
    parsed: usize,
}

/// Lints the batch for machines and for people and checks both: they agree, every file given
/// is reported, every file reported is one of ours, and every problem printed names its file.
fn check(args: &[OsString], expected: &[PathBuf], root: &Path, limit: Duration) -> Verdict {
    // The same run for people, at the same time: the two checks below compare them.
    let (json, human) = std::thread::scope(|scope| {
        let human = scope.spawn(|| lint(args, &[], limit));
        (lint(args, &["--json"], limit), human.join().unwrap())
    });
    let mut problems = process_problems(&json, limit);
    problems.extend(process_problems(&human, limit));
    if !problems.is_empty() {
        return Verdict {
            problems,
            parsed: 0,
        };
    }
    let doc: Value = match serde_json::from_str(&json.stdout) {
        Ok(doc) => doc,
        Err(err) => {
            let problem = format!("--json output is not JSON ({err}): {}", clip(&json.stdout));
            return Verdict {
                problems: vec![problem],
                parsed: 0,
            };
        }
    };
    let errors = doc["errors"].as_u64().unwrap_or(u64::MAX);
    let want = if errors > 0 { 1 } else { 0 };
    if json.code != Some(want) {
        problems.push(format!(
            "exit {:?} with {errors} errors; stderr: {}",
            json.code,
            clip(&json.stderr)
        ));
    }
    let root = fs::canonicalize(root).unwrap();
    let mut reported = BTreeSet::new();
    let mut unparsed = BTreeSet::new();
    let mut printed_paths = Vec::new();
    let mut diagnostics = 0;
    for file in doc["files"].as_array().into_iter().flatten() {
        let path = file["path"].as_str().unwrap_or("");
        printed_paths.push(path.to_owned());
        match fs::canonicalize(path) {
            Ok(real) if real.starts_with(&root) => {
                let diagnostics = file["diagnostics"].as_array().into_iter().flatten();
                if diagnostics.into_iter().any(|d| d["code"] == "E001") {
                    unparsed.insert(real.clone());
                }
                reported.insert(real);
            }
            _ => problems.push(format!("reports a file that is not one of ours: {path:?}")),
        }
        for d in file["diagnostics"].as_array().into_iter().flatten() {
            diagnostics += 1;
            let sound = matches!(d["severity"].as_str(), Some("error" | "warning"))
                && d["line"].as_u64().is_some_and(|l| l >= 1)
                && d["code"].as_str().is_some_and(|c| !c.is_empty())
                && d["message"].as_str().is_some_and(|m| !m.is_empty());
            if !sound {
                problems.push(format!(
                    "{path}: malformed diagnostic {}",
                    clip(&d.to_string())
                ));
            }
        }
    }
    let mut parsed = 0;
    for file in expected {
        match fs::canonicalize(file) {
            Ok(real) if reported.contains(&real) => {
                parsed += usize::from(!unparsed.contains(&real))
            }
            _ => problems.push(format!("{} is not in the report", file.display())),
        }
    }
    // For people: one line per problem, each starting `path:line: severity [`.
    if human.code != json.code {
        problems.push(format!(
            "exit {:?} for people, {:?} with --json",
            human.code, json.code
        ));
    }
    let lines: Vec<&str> = human.stdout.lines().collect();
    if lines.len() != diagnostics {
        problems.push(format!(
            "{} lines printed for {diagnostics} problems: {}",
            lines.len(),
            clip(&human.stdout)
        ));
    }
    for line in lines {
        let names_its_file = printed_paths.iter().any(|path| {
            line.strip_prefix(path.as_str())
                .and_then(|rest| rest.strip_prefix(':'))
                .and_then(|rest| rest.split_once(": "))
                .is_some_and(|(number, rest)| {
                    number.parse::<u32>().is_ok()
                        && (rest.starts_with("error [") || rest.starts_with("warning ["))
                })
        });
        if !names_its_file {
            problems.push(format!(
                "a line does not start with its file: {}",
                clip(line)
            ));
        }
    }
    Verdict { problems, parsed }
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
