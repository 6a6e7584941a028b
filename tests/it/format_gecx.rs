//! gecx `*.scenario.yaml` through the library: the seed's examples and every scorer load into
//! the expected model without diagnostics, and each `fixtures/bad/gecx-*` file yields exactly
//! the diagnostics its `.expected` file lists.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use goldgate::diagnostic::{Code, Severity};
use goldgate::formats::{FileKind, LoadedFile, load_golden, sniff_yaml};
use goldgate::model::{
    ArgsMatcher, Case, CheckKind, Format, Input, MatchType, Provider, Scorer, ValueMatcher,
};
use serde_json::{Value, json};

fn load(path: &str) -> LoadedFile {
    let text = std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{path}: {err}"));
    load_golden(&Arc::from(Path::new(path)), &text, Format::GecxScenario)
}

/// The one case of a good fixture, after checking that its content sniffs as a scenario and
/// that it loaded without any diagnostic.
fn load_case(path: &str) -> Case {
    let text = std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{path}: {err}"));
    let root = goldgate::yaml::parse(&text).unwrap_or_else(|err| panic!("{path}: {err}"));
    assert_eq!(sniff_yaml(&root), FileKind::Golden(Format::GecxScenario));
    let loaded = load(path);
    let lines: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
    assert!(lines.is_empty(), "{path}:\n{}", lines.join("\n"));
    assert_eq!(loaded.cases.len(), 1, "{path}");
    Arc::unwrap_or_clone(loaded.cases.into_iter().next().expect("one case"))
}

fn scorers(case: &Case) -> Vec<&Scorer> {
    case.checks
        .iter()
        .map(|check| match &check.kind {
            CheckKind::Scorer(scorer) => scorer,
            other => panic!("not a scorer: {other:?}"),
        })
        .collect()
}

fn scorer_names(case: &Case) -> Vec<&str> {
    case.checks
        .iter()
        .map(|check| check.label.as_str())
        .collect()
}

fn inputs(case: &Case) -> Vec<&Input> {
    case.turns
        .iter()
        .flat_map(|turn| {
            assert!(turn.expectations.is_empty(), "gecx turns expect nothing");
            &turn.inputs
        })
        .collect()
}

/// `ArgsMatcher` as JSON, with `{"$exact": v}` for exact leaves, to compare whole trees.
fn args_json(args: &ArgsMatcher) -> Value {
    fn fields(entries: &[(String, ValueMatcher)]) -> Value {
        let map = entries
            .iter()
            .map(|(key, matcher)| {
                let value = match matcher {
                    ValueMatcher::Object(nested) => fields(nested),
                    ValueMatcher::Leaf(leaf) => {
                        assert_eq!(leaf.match_type, MatchType::Exact);
                        json!({ "$exact": leaf.expected })
                    }
                };
                (key.clone(), value)
            })
            .collect();
        Value::Object(map)
    }
    fields(&args.fields)
}

#[test]
fn invoice_lookup_from_the_seed() {
    let case = load_case("fixtures/gecx/invoice-lookup.scenario.yaml");
    assert_eq!(case.id, "invoice-lookup");
    assert_eq!(case.name, "Invoice lookup calls the invoice tool");
    assert_eq!(case.format, Format::GecxScenario);
    assert_eq!(case.tags, ["support", "tool-call"]);
    assert_eq!(case.location.line, 2);
    assert_eq!(
        inputs(&case),
        [&Input::Text("Please pull invoice INV-5678".into())]
    );
    assert_eq!(case.turns[0].location.line, 6);
    assert_eq!(
        scorer_names(&case),
        ["tool-called", "no-handoff", "no-error"]
    );
    assert!(matches!(scorers(&case)[0], Scorer::ToolCalled { name } if name == "lookup_invoice"));
    let check_lines: Vec<u32> = case.checks.iter().map(|c| c.location.line).collect();
    assert_eq!(check_lines, [8, 11, 12]);
}

