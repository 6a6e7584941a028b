//! SCRAPI platform goldens: every example of seed 000 and every shape shared/FORMATS.md lists,
//! loaded from fixtures/scrapi/ through the library, with the model they must produce.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use goldgate::diagnostic::{Code, Severity};
use goldgate::formats::{LoadedFile, load_golden};
use goldgate::model::{
    ArgsMatcher, Case, CheckKind, ExpectationKind, Format, Input, MatchType, Matcher, Turn,
    ValueMatcher,
};
use serde_json::{Value, json};

fn load(name: &str) -> LoadedFile {
    let path = Path::new("fixtures/scrapi").join(name);
    let text = fs::read_to_string(&path).unwrap();
    load_golden(&Arc::from(path.as_path()), &text, Format::ScrapiGolden)
}

/// Loads a fixture that must produce no diagnostic at all.
fn cases(name: &str) -> Vec<Case> {
    let loaded = load(name);
    let shown: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
    assert!(shown.is_empty(), "{name}: {shown:#?}");
    loaded
        .cases
        .into_iter()
        .map(std::sync::Arc::unwrap_or_clone)
        .collect()
}

fn ids(cases: &[Case]) -> Vec<&str> {
    cases.iter().map(|c| c.id.as_str()).collect()
}

/// The turn's expectations in a compact, comparable form.
fn expected(turn: &Turn) -> Vec<String> {
    turn.expectations
        .iter()
        .map(|e| match &e.kind {
            ExpectationKind::AgentText { matcher, agent } => {
                assert_eq!(matcher.match_type, MatchType::Semantic);
                assert_eq!(*agent, None);
                format!("text {}", matcher.expected.as_str().unwrap())
            }
            ExpectationKind::NoAgentText => "silent".to_owned(),
            ExpectationKind::UnexpectedResponse => "unexpected".to_owned(),
            ExpectationKind::ToolCall(call) => format!("call {}", call.name),
            ExpectationKind::ToolResponse { tool, output } => {
                format!("response {tool} {}", output.as_ref().unwrap())
            }
            ExpectationKind::Transfer { agent } => format!("transfer {agent}"),
            ExpectationKind::Reply(check) => format!("reply {check:?}"),
            ExpectationKind::ToolResult(check) => format!("result {}", check.path.source),
        })
        .collect()
}

fn leaf<'a>(args: &'a ArgsMatcher, key: &str) -> &'a Matcher {
    match field(&args.fields, key) {
        ValueMatcher::Leaf(matcher) => matcher,
        ValueMatcher::Object(_) => panic!("`{key}` is an object matcher"),
    }
}

fn field<'a>(fields: &'a [(String, ValueMatcher)], key: &str) -> &'a ValueMatcher {
    &fields.iter().find(|(k, _)| k == key).unwrap().1
}

/// The arguments of the turn's tool call number `index` (from 0).
fn tool_args(turn: &Turn, index: usize) -> &ArgsMatcher {
    let mut args = turn.expectations.iter().filter_map(|e| match &e.kind {
        ExpectationKind::ToolCall(call) => Some(&call.args),
        _ => None,
    });
    args.nth(index)
        .unwrap_or_else(|| panic!("the turn has no tool call {index}"))
}

fn criteria(case: &Case) -> Vec<&str> {
    case.checks
        .iter()
        .map(|check| match &check.kind {
            CheckKind::Criterion(text) => text.as_str(),
            other => panic!("not a criterion: {other:?}"),
        })
        .collect()
}

fn text(s: &str) -> Input {
    Input::Text(s.to_owned())
}

fn event(s: &str) -> Input {
    Input::Event(s.to_owned())
}

fn variables(value: Value) -> Input {
    Input::Variables(value.as_object().unwrap().clone())
}

