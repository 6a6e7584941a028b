//! The library's modules import each other without circles (ARCHITECTURE.md): each module
//! depends only on modules below it. This reads the `use` lines and paths of `src/` (the
//! library; the binary's `main.rs`, `cli.rs` and `commands/` only call it) and fails with the
//! circle when one appears.
//!
//! A module's references to its own submodules are containment, not dependencies, and are
//! left out; a submodule's references to its parent count. Code after `#[cfg(test)]` is left
//! out: unit tests may reach anywhere. So are comments.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// `src/a/b.rs` and `src/a/b/mod.rs` are `a::b`; the crate root is `""`.
fn module_of(relative: &Path) -> String {
    let mut parts: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts.join("::")
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every path the code names from `crate::` or `super::`, as module paths from the root,
/// groups (`crate::{a::X, b::{c, d}}`) expanded.
fn referenced(code: &str, module: &str) -> Vec<String> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(start) {
            let index = from + at;
            from = index + start.len();
            let boundary = index == 0 || !is_ident(bytes[index - 1]) && bytes[index - 1] != b':';
            if !boundary {
                continue;
            }
            let base = if start == "crate::" {
                Vec::new()
            } else {
                let mut parts: Vec<&str> = module.split("::").filter(|p| !p.is_empty()).collect();
                parts.pop();
                parts.into_iter().map(str::to_owned).collect()
            };
            expand(&code[from..], base, &mut found);
        }
    }
    found
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Reads one path (or group) at the start of `rest`, prefixed by `base`.
fn expand(rest: &str, base: Vec<String>, found: &mut Vec<String>) {
    let mut path = base;
    let mut rest = rest;
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut end = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 {
                    end = i;
                    break;
                }
            }
            let inner = &group[..end];
            let mut depth = 0;
            let mut item_start = 0;
            for (i, c) in inner.char_indices().chain([(inner.len(), ',')]) {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        let item = inner[item_start..i].trim();
                        if !item.is_empty() {
                            expand(item, path.clone(), found);
                        }
                        item_start = i + 1;
                    }
                    _ => {}
                }
            }
            return;
        }
        let len = rest.bytes().take_while(|&b| is_ident(b)).count();
        if len == 0 {
            break;
        }
        let segment = &rest[..len];
        if segment != "self" {
            path.push(segment.to_owned());
        }
        rest = &rest[len..];
        match rest.strip_prefix("::") {
            Some(next) => rest = next,
            None => break,
        }
    }
    found.push(path.join("::"));
}

/// The longest module among `modules` that `path` starts with.
fn resolve<'a>(path: &str, modules: &'a BTreeSet<String>) -> Option<&'a String> {
    let parts: Vec<&str> = path.split("::").collect();
    (1..=parts.len())
        .rev()
        .find_map(|n| modules.get(&parts[..n].join("::")))
}

fn is_within(module: &str, ancestor: &str) -> bool {
    module
        .strip_prefix(ancestor)
        .is_some_and(|rest| rest.starts_with("::"))
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    files(&src, &mut paths);
    let binary = ["main.rs", "cli.rs", "commands"];
    let sources: Vec<(String, String)> = paths
        .iter()
        .filter_map(|path| {
            let relative = path.strip_prefix(&src).unwrap();
            let first = relative.components().next()?.as_os_str().to_str()?;
            if binary.contains(&first) {
                return None;
            }
            let code = fs::read_to_string(path).unwrap();
            let code = code.split("#[cfg(test)]").next().unwrap_or_default();
            // Comments name modules in links and prose; only code depends on them.
            let code: String = code
                .lines()
                .map(|line| line.split("//").next().unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n");
            Some((module_of(relative), code))
        })
        .collect();
    let modules: BTreeSet<String> = sources.iter().map(|(m, _)| m.clone()).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, code) in &sources {
        let targets = edges.entry(module.clone()).or_default();
        for path in referenced(code, module) {
            if let Some(target) = resolve(&path, &modules)
                && target != module
                && !is_within(target, module)
                && !target.is_empty()
            {
                targets.insert(target.clone());
            }
        }
    }
    edges
}

/// A circle through `start`, if there is one.
fn circle(
    edges: &BTreeMap<String, BTreeSet<String>>,
    start: &str,
    path: &mut Vec<String>,
    seen: &mut BTreeSet<String>,
) -> Option<Vec<String>> {
    let current = path.last().cloned().unwrap_or_else(|| start.to_owned());
    for next in edges.get(&current).into_iter().flatten() {
        if next == start {
            let mut found = path.clone();
            found.push(start.to_owned());
            return Some(found);
        }
        if seen.insert(next.clone()) {
            path.push(next.clone());
            if let Some(found) = circle(edges, start, path, seen) {
                return Some(found);
            }
            path.pop();
        }
    }
    None
}

#[test]
fn no_module_imports_a_module_that_imports_it_back() {
    let edges = graph();
    assert!(edges.len() > 40, "read too few modules: {edges:?}");
    let circles: Vec<String> = edges
        .keys()
        .filter_map(|start| {
            let mut path = vec![start.clone()];
            circle(&edges, start, &mut path, &mut BTreeSet::new()).map(|c| c.join(" -> "))
        })
        .collect();
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_reader_finds_grouped_and_relative_paths() {
    let found = referenced(
        "use crate::{agent::{self, Reply}, model::Case};\nuse super::x::Y;\nlet a = crate::run::go();",
        "llm::client",
    );
    assert_eq!(
        found,
        [
            "agent",
            "agent::Reply",
            "model::Case",
            "run::go",
            "llm::x::Y"
        ]
    );
}
