//! The README, CHANGELOG and `docs/` as a reader uses them: every relative link (and its
//! `#anchor`) resolves, and every snippet is checked by what reads it. `goldgate.yaml`
//! snippets pass `goldgate lint --config`, golden snippets `goldgate lint`, workflows
//! actionlint (an ignored test: it needs actionlint), JSON parses, and every `goldgate`,
//! `cargo` and `.ci/run` command line names flags, tests and benches that exist. The
//! quick start's test command is the one `.ci/run` runs, and the tests `.ci/run` runs by name
//! are exactly the ones ignored for a missing tool.

use crate::common;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md, CHANGELOG.md and every page under docs/, from the crate root.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md"), PathBuf::from("CHANGELOG.md")];
    let mut docs: Vec<PathBuf> = fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .map(|path| path.strip_prefix(root()).unwrap().to_owned())
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

fn read(page: &Path) -> String {
    fs::read_to_string(root().join(page)).unwrap_or_else(|e| panic!("{}: {e}", page.display()))
}

/// A fenced code block: its page, first line, info string and text.
#[derive(Debug)]
struct Snippet {
    page: PathBuf,
    line: usize,
    lang: String,
    text: String,
}

impl Snippet {
    fn place(&self) -> String {
        format!("{}:{}", self.page.display(), self.line)
    }
}

fn snippets_of(page: &Path) -> Vec<Snippet> {
    let mut found = Vec::new();
    let mut current: Option<Snippet> = None;
    for (index, line) in read(page).lines().enumerate() {
        match &mut current {
            None => {
                if let Some(lang) = line.strip_prefix("```") {
                    current = Some(Snippet {
                        page: page.to_owned(),
                        line: index + 1,
                        lang: lang.trim().to_owned(),
                        text: String::new(),
                    });
                }
            }
            Some(_) if line.trim_end() == "```" => found.extend(current.take()),
            Some(snippet) => {
                snippet.text.push_str(line);
                snippet.text.push('\n');
            }
        }
    }
    assert!(
        current.is_none(),
        "{}: a code block is never closed",
        page.display()
    );
    found
}

fn snippets() -> Vec<Snippet> {
    pages().iter().flat_map(|page| snippets_of(page)).collect()
}

/// What a YAML snippet is, and so what checks it.
#[derive(Debug, PartialEq)]
enum Yaml {
    /// A GitHub workflow, whole (`jobs:`) or as a list of steps.
    Workflow,
    /// A `goldgate.yaml`, whole or in part.
    Config,
    /// A golden file: SCRAPI conversations, simulations, turn evals or tool tests.
    Golden,
    /// A GitLab CI job.
    GitLab,
}

const CONFIG_KEYS: [&str; 11] = [
    "affects",
    "affects_nothing",
    "agent",
    "prices",
    "judge",
    "simulator",
    "run",
    "thresholds",
    "quarantine",
    "floors",
    "lint",
];

fn kind(snippet: &Snippet) -> Yaml {
    let value: Value = serde_saphyr::from_str(&snippet.text)
        .unwrap_or_else(|e| panic!("{}: does not parse: {e}", snippet.place()));
    if let Some(steps) = value.as_array() {
        assert!(
            steps
                .iter()
                .all(|step| step.get("uses").is_some() || step.get("run").is_some()),
            "{}: a list that is not workflow steps",
            snippet.place()
        );
        return Yaml::Workflow;
    }
    let map = value
        .as_object()
        .unwrap_or_else(|| panic!("{}: neither a mapping nor steps", snippet.place()));
    if map.contains_key("jobs") {
        Yaml::Workflow
    } else if map.keys().all(|key| CONFIG_KEYS.contains(&key.as_str())) {
        Yaml::Config
    } else if ["conversations", "evals", "tests"]
        .iter()
        .any(|key| map.contains_key(*key))
    {
        Yaml::Golden
    } else if map.values().all(|job| job.get("script").is_some()) {
        Yaml::GitLab
    } else {
        panic!(
            "{}: a YAML snippet no test knows how to check: teach tests/docs.rs",
            snippet.place()
        )
    }
}

/// The YAML snippets of kind `wanted`, of which the docs show at least `at_least`: fewer means
/// the docs lost some, or the kinds were told apart wrongly.
#[track_caller]
fn yaml_snippets(wanted: Yaml, at_least: usize) -> Vec<Snippet> {
    let found: Vec<Snippet> = snippets()
        .into_iter()
        .filter(|s| s.lang == "yaml" && kind(s) == wanted)
        .collect();
    assert!(found.len() >= at_least, "{found:#?}");
    found
}

