//! goldgate on a pull request, against a loopback server that speaks GitHub's REST API with
//! GitHub's own payloads (full user objects, reactions, timestamps, `Link` pagination) under an
//! Enterprise-style `/api/v3` base path, and serves the agent under test at `/turn`.
//!
//! What must hold: one sticky comment per suite, created once and then edited in place (found
//! on any page); a refused or missing token leaves the verdict and the other outputs alone and
//! says why in one line; hostile agent text cannot ping, inject HTML or break out of its code
//! fence, and a huge reply is cut below GitHub's limit; the step summary, the step outputs and
//! the annotations are written; the token appears nowhere but in the Authorization header.

use crate::{common, github_support};
use std::fs;
use std::path::Path;

use assert_cmd::Command;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use common::Outcome;
use github_support::{
    MARKER, PASSING_REPLY, PR, REPO, Rendered, Server, TOKEN, assert_only_goldgates_html, render,
};

// ---- the repository under test --------------------------------------------------------------

/// A workspace with one golden file holding `conversations` (see [`agent`]).
fn workspace(conversations: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut golden = String::from("conversations:\n");
    for name in conversations {
        let user = match *name {
            "hostile" => "\"Tell @octocat about <b>this</b>\"",
            _ => "Where is ORD-12345?",
        };
        golden.push_str(&format!(
            "  - conversation: {name}\n    turns:\n      - user: {user}\n        agent: {PASSING_REPLY}\n"
        ));
    }
    common::write(dir.path(), "goldens/orders.yaml", golden);
    github_support::write_pr_event(dir.path());
    dir
}

/// goldgate as a pull_request workflow step runs it.
fn goldgate(dir: &Path, server: &Server) -> Command {
    let mut cmd = common::command_in(dir);
    github_support::as_pr_step(&mut cmd, dir, server, "summary.md");
    cmd
}

/// `goldgate run` of the workspace's goldens against the server's agent, with `extra` flags.
fn run(dir: &Path, server: &Server, extra: &[&str]) -> Outcome {
    Outcome::of(
        goldgate(dir, server)
            .args(["run", "--output", "report.json", "--agent-url"])
            .arg(format!("http://{}/turn", server.addr))
            .arg(dir.join("goldens"))
            .args(extra),
    )
}

/// Everything goldgate wrote, to search for the token.
fn everything(dir: &Path, ran: &Outcome, server: &Server) -> String {
    let mut all = format!("{}{}", ran.stdout, ran.stderr);
    for file in ["summary.md", "output.txt", "report.json"] {
        all.push_str(&fs::read_to_string(dir.join(file)).unwrap_or_default());
    }
    for comment in server.comments() {
        all.push_str(comment["body"].as_str().unwrap_or_default());
    }
    all
}

// ---- the tests -------------------------------------------------------------------------------

#[test]
fn the_first_run_creates_the_comment_and_the_next_one_edits_it() {
    let dir = workspace(&["order_lookup", "hostile"]);
    let server = Server::start();

    let first = run(dir.path(), &server, &["--comment"]).exits(1);
    let comments = server.comments();
    assert_eq!(comments.len(), 1);
    let body = comments[0]["body"].as_str().unwrap();
    assert!(body.starts_with(MARKER), "{body}");
    first.warns(&["commented on the pull request"]);

    let second = run(dir.path(), &server, &["--comment"]).exits(1);
    let comments = server.comments();
    assert_eq!(comments.len(), 1, "a second comment was created");
    assert_eq!(comments[0]["updated_at"], "2026-11-22T10:05:00Z");
    second.warns(&["updated the pull request comment"]);

    let requests = server.requests();
    let creates = requests
        .iter()
        .filter(|r| r.starts_with(&format!("POST /api/v3/repos/{REPO}/issues/{PR}/comments")))
        .count();
    let updates = requests
        .iter()
        .filter(|r| r.contains(&format!("/api/v3/repos/{REPO}/issues/comments/")))
        .count();
    assert_eq!((creates, updates), (1, 1), "{requests:#?}");
    // The Enterprise base path was kept on every call.
    assert!(
        requests
            .iter()
            .filter(|r| !r.starts_with("POST /turn"))
            .all(|r| r.split(' ').nth(1).unwrap().starts_with("/api/v3/")),
        "{requests:#?}"
    );

    let fake = server.fake.lock().unwrap();
    assert!(!fake.authorizations.is_empty());
    assert!(
        fake.authorizations
            .iter()
            .all(|a| a == &format!("Bearer {TOKEN}"))
    );
    drop(fake);
    for ran in [&first, &second] {
        assert!(!everything(dir.path(), ran, &server).contains(TOKEN));
    }
}