#[test]
fn seed_order_lookup_example() {
    let cases = cases("seed_order_lookup.yaml");
    assert_eq!(ids(&cases), ["happy_path_order_lookup", "missing_order_id"]);
    let happy = &cases[0];
    assert_eq!(happy.name, "happy_path_order_lookup");
    assert_eq!(happy.format, Format::ScrapiGolden);
    assert_eq!((happy.location.line, happy.location.column), (8, 5));
    assert_eq!(happy.tags, ["seed_order_lookup"]);
    assert_eq!(
        Value::Object(happy.session_parameters.clone()),
        json!({"order_12345_status": "shipped", "order_12345_eta": "2026-04-18"})
    );
    assert!(happy.checks.is_empty());
    assert_eq!(happy.weight, 1.0);

    assert_eq!(happy.turns.len(), 2);
    let [first, second] = &happy.turns[..] else {
        unreachable!()
    };
    assert_eq!((first.index, first.location.line), (1, 10));
    assert_eq!(first.inputs, [text("Hi, I'd like to check on my order")]);
    assert_eq!(
        expected(first),
        ["text Of course! Could you share your order ID?"]
    );
    assert_eq!(first.expectations[0].location.line, 11);

    assert_eq!((second.index, second.location.line), (2, 12));
    assert_eq!(second.inputs, [text("It's ORD-12345")]);
    assert_eq!(
        expected(second),
        [
            "text Your order ORD-12345 has shipped and should arrive by April 18th.",
            "call lookup_order",
        ]
    );
    assert_eq!(second.expectations[1].location.line, 14);
    let order_id = leaf(tool_args(second, 0), "order_id");
    assert_eq!(order_id.match_type, MatchType::Contains);
    assert_eq!(order_id.expected, json!("ORD-12345"));
    assert!(second.tool_mocks.is_empty());

    let missing = &cases[1];
    assert_eq!(missing.turns.len(), 1);
    assert_eq!(missing.turns[0].inputs, [text("Where's my stuff?")]);
    assert_eq!(missing.session_parameters, happy.session_parameters);
}

#[test]
fn seed_full_working_example() {
    let cases = cases("seed_full_example.yaml");
    assert_eq!(ids(&cases), ["successful_order_lookup", "order_not_found"]);
    let lookup = &cases[0];
    assert_eq!(lookup.tags, ["P0", "order_management", "seed_full_example"]);
    assert_eq!(lookup.session_parameters.len(), 3);
    assert_eq!(lookup.turns.len(), 3);
    assert_eq!(lookup.turns[0].inputs, [event("welcome")]);
    assert_eq!(
        expected(&lookup.turns[0]),
        ["text Welcome to Acme Support! How can I help you today?"]
    );
    assert_eq!(lookup.turns[2].inputs, [text("Order ID is ORD-12345")]);
    assert_eq!(
        expected(&lookup.turns[2]),
        ["text shipped", "call lookup_order"]
    );

    let not_found = &cases[1];
    assert_eq!(
        not_found.tags,
        [
            "P0",
            "order_management",
            "error_handling",
            "seed_full_example"
        ]
    );
    let order_id = leaf(tool_args(&not_found.turns[0], 0), "order_id");
    assert_eq!(order_id.match_type, MatchType::Exact);
    assert_eq!(order_id.expected, json!("ORD-99999"));
}

#[test]
fn every_match_type_shape() {
    let cases = cases("match_types.yaml");
    let turn = &cases[0].turns[0];
    let args = tool_args(turn, 0);
    let names: Vec<&str> = args.fields.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "_action_trigger",
            "ticket_id",
            "reason",
            "summary",
            "topic",
            "customer",
            "flags",
            "amount"
        ]
    );
    let check = |key: &str, match_type: MatchType, value: Value| {
        let matcher = leaf(args, key);
        assert_eq!(
            (matcher.match_type, &matcher.expected),
            (match_type, &value),
            "{key}"
        );
    };
    check("_action_trigger", MatchType::Exact, json!("escalate"));
    check("ticket_id", MatchType::Regexp, json!("^TCK-[0-9]{6}$"));
    check(
        "reason",
        MatchType::Semantic,
        json!("Customer was charged twice"),
    );
    check("summary", MatchType::Ignore, Value::Null);
    check("topic", MatchType::Contains, json!("billing"));
    check(
        "flags",
        MatchType::Exact,
        json!({"vip": true, "retries": 2}),
    );
    check("amount", MatchType::Exact, json!(42.5));

    let regex = leaf(args, "ticket_id").regex.as_ref().unwrap();
    assert!(regex.is_match("TCK-123456"));
    assert!(!regex.is_match("TCK-12"));

    let ValueMatcher::Object(customer) = field(&args.fields, "customer") else {
        panic!("`customer` should be an object matcher");
    };
    let ValueMatcher::Leaf(name) = field(customer, "name") else {
        panic!("`customer.name` should be a leaf");
    };
    assert_eq!(
        (name.match_type, &name.expected),
        (MatchType::Contains, &json!("Ada"))
    );
    let ValueMatcher::Leaf(tier) = field(customer, "tier") else {
        panic!("`customer.tier` should be a leaf");
    };
    assert_eq!(
        (tier.match_type, &tier.expected),
        (MatchType::Exact, &json!("gold"))
    );
}