#[test]
fn every_snippet_is_of_a_kind_a_test_checks() {
    let all = snippets();
    let mut kinds = BTreeSet::new();
    for snippet in &all {
        match snippet.lang.as_str() {
            "yaml" => {
                kinds.insert(format!("{:?}", kind(snippet)));
            }
            "sh" | "json" => {}
            // Terminal output, shown as the binary prints it; a Jenkinsfile, which needs Jenkins.
            "" | "groovy" => {}
            other => panic!("{}: a ```{other} snippet no test checks", snippet.place()),
        }
    }
    assert_eq!(
        kinds,
        BTreeSet::from(["Config", "GitLab", "Golden", "Workflow"].map(str::to_owned))
    );
}

/// Files a config snippet names, so that it loads as written.
fn stub_files(dir: &Path) {
    common::write(dir, "prompt.md", "You are a support agent.\n");
    common::write(dir, "tools.json", "[]\n");
    fs::create_dir_all(dir.join("transcripts")).unwrap();
    common::write(
        dir,
        "goldens/billing.yaml",
        "conversations:\n  - conversation: refund_over_limit\n    turns:\n      - user: Refund me\n        agent: Done\n",
    );
}

/// `goldgate lint ARGS` in a fresh project that `prepare` fills, with `snippet` written as
/// `file`, which must pass; the test fails naming `snippet`'s place and showing it with what
/// lint said.
#[track_caller]
fn lint_passes(
    snippet: &Snippet,
    prepare: fn(&Path),
    file: &str,
    args: &[&str],
) -> common::Outcome {
    let dir = tempfile::tempdir().unwrap();
    prepare(dir.path());
    common::write(dir.path(), file, &snippet.text);
    let lint = common::goldgate(dir.path(), &[&["lint"], args].concat());
    assert_eq!(
        lint.code,
        Some(0),
        "{}: goldgate lint {}:\n{}{}\n{}",
        snippet.place(),
        args.join(" "),
        lint.stdout,
        lint.stderr,
        snippet.text
    );
    lint
}

#[test]
fn config_snippets_pass_lint() {
    for snippet in yaml_snippets(Yaml::Config, 5) {
        let args = ["--config", "goldgate.yaml", "goldens"];
        lint_passes(&snippet, stub_files, "goldgate.yaml", &args);
    }
}

#[test]
fn golden_snippets_pass_lint() {
    for snippet in yaml_snippets(Yaml::Golden, 3) {
        let file = "snippet.golden.yaml";
        // A golden stands alone: none of the files a config names.
        let lint = lint_passes(&snippet, |_| {}, file, &[file]);
        assert!(
            lint.stderr.contains("0 errors"),
            "{}: {}",
            snippet.place(),
            lint.stderr
        );
    }
}

#[test]
fn json_snippets_parse() {
    for snippet in snippets().iter().filter(|s| s.lang == "json") {
        serde_json::from_str::<Value>(&snippet.text)
            .unwrap_or_else(|e| panic!("{}: {e}\n{}", snippet.place(), snippet.text));
    }
}

/// `text` split as a shell splits words (quotes, and a `#` comment outside them).
fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_default().push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_default();
            }
            (None, '#') if word.is_none() => break,
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_default().push(c),
        }
    }
    words.extend(word);
    words
}

/// The commands of the sh snippets and of GitLab's `script:`, each with where it was written.
fn command_lines() -> Vec<(String, Vec<String>)> {
    let mut lines = Vec::new();
    for snippet in snippets() {
        let texts: Vec<String> = match snippet.lang.as_str() {
            "sh" => snippet.text.lines().map(str::to_owned).collect(),
            "yaml" if kind(&snippet) == Yaml::GitLab => {
                let value: Value = serde_saphyr::from_str(&snippet.text).unwrap();
                value
                    .as_object()
                    .unwrap()
                    .values()
                    .filter_map(|job| job["script"].as_str().map(str::to_owned))
                    .collect()
            }
            _ => continue,
        };
        for text in texts {
            let words = words(&text);
            if !words.is_empty() {
                lines.push((snippet.place(), words));
            }
        }
    }
    lines
}

