//! The layer table of ARCHITECTURE.md ("Layers"), enforced in both crates. Cargo keeps
//! goldgate-core (crates/goldgate-core) below goldgate: it does not depend on goldgate, which
//! a test here checks. Inside each crate every file of `src/` belongs to a top-level module,
//! each module sits in one layer, and code may name only its own layer or the layers below it,
//! with no circle inside a layer, whatever the path syntax (see `scan`). The binary
//! (`main.rs`, `cli.rs`, `commands/`) is goldgate's top layer; goldgate-core's modules,
//! re-exported by goldgate at their old paths, are its bottom one.
//!
//! `LAYERS` and `CORE_LAYERS` are the table; a test checks that the document says the same.

mod scan;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use scan::{Place, code_of, named_modules, uses_macro_use};

/// ARCHITECTURE.md's layers of goldgate, top first. `binary` stands for `main.rs`,
/// `allocator.rs`, `cli.rs` (and `cli/`), `commands/`.
const LAYERS: &[&[&str]] = &[
    &["binary"],
    &["app", "schema"],
    &["github"],
    &["report"],
    &["run", "gate", "merge", "simulate"],
    &["agent"],
    &["llm"],
    &["score"],
    &["limit"],
    &["net"],
    &["discover", "formats", "load", "project"],
    &["config"],
];

/// ARCHITECTURE.md's layers of goldgate-core, top first: below all of goldgate's.
const CORE_LAYERS: &[&[&str]] = &[
    &["metrics"],
    &["results"],
    &["stats", "shard", "diagnostic", "yaml"],
    &["model", "transcript", "atomic", "exit", "secrets"],
];

const BINARY: [&str; 5] = ["main.rs", "allocator.rs", "cli.rs", "cli", "commands"];

/// One crate: where its sources are, the layers its files may name (top first), whether it
/// has goldgate's binary.
struct Crate {
    src: &'static str,
    layers: Vec<Vec<&'static str>>,
    binary: bool,
}

impl Crate {
    /// goldgate: its own layers, then goldgate-core's modules (re-exported at the crate root)
    /// as one layer at the bottom, with the crate itself.
    fn goldgate() -> Crate {
        let mut layers: Vec<Vec<&str>> = LAYERS.iter().map(|l| l.to_vec()).collect();
        let mut core: Vec<&str> = CORE_LAYERS.concat();
        core.push("goldgate_core");
        layers.push(core);
        Crate {
            src: "src",
            layers,
            binary: true,
        }
    }

    fn core() -> Crate {
        Crate {
            src: "crates/goldgate-core/src",
            layers: CORE_LAYERS.iter().map(|l| l.to_vec()).collect(),
            binary: false,
        }
    }

    /// Height of `module` in the table (0 is the bottom).
    fn height(&self, module: &str) -> Option<usize> {
        self.layers
            .iter()
            .rev()
            .position(|layer| layer.contains(&module))
    }

    /// The top-level module a file of `src/` belongs to (`None` for the crate root).
    fn top_level(&self, relative: &Path) -> Option<String> {
        let first = relative.components().next()?.as_os_str().to_str()?;
        if self.binary && BINARY.contains(&first) {
            return Some("binary".to_owned());
        }
        let name = first.strip_suffix(".rs").unwrap_or(first);
        (name != "lib").then(|| name.to_owned())
    }

    /// Every file of `src/`, as its path under `src/` and its text.
    fn sources(&self) -> Vec<(PathBuf, String)> {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(self.src);
        let mut paths = Vec::new();
        rust_files(&src, &mut paths);
        paths.sort();
        paths
            .into_iter()
            .map(|path| {
                let text = fs::read_to_string(&path).unwrap();
                (path.strip_prefix(&src).unwrap().to_path_buf(), text)
            })
            .collect()
    }

    /// Edges between top-level modules, and the files that cannot be read into them (a module
    /// the table does not place, `#[macro_use]`).
    fn edges(&self, sources: &[(PathBuf, String)]) -> (Edges, Vec<String>) {
        let mut edges = Edges::new();
        let mut problems = Vec::new();
        for (path, text) in sources {
            let code = code_of(text);
            let shown = format!("{}/{}", self.src, path.display());
            if uses_macro_use(&code) {
                problems.push(format!(
                    "{shown} uses #[macro_use], whose macros are named without a path: name them by path"
                ));
            }
            let Some(from) = self.top_level(path) else {
                continue;
            };
            if self.height(&from).is_none() {
                problems.push(format!(
                    "{shown} is in module `{from}`, which ARCHITECTURE.md's layer table does not place"
                ));
                continue;
            }
            let relative = path.to_string_lossy().replace('\\', "/");
            let place = Place::of(&relative, from == "binary");
            for to in named_modules(&code, &place) {
                if to != from {
                    edges.entry((from.clone(), to)).or_insert(shown.clone());
                }
            }
        }
        (edges, problems)
    }

