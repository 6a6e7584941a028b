//! The layer table of ARCHITECTURE.md ("Layers"), enforced: every file of `src/` belongs to a
//! top-level module, each module sits in one layer, and code may name only its own layer or
//! the layers below it, with no circle inside a layer. The binary (`main.rs`, `cli.rs`,
//! `commands/`) is the top layer.
//!
//! The reader blanks strings and comments first (a path in a string or a doc link is not a
//! dependency) and drops each `#[cfg(test)]` item by its braces, so code after a test module
//! is read too. `LAYERS` is the table; a test checks that the document says the same.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// ARCHITECTURE.md's layers, top first. `binary` stands for `main.rs`, `cli.rs` (and `cli/`),
/// `commands/`.
const LAYERS: &[&[&str]] = &[
    &["binary"],
    &["app", "schema"],
    &["github"],
    &["report"],
    &["run", "metrics", "gate", "merge", "simulate"],
    &["agent"],
    &["llm"],
    &["score"],
    &["limit"],
    &["net"],
    &["discover", "formats", "load", "project"],
    &["config"],
    &["results"],
    &["stats", "shard", "diagnostic", "yaml"],
    &["model", "transcript", "atomic", "exit", "secrets"],
];

const BINARY: [&str; 4] = ["main.rs", "cli.rs", "cli", "commands"];

/// Height of `module` in the table (0 is the bottom).
fn height(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .rev()
        .position(|layer| layer.contains(&module))
}

