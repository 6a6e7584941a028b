//! `goldgate convert`: every golden converts to each other format, and back. A -> B -> A gives
//! back A's model (the loaded `Case`s compared modulo file and line positions, and the order of
//! one turn's expectations, which SCRAPI fixes as agent text before tool calls), unless the
//! conversion warned that something had no counterpart. The fixtures, the example suite and,
//! when present, ../shared/corpus are all converted.

use crate::common;
use std::path::{Path, PathBuf};

use goldgate::app::convert;
use goldgate::formats::write::Losses;
use goldgate::model::{Case, Format};

use common::goldgate;

/// The model as text, without positions: `Debug` of every case with each `Location` blanked,
/// and each turn's expectations sorted.
fn shape(cases: &[Case]) -> String {
    let location = regex::Regex::new(r"Location \{[^}]*\}").unwrap();
    let mut out = String::new();
    for case in cases {
        let mut case = case.clone();
        for turn in &mut case.turns {
            turn.expectations
                .sort_by_cached_key(|e| location.replace_all(&format!("{e:?}"), "@").into_owned());
        }
        out.push_str(&location.replace_all(&format!("{case:#?}"), "@"));
        out.push('\n');
    }
    out
}

/// Where a converted document goes in `dir`, named as `name` (a file name of the source).
fn target_path(dir: &Path, to: Format, name: &str) -> PathBuf {
    let stem = name.split('.').next().unwrap_or("golden");
    match to {
        Format::ScrapiGolden => dir.join(format!("{stem}.yaml")),
        Format::CesCsv => dir.join(format!("{stem}.golden.csv")),
        _ => dir.join(format!("{stem}.scenario.yaml")),
    }
}

/// Converts the cases of `files` (in order) to `to` under `dir`, as the command does; the
/// written paths and what was lost.
fn convert_to(cases: &[Case], to: Format, out: &Path) -> (Vec<PathBuf>, Losses) {
    let mut losses = Losses::default();
    let Ok(rendered) = convert::render(cases, to, &mut losses) else {
        // Nothing the target can hold, which the losses say.
        assert!(!losses.items.is_empty());
        return (Vec::new(), losses);
    };
    let documents = convert::place(rendered, out, &[]).unwrap();
    convert::write(&documents).unwrap();
    (documents.into_iter().map(|d| d.path).collect(), losses)
}

/// Loads each path in order: the cases as loaded, and the cases as convert reads them.
fn load_all(paths: &[PathBuf]) -> (Vec<Case>, Vec<Case>) {
    let (mut loaded, mut source) = (Vec::new(), Vec::new());
    for path in paths {
        let suite = convert::load(path).unwrap();
        let problems: Vec<String> = suite
            .files
            .iter()
            .flat_map(|f| &f.diagnostics)
            .filter(|d| d.severity == goldgate::diagnostic::Severity::Error)
            .map(|d| format!("{}: {}", d.location, d.message))
            .collect();
        assert!(
            problems.is_empty(),
            "{} does not load: {problems:?}\n{}",
            path.display(),
            std::fs::read_to_string(path).unwrap_or_default()
        );
        loaded.extend(
            suite
                .files
                .iter()
                .flat_map(|f| f.cases.iter().map(|c| Case::clone(c))),
        );
        source.extend(convert::source_cases(&suite));
    }
    (loaded, source)
}

fn golden_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    let mut roots = vec![root.join("fixtures"), root.join("examples/suite")];
    let corpus = root.join("../shared/corpus");
    if corpus.is_dir() {
        roots.push(corpus);
    }
    for dir in roots {
        for entry in common::files_under(&dir) {
            let name = entry.to_string_lossy();
            let golden = name.ends_with(".yaml")
                || name.ends_with(".yml")
                || name.ends_with(".csv")
                || name.ends_with(".json");
            if golden
                && !name.contains("/bad/")
                && !name.contains("/config/")
                && !name.contains("manifest.json")
            {
                files.push(entry);
            }
        }
    }
    files.sort();
    files
}

/// A golden file that loads cleanly with scripted turns: what a round trip starts from.
struct Source {
    file: PathBuf,
    suite: goldgate::load::Suite,
    from: Format,
    /// The cases as loaded, to compare the round trip with.
    original: Vec<Case>,
    /// The cases as convert reads them.
    cases: Vec<Case>,
}

/// Every golden file that loads without errors and has scripted turns.
fn sources() -> Vec<Source> {
    let mut sources = Vec::new();
    for file in golden_files() {
        let Ok(suite) = convert::load(&file) else {
            continue;
        };
        if suite.error_count() > 0 || suite.case_count() == 0 {
            continue;
        }
        let Some(from) = suite.files.iter().find_map(|f| f.format) else {
            continue;
        };
        let original: Vec<Case> = suite
            .files
            .iter()
            .flat_map(|f| f.cases.iter().map(|c| Case::clone(c)))
            .collect();
        let cases = convert::source_cases(&suite);
        if cases.is_empty() {
            // SCRAPI simulations: no scripted turns for another format to hold.
            continue;
        }
        sources.push(Source {
            file,
            suite,
            from,
            original,
            cases,
        });
    }
    sources
}