#[test]
fn the_comment_is_found_on_a_later_page_and_a_quote_of_it_is_left_alone() {
    let dir = workspace(&["order_lookup"]);
    let server = Server::start();
    // A report to publish, written without any GitHub environment.
    run(dir.path(), &server, &[]).exits(0);

    let mut bodies: Vec<String> = (0..130).map(|i| format!("review comment {i}")).collect();
    bodies[3] = format!("> {MARKER}\n> quoting the bot");
    bodies[114] = format!("{MARKER}\nan old report");
    server.seed(bodies);
    let ours = server.comments()[114]["id"].as_u64().unwrap();

    let output = goldgate(dir.path(), &server)
        .args(["report", "report.json", "--comment"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");

    let comments = server.comments();
    assert_eq!(comments.len(), 130, "no new comment");
    assert!(
        comments[114]["body"]
            .as_str()
            .unwrap()
            .contains("the 1 case passed")
    );
    assert!(
        comments[3]["body"]
            .as_str()
            .unwrap()
            .contains("quoting the bot")
    );
    let requests = server.requests();
    let github: Vec<&String> = requests
        .iter()
        .filter(|r| !r.starts_with("POST /turn"))
        .collect();
    assert_eq!(github.len(), 3, "{github:#?}");
    assert!(github[0].starts_with("GET ") && github[0].contains("per_page=100"));
    assert!(github[1].starts_with("GET ") && github[1].contains("page=2"));
    assert!(
        github[2].ends_with(&format!("/issues/comments/{ours}")),
        "{github:#?}"
    );
}

#[test]
fn a_refused_token_costs_one_line_and_nothing_else() {
    let dir = workspace(&["order_lookup"]);
    let server = Server::start();
    server.fake.lock().unwrap().refuse_writes = true;

    let ran = run(dir.path(), &server, &["--comment"]);
    assert_eq!(
        ran.code,
        Some(0),
        "the verdict, not the comment, decides: {}",
        ran.stderr
    );
    let lines: Vec<&str> = ran
        .stderr
        .lines()
        .filter(|l| l.contains("comment"))
        .collect();
    assert_eq!(lines.len(), 1, "{}", ran.stderr);
    assert!(
        lines[0].contains("HTTP 403") && lines[0].contains("fork"),
        "{}",
        lines[0]
    );
    assert!(server.comments().is_empty());
    // The step summary and the outputs are written all the same.
    assert!(
        fs::read_to_string(dir.path().join("summary.md"))
            .unwrap()
            .starts_with(MARKER)
    );
    let outputs = fs::read_to_string(dir.path().join("output.txt")).unwrap();
    common::assert_contains(&outputs, &["pass-rate=100.0\n"]);
    assert!(!everything(dir.path(), &ran, &server).contains(TOKEN));
}

#[test]
fn without_a_token_nothing_is_sent_and_the_run_says_why() {
    let dir = workspace(&["order_lookup", "hostile"]);
    let server = Server::start();
    let goldens = dir.path().join("goldens");
    let output = goldgate(dir.path(), &server)
        .env_remove("GITHUB_TOKEN")
        .args(["run", "--comment", "--agent-url"])
        .arg(format!("http://{}/turn", server.addr))
        .arg(&goldens)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("comment")).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains("GITHUB_TOKEN"), "{}", lines[0]);
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.starts_with("POST /turn")),
        "{:#?}",
        server.requests()
    );
}

