//! `goldgate run` around the edges: config files, secrets, recording and replaying, JSON on
//! stdout, and recorded replies that need no agent at all.

use crate::common;
use std::fs;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// One conversation, `lookup`, about an order whose status and arrival the session parameters
/// give.
fn suite(dir: &Path) {
    common::write(dir, "goldens/orders.yaml", "common_session_parameters:\n  order_12345_status: shipped\n  order_12345_eta: \"2026-04-18\"\nconversations:\n".to_owned()
            + &common::order_conversation("lookup"));
}

/// A folder with the suite and `config` as its goldgate.yaml.
fn suite_with_config(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path());
    common::write(dir.path(), "goldgate.yaml", config);
    dir
}

/// `goldgate run goldens --output report.json --junit junit.xml` in `dir` with `env`: what it
/// printed and both reports, as one text to search.
fn run_and_read_everything(dir: &Path, env: &[(&str, &str)]) -> String {
    let mut command = common::command_in(dir);
    command.args([
        "run",
        "goldens",
        "--output",
        "report.json",
        "--junit",
        "junit.xml",
    ]);
    for (name, value) in env {
        command.env(name, value);
    }
    let out = common::Outcome::of(&mut command).exits(2);
    let mut everything = out.stdout + &out.stderr;
    for report in ["report.json", "junit.xml"] {
        everything.push_str(&fs::read_to_string(dir.join(report)).unwrap());
    }
    everything
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
    common::write(
        dir.path(),
        "goldgate.yaml",
        "agent:\n  replay: transcripts\n",
    );
    common::goldgate(dir.path(), &["run", "goldens"])
        .exits(0)
        .says(&["Agent: replay"]);
}

#[test]
fn a_header_secret_never_reaches_output_or_reports() {
    // Nothing listens on port 9: the run errors, and its messages must not carry the token.
    let dir = suite_with_config(
        "agent:\n  http:\n    url: \"http://127.0.0.1:9/turn?key=${GG_TEST_TOKEN}\"\n    headers: { Authorization: \"Bearer ${GG_TEST_TOKEN}\" }\nrun: { retries: 0 }\n",
    );
    let everything =
        run_and_read_everything(dir.path(), &[("GG_TEST_TOKEN", "s3cr3t-t0ken-value")]);
    common::assert_contains(&everything, &["127.0.0.1:9"]);
    common::assert_lacks(&everything, &["s3cr3t-t0ken-value"]);
}

/// A config that cannot be used stops the run before anything runs, with exit 2 and a
/// message that says what is wrong and where: an unset variable is named with the key that
/// uses it; a typo gets its line and a suggestion.
#[test]
fn an_unset_variable_or_a_config_typo_is_exit_2_naming_it() {
    for (config, says) in [
        (
            "agent:\n  http: { url: \"http://127.0.0.1:9/turn\", headers: { X-Key: \"${GG_SURELY_UNSET_VAR}\" } }\n",
            &["agent.http.headers.X-Key: environment variable `GG_SURELY_UNSET_VAR` is not set"][..],
        ),
        (
            "agent:\n  http: { url: \"http://127.0.0.1:9/turn\" }\nrun:\n  concurency: 4\n",
            &[
                "goldgate.yaml:4: error [G100] run.concurency: unknown key `concurency`",
                "did you mean `concurrency`?",
            ],
        ),
    ] {
        let dir = suite_with_config(config);
        common::goldgate(dir.path(), &["run", "goldens"])
            .exits(2)
            .warns(says);
    }
}

/// A swapped pair in a short required key is one problem with one message: the unknown key,
/// the key it was meant to be, and that it is required; not also "missing required key".
#[test]
fn a_transposed_short_key_is_one_error_suggesting_the_key() {
    let dir = suite_with_config("agent:\n  http:\n    ulr: \"http://127.0.0.1:9/turn\"\n");
    let out = common::goldgate(dir.path(), &["run", "goldens"]).exits(2);
    out.warns(&[
        "goldgate.yaml:3: error [G100] agent.http.ulr: unknown key `ulr` (did you mean `url`? \
         It is required.)",
    ])
    .never_prints(&["missing required key"]);
}

#[test]
fn no_agent_is_exit_2_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path());
    common::goldgate(dir.path(), &["run", "goldens"])
        .exits(2)
        .warns(&["no agent to test", "--agent-url"]);
}

