//! The CES golden CSV loader against the fixtures in `fixtures/ces/` and small inline files:
//! the model each row becomes, and the diagnostics of files the fixtures cannot hold (CRLF line
//! ends, an empty file, a header the sniffer would not recognise).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use goldgate::diagnostic::Severity;
use goldgate::formats::{LoadedFile, load_golden, sniff_csv};
use goldgate::model::{
    ArgsMatcher, Case, ExpectationKind, Format, Input, MatchType, Matcher, Turn, ValueMatcher,
};
use serde_json::json;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/ces")
        .join(name)
}

/// Loads a fixture and checks that it sniffs as CES and loads without any diagnostic.
fn load_clean(name: &str) -> Vec<Case> {
    let path = fixture(name);
    let text = std::fs::read_to_string(&path).expect("fixture is readable");
    assert!(sniff_csv(&text), "{name} sniffs as CES CSV");
    let loaded = load_golden(&Arc::from(path.as_path()), &text, Format::CesCsv);
    assert_eq!(messages(&loaded), Vec::<String>::new(), "{name}");
    loaded.cases.into_iter().map(Arc::unwrap_or_clone).collect()
}

/// The only case of the fixture `name`, which loads cleanly.
#[track_caller]
fn load_one(name: &str) -> Case {
    let mut cases = load_clean(name);
    assert_eq!(cases.len(), 1, "{name}");
    cases.remove(0)
}

fn load_text(text: &str) -> LoadedFile {
    load_golden(&Arc::from(Path::new("inline.csv")), text, Format::CesCsv)
}

fn messages(loaded: &LoadedFile) -> Vec<String> {
    loaded.diagnostics.iter().map(ToString::to_string).collect()
}

/// A compact rendering of an argument matcher: `key=type:value`, objects in braces.
fn describe_args(args: &ArgsMatcher) -> String {
    describe_fields(&args.fields)
}

