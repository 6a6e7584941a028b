//! CX Agent Studio platform mode says why, in every output: a case the platform failed names
//! the platform's reason for each failed expectation (turn, metric, what the agent said or
//! called), and a case left unfinished says that goldgate cancelled it and why.
//!
//! Against the loopback fake of the v1beta evaluation endpoints (`tests/ces_platform_support`),
//! written from `google/cloud/ces/v1beta/evaluation.proto`: a turn-level
//! `semanticSimilarityResult` FAIL where no agent response is expected (SCRAPI's UNEXPECTED
//! RESPONSE), an `overallToolInvocationResult` FAIL for a call no step expects, and the
//! conversation each replayed turn recorded (`GetConversation`, `agent_service.proto`), which
//! holds what the agent said and called.

use crate::{ces_platform_support, common};
use std::fs;
use std::path::Path;

use ces_platform_support::cli::{platform_project, with_token};
use ces_platform_support::{Finish, UNASKED};

/// `chatty` answers where its golden expects nothing; `busy` calls a tool nobody asked for;
/// `grumpy` misses its expected answer.
fn goldens(dir: &Path) {
    fs::create_dir_all(dir.join("goldens")).unwrap();
    let golden = "conversations:
  - conversation: chatty
    turns:
      - user: Hello
        agent: Hi! How can I help?
      - user: Just saying thanks
  - conversation: busy
    turns:
      - user: Hello
        agent: Hi! How can I help?
  - conversation: grumpy
    turns:
      - user: Hello
        agent: Hi! How can I help?
";
    fs::write(dir.join("goldens/support.yaml"), golden).unwrap();
}

#[test]
fn every_output_names_the_platforms_reason_for_each_failed_case() {
    let (dir, fake) = platform_project(goldens, |p| {
        p.speaking.push("chatty".to_owned());
        p.extra_call.push("busy".to_owned());
        p.failing.push("grumpy".to_owned());
    });
    let outputs = ["--junit", "junit.xml", "--markdown", "summary.md"];
    let (code, report, printed) = with_token(dir.path(), &outputs);
    assert_eq!(code, Some(1), "{printed}");
    assert!(
        fake.state()
            .heard
            .iter()
            .any(|h| h.method == "GET" && h.path.contains("/conversations/")),
        "the failed turns' conversations were read"
    );

    let chatty = common::case(&report, "chatty");
    assert_eq!(chatty["status"], "failed", "{chatty:#}");
    let check = &chatty["turns"][1]["checks"][0];
    assert_eq!(check["label"], "UNEXPECTED RESPONSE", "{chatty:#}");
    assert_eq!(check["status"], "failed");
    assert_eq!(
        check["actual"], UNASKED,
        "what the agent said, from its conversation"
    );
    common::assert_contains(
        check["reason"].as_str().unwrap(),
        &[
            "platform score 0 of 4 (threshold 3)",
            "Completely Inconsistent",
        ],
    );

    let busy = common::case(&report, "busy");
    assert_eq!(busy["status"], "failed", "{busy:#}");
    let checks = busy["turns"][0]["checks"].as_array().unwrap();
    let extra = checks
        .iter()
        .find(|c| c["status"] == "failed")
        .unwrap_or_else(|| panic!("{busy:#}"));
    assert_eq!(extra["label"], "unexpected tool call");
    assert_eq!(extra["expected"], "no tool call");
    common::assert_contains(
        extra["actual"].as_str().unwrap(),
        &["lookup_order", "ORD-00000"],
    );
    common::assert_contains(
        extra["reason"].as_str().unwrap(),
        &["the platform failed the turn's tool invocation"],
    );

    let junit = fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    let markdown = fs::read_to_string(dir.path().join("summary.md")).unwrap();
    for (output, text) in [
        ("JUnit", &junit),
        ("Markdown", &markdown),
        ("terminal", &printed),
    ] {
        for said in [
            "UNEXPECTED RESPONSE",
            UNASKED,
            "unexpected tool call",
            "ORD-00000",
            "Sorry, I did not understand.",
        ] {
            assert!(text.contains(said), "{output} lacks {said:?}:\n{text}");
        }
    }
    assert!(!junit.contains("message=\"failed\""), "{junit}");
}

#[test]
fn a_case_goldgate_cancelled_on_timeout_says_so_and_why() {
    let (dir, fake) = platform_project(goldens, |p| p.finish = Finish::Never);
    let (code, report, printed) =
        with_token(dir.path(), &["--timeout", "2s", "--junit", "junit.xml"]);
    assert_eq!(code, Some(2), "{printed}");
    assert_eq!(fake.heard("POST", "/operations/op1:cancel").len(), 1);
    for case in report["cases"].as_array().unwrap() {
        assert_eq!(case["status"], "error", "{case:#}");
        let error = case["error"].as_str().unwrap();
        common::assert_contains(
            error,
            &[
                "goldgate cancelled the evaluation run",
                "did not finish within 2s",
            ],
        );
        assert!(!error.contains("on the platform"), "{error}");
    }
    let junit = fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(
        junit.contains("goldgate cancelled the evaluation run"),
        "{junit}"
    );
}

#[test]
fn a_run_the_platform_ended_in_error_says_the_platform_did() {
    let (dir, _fake) = platform_project(goldens, |p| {
        p.polls_to_finish = 1;
        p.finish = Finish::Error;
    });
    let (code, report, printed) = with_token(dir.path(), &[]);
    assert_eq!(code, Some(2), "{printed}");
    for case in report["cases"].as_array().unwrap() {
        let error = case["error"].as_str().unwrap();
        common::assert_contains(
            error,
            &[
                "the platform ended the evaluation run in ERROR (RUN_FAILED)",
                "The app's agent could not be loaded.",
            ],
        );
    }
    common::assert_contains(
        &printed,
        &["the platform ended the evaluation run in ERROR"],
    );
}