#[test]
fn recorded_regtrace_answers_are_scored_without_an_agent_and_json_goes_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    common::write(
        dir.path(),
        "answers.golden.yaml",
        "name: qa\nversion: \"1.0.0\"\ndescription: recorded answers\ninteraction_type: single_turn\ntags: []\nauthor: me\n\
         created_at: \"2026-01-01\"\nupdated_at: \"2026-01-01\"\ntest_cases:\n\
         \x20 - id: capital\n    description: capital of France\n    input: What is the capital of France?\n    system_prompt: null\n\
         \x20   expected_output: Paris is the capital of France.\n    actual_output: The capital of France is Paris.\n\
         \x20   metrics: [factuality]\n    tags: []\n    weight: 1\n\
         \x20 - id: wrong\n    description: a wrong recorded answer\n    input: What is the capital of Spain?\n    system_prompt: null\n\
         \x20   expected_output: Madrid is the capital of Spain.\n    actual_output: I do not know.\n\
         \x20   metrics: [factuality]\n    tags: []\n    weight: 1\n",
    );
    let out = common::goldgate(dir.path(), &["run", "--json", "answers.golden.yaml"]).exits(1);
    let report: Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{}", out.stdout));
    let statuses = common::case_statuses(&report);
    assert_eq!(statuses["capital"], "passed");
    assert_eq!(statuses["wrong"], "failed");
    // The table went to stderr so that stdout stays one JSON document.
    out.warns(&["Evaluation Results"]);
}

#[cfg(unix)]
#[test]
fn ctrl_c_still_writes_the_reports_marked_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path());
    // An agent that answers its start-up ping (id 1), takes the first request, says so with a
    // file, and never answers.
    let agent = r#"read line; echo '{"id":1}'; read line; touch got-request; cat > /dev/null"#;
    let mut goldgate = common::process::Running::start_run(dir.path(), &["--agent-cmd", agent]);
    common::process::wait_for_file(&dir.path().join("got-request"));
    // Interrupt until it stops: the first stops scheduling, the next cancels the turn in flight.
    for _ in 0..40 {
        goldgate.signal("INT");
        if goldgate.exited_within(Duration::from_millis(250)) {
            break;
        }
    }
    let (code, stderr) = goldgate.finish();
    assert_eq!(code, Some(2), "{stderr}");
    common::assert_contains(&stderr, &["stopping"]);
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
    common::assert_contains(&seen, &["GOLDGATE_VISIBLE=yes"]);
    common::assert_lacks(&seen, &["ghs_not_for_the_agent"]);
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
    let dir = suite_with_config(&format!(
        "agent:\n  http:\n    url: \"http://{addr}/turn?key=${{GG_URL_SECRET}}\"\n    headers: {{ Authorization: \"Bearer ${{GG_HEADER_SECRET}}\" }}\nrun: {{ retries: 0 }}\n"
    ));
    let everything = run_and_read_everything(
        dir.path(),
        &[
            ("GG_URL_SECRET", "url-secret-4711"),
            ("GG_HEADER_SECRET", "header-secret-0815"),
        ],
    );
    assert!(
        everything.contains("bad credentials"),
        "the error is shown: {everything}"
    );
    common::assert_contains(&everything, &["***"]);
    for secret in ["url-secret-4711", "header-secret-0815"] {
        assert!(
            !everything.contains(secret),
            "{secret} leaked: {everything}"
        );
    }
}