#[test]
fn welcome_from_the_seed_in_flow_style() {
    let case = load_case("fixtures/gecx/welcome.scenario.yaml");
    assert_eq!(case.id, "welcome");
    assert_eq!(case.name, "Welcome flow greets the user");
    assert_eq!(case.tags, ["support"]);
    assert_eq!(inputs(&case), [&Input::Text("hello".into())]);
    assert_eq!(
        scorer_names(&case),
        ["message-contains", "no-handoff", "no-error"]
    );
    assert!(matches!(scorers(&case)[0], Scorer::MessageContains { pattern } if pattern == "help"));
}

#[test]
fn tool_approvals_and_name_defaulting_to_id() {
    let case = load_case("fixtures/gecx/refund-approval.scenario.yml");
    assert_eq!(case.id, "refund-approval");
    assert_eq!(case.name, "refund-approval");
    assert!(case.tags.is_empty());
    assert_eq!(
        case.description.as_deref(),
        Some("The agent asks before refunding; the first refund is approved, the second denied.")
    );
    assert_eq!(
        inputs(&case),
        [
            &Input::Text("Refund order ORD-1 and ORD-2".into()),
            &Input::ApproveToolCall("refund-ord-1".into()),
            &Input::DenyToolCall("refund-ord-2".into()),
        ]
    );
    let indexes: Vec<usize> = case.turns.iter().map(|t| t.index).collect();
    assert_eq!(indexes, [1, 2, 3]);
    let Scorer::ToolCalledWithInput { name, input } = scorers(&case)[0] else {
        panic!("{:?}", case.checks[0]);
    };
    assert_eq!(name, "issue_refund");
    assert_eq!(
        args_json(input),
        json!({ "order_id": { "$exact": "ORD-1" } })
    );
    assert!(matches!(
        scorers(&case)[1],
        Scorer::FinalMessageEquals { pattern } if pattern == "Refunded ORD-1; ORD-2 was not refunded."
    ));
}

#[test]
fn every_scorer_with_its_arguments() {
    let case = load_case("fixtures/gecx/every-scorer.scenario.yaml");
    assert_eq!(case.tags, ["billing", "llm-judge"]);
    assert_eq!(case.turns.len(), 3);
    let all = scorers(&case);
    let mut names = scorer_names(&case);
    names.dedup();
    assert_eq!(
        names,
        goldgate::formats::gecx::scorers::NAMES,
        "every scorer once, in the seed's order"
    );
    assert_eq!(all.len(), 18, "18 scorers expected");
    assert_message_scorers(&all[0..3]);
    assert_tool_scorers(&all[3..8]);
    assert_outcome_scorers(&all[8..14]);
    assert_judge_scorers(&all[14..18]);
}

/// `message-contains`, `message-matches-regex` and `final-message-equals` of every-scorer.
fn assert_message_scorers(scorers: &[&Scorer]) {
    let [contains, regex, equals] = scorers else {
        panic!("{scorers:?}");
    };
    assert!(matches!(contains, Scorer::MessageContains { pattern } if pattern == "invoice"));

    let Scorer::MessageMatchesRegex { regex } = regex else {
        panic!("{regex:?}");
    };
    // `gim`: `g` is ignored, `i` and `m` become inline flags.
    assert_eq!(regex.as_str(), r"(?im)^refund(ed)? .*INV-\d+$");
    assert!(regex.is_match("Sure.\nREFUNDED invoice INV-42"));
    assert!(!regex.is_match("refund pending for INV-42 soon"));

    assert!(matches!(equals, Scorer::FinalMessageEquals { pattern }
        if pattern == "Connecting you to an agent now."));
}

/// The tool scorers of every-scorer, with their inputs and expected calls.
fn assert_tool_scorers(scorers: &[&Scorer]) {
    let [called, with_input, no_tool_named, no_tool, accuracy] = scorers else {
        panic!("{scorers:?}");
    };
    assert!(matches!(called, Scorer::ToolCalled { name } if name == "lookup_invoice"));

    let Scorer::ToolCalledWithInput { name, input } = with_input else {
        panic!("{with_input:?}");
    };
    assert_eq!(name, "issue_refund");
    assert_eq!(
        args_json(input),
        json!({
            "invoice_id": { "$exact": "INV-42" },
            "amount": { "$exact": 19.99 },
            "reason": { "code": { "$exact": "duplicate" }, "notify": { "$exact": true } },
            "items": { "$exact": ["a", "b"] },
        })
    );

    assert!(
        matches!(no_tool_named, Scorer::NoToolCalled { name: Some(n) } if n == "delete_account")
    );
    assert!(matches!(no_tool, Scorer::NoToolCalled { name: None }));

    let Scorer::ToolCallAccuracy { expected } = accuracy else {
        panic!("{accuracy:?}");
    };
    let expected: Vec<(&str, Value)> = expected
        .iter()
        .map(|call| (call.name.as_str(), args_json(&call.args)))
        .collect();
    assert_eq!(
        expected,
        [
            ("lookup_invoice", json!({})),
            (
                "issue_refund",
                json!({ "invoice_id": { "$exact": "INV-42" } })
            ),
            ("create_ticket", json!({})),
        ]
    );
}

