//! CX Agent Studio platform mode (`agent: { ces: { platform: true } }`) through the binary,
//! against a loopback fake of the v1beta evaluation endpoints: the shared corpus's SCRAPI
//! platform goldens push with the requests SCRAPI's `cxas push-eval` makes, run and come back
//! mapped; pushing is idempotent and leaves other evaluations alone; a platform run gates
//! against a baseline of an earlier one. With goldens of their own (they need none of the
//! corpus, so they run where it is absent): a run that ends in ERROR, a poll that outlasts
//! `--timeout`, a token that expires mid-poll and a Ctrl-C each end as they should.

use crate::{ces_platform_support, common};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use ces_platform_support::cli::{
    TOKEN, config, corpus_goldens, corpus_platform, golden_copy, local_golden, platform_project,
    start, with_token,
};
use ces_platform_support::{APP, Fake, Finish, scrapi_turns};

const CORPUS: [&str; 6] = [
    "scrapi/doc-snippets/docs__guides__evaluation__platform-goldens.md.L31-L54.yaml",
    "scrapi/doc-snippets/docs__guides__evaluation__platform-goldens.md.L206-L240.yaml",
    "scrapi/examples/evals/golden_eval_example.yaml",
    "scrapi/skill-project-template/evals/goldens/example_auth_routing.yaml",
    "scrapi/skill-project-template/evals/goldens/example_escalation.yaml",
    "skyflow-airline/evals/goldens/airline_goldens.yaml",
];

/// Every tool call id is SCRAPI's shape (`adk-` and a version-4 UUID), each tool response
/// carries its call's id; then both read `ID`, as the test's port of SCRAPI writes them.
fn normalise_ids(turns: &mut Value) -> Result<(), String> {
    for turn in turns.as_array_mut().into_iter().flatten() {
        let mut last_call = String::new();
        for step in turn["steps"].as_array_mut().into_iter().flatten() {
            let Some(expectation) = step.get_mut("expectation") else {
                continue;
            };
            if let Some(call) = expectation.get_mut("toolCall") {
                let id = call["id"].as_str().unwrap_or_default().to_owned();
                let uuid = id.strip_prefix("adk-").unwrap_or_default();
                let parts: Vec<usize> = uuid.split('-').map(str::len).collect();
                if parts != [8, 4, 4, 4, 12] || uuid.as_bytes()[14] != b'4' {
                    return Err(format!("tool call id `{id}` is not adk-<uuid4>"));
                }
                last_call = id;
                call["id"] = "ID".into();
            }
            if let Some(response) = expectation.get_mut("toolResponse") {
                if response["id"] != last_call.as_str() {
                    return Err(format!(
                        "tool response id {} is not its call's",
                        response["id"]
                    ));
                }
                response["id"] = "ID".into();
            }
        }
    }
    Ok(())
}