/// Converts `source` to `to` under `dir/N-FORMAT`, checking that every loss names a line of
/// the source, and back when its format is a target: whether the model came back unchanged
/// (`None` when it cannot go back). A changed model without a warning fails the test.
fn round_trip(dir: &Path, n: usize, source: &Source, to: Format) -> Option<bool> {
    let Source {
        file,
        suite,
        from,
        original,
        cases,
    } = source;
    let from = *from;
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    let there = dir.join(format!("{n}-{}", to.name()));
    std::fs::create_dir_all(&there).unwrap();
    let out = if to == Format::GecxScenario && cases.len() > 1 {
        there.join("scenarios")
    } else {
        // Another stem than the source's: SCRAPI makes a file's stem a tag of each of its
        // conversations, and convert takes it off again.
        target_path(&there, to, &format!("converted-{name}"))
    };
    let (paths, losses) = convert_to(cases, to, &out);
    for loss in &losses.items {
        assert!(
            suite.files.iter().any(|f| f.path == loss.location.file),
            "{loss}: not a file of {}",
            file.display()
        );
        assert!(loss.location.line > 0, "{loss}");
    }
    let (_, middle) = load_all(&paths);
    if !convert::TARGETS.contains(&from) {
        return None;
    }
    let back = dir.join(format!("{n}-{}-back", to.name()));
    std::fs::create_dir_all(&back).unwrap();
    let (paths, returned) = convert_to(&middle, from, &back.join(&name));
    let (again, _) = load_all(&paths);
    let exact = shape(&again) == shape(original);
    assert!(
        exact || !losses.items.is_empty() || !returned.items.is_empty(),
        "{} -> {to} -> {from} changed the model without a warning\n--- before\n{}--- after\n{}",
        file.display(),
        shape(original),
        shape(&again)
    );
    Some(exact)
}

#[test]
fn every_golden_round_trips_or_says_what_it_lost() {
    let dir = tempfile::tempdir().unwrap();
    let mut exact = Vec::new();
    let mut lossy = 0;
    let mut converted = 0;
    for (n, source) in sources().iter().enumerate() {
        for to in convert::TARGETS {
            if to == source.from {
                continue;
            }
            converted += 1;
            match round_trip(dir.path(), n, source, to) {
                Some(true) => exact.push(format!("{} -> {to}", source.file.display())),
                Some(false) => lossy += 1,
                None => {}
            }
        }
    }
    eprintln!(
        "{converted} conversions; {} exact round trips, {lossy} lossy ones (warned):",
        exact.len()
    );
    for line in &exact {
        eprintln!("  {line}");
    }
    assert!(converted > 20, "only {converted} conversions");
    for expected in [
        "fixtures/convert/everything-ces-has.yaml -> ces-csv",
        "fixtures/convert/everything-scrapi-has.golden.csv -> scrapi",
    ] {
        assert!(
            exact.iter().any(|line| line.ends_with(expected)),
            "{expected} should round-trip exactly; exact: {exact:#?}"
        );
    }
}

#[test]
fn the_command_converts_warns_with_file_and_line_and_never_overwrites_its_input() {
    let dir = tempfile::tempdir().unwrap();
    common::order_golden(dir.path(), &common::order_conversation("shipped"));

    let out = common::convert(
        dir.path(),
        "goldens/orders.yaml",
        "ces-csv",
        "orders.golden.csv",
    );
    out.exits(0)
        .warns(&["goldens/orders.yaml:4: warning: CES has no session parameters"]);
    let csv = std::fs::read_to_string(dir.path().join("orders.golden.csv")).unwrap();
    assert!(
        csv.starts_with("display_name,turn_index,action_type,"),
        "{csv}"
    );
    common::assert_contains(&csv, &["EXPECTATION_TOOL_CALL"]);
    // Expected text that names no agent is any agent's: the generic role, not a made-up name.
    common::assert_contains(&csv, &[",agent,Your order"]);
    goldgate(dir.path(), &["lint", "orders.golden.csv"]).exits(0);

    let before = std::fs::read_to_string(dir.path().join("goldens/orders.yaml")).unwrap();
    let refused = common::convert(
        dir.path(),
        "goldens/orders.yaml",
        "scrapi",
        "goldens/../goldens/orders.yaml",
    );
    refused.exits(2).warns(&["refusing to overwrite"]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("goldens/orders.yaml")).unwrap(),
        before
    );
}

#[test]
fn a_broken_source_exits_2_with_its_file_and_line_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    common::write(
        dir.path(),
        "broken.scenario.yaml",
        "id: x\nwhen:\n  - user: hi\nthen:\n  - scorer: no-such-scorer\n",
    );
    let out = common::convert(dir.path(), "broken.scenario.yaml", "scrapi", "out.yaml");
    out.exits(2)
        .warns(&["broken.scenario.yaml:5:", "nothing was converted"]);
    assert!(!dir.path().join("out.yaml").exists());
}

#[test]
fn several_cases_become_one_scenario_file_each() {
    let dir = tempfile::tempdir().unwrap();
    common::order_golden(
        dir.path(),
        &format!(
            "{}{}",
            common::order_conversation("first"),
            common::order_conversation("second")
        ),
    );
    let into_file = common::convert(
        dir.path(),
        "goldens/orders.yaml",
        "scenario",
        "x.scenario.yaml",
    );
    into_file
        .exits(2)
        .warns(&["must be a directory"])
        // The target is checked first: no warning about the conversion it refuses.
        .never_prints(&["warning"]);

    let out = common::convert(dir.path(), "goldens/orders.yaml", "scenario", "scenarios");
    out.exits(0);
    for id in ["first", "second"] {
        let text =
            std::fs::read_to_string(dir.path().join(format!("scenarios/{id}.scenario.yaml")))
                .unwrap();
        assert!(text.starts_with(&format!("id: {id}\n")), "{text}");
        common::assert_contains(&text, &["tool-called-with-input"]);
    }
    goldgate(dir.path(), &["list", "scenarios"])
        .exits(0)
        .warns(&["2 cases in 2 files"]);
}
