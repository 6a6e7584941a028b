//! The JUnit XML of real runs against a loopback agent, checked the way strict readers check
//! it: `xmllint` against Jenkins' junit-10.xsd (the whole file) and Maven Surefire's 3.0 schema
//! (each `testsuite` as its own document), for a plain run, a run with errors and a
//! `--repeat 3` run. Testcase `file` and `line` are outside both schemas: the default output is
//! checked with them taken out, and `--junit-strict` output as it is.
//!
//! Then what readers show: paths from the repository's root although the goldens were given as
//! absolute paths, a failed case's line at its failing check, text inside `skipped`, and suite
//! names equal to classnames.
//!
//! `xmllint` comes from Debian's libxml2-utils, which `.ci/run` installs: the schema check is
//! a test of its own, ignored by a plain `cargo test` (the summary counts it) and run by
//! `.ci/run` with `--ignored`, where a missing xmllint fails it.

use crate::common;
use std::collections::HashMap;
use std::fs;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command as Process;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

const SHIPPED: &str = "Your order ORD-12345 has shipped.";

/// What the agent does with a request.
#[derive(Clone, Copy)]
enum Reply {
    Right,
    /// The wrong text.
    Wrong,
    /// The right text, but the tool called with the wrong order id.
    WrongArgument,
    /// A 500: an error of the run (the tests pass `--retries 0`).
    Fail,
}

/// Per conversation, the replies to its 1st, 2nd, 3rd... request (the last one repeats). The
/// runs of a repeated case are concurrent, so which run gets which reply is left to chance,
/// but the set of outcomes, and so the verdict, is fixed.
fn script(conversation: &str) -> &'static [Reply] {
    use Reply::*;
    match conversation {
        "flaky" => &[Wrong, Right, Right],
        "broken" => &[Wrong],
        "glitchy" => &[Fail, Right, Right],
        "mixed" => &[Wrong, Fail, Wrong],
        "unlucky" => &[Wrong, Fail, Right],
        "down" => &[Fail],
        "wrong_argument" => &[WrongArgument],
        _ => &[Right],
    }
}

type Calls = Arc<Mutex<HashMap<String, usize>>>;

async fn agent(State(calls): State<Calls>, Json(request): Json<Value>) -> Response {
    let conversation = request["conversation"].as_str().unwrap_or_default();
    let reply = {
        let mut calls = calls.lock().unwrap();
        let count = calls.entry(conversation.to_owned()).or_default();
        let script = script(conversation);
        *count += 1;
        script[(*count - 1).min(script.len() - 1)]
    };
    let order = |id: &str| json!([{"name": "lookup_order", "args": {"order_id": id}}]);
    let body = match reply {
        Reply::Right => json!({"messages": [{"text": SHIPPED}], "tool_calls": order("ORD-12345")}),
        Reply::Wrong => json!({"messages": [{"text": "Sorry, I cannot help with that."}]}),
        Reply::WrongArgument => {
            json!({"messages": [{"text": SHIPPED}], "tool_calls": order("ORD-54321")})
        }
        Reply::Fail => return (StatusCode::INTERNAL_SERVER_ERROR, "down").into_response(),
    };
    Json(body).into_response()
}

fn start_agent() -> SocketAddr {
    common::serve_turn(agent, Calls::default())
}

/// A repository (it has a `.git`) with one SCRAPI golden holding `conversations` and, with
/// `scenarios`, two gecx scenarios: one failed by a conversation-level scorer, one skipped
/// (its only scorer needs an LLM judge). Returns the repository's root.
fn write_repo(dir: &Path, conversations: &[&str], scenarios: bool) -> PathBuf {
    let repo = dir.join("repo");
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::create_dir_all(repo.join("evals/goldens")).unwrap();
    let mut golden =
        String::from("common_session_parameters:\n  order_12345_status: shipped\nconversations:\n");
    for name in conversations {
        golden.push_str(&format!(
            "  - conversation: {name}\n    turns:\n      - user: Where is ORD-12345?\n        tool_calls:\n          - action: lookup_order\n            args:\n              order_id: ORD-12345\n        agent: {SHIPPED}\n"
        ));
    }
    common::write(&repo, "evals/goldens/orders.yaml", golden);
    if scenarios {
        common::write(
            &repo,
            "evals/thanks.scenario.yaml",
            "id: thanks\nwhen:\n  - user: Where is ORD-12345?\nthen:\n  - scorer: no-error\n  - scorer: message-contains\n    args: { pattern: thank you }\n",
        );
        common::write(
            &repo,
            "evals/helpful.scenario.yaml",
            "id: helpful\nwhen:\n  - user: Where is ORD-12345?\nthen:\n  - scorer: llm-judge-helpfulness\n",
        );
    }
    repo
}