    /// Every upward edge and every circle, worded for the person who made it.
    fn problems(&self, sources: &[(PathBuf, String)]) -> Vec<String> {
        let (edges, mut problems) = self.edges(sources);
        for ((from, to), shown) in &edges {
            match (self.height(from), self.height(to)) {
                (_, None) => problems.push(format!(
                    "{shown} names `{to}`, which is not a module of the crate's layer table"
                )),
                (Some(low), Some(high)) if high > low => {
                    problems.push(format!("{shown} ({from}) imports {to}, a layer above it"))
                }
                _ => {}
            }
        }
        problems.extend(circles(&edges));
        problems
    }

    /// The problems of the real sources with `line` added at the end of `file`.
    fn planted(&self, plants: &[(&str, &str)]) -> Vec<String> {
        let mut sources = self.sources();
        for (file, line) in plants {
            let (_, text) = sources
                .iter_mut()
                .find(|(path, _)| path == Path::new(file))
                .unwrap_or_else(|| panic!("no {}/{file}", self.src));
            text.push_str(line);
        }
        self.problems(&sources)
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Edges between top-level modules, each with the file (as shown) that makes it.
type Edges = BTreeMap<(String, String), String>;

/// Circles among modules of one layer (edges between layers only go down).
fn circles(edges: &Edges) -> Vec<String> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().push(to);
    }
    let mut found = Vec::new();
    for &start in next.keys() {
        let mut stack = vec![(start, vec![start])];
        let mut seen = BTreeSet::new();
        while let Some((at, path)) = stack.pop() {
            for &to in next.get(at).into_iter().flatten() {
                if to == start {
                    found.push(format!("import circle: {} -> {start}", path.join(" -> ")));
                } else if seen.insert(to) {
                    let mut longer = path.clone();
                    longer.push(to);
                    stack.push((to, longer));
                }
            }
        }
    }
    found
}

#[test]
fn every_import_goes_down_the_layer_table_without_circles() {
    for (krate, least) in [(Crate::goldgate(), 60), (Crate::core(), 10)] {
        let sources = krate.sources();
        let (edges, _) = krate.edges(&sources);
        assert!(edges.len() > least, "read too few imports: {edges:?}");
        let problems = krate.problems(&sources);
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
}

#[test]
fn architecture_md_draws_the_same_layers() {
    let doc =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md")).unwrap();
    let table = doc
        .split("## Layers")
        .nth(1)
        .and_then(|section| section.split("```").nth(1))
        .expect("ARCHITECTURE.md has a fenced layer table under ## Layers");
    // A layer's modules start at the left margin, before two spaces and the prose, and may
    // go on at the margin of the next line when the line ends with a comma.
    let mut drawn: Vec<Vec<String>> = Vec::new();
    let mut continues = false;
    for line in table.lines() {
        if !line.starts_with(|c: char| c.is_ascii_lowercase()) {
            continue;
        }
        let names = line.split("  ").next().unwrap_or_default().trim();
        let modules = names
            .split(',')
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .map(|m| m.strip_suffix(".rs").unwrap_or(m).to_owned());
        if continues {
            drawn.last_mut().unwrap().extend(modules);
        } else {
            drawn.push(modules.collect());
        }
        continues = names.ends_with(',');
    }
    let expected: Vec<Vec<String>> = LAYERS
        .iter()
        .chain(CORE_LAYERS)
        .map(|layer| layer.iter().map(|m| (*m).to_owned()).collect())
        .collect();
    assert_eq!(drawn, expected);
}

#[test]
fn each_planted_violation_fails_the_check() {
    for (krate, file, line, expected) in [
        (
            Crate::core(),
            "results/mod.rs",
            "\nuse crate::metrics::X;\n",
            "crates/goldgate-core/src/results/mod.rs (results) imports metrics, a layer above it",
        ),
        (
            Crate::core(),
            "model.rs",
            "\nfn f() -> crate::run::RunOptions { loop {} }\n",
            "crates/goldgate-core/src/model.rs names `run`, which is not a module of the crate's",
        ),
        (
            Crate::goldgate(),
            "llm/mod.rs",
            "\nuse crate::agent::Agent;\n",
            "src/llm/mod.rs (llm) imports agent, a layer above it",
        ),
        (
            Crate::goldgate(),
            "config.rs",
            "\n#[cfg(test)]\nmod more { use crate::gate::X; }\nuse crate::report::Y;\n",
            "src/config.rs (config) imports report, a layer above it",
        ),
        (
            Crate::goldgate(),
            "app/mod.rs",
            "\nuse crate::commands::run;\n",
            "names `commands`, which is not a module of the crate's layer table",
        ),
        (
            Crate::goldgate(),
            "main.rs",
            "\nuse goldgate::nowhere::X;\n",
            "src/main.rs names `nowhere`",
        ),
    ] {
        let problems = krate.planted(&[(file, line)]);
        assert!(
            problems.iter().any(|p| p.contains(expected)),
            "planting {line:?} in {file}: expected {expected:?} in {problems:#?}"
        );
    }
}

/// Five upward imports at once, each in another path syntax, in five files: each is caught,
/// and nothing else is but the circles they close.
#[test]
fn upward_imports_in_every_path_syntax_are_caught() {
    let plants = [
        (
            "net/body.rs",
            "\nfn f() -> super::super::agent::Agent { loop {} }\n",
        ),
        (
            "limit.rs",
            "\nuse crate as c;\nfn f(_: c::run::RunOptions) {}\n",
        ),
        ("discover.rs", "\nuse super::app::Plan;\n"),
        ("score/mod.rs", "\nfn f(_: ::goldgate::gate::Gate) {}\n"),
        ("llm/mod.rs", "\n#[macro_use]\nmod upper;\n"),
    ];
    let problems = Crate::goldgate().planted(&plants);
    let expected = [
        "src/net/body.rs (net) imports agent, a layer above it",
        "src/limit.rs (limit) imports run, a layer above it",
        "src/discover.rs (discover) imports app, a layer above it",
        "src/score/mod.rs (score) imports gate, a layer above it",
        "src/llm/mod.rs uses #[macro_use]",
    ];
    for expected in expected {
        assert!(
            problems.iter().any(|p| p.starts_with(expected)),
            "expected {expected:?} in {problems:#?}"
        );
    }
    let upward = problems
        .iter()
        .filter(|p| !p.starts_with("import circle: "))
        .count();
    assert_eq!(upward, expected.len(), "{problems:#?}");
}

#[test]
fn a_circle_inside_a_layer_fails_the_check() {
    let problems = Crate::goldgate().planted(&[
        ("gate.rs", "\nuse crate::merge::X;\n"),
        ("merge.rs", "\nuse crate::gate::Y;\n"),
    ]);
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("import circle: ") && p.contains("gate") && p.contains("merge")),
        "{problems:#?}"
    );
}