/// `goldgate SUBCOMMAND --help`.
fn help(subcommand: &str) -> String {
    let out = common::goldgate(root(), &[subcommand, "--help"]);
    assert_eq!(
        out.code,
        Some(0),
        "goldgate {subcommand} --help: {}",
        out.stderr
    );
    out.stdout
}

#[test]
fn command_lines_name_flags_tests_and_benches_that_exist() {
    let lines = command_lines();
    assert!(lines.len() >= 15, "{lines:#?}");
    let mut goldgate_lines = 0;
    for (place, words) in &lines {
        let args: &[String] = match words[0].as_str() {
            "goldgate" => &words[1..],
            "cargo" => {
                for (flag, dir, ext) in [("--test", "tests", "rs"), ("--bench", "benches", "rs")] {
                    for pair in words.windows(2).filter(|pair| pair[0] == flag) {
                        // A target is a file, or a directory with its main.rs (tests/it).
                        let file = root().join(dir).join(format!("{}.{ext}", pair[1]));
                        let main = root().join(dir).join(&pair[1]).join("main.rs");
                        assert!(
                            file.is_file() || main.is_file(),
                            "{place}: {flag} {}: no {}",
                            pair[1],
                            file.display()
                        );
                    }
                }
                // The test filters name modules of tests/it.
                for filter in words.iter().filter_map(|w| w.strip_suffix("::")) {
                    let module = root().join("tests/it").join(format!("{filter}.rs"));
                    assert!(
                        module.is_file(),
                        "{place}: {filter}::: no {}",
                        module.display()
                    );
                }
                match words.iter().position(|w| w == "--") {
                    Some(at) if words[1] == "run" => &words[at + 1..],
                    _ => continue,
                }
            }
            ".ci/run" => {
                assert!(root().join(".ci/run").is_file(), "{place}");
                continue;
            }
            other => panic!("{place}: a command no test checks: {other}"),
        };
        goldgate_lines += 1;
        let subcommand = args[0].as_str();
        let help = help(subcommand);
        for arg in &args[1..] {
            if arg == "--" {
                break;
            }
            if arg.starts_with('-') {
                let flag = arg.split('=').next().unwrap();
                let listed = help.contains(&format!("{flag} "))
                    || help.contains(&format!("{flag},"))
                    || help.contains(&format!("{flag}\n"));
                assert!(listed, "{place}: goldgate {subcommand} has no {flag}");
            }
        }
    }
    assert!(goldgate_lines >= 10, "{lines:#?}");
}

/// The GitHub anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces as
/// dashes.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The lines of a page outside its fenced code blocks.
fn prose_lines(page: &Path) -> Vec<String> {
    let mut prose = Vec::new();
    let mut in_code = false;
    for line in read(page).lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        } else if !in_code {
            prose.push(line.to_owned());
        }
    }
    prose
}

/// The anchors of a page's headings (outside code blocks), numbered as GitHub numbers repeats.
fn anchors(page: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in prose_lines(page) {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let base = anchor(heading.trim_start_matches('#'));
        let mut name = base.clone();
        let mut n = 0;
        while !found.insert(name.clone()) {
            n += 1;
            name = format!("{base}-{n}");
        }
    }
    found
}

/// Every `](target)` of a page outside code, but web links.
fn links(page: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for line in prose_lines(page) {
        for (at, _) in line.match_indices("](") {
            let rest = &line[at + 2..];
            let target = &rest[..rest.find(')').expect("a closed link")];
            if !target.contains("://") && !target.starts_with("mailto:") {
                found.push(target.to_owned());
            }
        }
    }
    found
}