/// Each conversation of the corpus (as copied into the project `dir`) was created as the
/// test's port of SCRAPI maps it, with its expectations found or made; returns how many
/// conversations there are.
fn assert_pushed_as_scrapi(fake: &Fake, dir: &Path) -> usize {
    let created = fake.heard("POST", "/evaluations");
    let tools = BTreeMap::from([("lookup_order", format!("{APP}/tools/0c4f7a"))]);
    let mut conversations = 0;
    for file in CORPUS {
        let text = fs::read_to_string(golden_copy(dir, file)).unwrap();
        let golden: Value = serde_saphyr::from_str(&text).unwrap();
        let common = golden["common_session_parameters"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let stem = Path::new(file)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        for conversation in golden["conversations"].as_array().unwrap() {
            conversations += 1;
            let name = conversation["conversation"].as_str().unwrap();
            let sent = created
                .iter()
                .find(|h| h.body["displayName"] == name)
                .unwrap_or_else(|| panic!("{name} was not pushed"));
            let mut turns = sent.body["golden"]["turns"].clone();
            normalise_ids(&mut turns).unwrap_or_else(|e| panic!("{name}: {e}"));
            let expected = scrapi_turns(conversation, &common, &tools);
            assert_eq!(turns, Value::Array(expected), "{name}");
            let mut tags: Vec<Value> = conversation["tags"].as_array().cloned().unwrap_or_default();
            tags.push(stem.clone().into());
            assert_eq!(sent.body["tags"], Value::Array(tags), "{name}");
            // Each free-text expectation is an EvaluationExpectation with that prompt.
            let prompts: Vec<&Value> = conversation["expectations"]
                .as_array()
                .into_iter()
                .flatten()
                .collect();
            let names = sent.body["golden"]["evaluationExpectations"]
                .as_array()
                .unwrap();
            assert_eq!(names.len(), prompts.len(), "{name}");
            let state = fake.state();
            for (prompt, name) in prompts.iter().zip(names) {
                let found = state
                    .expectations
                    .iter()
                    .find(|x| x["name"] == *name)
                    .unwrap();
                assert_eq!(&found["llmCriteria"]["prompt"], *prompt);
            }
        }
    }
    assert_eq!(created.len(), conversations);
    conversations
}

#[test]
fn the_corpus_platform_goldens_push_as_scrapi_would_and_come_back_mapped() {
    let Some((dir, fake)) = corpus_platform(&CORPUS, |_| {}) else {
        return;
    };
    let (code, report, printed) = with_token(dir.path(), &["--timeout", "30s"]);
    assert_eq!(fake.state().violations, Vec::<String>::new(), "{printed}");
    assert_eq!(code, Some(0), "{printed}");

    let conversations = assert_pushed_as_scrapi(&fake, dir.path());

    let run = &fake.heard("POST", ":runEvaluation")[0].body;
    assert_eq!(run["runCount"], 1);
    assert_eq!(run["goldenRunMethod"], "STABLE");
    assert_eq!(run["config"]["evaluationChannel"], "TEXT");
    assert_eq!(run["evaluations"].as_array().unwrap().len(), conversations);

    let cases = report["cases"].as_array().unwrap();
    assert_eq!(cases.len(), conversations);
    assert!(cases.iter().all(|c| c["status"] == "passed"), "{printed}");
    let agent = report["agent"].as_str().unwrap();
    assert!(
        agent.contains(&format!("{APP}/evaluationRuns/run1")),
        "{agent}"
    );
    assert!(agent.contains("https://ces.cloud.google.com/"), "{agent}");
    // Every turn of every golden came back, with the platform's checks and latency.
    let order = common::case(&report, "happy_path_order_lookup");
    assert_eq!(order["turns"].as_array().unwrap().len(), 2);
    let turn = &order["turns"][1];
    assert_eq!(turn["latency_ms"], 1250, "{turn:#}");
    assert_eq!(turn["input"], "It's ORD-12345");
    let labels: Vec<&str> = turn["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "agent text",
            "tool call lookup_order",
            "tool invocation",
            "no hallucination"
        ],
        "{turn:#}"
    );
    let text = &turn["checks"][0];
    assert_eq!(text["method"], "ces-platform");
    assert_eq!(text["score"], 1.0);
    assert!(
        text["reason"]
            .as_str()
            .unwrap()
            .contains("platform score 4 of 4 (threshold 3), Fully Consistent"),
        "{text:#}"
    );
    assert_eq!(
        turn["reply"]["tool_calls"][0]["name"], "lookup_order",
        "{turn:#}"
    );
    // Each check sits on the line its expectation is written on: annotations land there.
    let file = "docs__guides__evaluation__platform-goldens.md.L31-L54.yaml";
    let text = fs::read_to_string(dir.path().join("goldens").join(file)).unwrap();
    let line_of = |needle: &str| text.lines().position(|l| l.contains(needle)).unwrap() + 1;
    assert_eq!(turn["checks"][1]["line"], line_of("action: lookup_order"));
    assert_eq!(
        turn["checks"][0]["line"],
        line_of("agent: \"Your order ORD-12345")
    );
    // A custom expectation is a criterion check over the case.
    let unlock = common::case(&report, "Unlock_Intent1");
    assert_eq!(unlock["checks"][0]["category"], "criterion", "{unlock:#}");
    assert_eq!(unlock["checks"][0]["status"], "passed");
    assert!(!printed.contains(TOKEN) && !report.to_string().contains(TOKEN));
}

