//! `goldgate run` around the edges: config files, secrets, recording and replaying, JSON on
//! stdout, and recorded replies that need no agent at all.

mod common;

use std::fs;
use std::path::Path;
use std::time::Duration;

use predicates::prelude::*;
use serde_json::Value;

const GOLDEN: &str = "\
common_session_parameters:
  order_12345_status: shipped
  order_12345_eta: \"2026-04-18\"
conversations:
  - conversation: lookup
    turns:
      - user: Where is ORD-12345?
        tool_calls:
          - action: lookup_order
            args: { order_id: ORD-12345 }
        agent: Your order ORD-12345 has shipped and should arrive by April 18th.
";

fn suite(dir: &Path) {
    fs::create_dir_all(dir.join("goldens")).unwrap();
    fs::write(dir.join("goldens/orders.yaml"), GOLDEN).unwrap();
}

#[test]
fn a_recorded_run_replays_without_any_agent() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path());
    let agent = common::support_agent();
    common::command_in(dir.path())
        .args(["run", "goldens", "--record", "transcripts", "--agent-cmd"])
        .arg(&agent)
        .assert()
        .code(0);
    let recorded: Vec<String> = fs::read_dir(dir.path().join("transcripts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        matches!(recorded.as_slice(), [name] if name.starts_with("lookup-")),
        "{recorded:?}"
    );
    fs::write(
        dir.path().join("goldgate.yaml"),
        "agent:\n  replay: transcripts\n",
    )
    .unwrap();
    common::command_in(dir.path())
        .args(["run", "goldens"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("Agent: replay"));
}

#[test]
fn a_header_secret_never_reaches_output_or_reports() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path());
    // Nothing listens on port 9: the run errors, and its messages must not carry the token.
    fs::write(
        dir.path().join("goldgate.yaml"),
        "agent:\n  http:\n    url: \"http://127.0.0.1:9/turn?key=${GG_TEST_TOKEN}\"\n    headers: { Authorization: \"Bearer ${GG_TEST_TOKEN}\" }\nrun: { retries: 0 }\n",
    )
    .unwrap();
    let output = common::command_in(dir.path())
        .args([
            "run",
            "goldens",
            "--output",
            "report.json",
            "--junit",
            "junit.xml",
        ])
        .env("GG_TEST_TOKEN", "s3cr3t-t0ken-value")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let mut everything = String::from_utf8_lossy(&output.stdout).into_owned();
    everything.push_str(&String::from_utf8_lossy(&output.stderr));
    everything.push_str(&fs::read_to_string(dir.path().join("report.json")).unwrap());
    everything.push_str(&fs::read_to_string(dir.path().join("junit.xml")).unwrap());
    assert!(everything.contains("127.0.0.1:9"), "{everything}");
    assert!(!everything.contains("s3cr3t-t0ken-value"), "{everything}");
}

#[test]
fn an_unset_variable_is_named_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path());
    fs::write(
        dir.path().join("goldgate.yaml"),
        "agent:\n  http: { url: \"http://127.0.0.1:9/turn\", headers: { X-Key: \"${GG_SURELY_UNSET_VAR}\" } }\n",
    )
    .unwrap();
    common::command_in(dir.path())
        .args(["run", "goldens"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "agent.http.headers.X-Key: environment variable `GG_SURELY_UNSET_VAR` is not set",
        ));
}

#[test]
fn a_config_typo_is_an_error_with_its_line_and_a_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path());
    fs::write(
        dir.path().join("goldgate.yaml"),
        "agent:\n  http: { url: \"http://127.0.0.1:9/turn\" }\nrun:\n  concurency: 4\n",
    )
    .unwrap();
    common::command_in(dir.path())
        .args(["run", "goldens"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains(
                "goldgate.yaml:4: error [G100] run.concurency: unknown key `concurency`",
            )
            .and(predicate::str::contains("did you mean `concurrency`?")),
        );
}

#[test]
fn no_agent_is_exit_2_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path());
    common::command_in(dir.path())
        .args(["run", "goldens"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("no agent to test")
                .and(predicate::str::contains("--agent-url")),
        );
}