/// `goldgate run` in `repo` on the goldens given as absolute paths, writing `junit.xml` and
/// `report.json`; then `goldgate report` writes `strict.xml` with `--junit-strict`. Returns
/// the exit code of the run and the two XML files.
fn run(repo: &Path, addr: SocketAddr, extra: &[&str]) -> (Option<i32>, String, String) {
    let output = common::command_in(repo)
        .args(["run", "--agent-url", &format!("http://{addr}/turn")])
        .args(["--retries", "0", "--timeout", "10s"])
        .args(["--junit", "junit.xml", "--output", "report.json"])
        .args(extra)
        .arg(repo.join("evals"))
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    let strict = common::command_in(repo)
        .args([
            "report",
            "report.json",
            "--junit",
            "strict.xml",
            "--junit-strict",
        ])
        .output()
        .unwrap();
    assert!(
        repo.join("strict.xml").is_file(),
        "{log}\n{}",
        String::from_utf8_lossy(&strict.stderr)
    );
    (
        output.status.code(),
        fs::read_to_string(repo.join("junit.xml")).unwrap_or_else(|e| panic!("{e}\n{log}")),
        fs::read_to_string(repo.join("strict.xml")).unwrap(),
    )
}

fn schema(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/junit_xsd")
        .join(name)
}

/// `xmllint --noout --schema SCHEMA` on `xml`; the error text when it does not validate.
fn xmllint(xml: &str, schema: &Path) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("junit.xml");
    fs::write(&file, xml).unwrap();
    let output = Process::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(schema)
        .arg(&file)
        .output()
        .unwrap();
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

/// Each `testsuite` element of `xml` as a document of its own, as Surefire writes them.
fn suites(xml: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(xml).unwrap();
    doc.root_element()
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .map(|n| {
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}\n",
                &xml[n.range()]
            )
        })
        .collect()
}

/// `xml` valid against both schemas.
fn assert_valid(xml: &str) {
    common::require_tool(
        "xmllint",
        "--version",
        "install Debian's libxml2-utils, as .ci/run does",
    );
    if let Err(errors) = xmllint(xml, &schema("junit-10.xsd")) {
        panic!("not valid against junit-10.xsd:\n{errors}\n{xml}");
    }
    let suites = suites(xml);
    assert!(!suites.is_empty(), "{xml}");
    for suite in suites {
        if let Err(errors) = xmllint(&suite, &schema("surefire-test-report-3.0.xsd")) {
            panic!("not valid against surefire-test-report-3.0.xsd:\n{errors}\n{suite}");
        }
    }
}