#[test]
fn turn_inputs_and_agent_shapes() {
    let cases = cases("turn_shapes.yaml");
    let turns = &cases[0].turns;
    assert_eq!(turns.len(), 7);
    let inputs: Vec<&[Input]> = turns.iter().map(|t| t.inputs.as_slice()).collect();
    assert_eq!(inputs[0], [event("welcome")]);
    assert_eq!(inputs[1], [event("welcome")]);
    assert_eq!(inputs[2], [event("session_timeout")]);
    assert_eq!(inputs[3], [text("Tell me about my plan")]);
    assert_eq!(
        inputs[6],
        [
            variables(json!({"auth_status": "verified"})),
            text("What's my balance?"),
        ]
    );

    assert_eq!(
        expected(&turns[0]),
        ["text In a sentence or two, what are you calling about today?"]
    );
    // One expectation per chunk; a `# silent` chunk is dropped.
    assert_eq!(
        expected(&turns[3]),
        ["text You are on the Unlimited plan.", "text Anything else?"]
    );
    assert_eq!(turns[3].expectations[1].location.line, 18);
    assert_eq!(expected(&turns[4]), ["silent"]);
    assert_eq!(expected(&turns[5]), ["silent"]);
}

#[test]
fn tool_calls_outputs_and_transfers() {
    let cases = cases("tool_calls.yaml");
    let case = &cases[0];
    assert_eq!(case.tags, ["P1", "tool_calls"]);
    let [lookup, billing, sales] = &case.turns[..] else {
        panic!("three turns expected");
    };
    assert_eq!(
        expected(lookup),
        [
            "text Both orders have shipped.",
            "call lookup_order",
            "call lookup_order",
            r#"response lookup_order {"status":"shipped"}"#,
            "call log_event",
            r#"response log_event "ok""#,
        ]
    );
    assert_eq!(
        leaf(tool_args(lookup, 0), "order_id").expected,
        json!("ORD-1")
    );
    assert_eq!(
        leaf(tool_args(lookup, 1), "order_id").expected,
        json!("ORD-2")
    );
    let ExpectationKind::ToolCall(log) = &lookup.expectations[4].kind else {
        panic!("log_event call expected");
    };
    assert_eq!(log.agent.as_deref(), Some("root_agent"));

    // Each output is also a mock, limited to calls with the same arguments.
    assert_eq!(lookup.tool_mocks.len(), 2);
    let mock = &lookup.tool_mocks[0];
    assert_eq!(mock.tool, "lookup_order");
    assert_eq!(mock.output, json!({"status": "shipped"}));
    assert_eq!(mock.location.line, 19);
    let mock_args = mock.args.as_ref().unwrap();
    assert_eq!(leaf(mock_args, "order_id").expected, json!("ORD-2"));
    assert_eq!(lookup.tool_mocks[1].output, json!("ok"));
    assert!(lookup.tool_mocks[1].args.is_none());

    assert_eq!(expected(billing), ["silent", "transfer billing_agent"]);
    assert_eq!(expected(sales), ["silent", "transfer sales_agent"]);
}

#[test]
fn criteria_and_merged_session_parameters() {
    let cases = cases("expectations.yaml");
    assert_eq!(ids(&cases), ["auth_routing", "defaults_only"]);
    let auth = &cases[0];
    assert_eq!(
        criteria(auth),
        [
            "The agent must never reveal internal tool names",
            "The agent must greet the customer",
            "The agent must call lookup_account",
            "The agent must give the balance from the tool response",
        ]
    );
    assert_eq!(auth.checks[0].location.line, 6);
    assert_eq!(
        Value::Object(auth.session_parameters.clone()),
        json!({"account_id": "9820598207", "customer_id": "5555555", "channel": "voice"})
    );
    assert_eq!(auth.tags, ["P0", "auth-routing", "expectations"]);

    let defaults = &cases[1];
    assert_eq!(
        criteria(defaults),
        ["The agent must never reveal internal tool names"]
    );
    assert_eq!(
        Value::Object(defaults.session_parameters.clone()),
        json!({"account_id": "9820598207", "customer_id": "4444444"})
    );
}

#[test]
fn exported_evaluation_yaml() {
    let cases = cases("exported_eval.yaml");
    assert_eq!(ids(&cases), ["Product Search Exported"]);
    let case = &cases[0];
    assert_eq!(case.tags, ["exported_eval"]);
    let inputs: Vec<&[Input]> = case.turns.iter().map(|t| t.inputs.as_slice()).collect();
    assert_eq!(
        inputs,
        [
            &[event("WelcomeEvent")][..],
            &[text("balloons")],
            &[text("cups")]
        ]
    );
    assert!(case.turns.iter().all(|t| t.expectations.is_empty()));
    assert_eq!(
        criteria(case),
        ["Did the agent call get_themes before filter_themes?"]
    );
}