/// The top-level module a file of `src/` belongs to (`None` for the crate root).
fn top_level(relative: &Path) -> Option<String> {
    let first = relative.components().next()?.as_os_str().to_str()?;
    if BINARY.contains(&first) {
        return Some("binary".to_owned());
    }
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib").then(|| name.to_owned())
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

/// Every file of `src/`, as its path under `src/` and its text.
fn sources() -> Vec<(PathBuf, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
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

/// `code` with comments removed and the insides of string and character literals blanked,
/// line breaks kept.
fn blank(code: &str) -> String {
    let chars: Vec<char> = code.chars().collect();
    let mut out = String::with_capacity(code.len());
    let mut i = 0;
    while i < chars.len() {
        let rest = &chars[i..];
        let raw_hashes = raw_string_start(rest);
        if rest.starts_with(&['/', '/']) {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if rest.starts_with(&['/', '*']) {
            let end = find(&chars, i + 2, &['*', '/']).map_or(chars.len(), |at| at + 2);
            out.extend(chars[i..end].iter().filter(|&&c| c == '\n'));
            i = end;
        } else if let Some((prefix, hashes)) = raw_hashes {
            let mut close = vec!['"'];
            close.extend(std::iter::repeat_n('#', hashes));
            let start = i + prefix;
            let end = find(&chars, start, &close).map_or(chars.len(), |at| at + close.len());
            out.push('"');
            out.extend(
                chars[start..end]
                    .iter()
                    .map(|&c| if c == '\n' { c } else { ' ' }),
            );
            i = end;
        } else if chars[i] == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                let step = if chars[i] == '\\' { 2 } else { 1 };
                out.extend(
                    chars[i..(i + step).min(chars.len())]
                        .iter()
                        .map(|&c| if c == '\n' { c } else { ' ' }),
                );
                i += step;
            }
            out.push('"');
            i += 1;
        } else if chars[i] == '\'' {
            // A character literal ('x', '\n', '{'); otherwise a lifetime ('a).
            let end = match rest.get(1) {
                Some('\\') => find(&chars, i + 2, &['\'']).map(|at| at + 1),
                Some(_) if rest.get(2) == Some(&'\'') => Some(i + 3),
                _ => None,
            };
            out.push('\'');
            match end {
                Some(end) => {
                    out.push_str(&" ".repeat(end - i - 1));
                    i = end;
                }
                None => i += 1,
            }
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// `r"`, `r#"`, `br##"` ...: how many characters open it, and its number of `#`.
fn raw_string_start(rest: &[char]) -> Option<(usize, usize)> {
    let after_b = usize::from(rest.first() == Some(&'b'));
    if rest.get(after_b) != Some(&'r') {
        return None;
    }
    let hashes = rest[after_b + 1..]
        .iter()
        .take_while(|&&c| c == '#')
        .count();
    (rest.get(after_b + 1 + hashes) == Some(&'"')).then_some((after_b + 2 + hashes, hashes))
}

fn find(chars: &[char], from: usize, needle: &[char]) -> Option<usize> {
    (from..chars.len()).find(|&at| chars[at..].starts_with(needle))
}

/// `code` (blanked) without its `#[cfg(test)]` items: each attribute, and the item after it
/// up to its `;` or the brace that closes it.
fn without_tests(code: &str) -> String {
    const ATTRIBUTE: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find(ATTRIBUTE) {
        out.push_str(&rest[..at]);
        let item = &rest[at + ATTRIBUTE.len()..];
        let end = match (item.find('{'), item.find(';')) {
            (Some(open), Some(semi)) if semi < open => semi + 1,
            (Some(open), _) => closing_brace(item, open).map_or(item.len(), |close| close + 1),
            (None, Some(semi)) => semi + 1,
            (None, None) => item.len(),
        };
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

fn closing_brace(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (at, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + at);
                }
            }
            _ => {}
        }
    }
    None
}

/// The top-level modules of the library `code` names: through `crate::` in the library,
/// through `goldgate::` in the binary (whose `crate::` is the binary itself).
fn named_modules(code: &str, in_binary: bool) -> BTreeSet<String> {
    let root = if in_binary { "goldgate::" } else { "crate::" };
    let bytes = code.as_bytes();
    let mut found = BTreeSet::new();
    let mut from = 0;
    while let Some(at) = code[from..].find(root) {
        let index = from + at;
        from = index + root.len();
        let boundary = index == 0
            || !(bytes[index - 1].is_ascii_alphanumeric()
                || bytes[index - 1] == b'_'
                || bytes[index - 1] == b':');
        if !boundary {
            continue;
        }
        let rest = &code[from..];
        if rest.starts_with('{') {
            // `crate::{a::X, b::{c, d}}`: the first segment of each item of the group.
            let end = closing_brace(rest, 0).unwrap_or(rest.len());
            found.extend(items(&rest[1..end]).map(first_segment));
        } else {
            found.insert(first_segment(rest));
        }
    }
    found.retain(|m| !m.is_empty() && m != "self");
    found
}

/// The items of a `use` group, split at its top-level commas.
fn items(group: &str) -> impl Iterator<Item = &str> {
    let mut depth = 0;
    let mut start = 0;
    let mut cuts = Vec::new();
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                cuts.push(&group[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    cuts.push(&group[start..]);
    cuts.into_iter().map(str::trim)
}

fn first_segment(path: &str) -> String {
    path.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// Edges between top-level modules, each with a file that makes it.
type Edges = BTreeMap<(String, String), PathBuf>;

fn edges(sources: &[(PathBuf, String)]) -> Result<Edges, Vec<String>> {
    let mut edges = Edges::new();
    let mut problems = Vec::new();
    for (path, text) in sources {
        let Some(from) = top_level(path) else {
            continue;
        };
        if height(&from).is_none() {
            problems.push(format!(
                "src/{} is in module `{from}`, which ARCHITECTURE.md's layer table does not place",
                path.display()
            ));
            continue;
        }
        let code = without_tests(&blank(text));
        for to in named_modules(&code, from == "binary") {
            if to != from {
                edges
                    .entry((from.clone(), to))
                    .or_insert_with(|| path.clone());
            }
        }
    }
    if problems.is_empty() {
        Ok(edges)
    } else {
        Err(problems)
    }
}

/// Every upward edge and every circle, worded for the person who made it.
fn problems(sources: &[(PathBuf, String)]) -> Vec<String> {
    let edges = match edges(sources) {
        Ok(edges) => edges,
        Err(problems) => return problems,
    };
    let mut problems = Vec::new();
    for ((from, to), path) in &edges {
        match (height(from), height(to)) {
            (_, None) => problems.push(format!(
                "src/{} names `{to}`, which is not a module of the library's layer table",
                path.display()
            )),
            (Some(low), Some(high)) if high > low => problems.push(format!(
                "src/{} ({from}) imports {to}, a layer above it",
                path.display()
            )),
            _ => {}
        }
    }
    problems.extend(circles(&edges));
    problems
}

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
    let sources = sources();
    let edges = edges(&sources).unwrap_or_else(|problems| panic!("{problems:#?}"));
    assert!(edges.len() > 60, "read too few imports: {edges:?}");
    let problems = problems(&sources);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
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
        .map(|layer| layer.iter().map(|m| (*m).to_owned()).collect())
        .collect();
    assert_eq!(drawn, expected);
}

/// The real sources with `line` added at the end of `file`.
fn planted(file: &str, line: &str) -> Vec<String> {
    let mut sources = sources();
    let (_, text) = sources
        .iter_mut()
        .find(|(path, _)| path == Path::new(file))
        .unwrap_or_else(|| panic!("no src/{file}"));
    text.push_str(line);
    problems(&sources)
}

#[test]
fn each_planted_violation_fails_the_check() {
    for (file, line, expected) in [
        (
            "results/mod.rs",
            "\nuse crate::config::Config;\n",
            "src/results/mod.rs (results) imports config, a layer above it",
        ),
        (
            "model.rs",
            "\nfn f() -> crate::run::RunOptions { todo!() }\n",
            "src/model.rs (model) imports run, a layer above it",
        ),
        (
            "llm/mod.rs",
            "\nuse crate::agent::Agent;\n",
            "src/llm/mod.rs (llm) imports agent, a layer above it",
        ),
        (
            "stats/mod.rs",
            "\n#[cfg(test)]\nmod more { use crate::config::X; }\nuse crate::report::Y;\n",
            "src/stats/mod.rs (stats) imports report, a layer above it",
        ),
        (
            "app/mod.rs",
            "\nuse crate::commands::run;\n",
            "names `commands`, which is not a module of the library's layer table",
        ),
        (
            "main.rs",
            "\nuse goldgate::nowhere::X;\n",
            "src/main.rs names `nowhere`",
        ),
    ] {
        let problems = planted(file, line);
        assert!(
            problems.iter().any(|p| p.contains(expected)),
            "planting {line:?} in {file}: expected {expected:?} in {problems:#?}"
        );
    }
}

#[test]
fn a_circle_inside_a_layer_fails_the_check() {
    let mut sources = sources();
    for (file, line) in [
        ("gate.rs", "\nuse crate::merge::X;\n"),
        ("merge.rs", "\nuse crate::gate::Y;\n"),
    ] {
        let (_, text) = sources
            .iter_mut()
            .find(|(p, _)| p == Path::new(file))
            .unwrap();
        text.push_str(line);
    }
    let problems = problems(&sources);
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
    let found = named_modules(&without_tests(&blank(code)), false);
    assert_eq!(found, BTreeSet::from(["a", "e", "f"].map(String::from)));
}