/// An evaluation made in the console, named `name`, in place of goldgate's of that name.
fn seed_foreign(fake: &Fake, name: &str) -> Value {
    let foreign = serde_json::json!({
        "name": format!("{APP}/evaluations/theirs"),
        "displayName": name,
        "description": "made in the console",
        "golden": {"turns": [{"steps": [{"userInput": {"text": "hi"}}]}]},
    });
    let mut state = fake.state();
    state.evaluations.retain(|e| e["displayName"] != name);
    state.evaluations.push(foreign.clone());
    foreign
}

#[test]
fn pushing_again_sends_only_what_changed_and_never_touches_another_evaluation() {
    let Some((dir, fake)) = corpus_platform(&CORPUS, |_| {}) else {
        return;
    };
    let (code, _, printed) = with_token(dir.path(), &[]);
    assert_eq!(code, Some(0), "{printed}");
    let first = fake.heard("POST", "/evaluations").len();
    let expectations = fake.state().expectations.len();

    let (code, _, printed) = with_token(dir.path(), &[]);
    assert_eq!(code, Some(0), "{printed}");
    assert_eq!(
        fake.heard("POST", "/evaluations").len(),
        first,
        "nothing changed: nothing created"
    );
    assert!(
        fake.heard("PATCH", "").is_empty(),
        "nothing changed: nothing patched"
    );
    assert_eq!(
        fake.state().expectations.len(),
        expectations,
        "expectations are found, not made again"
    );

    // One golden changes: exactly its evaluation is patched.
    let file = dir.path().join("goldens/example_escalation.yaml");
    let text = fs::read_to_string(&file).unwrap();
    fs::write(
        &file,
        text.replacen(
            "agent:",
            "agent: I hear you, let me connect you.\n    # was:",
            1,
        ),
    )
    .unwrap();
    // Another team's evaluation shares a case's name: it is left alone, the case errs.
    let foreign = seed_foreign(&fake, "missing_order_id");
    let (code, report, printed) = with_token(dir.path(), &[]);
    let patched = fake.heard("PATCH", "");
    assert_eq!(patched.len(), 1, "{printed}");
    assert!(
        patched[0].query.starts_with("updateMask="),
        "{:?}",
        patched[0]
    );
    assert_eq!(
        patched[0].body["displayName"],
        "escalation_customer_request"
    );
    let state = fake.state();
    let theirs = state
        .evaluations
        .iter()
        .find(|e| e["name"] == foreign["name"])
        .unwrap();
    assert_eq!(*theirs, foreign, "the other evaluation is untouched");
    drop(state);
    let case = common::case(&report, "missing_order_id");
    assert_eq!(case["status"], "error", "{printed}");
    assert!(
        case["error"]
            .as_str()
            .unwrap()
            .contains("goldgate did not create"),
        "{case:#}"
    );
    assert_eq!(code, Some(2), "{printed}");
}