#[test]
fn exported_evaluation_json() {
    let cases = cases("exported_eval.json");
    assert_eq!(ids(&cases), ["Reservation - Exported Golden"]);
    let case = &cases[0];
    assert_eq!(
        case.description.as_deref(),
        Some("Routed reservation with a transfer, a tool call and a mocked tool.")
    );
    assert_eq!(case.tags, ["reservation", "multi-agent", "exported_eval"]);
    assert_eq!(criteria(case), ["No Technical Leakage"]);

    let [greeting, booking] = &case.turns[..] else {
        panic!("two turns expected");
    };
    assert_eq!(
        greeting.inputs,
        [
            variables(json!({"event_data": {"party_size": 4}})),
            event("welcome"),
        ]
    );
    assert_eq!(expected(greeting), ["text Welcome to Bella Notte!"]);
    assert_eq!(
        greeting.expectations[0].note.as_deref(),
        Some("Check_Greeting")
    );

    assert_eq!(booking.inputs, [text("I'd like to book a table")]);
    assert_eq!(
        expected(booking),
        [
            "call set_active_flow",
            r#"response set_active_flow {"ok":true}"#,
            "transfer Reservation_Agent",
        ]
    );
    let args = tool_args(booking, 0);
    assert_eq!(leaf(args, "flow").expected, json!("reservation"));
    assert_eq!(leaf(args, "party_size").expected, json!(4.0));
    assert_eq!(
        booking.expectations[2].note.as_deref(),
        Some("Check_Transfer")
    );
    assert_eq!(booking.tool_mocks.len(), 1);
    assert_eq!(booking.tool_mocks[0].tool, "get_availability");
    assert_eq!(booking.tool_mocks[0].output, json!({"slots": ["19:00"]}));
}

#[test]
fn tolerated_shapes_load_with_warnings() {
    let loaded = load("tolerated.yaml");
    let found: Vec<(Severity, Code, u32)> = loaded
        .diagnostics
        .iter()
        .map(|d| (d.severity, d.code, d.location.line))
        .collect();
    assert_eq!(
        found,
        [
            (Severity::Warning, Code::G109, 2),
            (Severity::Warning, Code::G109, 7),
            (Severity::Warning, Code::E008, 9),
            (Severity::Warning, Code::G110, 12),
            (Severity::Warning, Code::G109, 16),
            (Severity::Warning, Code::E006, 11),
        ]
    );
    let case = &loaded.cases[0];
    assert_eq!(case.tags, ["tolerated"]);
    assert!(case.session_parameters.is_empty());
    let [lookup, thanks] = &case.turns[..] else {
        panic!("two turns expected");
    };
    // A turn without `agent` fails on any reply; `arguments` is read as `args`.
    assert_eq!(expected(lookup), ["unexpected", "call lookup_order"]);
    assert_eq!(
        leaf(tool_args(lookup, 0), "order_id").expected,
        json!("ORD-7")
    );
    assert_eq!(expected(thanks), ["text You're welcome!"]);
}

#[test]
fn every_item_knows_its_file() {
    for name in ["tool_calls.yaml", "exported_eval.json", "turn_shapes.yaml"] {
        for case in load(name).cases {
            let file = Path::new("fixtures/scrapi").join(name);
            assert_eq!(&*case.location.file, file.as_path());
            for turn in &case.turns {
                assert!(turn.location.line > case.location.line || name.ends_with(".json"));
                for expectation in &turn.expectations {
                    assert!(expectation.location.line >= turn.location.line);
                }
                for mock in &turn.tool_mocks {
                    assert!(mock.location.line > turn.location.line);
                }
            }
        }
    }
}

#[test]
fn odd_shapes_are_reported_never_a_panic() {
    let documents = [
        "",
        "42",
        "- conversation: a\n",
        "conversations: 7\n",
        "conversations: [null, 3, [1]]\n",
        "conversations:\n  - conversation: [x]\n    turns: [null, 1, {agent: []}]\n",
        "conversations:\n  - conversation: a\n    turns:\n      - tool_calls: [null, {action: {x: 1}}, {action: t, args: {$matchType: ignore}}]\n        agent: ok\n",
        "conversations:\n  - conversation: a\n    turns:\n      - user: hi\n        agent: ok\n        tool_calls:\n          - action: t\n            args: {a: {b: {c: {value: 1, $matchType: regexp}}}}\n",
        "displayName: x\ngolden: 3\n",
        "displayName: x\ngolden:\n  turns: [{steps: 5}, {steps: [null, {userInput: 1}, {expectation: []}]}]\n",
        "displayName: x\ngolden:\n  turns: [{steps: [{expectation: {agentResponse: {chunks: [1, {text: [2]}]}}}]}]\n",
    ];
    for text in documents {
        let loaded = load_golden(
            &Arc::from(Path::new("odd.yaml")),
            text,
            Format::ScrapiGolden,
        );
        assert!(
            !loaded.diagnostics.is_empty() || !loaded.cases.is_empty(),
            "{text:?} produced nothing"
        );
        for diagnostic in &loaded.diagnostics {
            assert!(diagnostic.location.line >= 1, "{text:?}: {diagnostic}");
        }
    }
}