/// The hand-off, error and latency scorers of every-scorer.
fn assert_outcome_scorers(scorers: &[&Scorer]) {
    let [handoff, no_handoff, error_code, no_error, p50, p95] = scorers else {
        panic!("{scorers:?}");
    };
    assert!(matches!(handoff, Scorer::HandoffTriggered));
    assert!(matches!(no_handoff, Scorer::NoHandoff));
    assert!(matches!(error_code, Scorer::ErrorCode { code } if code == "RATE_LIMITED"));
    assert!(matches!(no_error, Scorer::NoError));
    assert!(matches!(p50, Scorer::LatencyP50Under { limit }
        if *limit == Duration::from_millis(1500)));
    assert!(matches!(p95, Scorer::LatencyP95Under { limit }
        if *limit == Duration::from_micros(2_500_500)));
}

/// The judge scorers of every-scorer, with their criteria and providers.
fn assert_judge_scorers(scorers: &[&Scorer]) {
    let [hallucinating, helpful_openai, helpful_default, tone] = scorers else {
        panic!("{scorers:?}");
    };
    assert!(
        matches!(hallucinating, Scorer::JudgeNotHallucinating { grounding_context, provider: None }
        if grounding_context == "Invoice INV-42 was charged twice on 2024-03-01.")
    );
    assert!(
        matches!(helpful_openai, Scorer::JudgeHelpfulness { criteria: Some(c), provider: Some(Provider::OpenAi) }
        if c == "Explains the refund timeline.")
    );
    assert!(matches!(
        helpful_default,
        Scorer::JudgeHelpfulness {
            criteria: None,
            provider: None
        }
    ));
    assert!(
        matches!(tone, Scorer::JudgeToneMatches { tone, provider: Some(Provider::Gemini) }
        if tone == "empathetic and professional")
    );
}

#[test]
fn a_scenario_without_then_loads_with_a_warning() {
    let path: Arc<Path> = Arc::from(Path::new("inline.scenario.yaml"));
    let loaded = load_golden(
        &path,
        "id: bare\nwhen:\n  - user: hi\n",
        Format::GecxScenario,
    );
    assert_eq!(loaded.cases.len(), 1);
    assert!(loaded.cases[0].checks.is_empty());
    let [warning] = loaded.diagnostics.as_slice() else {
        panic!("{:?}", loaded.diagnostics);
    };
    assert_eq!(
        (warning.severity, warning.code, warning.location.line),
        (Severity::Warning, Code::G102, 1)
    );
}

/// Each bad fixture's diagnostics, rendered as `goldgate lint` prints them, equal its
/// `.expected` file.
#[test]
fn bad_fixtures_report_what_their_expected_files_say() {
    let mut checked = 0;
    for entry in std::fs::read_dir("fixtures/bad").expect("fixtures/bad") {
        let path = entry.expect("directory entry").path();
        let file = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if !file.starts_with("gecx-") || file.ends_with(".expected") {
            continue;
        }
        let relative = format!("fixtures/bad/{file}");
        let loaded = load(&relative);
        assert!(loaded.has_errors(), "{relative} loaded without errors");
        let actual: String = loaded
            .diagnostics
            .iter()
            .map(|d| format!("{d}\n"))
            .collect();
        let expected = std::fs::read_to_string(format!("{relative}.expected"))
            .unwrap_or_else(|err| panic!("{relative}.expected: {err}"));
        assert_eq!(actual, expected, "{relative}");
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} gecx bad fixtures");
}