#[test]
fn relative_links_and_anchors_resolve() {
    let mut checked = 0;
    for page in pages() {
        let dir = page.parent().unwrap_or(Path::new(""));
        for link in links(&page) {
            let (file, fragment) = link.split_once('#').unwrap_or((&link, ""));
            let target = if file.is_empty() {
                page.clone()
            } else {
                dir.join(file)
            };
            let path = root().join(&target);
            assert!(
                path.exists(),
                "{}: ({link}): no {}",
                page.display(),
                target.display()
            );
            if !fragment.is_empty() {
                assert!(
                    anchors(&target).contains(fragment),
                    "{}: ({link}): no heading #{fragment} in {}: {:?}",
                    page.display(),
                    target.display(),
                    anchors(&target)
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 50, "{checked}");
    // Every page under docs/ is found from the README's contents table.
    let readme_links: BTreeSet<String> = links(Path::new("README.md")).into_iter().collect();
    for page in pages().iter().skip(1) {
        let name = page.display().to_string();
        assert!(
            readme_links.contains(&name),
            "the README never links {name}"
        );
    }
}

/// The lines of `.ci/run` that run commands (no comments).
fn ci_lines() -> Vec<String> {
    fs::read_to_string(root().join(".ci/run"))
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_quick_start_runs_the_tests_as_ci_does() {
    let readme = snippets_of(Path::new("README.md"));
    let quick_start = &readme[0];
    let commands: Vec<Vec<String>> = quick_start.text.lines().map(words).collect();
    assert_eq!(commands.len(), 2, "{quick_start:?}");
    assert_eq!(
        commands[0],
        "cargo run --release -- run --config examples/goldgate.yaml examples/suite"
            .split(' ')
            .collect::<Vec<_>>(),
        "tests/example_suite.rs plays the example suite as this command does"
    );
    let ci = ci_lines();
    let test_command = commands[1].join(" ");
    assert!(
        ci.contains(&test_command),
        "{test_command} is not in .ci/run: {ci:#?}"
    );
    // The README's Tests section: every cargo line of it is one .ci/run runs.
    let tests = readme
        .iter()
        .find(|s| s.text.lines().any(|l| l.starts_with(".ci/run")))
        .expect("the Tests section");
    for line in tests.text.lines().map(words).filter(|w| w[0] == "cargo") {
        let line = line.join(" ");
        assert!(ci.contains(&line), "{line} is not in .ci/run: {ci:#?}");
    }
}

/// The modules of tests/it (`NAME::` filters) of the `.ci/run` line that runs the ignored
/// tests.
fn ci_tool_targets() -> BTreeSet<String> {
    let line = ci_lines()
        .into_iter()
        .find(|l| l.starts_with("cargo test") && l.contains("-- --ignored"))
        .expect(".ci/run runs the tests that need tools");
    words(&line)
        .iter()
        .filter_map(|w| w.strip_suffix("::"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn ci_runs_exactly_the_tests_ignored_for_a_tool() {
    let mut needing_tools = BTreeSet::new();
    for entry in fs::read_dir(root().join("tests/it")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("main.rs") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = fs::read_to_string(&path).unwrap();
        for reason in text.split("#[ignore = \"").skip(1) {
            let reason = &reason[..reason.find('"').unwrap()];
            if reason.starts_with("needs ") {
                assert!(
                    [
                        "needs chromium:",
                        "needs xmllint:",
                        "needs actionlint:",
                        "needs node:",
                    ]
                    .iter()
                    .any(|tool| reason.starts_with(tool)),
                    "tests/it/{name}.rs: {reason}"
                );
                needing_tools.insert(name.clone());
            } else {
                // Figures and benchmarks: CI must not run them, so they sit elsewhere.
                assert!(
                    !ci_tool_targets().contains(&name),
                    "tests/it/{name}.rs is run with --ignored by .ci/run, but ignores a test for another reason: {reason}"
                );
            }
        }
    }
    assert_eq!(needing_tools, ci_tool_targets());
}

/// `actionlint -no-color -oneline FILES` in `dir`.
#[test]
#[ignore = "needs actionlint: run with --ignored (.ci/run does)"]
fn workflow_snippets_pass_actionlint() {
    // The Action in the README, the fork-comment workflow, CX Agent Studio's, the judge cache
    // and the JUnit readers.
    let snippets = yaml_snippets(Yaml::Workflow, 5);
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join(".github/workflows")).unwrap();
    let mut files = Vec::new();
    for (index, snippet) in snippets.iter().enumerate() {
        let text = if snippet.text.contains("jobs:") {
            snippet.text.clone()
        } else {
            let indented: String = snippet
                .text
                .lines()
                .map(|l| format!("      {l}\n"))
                .collect();
            format!(
                "on: push\npermissions: {{ contents: read, checks: write }}\njobs:\n  snippet:\n    runs-on: ubuntu-latest\n    steps:\n{indented}"
            )
        };
        let name = format!(".github/workflows/snippet-{index}.yml");
        fs::write(
            dir.path().join(&name),
            format!("# {}\n{text}", snippet.place()),
        )
        .unwrap();
        files.push(name);
    }
    if let Err(report) = common::actionlint(dir.path(), &files) {
        panic!("actionlint on the workflow snippets (each file opens with its place):\n{report}");
    }
}