/// `xml` without testcase `file` and `line` attributes.
fn without_locations(xml: &str) -> String {
    let mut out = String::with_capacity(xml.len());
    let mut rest = xml;
    while let Some(start) = rest.find("<testcase ") {
        let end = start + rest[start..].find('>').unwrap();
        out.push_str(&rest[..start]);
        let tag = &rest[start..end];
        let mut kept = String::new();
        let mut attributes = tag;
        // Attribute values are escaped: none holds a `"`.
        while let Some(at) = attributes
            .find(" file=\"")
            .or_else(|| attributes.find(" line=\""))
        {
            kept.push_str(&attributes[..at]);
            let value_start = attributes[at..].find('"').unwrap() + at + 1;
            let value_end = value_start + attributes[value_start..].find('"').unwrap();
            attributes = &attributes[value_end + 1..];
        }
        kept.push_str(attributes);
        out.push_str(&kept);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn testcase<'a, 'input>(
    doc: &'a roxmltree::Document<'input>,
    name: &str,
) -> roxmltree::Node<'a, 'input> {
    doc.descendants()
        .find(|n| n.has_tag_name("testcase") && n.attribute("name") == Some(name))
        .unwrap_or_else(|| panic!("no testcase {name}"))
}

/// The tags of a testcase's child elements, but its transcript.
fn children(doc: &roxmltree::Document, name: &str) -> Vec<String> {
    testcase(doc, name)
        .children()
        .filter(|n| n.is_element() && !n.has_tag_name("system-out"))
        .map(|n| n.tag_name().name().to_owned())
        .collect()
}

/// The 1-based line of the first line of `file` that contains `text` after `after`.
fn line_of(file: &Path, after: &str, text: &str) -> String {
    let content = fs::read_to_string(file).unwrap();
    let start = content.find(after).unwrap();
    let at = start + content[start..].find(text).unwrap();
    (content[..at].matches('\n').count() + 1).to_string()
}

/// A run in a repository of its own: its exit code, the XML and the `--junit-strict` XML.
struct Junit {
    code: Option<i32>,
    xml: String,
    strict: String,
    repo: PathBuf,
    _dir: tempfile::TempDir,
}

impl Junit {
    /// Writes a repository with `conversations` (and the scenarios) and runs it with `extra`.
    fn run(conversations: &[&str], scenarios: bool, extra: &[&str]) -> Junit {
        let dir = tempfile::tempdir().unwrap();
        let repo = write_repo(dir.path(), conversations, scenarios);
        let (code, xml, strict) = run(&repo, start_agent(), extra);
        Junit {
            code,
            xml,
            strict,
            repo,
            _dir: dir,
        }
    }

    /// The XML, once the run exited `code` and its strict XML proved to be the XML without
    /// locations.
    #[track_caller]
    fn ended(&self, code: i32) -> roxmltree::Document<'_> {
        assert_eq!(self.code, Some(code), "{}", self.xml);
        assert_eq!(self.strict, without_locations(&self.xml));
        roxmltree::Document::parse(&self.xml).unwrap()
    }
}

/// A run with a passing, a failing, a failed-by-scorer and a skipped case.
fn plain_run() -> Junit {
    Junit::run(&["happy", "wrong_argument"], true, &[])
}

/// [`plain_run`] with a case whose agent fails (a 500): errors of the run.
fn run_with_errors() -> Junit {
    Junit::run(&["happy", "wrong_argument", "down"], true, &[])
}

/// Cases repeated 3 times, needing 2 passes, with every mix of passed, failed and errored runs.
fn repeated_run() -> Junit {
    let cases = ["steady", "flaky", "broken", "glitchy", "mixed", "unlucky"];
    Junit::run(&cases, false, &["--repeat", "3", "--min-pass", "2"])
}

/// [`plain_run`] under a floor it does not meet (goldgate.yaml's `floors:`): the run's own
/// failure, a testcase of the `goldgate` suite, beside the cases'.
fn below_floor_run() -> Junit {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("goldgate.yaml");
    fs::write(&config, "floors:\n  min_pass_rate: 0.9\n").unwrap();
    let config = config.to_string_lossy().into_owned();
    Junit::run(&["happy", "wrong_argument"], true, &["--config", &config])
}

/// A run whose golden does not load (a misspelt `turns`): its exit code and its JUnit, with
/// and without `--junit-strict`.
fn not_run() -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let repo = write_repo(dir.path(), &["happy"], false);
    let golden = repo.join("evals/goldens/orders.yaml");
    let broken = fs::read_to_string(&golden)
        .unwrap()
        .replace("turns:", "turnz:");
    fs::write(&golden, broken).unwrap();
    let junit = |strict: &[&str]| {
        let output = common::command_in(&repo)
            .args([
                "run",
                "--agent-url",
                "http://127.0.0.1:9/turn",
                "--junit",
                "junit.xml",
            ])
            .args(strict)
            .arg(repo.join("evals"))
            .output()
            .unwrap();
        let xml = fs::read_to_string(repo.join("junit.xml")).unwrap_or_default();
        (output.status.code(), xml)
    };
    let (code, xml) = junit(&[]);
    let (_, strict) = junit(&["--junit-strict"]);
    (code, xml, strict)
}

#[test]
#[ignore = "needs xmllint: run with --ignored (.ci/run does)"]
fn every_run_validates_against_both_schemas() {
    let below_floor = below_floor_run();
    common::assert_contains(&below_floor.xml, &["<testcase name=\"floor not met\""]);
    for run in [plain_run(), run_with_errors(), repeated_run(), below_floor] {
        assert_valid(&without_locations(&run.xml));
        assert_valid(&run.strict);
    }
    let (_, xml, strict) = not_run();
    assert_valid(&without_locations(&xml));
    assert_valid(&strict);
}

#[test]
fn a_golden_that_does_not_load_is_an_error_at_its_line_not_a_missing_file() {
    let (code, xml, strict) = not_run();
    assert_eq!(code, Some(2), "{xml}");
    assert_eq!(strict, without_locations(&xml));
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let case = testcase(&doc, "loads");
    assert_eq!(case.attribute("file"), Some("evals/goldens/orders.yaml"));
    assert_eq!(case.attribute("line"), Some("5"), "{xml}");
    let error = case.children().find(|n| n.has_tag_name("error")).unwrap();
    assert_eq!(error.attribute("type"), Some("not-run"));
    let message = error.attribute("message").unwrap();
    common::assert_contains(message, &["[G100]", "turnz", "did you mean `turns`?"]);
}