#[test]
fn hostile_agent_text_is_inert_and_a_huge_reply_is_cut_below_the_limit() {
    let dir = workspace(&["order_lookup", "hostile", "hostile_error"]);
    let server = Server::start();
    let ran = run(dir.path(), &server, &["--comment", "--retries", "0"]);
    assert_eq!(ran.code, Some(2), "an error of the run: {}", ran.stderr);
    let comments = server.comments();
    let body = comments[0]["body"].as_str().unwrap();

    assert!(
        body.chars().count() < 65_536 && body.len() < 65_536,
        "{}",
        body.len()
    );
    assert!(
        body.contains("more characters in the JSON report"),
        "the cut is not said"
    );

    let Rendered {
        code_text,
        footer_link,
        html,
        prose,
    } = render(body);
    // Every fence closed: the run link after the last one is a real link.
    assert_eq!(
        footer_link.as_deref(),
        Some("https://github.example/acme/agents/actions/runs/4242")
    );
    assert!(
        code_text.contains("<script>alert('pwned')</script>"),
        "shown as code"
    );
    assert!(
        code_text.contains("```\n````"),
        "the fences in the reply are shown verbatim"
    );
    assert_only_goldgates_html(&html);
    // Text events may split at escapes: the prose as a whole holds no mention either.
    assert!(
        !prose.contains("@octocat") && !prose.contains("#1"),
        "{prose}"
    );
    // The error of the run, quoted from the agent, reads as text and does nothing.
    common::assert_contains(&prose, &["<script>alert(1)</script>"]);
    common::assert_contains(&prose, &["[click](https:"]);
    let opened = body.matches("<details>").count();
    assert_eq!(opened, 2);
    assert_eq!(
        body.matches("</details>").count() - 1,
        opened,
        "the reply's own </details> is inside code"
    );
}