#[test]
fn a_platform_run_gates_against_the_baseline_of_an_earlier_one() {
    let Some(dir) = corpus_goldens(&CORPUS) else {
        return;
    };
    let fake = Fake::accepting(TOKEN);
    config(
        dir.path(),
        start(&fake),
        "{ run_method: naive, tool_calls: fake }",
    );
    let (code, _, printed) = with_token(dir.path(), &["--update-baseline", "baseline.json"]);
    assert_eq!(code, Some(0), "{printed}");

    fake.state().failing.push("missing_order_id".to_owned());
    let (code, report, printed) = with_token(
        dir.path(),
        &[
            "--baseline",
            "baseline.json",
            "--repeat",
            "2",
            "--max-repeat",
            "2",
            "--junit",
            "junit.xml",
        ],
    );
    assert_eq!(code, Some(1), "{printed}");
    let runs = fake.heard("POST", ":runEvaluation");
    let last = &runs.last().unwrap().body;
    assert_eq!(last["runCount"], 2, "--repeat is the platform's runCount");
    assert_eq!(last["goldenRunMethod"], "NAIVE");
    assert_eq!(last["config"]["toolCallBehaviour"], "FAKE");
    let case = common::case(&report, "missing_order_id");
    assert_eq!(case["status"], "failed", "{case:#}");
    assert_eq!(
        case["repeats"]["runs"].as_array().map(Vec::len),
        Some(2),
        "{case:#}"
    );
    let check = &case["turns"][0]["checks"][0];
    assert_eq!(check["status"], "failed");
    assert_eq!(check["score"], 0.25);
    assert_eq!(check["actual"], "Sorry, I did not understand.");
    assert!(
        check["reason"]
            .as_str()
            .unwrap()
            .contains("(threshold 3), Largely Inconsistent"),
        "{check:#}"
    );
    let newly: Vec<&Value> = report["gate"]["newly_failing"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    assert!(
        newly
            .iter()
            .any(|c| c.to_string().contains("missing_order_id")),
        "{:#}",
        report["gate"]
    );
    let junit = fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(
        junit.contains("missing_order_id") && junit.contains("<failure"),
        "{junit}"
    );
}

#[test]
fn a_run_that_ends_in_error_is_an_error_of_every_case() {
    let two_goldens = |dir: &Path| {
        local_golden(dir);
        let golden = "conversations:\n  - conversation: farewell\n    turns:\n      - user: Bye\n        agent: Goodbye!\n";
        fs::write(dir.join("goldens/second.yaml"), golden).unwrap();
    };
    let (dir, _fake) = platform_project(two_goldens, |p| p.finish = Finish::Error);
    let (code, report, printed) = with_token(dir.path(), &[]);
    assert_eq!(code, Some(2), "{printed}");
    let cases = report["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2, "{report:#}");
    assert!(cases.iter().all(|c| c["status"] == "error"), "{report:#}");
    let error = cases[0]["error"].as_str().unwrap();
    assert!(
        error.contains("in ERROR (RUN_FAILED): The app's agent could not be loaded."),
        "{error}"
    );
}

#[test]
fn a_poll_that_outlasts_the_timeout_cancels_the_run_and_still_writes_the_reports() {
    let (dir, fake) = platform_project(local_golden, |p| p.finish = Finish::Never);
    let started = Instant::now();
    let (code, report, printed) =
        with_token(dir.path(), &["--timeout", "2s", "--junit", "junit.xml"]);
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(code, Some(2), "{printed}");
    assert_eq!(report["incomplete"], true, "{report:#}");
    let error = report["cases"][0]["error"].as_str().unwrap();
    assert!(error.contains("did not finish within 2s"), "{error}");
    assert_eq!(
        fake.heard("POST", "/operations/op1:cancel").len(),
        1,
        "{printed}"
    );
    assert!(dir.path().join("junit.xml").is_file());
}

#[test]
fn a_token_that_expires_mid_poll_is_fetched_again() {
    let dir = tempfile::tempdir().unwrap();
    local_golden(dir.path());
    let fake = Fake::default();
    {
        let mut state = fake.state();
        state.polls_to_finish = 3;
        state.expire_token_after = Some(2);
    }
    let addr = start(&fake);
    config(dir.path(), addr, "true");
    let credentials = serde_json::json!({
        "type": "authorized_user",
        "client_id": "client.apps.googleusercontent.com",
        "client_secret": "client-secret-1",
        "refresh_token": "refresh-token-1",
        "token_uri": format!("http://{addr}/token"),
    });
    let file = dir.path().join("adc.json");
    fs::write(&file, credentials.to_string()).unwrap();
    let (code, report, printed) = common::run_without_google(
        dir.path(),
        &[],
        &[("GOOGLE_APPLICATION_CREDENTIALS", file.to_str().unwrap())],
    );
    assert_eq!(code, Some(0), "{printed}");
    assert_eq!(
        fake.state().issued,
        2,
        "one token, then one more after it expired"
    );
    assert_eq!(
        fake.state().runs[0].polls,
        4,
        "the refused poll was made again"
    );
    let written = printed + &report.to_string();
    assert!(
        !written.contains("ya29.issued"),
        "no token in the output or the report"
    );
}

#[test]
fn ctrl_c_cancels_the_evaluation_run_goldgate_started() {
    stopping_cancels_the_evaluation_run("-INT");
}

#[test]
fn sigterm_cancels_the_evaluation_run_goldgate_started() {
    stopping_cancels_the_evaluation_run("-TERM");
}

/// `goldgate run` sent `signal` while it polls: it cancels its evaluation run, and each case
/// says that goldgate cancelled it and why.
fn stopping_cancels_the_evaluation_run(signal: &str) {
    let (dir, fake) = platform_project(local_golden, |p| p.finish = Finish::Never);
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_goldgate"));
    command.current_dir(dir.path()).env("HOME", dir.path());
    for name in common::GOOGLE_ENV {
        command.env_remove(name);
    }
    let mut child = command
        .env("CXAS_OAUTH_TOKEN", TOKEN)
        .args([
            "run",
            "--output",
            "report.json",
            "--timeout",
            "60s",
            "goldens",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while fake.state().runs.first().is_none_or(|r| r.polls == 0) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = child.id().to_string();
    let sent = std::process::Command::new("kill")
        .args([signal, &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "goldgate did not stop"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(2));
    assert_eq!(fake.heard("POST", "/operations/op1:cancel").len(), 1);
    let report = common::read_json(&dir.path().join("report.json"));
    assert_eq!(report["incomplete"], true);
    let error = report["cases"][0]["error"].as_str().unwrap();
    common::assert_contains(
        error,
        &[
            "goldgate cancelled the evaluation run",
            "goldgate was stopped (Ctrl-C or SIGTERM)",
        ],
    );
}

#[test]
fn a_misspelt_platform_setting_is_an_error_with_its_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    local_golden(dir.path());
    let fake = Fake::accepting(TOKEN);
    let addr = start(&fake);
    config(dir.path(), addr, "{ run_method: stabel }");
    let (code, _, printed) = with_token(dir.path(), &[]);
    assert_eq!(code, Some(2), "{printed}");
    common::assert_contains(
        &printed,
        &[
            "goldgate.yaml:5",
            "agent.ces.platform.run_method",
            "did you mean `stable`?",
        ],
    );
    let text = format!(
        "agent:\n  ces:\n    app: {APP}\n    base_url: http://{addr}\n    api_version: v1\n    platform: true\n"
    );
    fs::write(dir.path().join("goldgate.yaml"), text).unwrap();
    let (code, _, printed) = with_token(dir.path(), &[]);
    assert_eq!(code, Some(2), "{printed}");
    common::assert_contains(&printed, &["goldgate.yaml:5", "exist only in v1beta"]);
    assert!(fake.state().heard.is_empty(), "bad input sends nothing");
}

/// The CES golden of tests/ces.rs without its last case, whose transfer target the fake app
/// lacks.
fn ces_csv() -> &'static str {
    let csv = include_str!("../fixtures/ces-support.golden.csv");
    &csv[..csv.find("Refund to sales").unwrap()]
}

#[test]
fn a_ces_csv_golden_is_pushed_as_scrapi_would_read_it() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("goldens")).unwrap();
    fs::write(dir.path().join("goldens/support.golden.csv"), ces_csv()).unwrap();
    let fake = Fake::accepting(TOKEN);
    config(dir.path(), start(&fake), "true");
    let (code, report, printed) = with_token(dir.path(), &[]);
    assert_eq!(fake.state().violations, Vec::<String>::new(), "{printed}");
    assert_eq!(code, Some(0), "{printed}");
    let created = fake.heard("POST", "/evaluations");
    let weather = created
        .iter()
        .find(|h| h.body["displayName"] == "Weather from the tool response")
        .unwrap();
    let mut turns = weather.body["golden"]["turns"].clone();
    normalise_ids(&mut turns).unwrap();
    let expected = serde_json::json!([{"steps": [
        {"userInput": {"text": "How is the weather?"}},
        {"expectation": {"agentResponse": {"role": "agent", "chunks": [{"text": "It is rainy in Oslo."}]}}},
        {"expectation": {"toolCall": {"id": "ID", "tool": format!("{APP}/tools/get_weather"), "args": {"city": "Oslo"}}}},
        {"expectation": {"toolResponse": {"id": "ID", "tool": format!("{APP}/tools/get_weather"), "response": {"output": "rainy"}}}},
    ]}]);
    assert_eq!(turns, expected);
    let refund = created
        .iter()
        .find(|h| h.body["displayName"] == "Refund to billing")
        .unwrap();
    let transfer = &refund.body["golden"]["turns"][0]["steps"][1]["expectation"]["agentTransfer"];
    assert_eq!(transfer["targetAgent"], format!("{APP}/agents/b1"));
    let case = common::case(&report, "Refund to billing");
    assert_eq!(
        case["turns"][0]["reply"]["transfer"]["agent"], "Billing Agent",
        "{case:#}"
    );
}