#[test]
fn a_plain_run_points_at_the_failing_checks() {
    let run = plain_run();
    let doc = run.ended(1);
    let (xml, repo) = (&run.xml, &run.repo);
    // Paths from the repository's root, although the goldens were given as absolute paths;
    // suite names equal to classnames (one group per file in dorny/test-reporter).
    let golden = "evals/goldens/orders.yaml";
    let happy = testcase(&doc, "happy");
    assert_eq!(happy.attribute("file"), Some(golden));
    assert_eq!(
        happy.attribute("classname"),
        Some("evals/goldens/orders_yaml")
    );
    for suite in doc.descendants().filter(|n| n.has_tag_name("testsuite")) {
        for case in suite.children().filter(|n| n.has_tag_name("testcase")) {
            assert_eq!(case.attribute("classname"), suite.attribute("name"));
        }
    }
    // A passing case at its first line; a failing one at the check that failed: the tool
    // call's argument in the second turn, the scenario's `message-contains` scorer.
    let orders = repo.join(golden);
    assert_eq!(
        happy.attribute("line"),
        Some(line_of(&orders, "conversation: happy", "conversation:").as_str())
    );
    let wrong = testcase(&doc, "wrong_argument");
    let check_line = line_of(
        &orders,
        "conversation: wrong_argument",
        "- action: lookup_order",
    );
    assert_eq!(wrong.attribute("line"), Some(check_line.as_str()), "{xml}");
    let failure = wrong
        .children()
        .find(|n| n.has_tag_name("failure"))
        .unwrap();
    assert_eq!(failure.attribute("type"), Some("tool-call"));
    let thanks = testcase(&doc, "thanks");
    assert_eq!(thanks.attribute("file"), Some("evals/thanks.scenario.yaml"));
    assert_eq!(thanks.attribute("line"), Some("6"), "{xml}");
    // A skipped case says why, as text (GitLab shows the text) and as its message.
    let skipped = testcase(&doc, "helpful")
        .children()
        .find(|n| n.has_tag_name("skipped"))
        .unwrap();
    let reason = skipped.text().unwrap_or_default();
    assert!(reason.contains("judge"), "{xml}");
    assert_eq!(skipped.attribute("message"), Some(reason));
    // No properties inside a testcase: the tags and the score head the transcript. Each
    // suite carries the run's verdict as properties.
    for node in doc.descendants() {
        let properties = node.children().any(|n| n.has_tag_name("properties"));
        assert_eq!(properties, node.has_tag_name("testsuite"), "{xml}");
    }
    let out = happy
        .children()
        .find(|n| n.has_tag_name("system-out"))
        .and_then(|n| n.text())
        .unwrap();
    assert!(out.starts_with("tags: orders\nscore: 1.000\n"), "{out}");
}

#[test]
fn a_run_with_errors_marks_them() {
    let run = run_with_errors();
    let doc = run.ended(2);
    let down = testcase(&doc, "down");
    let error = down.children().find(|n| n.has_tag_name("error")).unwrap();
    assert_eq!(error.attribute("type"), Some("run-error"));
    // The agent failed on the first turn: the case points there.
    let orders = run.repo.join("evals/goldens/orders.yaml");
    assert_eq!(
        down.attribute("line"),
        Some(line_of(&orders, "conversation: down", "- user:").as_str())
    );
}

#[test]
fn a_repeated_run_shows_its_reruns() {
    let run = repeated_run();
    let doc = run.ended(2);
    let xml = &run.xml;
    assert!(children(&doc, "steady").is_empty(), "{xml}");
    assert_eq!(children(&doc, "flaky"), ["flakyFailure"], "{xml}");
    assert_eq!(children(&doc, "glitchy"), ["flakyError"], "{xml}");
    assert_eq!(
        children(&doc, "broken"),
        ["failure", "rerunFailure", "rerunFailure"],
        "{xml}"
    );
    // Failures before errors, as Surefire orders them.
    assert_eq!(
        children(&doc, "mixed"),
        ["failure", "rerunFailure", "rerunError"],
        "{xml}"
    );
    // An errored case's failed run cannot precede its `error`: its text names it.
    assert_eq!(children(&doc, "unlucky"), ["error"], "{xml}");
    let error = testcase(&doc, "unlucky")
        .children()
        .find(|n| n.has_tag_name("error"))
        .unwrap();
    assert!(
        error.text().is_some_and(|t| t
            .lines()
            .any(|l| l.trim().starts_with("run ") && l.trim_end().ends_with("of 3 failed"))),
        "{xml}"
    );
    for rerun in doc.descendants().filter(|n| {
        ["flakyFailure", "flakyError", "rerunFailure", "rerunError"]
            .iter()
            .any(|tag| n.has_tag_name(*tag))
    }) {
        assert!(rerun.attribute("type").is_some(), "{xml}");
    }
}