fn describe_fields(fields: &[(String, ValueMatcher)]) -> String {
    fields
        .iter()
        .map(|(key, matcher)| match matcher {
            ValueMatcher::Leaf(m) => format!("{key}={}:{}", m.match_type.name(), m.expected),
            ValueMatcher::Object(inner) => format!("{key}={{{}}}", describe_fields(inner)),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn semantic_text(matcher: &Matcher) -> &str {
    assert_eq!(matcher.match_type, MatchType::Semantic);
    matcher.expected.as_str().expect("agent text is a string")
}

#[test]
fn orders_fixture_loads_tool_calls_mocks_and_metadata() {
    let cases = load_clean("orders.golden.csv");
    assert_eq!(cases.len(), 2);
    assert_order_status_lookup(&cases[0]);
    assert_refund_request(&cases[1]);
}

/// The first case of orders.golden.csv: its metadata, its greeting turn, and (through
/// [`assert_order_lookup_turn`]) its second turn.
fn assert_order_status_lookup(lookup: &Case) {
    assert_eq!(lookup.id, "eval-order-status");
    assert_eq!(lookup.name, "Order status lookup");
    assert_eq!(lookup.format, Format::CesCsv);
    assert_eq!(
        lookup.description.as_deref(),
        Some("Customer asks where an order is")
    );
    assert_eq!(lookup.tags, ["orders", "happy-path", "Regression suite"]);
    assert_eq!(lookup.location.line, 2);
    assert!(lookup.session_parameters.is_empty());
    assert_eq!(lookup.weight, 1.0);
    assert_eq!(lookup.turns.len(), 2);

    let first = &lookup.turns[0];
    assert_eq!((first.index, first.location.line), (1, 3));
    assert_eq!(first.inputs, [Input::Text("Where is my order?".into())]);
    assert_eq!(first.expectations.len(), 1);
    let greeting = &first.expectations[0];
    assert_eq!(greeting.location.line, 4);
    assert_eq!(greeting.note.as_deref(), Some("Asks for the order id"));
    match &greeting.kind {
        ExpectationKind::AgentText { matcher, agent } => {
            assert_eq!(semantic_text(matcher), "Sure, what is your order number?");
            assert_eq!(agent.as_deref(), Some("Order Agent"));
        }
        other => panic!("expected agent text, got {other:?}"),
    }
    assert_order_lookup_turn(&lookup.turns[1]);
}

/// The second turn of the order status lookup: a text and a tool response in, the mock it
/// makes, and the tool call, tool response and agent text it expects.
fn assert_order_lookup_turn(second: &Turn) {
    assert_eq!((second.index, second.location.line), (2, 5));
    let response = json!({"status": "shipped", "eta": "2024-06-01"});
    assert_eq!(
        second.inputs,
        [
            Input::Text("It's ORD-12345".into()),
            Input::ToolResponse {
                name: "lookup_order".into(),
                response: response.clone(),
            },
        ]
    );
    assert_eq!(second.tool_mocks.len(), 1);
    let mock = &second.tool_mocks[0];
    assert_eq!(mock.tool, "lookup_order");
    assert!(mock.args.is_none());
    assert_eq!(mock.output, response);
    assert_eq!(mock.location.line, 7);

    assert_eq!(second.expectations.len(), 3);
    match &second.expectations[0].kind {
        ExpectationKind::ToolCall(call) => {
            assert_eq!(call.name, "lookup_order");
            assert_eq!(call.agent, None);
            assert_eq!(
                describe_args(&call.args),
                r#"order_id=exact:"ORD-12345" options={include_items=exact:true limit=exact:5}"#
            );
        }
        other => panic!("expected a tool call, got {other:?}"),
    }
    assert_eq!(
        second.expectations[0].note.as_deref(),
        Some("Looks the order up by id")
    );
    assert!(matches!(
        &second.expectations[1].kind,
        ExpectationKind::ToolResponse { tool, output: None } if tool == "lookup_order"
    ));
    assert_eq!(second.expectations[1].note, None);
    match &second.expectations[2].kind {
        ExpectationKind::AgentText { matcher, .. } => assert_eq!(
            semantic_text(matcher),
            "Your order has shipped and should arrive on June 1."
        ),
        other => panic!("expected agent text, got {other:?}"),
    }
}

/// The second case of orders.golden.csv: an id from its display name, its groups as tags, and
/// a transfer to billing.
fn assert_refund_request(refund: &Case) {
    // No evaluation_id: the display name is the id.
    assert_eq!(refund.id, "Refund request");
    assert_eq!(refund.name, "Refund request");
    // Groups are kept as tags, each once, in the order written.
    assert_eq!(refund.tags, ["refunds", "Billing", "Regression suite"]);
    assert_eq!(refund.location.line, 10);
    assert_eq!(refund.turns.len(), 1);
    let transfer = &refund.turns[0].expectations[0];
    assert!(matches!(
        &transfer.kind,
        ExpectationKind::Transfer { agent } if agent == "Billing Agent"
    ));
    assert_eq!(transfer.note.as_deref(), Some("Refunds belong to billing"));
}

#[test]
fn all_actions_fixture_covers_every_action_type() {
    let case = load_one("all-actions.golden.csv");
    assert_eq!(case.id, "Every action type");
    assert_eq!(case.tags, ["coverage"]);
    assert_eq!(case.turns.len(), 3);

    let first = &case.turns[0];
    assert_eq!(
        first.inputs,
        [
            Input::Variables(
                json!({"customer_tier": "gold", "cart": {"items": 2}})
                    .as_object()
                    .cloned()
                    .expect("an object")
            ),
            Input::Text("Hello".into()),
        ]
    );
    assert_eq!(first.expectations.len(), 1);

    // The blank line and the row of empty cells inside turn 2 are skipped.
    let second = &case.turns[1];
    assert_eq!((second.index, second.location.line), (2, 7));
    assert_eq!(second.inputs.len(), 3);
    match &second.inputs[0] {
        Input::Image { mime_type, data } => {
            assert_eq!(mime_type, "image/png");
            assert!(data.starts_with("iVBORw0KGgo"));
        }
        other => panic!("expected an image, got {other:?}"),
    }
    // A quoted cell may span lines; the row keeps the line it starts on.
    assert_eq!(
        second.inputs[1],
        Input::Text("This label is torn.\nCan you read the tracking number?".into())
    );
    // No tool_response_json: an empty response object.
    assert_eq!(
        second.inputs[2],
        Input::ToolResponse {
            name: "read_label".into(),
            response: json!({}),
        }
    );
    assert_eq!(second.tool_mocks[0].output, json!({}));
    assert_eq!(second.tool_mocks[0].location.line, 12);
    match &second.expectations[0].kind {
        ExpectationKind::ToolCall(call) => {
            assert_eq!(call.name, "read_label");
            assert!(call.args.fields.is_empty());
        }
        other => panic!("expected a tool call, got {other:?}"),
    }
    assert_eq!(second.expectations[0].location.line, 10);
    assert_eq!(second.expectations[1].location.line, 13);
    assert_eq!(
        second.expectations[1].note.as_deref(),
        Some("The label tool answered")
    );

    let third = &case.turns[2];
    assert_eq!(
        third.inputs,
        [Input::Text("Let me talk to a person".into())]
    );
    assert!(matches!(
        &third.expectations[0].kind,
        ExpectationKind::Transfer { agent } if agent == "Human Handoff Agent"
    ));
}

#[test]
fn template_fixture_with_bom_and_every_column_quoted() {
    let case = load_one("template.golden.csv");
    assert_eq!(case.id, "greeting-001");
    assert_eq!(case.name, "Greeting");
    assert_eq!(
        case.description.as_deref(),
        Some("The agent greets the user")
    );
    assert!(case.tags.is_empty());
    assert_eq!(case.turns.len(), 1);
    assert_eq!(case.turns[0].inputs, [Input::Text("Hi".into())]);
    match &case.turns[0].expectations[0].kind {
        ExpectationKind::AgentText { matcher, agent } => {
            assert_eq!(semantic_text(matcher), "Hello, how can I help?");
            assert_eq!(agent.as_deref(), Some("Root Agent"));
        }
        other => panic!("expected agent text, got {other:?}"),
    }
}

#[test]
fn minimal_fixture_with_required_columns_only() {
    let cases = load_clean("minimal.golden.csv");
    let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["Small talk", "Opening line"]);
    let small_talk = &cases[0];
    assert_eq!(small_talk.turns.len(), 2);
    // A turn with an input and no expectation row.
    assert_eq!(small_talk.turns[1].inputs, [Input::Text("Bye".into())]);
    assert!(small_talk.turns[1].expectations.is_empty());
    // A turn with only an expectation: the agent speaks first, opened by the `welcome` event
    // (as SCRAPI opens a turn without `user`).
    let opening = &cases[1];
    assert_eq!(opening.location.line, 6);
    assert_eq!(opening.turns[0].inputs, [Input::Event("welcome".into())]);
    assert_eq!(opening.turns[0].expectations.len(), 1);
}

#[test]
fn crlf_line_ends_and_bom_load_with_the_same_lines() {
    let text = "\u{feff}display_name,turn_index,action_type,text_content,response_agent\r\n\
                Hello,,,,\r\n\
                \r\n\
                ,1,INPUT_TEXT,\"Hi\r\nthere\",\r\n\
                ,1,EXPECTATION_TEXT,Hello!,Root Agent\r\n";
    let loaded = load_text(text);
    assert_eq!(messages(&loaded), Vec::<String>::new());
    let case = &loaded.cases[0];
    assert_eq!(case.location.line, 2);
    assert_eq!(case.turns[0].location.line, 4);
    assert_eq!(case.turns[0].inputs, [Input::Text("Hi\r\nthere".into())]);
    assert_eq!(case.turns[0].expectations[0].location.line, 6);
}

#[test]
fn empty_file_is_an_error() {
    for text in ["", "\u{feff}", "\n\n", " \n"] {
        let loaded = load_text(text);
        assert_eq!(
            messages(&loaded),
            [
                "inline.csv:1: error [G102] the file is empty: a CES golden CSV needs a header row \
              (start the file with a header row such as `display_name,turn_index,action_type,text_content`)"
            ],
            "{text:?}"
        );
        assert!(loaded.cases.is_empty());
    }
}

#[test]
fn missing_required_columns_are_named() {
    let loaded = load_text("display_name,turn_idx,text_content\nGreeting,,\n,1,Hi\n");
    assert_eq!(
        messages(&loaded),
        [
            "inline.csv:1: error [G100] turn_idx: unknown column `turn_idx` (did you mean `turn_index`?)",
            "inline.csv:1: error [G102] turn_index: the header has no `turn_index` column \
             (the header must name display_name, turn_index and action_type)",
            "inline.csv:1: error [G102] action_type: the header has no `action_type` column \
             (the header must name display_name, turn_index and action_type)",
        ]
    );
    assert!(loaded.cases.is_empty());
}

#[test]
fn a_file_without_a_header_gets_one_error() {
    let loaded = load_text("Greeting,1,INPUT_TEXT,Hi\n");
    assert_eq!(loaded.diagnostics.len(), 1);
    assert_eq!(
        loaded.diagnostics[0].message,
        "the first row is not a CES header: it names none of the CES columns"
    );
}

#[test]
fn unused_cells_are_warnings_only() {
    let loaded = load_text(
        "display_name,turn_index,action_type,text_content,tool_name\n\
         Greeting,,,,\n\
         ,1,INPUT_TEXT,Hi,lookup_order\n",
    );
    assert!(!loaded.has_errors());
    assert_eq!(loaded.cases.len(), 1);
    assert_eq!(loaded.diagnostics.len(), 1);
    let warning = &loaded.diagnostics[0];
    assert_eq!(warning.severity, Severity::Warning);
    assert_eq!(warning.field.as_deref(), Some("tool_name"));
    assert_eq!(warning.location.line, 3);
}

#[test]
fn turn_index_gaps_are_warnings_and_turns_are_numbered_by_position() {
    let loaded = load_text(
        "display_name,turn_index,action_type,text_content\n\
         Gaps,,,\n\
         ,1,INPUT_TEXT,one\n\
         ,3,INPUT_TEXT,three\n",
    );
    assert!(!loaded.has_errors());
    assert_eq!(
        messages(&loaded),
        [
            "inline.csv:4: warning [G106] turn_index: turn_index jumps from 1 to 3; turns are numbered by position"
        ]
    );
    let indices: Vec<usize> = loaded.cases[0].turns.iter().map(|t| t.index).collect();
    assert_eq!(indices, [1, 2]);
}

#[test]
fn a_csv_that_is_not_a_ces_golden_does_not_sniff_as_one() {
    // The shape of SCRAPI's migration requirement sheets, which are no CES golden.
    let requirements = "Requirement_ID,Priority,Category,Description,Expected_Behavior,Flow_Name\n\
                        REQ1,P0,Auth,User must sign in,Send to sign-in,Main Flow\n";
    assert!(!sniff_csv(requirements));
    assert!(sniff_csv(
        "\u{feff}\"display_name\",\"turn_index\",\"action_type\"\n"
    ));
}