#[test]
fn tests_strings_and_comments_are_not_imports() {
    let code = "use crate::a::X;\n// crate::b\nlet s = \"crate::c {\";\nlet c = '{';\n\
        #[cfg(test)]\nmod tests { fn f<'a>() { let _ = \"}\"; use crate::d; } }\nuse crate::{e::Y, f::{g, h}};\n\
        let r = r#\"crate::i\"#;\n";
    let found = named_modules(&code_of(code), &Place::of("gate/latency.rs", false));
    assert_eq!(found, BTreeSet::from(["a", "e", "f"].map(String::from)));
}

#[test]
fn paths_inside_a_module_and_aliases_of_the_root_name_what_they_reach() {
    let read = |code: &str| named_modules(&code_of(code), &Place::of("gate/latency.rs", false));
    let names = |modules: &[&str]| modules.iter().map(|m| (*m).to_owned()).collect();
    // `super::` stays in the module; `super::super::` reaches the crate root from here.
    assert_eq!(read("use super::baseline::X;"), names(&[]));
    assert_eq!(
        read("use super::super::{run::A, agent};"),
        names(&["agent", "run"])
    );
    // An inline module is one step deeper.
    assert_eq!(
        read("mod inner { use super::super::super::llm::X; }"),
        names(&["llm"])
    );
    assert_eq!(
        read("use crate::{self as root}; fn f(_: root::net::X, _: other::crate_x::Y) {}"),
        names(&["net"])
    );
    assert_eq!(
        read("extern crate self as me; fn f(_: me::config::X, _: $crate::load::Y) {}"),
        names(&["config", "load"])
    );
    // From a top-level file, `super::` is the crate root.
    let top = named_modules(
        &code_of("use super::gate::Gate;"),
        &Place::of("limit.rs", false),
    );
    assert_eq!(top, names(&["gate"]));
}

/// Cargo keeps goldgate-core below goldgate only as long as it does not depend on goldgate:
/// without that dependency an upward `use` in it does not compile.
#[test]
fn the_core_crate_does_not_depend_on_goldgate() {
    let manifest = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/goldgate-core/Cargo.toml"),
    )
    .unwrap();
    let mut section = "";
    let mut dependencies = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
        } else if section.contains("dependencies") && !line.is_empty() && !line.starts_with('#') {
            dependencies.push(line);
        }
    }
    assert!(
        dependencies.iter().any(|d| d.starts_with("serde ")),
        "read no dependencies: {manifest}"
    );
    for line in dependencies {
        let name = line.split(['=', '.', ' ']).next().unwrap_or_default();
        assert!(
            name != "goldgate" && !line.replace(' ', "").contains("package=\"goldgate\""),
            "goldgate-core depends on goldgate: {line}"
        );
    }
}