#[test]
fn a_body_over_the_limit_keeps_whole_blocks_and_says_what_it_left_out() {
    let names: Vec<String> = (1..=60).map(|i| format!("hostile_{i:02}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let dir = workspace(&names);
    let server = Server::start();
    let ran = run(dir.path(), &server, &["--comment"]).exits(1);
    let comments = server.comments();
    assert_eq!(comments.len(), 1, "{}", ran.stderr);
    let body = comments[0]["body"].as_str().unwrap();
    assert!(body.len() < 65_536, "{}", body.len());
    assert!(body.len() > 50_000, "the budget is used: {}", body.len());
    assert!(
        body.contains("failing cases. The JSON report has everything."),
        "no note"
    );

    let (mut opened, mut closed, mut in_code_block, mut last_link) = (0, 0, false, None);
    for event in Parser::new_ext(body, Options::ENABLE_TABLES) {
        match event {
            Event::Html(html) if html.starts_with("<details>") => opened += 1,
            Event::Html(html) if html.starts_with("</details>") => closed += 1,
            Event::Start(Tag::CodeBlock(_)) => in_code_block = true,
            Event::End(TagEnd::CodeBlock) => in_code_block = false,
            Event::Start(Tag::Link { dest_url, .. }) if !in_code_block => {
                last_link = Some(dest_url.to_string())
            }
            _ => {}
        }
    }
    assert!(opened > 5 && opened < 60, "{opened} cases shown");
    assert_eq!(opened, closed, "a <details> left open");
    assert!(!in_code_block);
    assert!(
        last_link.is_some_and(|l| l.ends_with("/actions/runs/4242")),
        "the footer survived"
    );
}

#[test]
fn against_a_baseline_the_summary_shows_deltas_and_what_flipped() {
    let server = Server::start();
    let dir = workspace(&["order_lookup"]);
    run(dir.path(), &server, &["--update-baseline", "baseline.json"]).exits(0);
    // A new conversation that fails: newly failing, and the pass rate drops 50 points.
    let golden = dir.path().join("goldens/orders.yaml");
    let mut text = fs::read_to_string(&golden).unwrap();
    text.push_str(&format!(
        "  - conversation: hostile\n    turns:\n      - user: hi\n        agent: {PASSING_REPLY}\n"
    ));
    fs::write(&golden, text).unwrap();
    fs::remove_file(dir.path().join("summary.md")).unwrap();
    fs::remove_file(dir.path().join("output.txt")).unwrap();

    run(
        dir.path(),
        &server,
        &["--baseline", "baseline.json", "--fail-on-regress"],
    )
    .exits(1);
    let summary = fs::read_to_string(dir.path().join("summary.md")).unwrap();
    common::assert_contains(
        &summary,
        &["| Pass rate | 50.0% | 100.0% | ↓ 50 pp | ✅ within 0 pp, case by case |"],
    );
    common::assert_contains(
        &summary,
        &["| Deflection rate | 100.0% | 100.0% | → 0 pp | ✅ within 5 pp |"],
    );
    common::assert_contains(
        &summary,
        &["#### Newly failing (1)\n\n- `hostile` `goldens/orders.yaml:"],
    );
    common::assert_contains(
        &summary,
        &["at a 1% false-alarm rate: 1 newly failing, 0 newly passing."],
    );
    common::assert_contains(&summary, &["· newly failing</summary>"]);
    let outputs = fs::read_to_string(dir.path().join("output.txt")).unwrap();
    common::assert_contains(&outputs, &["regressed=true\n"]);

    // `goldgate report --baseline` renders the same comparison from the saved report.
    let output = goldgate(dir.path(), &server)
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_OUTPUT")
        .env_remove("GITHUB_ACTIONS")
        .args([
            "report",
            "report.json",
            "--baseline",
            "baseline.json",
            "--markdown",
            "again.md",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let again = fs::read_to_string(dir.path().join("again.md")).unwrap();
    common::assert_contains(
        &again,
        &["| Pass rate | 50.0% | 100.0% | ↓ 50 pp | ✅ within 0 pp, case by case |"],
    );
}

#[test]
fn the_step_summary_outputs_and_annotations_are_written() {
    let dir = workspace(&["order_lookup", "hostile"]);
    let server = Server::start();
    let ran = run(dir.path(), &server, &[]).exits(1);

    let summary = fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(summary.starts_with(MARKER), "{summary}");
    common::assert_contains(&summary, &["### goldgate: ❌ 1 of 2 cases failed"]);
    common::assert_contains(&summary, &["<code>hostile</code>"]);
    assert_eq!(
        fs::read_to_string(dir.path().join("output.txt")).unwrap(),
        "pass-rate=50.0\npassed=1\nfailed=1\nregressed=false\nverdict=failed\nexit=1\nheadline=1 of 2 cases failed\nundecided=0\ncost=\nreport=report.json\n"
    );

    // The line of the failing check (the expected agent text, below the turn's user line) in
    // its golden, the path relative to the workspace although the goldens were named by their
    // absolute path.
    let golden = fs::read_to_string(dir.path().join("goldens/orders.yaml")).unwrap();
    let turn = golden
        .lines()
        .position(|l| l.contains("Tell @octocat"))
        .unwrap();
    let line = turn
        + golden
            .lines()
            .skip(turn)
            .position(|l| l.trim_start().starts_with("agent:"))
            .unwrap()
        + 1;
    let annotations: Vec<&str> = ran.stdout.lines().filter(|l| l.starts_with("::")).collect();
    assert_eq!(annotations.len(), 1, "{}", ran.stdout);
    let expected = format!(
        "::error file=goldens/orders.yaml,line={line},title=goldgate%3A hostile turn 1%3A agent text failed::"
    );
    assert!(annotations[0].starts_with(&expected), "{}", annotations[0]);
    assert!(!annotations[0].contains('\x1b'));
    // No comment without --comment.
    assert!(server.comments().is_empty());
}

#[test]
fn a_golden_that_stops_loading_turns_the_comment_into_not_run_and_annotates_its_line() {
    let dir = workspace(&["order_lookup"]);
    let server = Server::start();
    run(dir.path(), &server, &["--comment"]).exits(0);
    // The pull request breaks the golden: its comment must not go on saying that it passed.
    let golden = dir.path().join("goldens/orders.yaml");
    let broken = fs::read_to_string(&golden)
        .unwrap()
        .replace("turns:", "turnz:");
    fs::write(&golden, broken).unwrap();
    let ran = run(dir.path(), &server, &["--comment"]).exits(2);

    let comments = server.comments();
    assert_eq!(
        comments.len(),
        1,
        "the sticky comment was edited, not added to"
    );
    let body = comments[0]["body"].as_str().unwrap();
    assert!(body.starts_with(MARKER), "{body}");
    let problem = "goldens/orders.yaml:3: error [G100] conversations[0].turnz: unknown key";
    common::assert_contains(body, &["⚠️ not run", problem, "did you mean `turns`?"]);
    common::assert_lacks(body, &["**1** passed"]);
    ran.says(&["::error file=goldens/orders.yaml,line=3,col=5,title=goldgate G100::"])
        .warns(&["updated the pull request comment"]);
    let summary = fs::read_to_string(dir.path().join("summary.md")).unwrap();
    common::assert_contains(&summary, &["⚠️ not run", problem]);
    let outputs = fs::read_to_string(dir.path().join("output.txt")).unwrap();
    let verdicts: Vec<&str> = outputs
        .lines()
        .filter(|l| l.starts_with("verdict="))
        .collect();
    assert_eq!(verdicts, ["verdict=pass", "verdict=error"]);
    assert!(!everything(dir.path(), &ran, &server).contains(TOKEN));
}

#[test]
fn goldgate_report_renders_markdown_from_a_saved_report() {
    let dir = workspace(&["order_lookup", "hostile"]);
    let server = Server::start();
    run(dir.path(), &server, &[]).exits(1);
    let output = common::command_in(dir.path())
        .env("GITHUB_WORKSPACE", dir.path())
        .args(["report", "report.json", "--markdown", "summary-again.md"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "the report's verdict");
    let again = fs::read_to_string(dir.path().join("summary-again.md")).unwrap();
    let summary = fs::read_to_string(dir.path().join("summary.md")).unwrap();
    // The same Markdown, but for the run link (no workflow run around `report` here).
    let strip = |text: &str| {
        text.lines()
            .filter(|l| !l.starts_with("<sub>"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&again), strip(&summary));
}

#[test]
fn goldgate_report_writes_the_junit_that_the_run_wrote() {
    // A case that passes, one that fails on hostile text, one stopped by an error of the run.
    let dir = workspace(&["order_lookup", "hostile", "hostile_error"]);
    let server = Server::start();
    run(dir.path(), &server, &["--junit", "run.xml"]).exits(2);
    let report = |junit: &str| {
        common::command_in(dir.path())
            // The same workspace as the run's: JUnit names files from its root.
            .env("GITHUB_WORKSPACE", dir.path())
            .args(["report", "report.json", "--junit", junit])
            .output()
            .unwrap()
    };
    let output = report("report.xml");
    assert_eq!(output.status.code(), Some(2), "the report's verdict");

    // The same document, byte for byte: times are the whole milliseconds the report keeps, and
    // quick-junit writes no timestamp.
    let from_run = fs::read_to_string(dir.path().join("run.xml")).unwrap();
    let from_report = fs::read_to_string(dir.path().join("report.xml")).unwrap();
    // The hostile reply fills megabytes of lines: show where they part, briefly.
    let short = |line: &str| line.chars().take(200).collect::<String>();
    let parted = from_run
        .lines()
        .zip(from_report.lines())
        .find(|(a, b)| a != b)
        .map(|(a, b)| (short(a), short(b)));
    assert!(from_report == from_run, "the XML differs: {parted:?}");
    let doc = roxmltree::Document::parse(&from_report).unwrap();
    let verdicts: Vec<(&str, Vec<&str>)> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|case| {
            let elements = case
                .children()
                .filter(|n| n.is_element())
                .map(|n| n.tag_name().name())
                .filter(|&name| name != "properties")
                .collect();
            (case.attribute("name").unwrap(), elements)
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            ("order_lookup", vec!["system-out"]),
            ("hostile", vec!["failure", "system-out"]),
            ("hostile_error", vec!["error", "system-out"]),
        ]
    );
    let failure = doc
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .unwrap();
    let message = failure.attribute("message").unwrap_or_default();
    assert!(
        message.starts_with("agent text: expected Your order ORD-12345"),
        "{}",
        short(message)
    );
    assert!(failure.text().is_some_and(|t| t.contains("\n    input: ")));
    assert!(!from_report.contains('\x1b') && !from_report.contains("timestamp="));

    // A file that cannot be written is an error of the command, naming the file.
    let output = report("no/such/dir/junit.xml");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    common::assert_contains(
        &stderr,
        &["cannot write JUnit XML to no/such/dir/junit.xml"],
    );
}