#[test]
fn recorded_regtrace_answers_are_scored_without_an_agent_and_json_goes_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("answers.golden.yaml"),
        "name: qa\nversion: \"1.0.0\"\ndescription: recorded answers\ninteraction_type: single_turn\ntags: []\nauthor: me\n\
         created_at: \"2026-01-01\"\nupdated_at: \"2026-01-01\"\ntest_cases:\n\
         \x20 - id: capital\n    description: capital of France\n    input: What is the capital of France?\n    system_prompt: null\n\
         \x20   expected_output: Paris is the capital of France.\n    actual_output: The capital of France is Paris.\n\
         \x20   metrics: [factuality]\n    tags: []\n    weight: 1\n\
         \x20 - id: wrong\n    description: a wrong recorded answer\n    input: What is the capital of Spain?\n    system_prompt: null\n\
         \x20   expected_output: Madrid is the capital of Spain.\n    actual_output: I do not know.\n\
         \x20   metrics: [factuality]\n    tags: []\n    weight: 1\n",
    )
    .unwrap();
    let output = common::command_in(dir.path())
        .args(["run", "--json", "answers.golden.yaml"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let status = |id: &str| {
        report["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap()["status"]
            .clone()
    };
    assert_eq!(status("capital"), "passed");
    assert_eq!(status("wrong"), "failed");
    // The table went to stderr so that stdout stays one JSON document.
    assert!(String::from_utf8_lossy(&output.stderr).contains("Evaluation Results"));
}

#[cfg(unix)]
#[test]
fn ctrl_c_still_writes_the_reports_marked_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path());
    // An agent that answers its start-up ping (id 1), takes the first request, says so with a
    // file, and never answers.
    let agent = r#"read line; echo '{"id":1}'; read line; touch got-request; cat > /dev/null"#;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("goldgate"))
        .current_dir(dir.path())
        .args([
            "run",
            "goldens",
            "--agent-cmd",
            agent,
            "--timeout",
            "5m",
            "--output",
            "report.json",
        ])
        .args(["--junit", "junit.xml"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    for _ in 0..600 {
        if dir.path().join("got-request").exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // Interrupt until it stops: the first stops scheduling, the next cancels the turn in flight.
    for _ in 0..40 {
        std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        std::thread::sleep(Duration::from_millis(250));
        if child.try_wait().unwrap().is_some() {
            break;
        }
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("stopping"), "{stderr}");
    let report: Value =
        serde_json::from_slice(&fs::read(dir.path().join("report.json")).unwrap()).unwrap();
    assert_eq!(report["incomplete"], true);
    assert!(dir.path().join("junit.xml").is_file());
}

#[cfg(unix)]
#[test]
fn a_command_agent_does_not_inherit_the_github_token() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path());
    // The agent writes its environment down and never answers; the run times out.
    common::command_in(dir.path())
        .args([
            "run",
            "goldens",
            "--agent-cmd",
            "env > agent-env.txt; cat > /dev/null",
        ])
        .args([
            "--timeout",
            "1s",
            "--retries",
            "0",
            "--startup-timeout",
            "1s",
        ])
        .env("GITHUB_TOKEN", "ghs_not_for_the_agent")
        .env("GOLDGATE_VISIBLE", "yes")
        .assert()
        .code(2);
    let seen = fs::read_to_string(dir.path().join("agent-env.txt")).unwrap();
    assert!(seen.contains("GOLDGATE_VISIBLE=yes"), "{seen}");
    assert!(!seen.contains("ghs_not_for_the_agent"), "{seen}");
}

#[test]
fn an_agent_echoing_the_secret_in_an_error_does_not_leak_it() {
    use axum::http::{HeaderMap, StatusCode, Uri};
    // A 401 page that quotes the credentials it was sent, as real servers sometimes do.
    let addr = common::serve(axum::Router::new().route(
        "/turn",
        axum::routing::post(|headers: HeaderMap, uri: Uri| async move {
            let auth = headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            (
                StatusCode::UNAUTHORIZED,
                format!("bad credentials {auth} for {uri}"),
            )
        }),
    ));
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path());
    fs::write(
        dir.path().join("goldgate.yaml"),
        format!(
            "agent:\n  http:\n    url: \"http://{addr}/turn?key=${{GG_URL_SECRET}}\"\n    headers: {{ Authorization: \"Bearer ${{GG_HEADER_SECRET}}\" }}\nrun: {{ retries: 0 }}\n"
        ),
    )
    .unwrap();
    let output = common::command_in(dir.path())
        .args([
            "run",
            "goldens",
            "--output",
            "report.json",
            "--junit",
            "junit.xml",
        ])
        .env("GG_URL_SECRET", "url-secret-4711")
        .env("GG_HEADER_SECRET", "header-secret-0815")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let mut everything = String::from_utf8_lossy(&output.stdout).into_owned();
    everything.push_str(&String::from_utf8_lossy(&output.stderr));
    everything.push_str(&fs::read_to_string(dir.path().join("report.json")).unwrap());
    everything.push_str(&fs::read_to_string(dir.path().join("junit.xml")).unwrap());
    assert!(
        everything.contains("bad credentials"),
        "the error is shown: {everything}"
    );
    assert!(everything.contains("***"), "{everything}");
    for secret in ["url-secret-4711", "header-secret-0815"] {
        assert!(
            !everything.contains(secret),
            "{secret} leaked: {everything}"
        );
    }
}

#[test]
fn a_command_agent_from_the_default_config_starts_in_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path());
    let agent = common::support_agent();
    fs::write(
        dir.path().join("goldgate.yaml"),
        format!("agent:\n  command: [{:?}]\n", agent.display().to_string()),
    )
    .unwrap();
    // No --config: ./goldgate.yaml, whose directory is "" until made ".".
    common::command_in(dir.path())
        .args(["run", "goldens"])
        .assert()
        .code(0);
    common::command_in(dir.path())
        .args(["run", "goldens", "--config", "goldgate.yaml"])
        .assert()
        .code(0);
}

/// The defaults `--help` states are the ones the run applies (written once as constants).
#[test]
fn the_help_states_the_defaults_the_run_applies() {
    let help = common::goldgate(Path::new("."), &["run", "--help"]).stdout;
    let minutes = |d: Duration| format!("{}m", d.as_secs() / 60);
    for (flag, default) in [
        (
            "--startup-timeout",
            goldgate::config::DEFAULT_STARTUP_TIMEOUT,
        ),
        ("--rate-limit-wait", goldgate::limit::DEFAULT_WAIT_BUDGET),
    ] {
        let described = help
            .split(flag)
            .nth(1)
            .and_then(|rest| rest.split("[default: ").nth(1))
            .unwrap_or_else(|| panic!("{flag} states no default:\n{help}"));
        assert!(
            described.starts_with(&minutes(default)),
            "{flag}: the help says {described:.20}, the run applies {}",
            minutes(default)
        );
    }
}