#[test]
fn a_command_agent_from_the_default_config_starts_in_the_current_directory() {
    let agent = common::support_agent();
    let dir = suite_with_config(&format!(
        "agent:\n  command: [{:?}]\n",
        agent.display().to_string()
    ));
    // No --config: ./goldgate.yaml, whose directory is "" until made ".".
    common::goldgate(dir.path(), &["run", "goldens"]).exits(0);
    common::goldgate(dir.path(), &["run", "goldens", "--config", "goldgate.yaml"]).exits(0);
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

/// Each option of every command's `--help` states its default at most once: clap adds
/// `[default: X]` for a `default_value`, so a doc comment saying it too printed it twice.
#[test]
fn no_help_states_a_default_twice() {
    for subcommand in [
        "run", "lint", "compare", "merge", "report", "list", "convert", "init",
    ] {
        let help = common::goldgate(Path::new("."), &[subcommand, "--help"]).stdout;
        // An option's entry runs from its `-x`/`--flag` line to the next one.
        let mut entries: Vec<String> = Vec::new();
        for line in help.lines() {
            if line.trim_start().starts_with('-') || entries.is_empty() {
                entries.push(String::new());
            }
            entries.last_mut().unwrap().push_str(line);
        }
        for entry in entries {
            assert!(
                entry.matches("[default:").count() <= 1,
                "`goldgate {subcommand} --help` states a default twice: {entry}"
            );
        }
    }
}

/// A `${VAR}` the agent's config reads and the environment lacks is one error before anything
/// plays (exit 2, nothing run), not the same error once for every case and turn.
#[test]
fn an_unset_variable_is_one_error_before_anything_plays() {
    let dir = tempfile::tempdir().unwrap();
    common::write(
        dir.path(),
        "goldgate.yaml",
        "agent:\n  http:\n    url: http://127.0.0.1:9/turn\n    headers: { Authorization: \"Bearer ${GOLDGATE_TEST_NEVER_SET}\" }\n",
    );
    let conversations: String = (1..=3)
        .map(|i| common::order_conversation(&format!("case_{i}")))
        .collect();
    common::order_golden(dir.path(), &conversations);
    let out = common::goldgate(dir.path(), &["run", "goldens", "--output", "report.json"]).exits(2);
    out.warns(&[
        "goldgate: the agent reads a variable that is not set: agent.http.headers.Authorization: \
         environment variable `GOLDGATE_TEST_NEVER_SET` is not set; nothing was run",
    ]);
    let said = format!("{}{}", out.stdout, out.stderr);
    assert_eq!(said.matches("GOLDGATE_TEST_NEVER_SET").count(), 1, "{said}");
    common::assert_lacks(&said, &["case_1", "[1/3]"]);
}

/// A case checked only as a whole conversation (here Regtrace metrics over a recorded reply)
/// reads `-` in the table's Pass and Fail, with the totals saying why, not `0 | 0 | 100%`.
#[test]
fn a_case_checked_as_a_whole_shows_no_turn_counts() {
    let dir = tempfile::tempdir().unwrap();
    recorded_regtrace_example(dir.path(), |config| config, |set| set);
    let out = common::goldgate(dir.path(), &["run", "regtrace.config.yaml"]).exits(0);
    out.says(&[
        "faq-refunds  |     1 |    - |    - |  100%",
        "Total: 2 conversations, 2 turns, 0 pass, 0 fail (-: 2 conversations checked as a \
         whole, not turn by turn)",
    ]);
}

/// A golden set named next to the config that lists it is played once, and as the config
/// reads it: the set's file sorts first, and was loaded with Regtrace's own defaults instead
/// (threshold 0.7 where the config says 0.99).
#[test]
fn a_set_named_with_its_config_keeps_the_configs_thresholds() {
    let dir = tempfile::tempdir().unwrap();
    recorded_regtrace_example(
        dir.path(),
        |config| config.replace("default_threshold: 0.7", "default_threshold: 0.99"),
        // The greeting's reply close enough for 0.7 and not for 0.99.
        |set| {
            set.replace(
                "actual_output: \"Hello! How can I help you today?\"",
                "actual_output: \"Hello! How can I help you?\"",
            )
        },
    );
    for args in [
        ["regtrace.config.yaml", "golden-sets/faq.yaml"],
        ["golden-sets/faq.yaml", "regtrace.config.yaml"],
    ] {
        let out = common::goldgate(dir.path(), &[&["run", "--json"][..], &args].concat()).exits(1);
        let report: Value = serde_json::from_str(&out.stdout).unwrap();
        let cases = report["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 2, "{args:?}: each case once");
        let greeting = common::case(&report, "faq-greeting");
        let factuality = &greeting["checks"][0];
        assert_eq!(factuality["status"], "failed", "{args:?}: {greeting:#}");
        common::assert_contains(
            factuality["reason"].as_str().unwrap(),
            &["below the threshold 0.99"],
        );
    }
}

/// The example suite's Regtrace config and set in `dir`, edited, with both replies recorded so
/// that no agent is needed.
fn recorded_regtrace_example(
    dir: &Path,
    config: impl FnOnce(String) -> String,
    set: impl FnOnce(String) -> String,
) {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/suite/regtrace");
    let read = |path: &str| fs::read_to_string(example.join(path)).unwrap();
    common::write(
        dir,
        "regtrace.config.yaml",
        config(read("regtrace.config.yaml")),
    );
    let recorded = read("golden-sets/faq.yaml").replace(
        "actual_output: null",
        "actual_output: \"I'm transferring you to the billing team, who handle refunds.\"",
    );
    common::write(dir, "golden-sets/faq.yaml", set(recorded));
}
