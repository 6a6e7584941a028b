//! The README's demo agent: a small, deterministic customer-support agent for "Acme" that
//! speaks goldgate's command protocol, so the whole pipeline can be tried without a model,
//! a key or a network.
//!
//! Protocol (the same JSON as the HTTP agent, one object per line): goldgate writes one
//! request per line on stdin, `{"id":7,"session":"…","conversation":"…","turn":1,
//! "input":{"text":"…"},"session_parameters":{…},"tool_mocks":{…}}`, and the agent answers
//! with one line on stdout carrying the same `id`: `{"id":7,"messages":[{"text":"…"}],
//! "tool_calls":[…],"transfer":…,"handoff":…}`, flushed at once. Requests of different
//! sessions may arrive interleaved, so per-session state lives in a map keyed by `session`.
//!
//! Behaviour, by keyword: greets on the `welcome` event; looks orders up (`ORD-12345`) and
//! invoices (`INV-5678`) with a tool call whose result comes from the request's `tool_mocks`,
//! else from session parameters such as `order_12345_status` / `order_12345_eta`, else
//! "not found"; asks for the order id when it is missing; transfers refunds to
//! `billing_agent`; hands off to a human on request. Try it:
//!
//! ```text
//! cargo build --release --package support-agent
//! goldgate run evals/ --agent-cmd target/release/support-agent
//! ```
//!
//! Only std and serde_json: an agent in any language can do the same in a few dozen lines.

use std::collections::HashMap;
use std::io::{self, BufRead, Write};
use std::process::ExitCode;

use serde_json::{Map, Value, json};

const AGENT_NAME: &str = "support_agent";

const HELP: &str = "\
support_agent: the demo customer-support agent for goldgate.

Reads one JSON request per line on stdin and writes one JSON reply per line on stdout,
echoing the request's `id` (goldgate's command-agent protocol). Deterministic, no network.

Usage: support-agent [--help]

Understands: the `welcome` event, order ids (ORD-12345), invoice ids (INV-5678), order
status questions, refunds (transferred to billing_agent), and requests for a human.
Tool results come from `tool_mocks`, else from session parameters such as
order_12345_status, order_12345_eta, invoice_5678_status, invoice_5678_amount.
";

fn main() -> ExitCode {
    match std::env::args().nth(1).as_deref() {
        None => {}
        Some("--help" | "-h") => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Some(arg) => {
            eprintln!("{AGENT_NAME}: unknown argument `{arg}` (try --help)");
            return ExitCode::from(2);
        }
    }
    match serve(io::stdin().lock(), io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{AGENT_NAME}: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Answers requests until stdin closes.
fn serve(input: impl BufRead, mut output: impl Write) -> io::Result<()> {
    eprintln!("{AGENT_NAME}: ready");
    let mut sessions: HashMap<String, Map<String, Value>> = HashMap::new();
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let request: Value = match serde_json::from_str(&line) {
            Ok(request) => request,
            Err(error) => {
                // Without an id there is nobody to answer; say so where humans look.
                eprintln!("{AGENT_NAME}: ignoring a line that is not JSON: {error}");
                continue;
            }
        };
        let reply = answer(&request, &mut sessions);
        serde_json::to_writer(&mut output, &reply)?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
    Ok(())
}

/// What one turn produces, before it becomes the reply object.
#[derive(Default)]
struct Turn {
    messages: Vec<String>,
    tool_calls: Vec<Value>,
    transfer: Option<&'static str>,
    handoff: bool,
}

impl Turn {
    fn say(&mut self, text: impl Into<String>) {
        self.messages.push(text.into());
    }
}

fn answer(request: &Value, sessions: &mut HashMap<String, Map<String, Value>>) -> Value {
    // goldgate's start-up ping: answering it says the agent is ready for the first turn.
    if request["ping"] == true {
        return json!({ "id": request["id"] });
    }
    let session = request["session"].as_str().unwrap_or_default();
    let facts = sessions.entry(session.to_owned()).or_default();
    if let Some(parameters) = request["session_parameters"].as_object() {
        facts.extend(parameters.clone());
    }
    let mut mocks = request["tool_mocks"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut turn = Turn::default();
    let Some(input) = request["input"].as_object() else {
        return reply_object(request, turn, Some("the request has no `input` object"));
    };
    let tool_responses = input.get("tool_responses").and_then(Value::as_array);
    let text = input.get("text").and_then(Value::as_str);
    if text.is_some() {
        // Tool responses sent beside a message are the results of the calls it leads to.
        for response in tool_responses.into_iter().flatten() {
            if let Some(name) = response["name"].as_str() {
                mocks.insert(name.to_owned(), response["response"].clone());
            }
        }
    }
    if let Some(variables) = input.get("variables").and_then(Value::as_object) {
        facts.extend(variables.clone());
    }
    if input.get("event").and_then(Value::as_str) == Some("welcome") {
        turn.say("Welcome to Acme Support! How can I help you today?");
    }
    for response in tool_responses
        .into_iter()
        .flatten()
        .filter(|_| text.is_none())
    {
        let id = facts
            .get("pending_lookup")
            .and_then(Value::as_str)
            .unwrap_or("your request");
        match response["name"].as_str() {
            Some("lookup_order") => turn.say(order_message(id, &response["response"])),
            Some("lookup_invoice") => turn.say(invoice_message(id, &response["response"])),
            _ => turn.say("Thanks, I've got that information."),
        }
    }
    if input.contains_key("approve_tool_call") {
        turn.say("Done. I've gone ahead with that.");
    }
    if input.contains_key("deny_tool_call") {
        turn.say("Understood, I won't do that.");
    }
    if let Some(text) = text {
        respond_to_text(text, facts, &mocks, &mut turn);
    }
    reply_object(request, turn, None)
}

fn respond_to_text(
    text: &str,
    facts: &mut Map<String, Value>,
    mocks: &Map<String, Value>,
    turn: &mut Turn,
) {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let mentions = |keywords: &[&str]| words.iter().any(|word| keywords.contains(word));

    if mentions(&["refund", "refunds", "refunded", "reimburse"]) {
        turn.transfer = Some("billing_agent");
        turn.say("I'm transferring you to our billing team, who handle refunds.");
    } else if mentions(&["human", "agent", "person", "representative", "someone"]) {
        turn.handoff = true;
        turn.say("Connecting you to an agent now.");
    } else if let Some(invoice) = find_id(text, "INV-") {
        let response = lookup(
            mocks,
            "lookup_invoice",
            facts,
            "invoice",
            &invoice,
            "amount",
        );
        turn.say(invoice_message(&invoice, &response));
        turn.tool_calls.push(json!({
            "name": "lookup_invoice", "args": { "invoice_id": invoice }, "response": response,
        }));
        facts.insert("pending_lookup".into(), Value::String(invoice));
    } else if let Some(order) = find_id(text, "ORD-") {
        let response = lookup(mocks, "lookup_order", facts, "order", &order, "eta");
        turn.say(order_message(&order, &response));
        turn.tool_calls.push(json!({
            "name": "lookup_order", "args": { "order_id": order }, "response": response,
        }));
        facts.insert("pending_lookup".into(), Value::String(order));
    } else if mentions(&[
        "order", "orders", "package", "parcel", "track", "tracking", "delivery", "shipping",
        "stuff",
    ]) {
        turn.say("Of course! Please share your order ID and I'll look that up for you.");
    } else if mentions(&["hi", "hello", "hey"]) {
        turn.say("Hello! How can I help you today?");
    } else if mentions(&["thanks", "thank"]) {
        turn.say("You're welcome! Is there anything else I can help you with?");
    } else {
        turn.say(
            "I can help with order status, invoices and refunds, or connect you with a person. \
             What would you like to do?",
        );
    }
}

/// The first `PREFIX` followed by digits, e.g. `ORD-12345`, in upper case.
fn find_id(text: &str, prefix: &str) -> Option<String> {
    let upper = text.to_uppercase();
    upper.match_indices(prefix).find_map(|(start, _)| {
        let digits: String = upper[start + prefix.len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        (!digits.is_empty()).then(|| format!("{prefix}{digits}"))
    })
}

/// A tool's result: the golden's mock, else what the session parameters say about the id
/// (`{kind}_{digits}_status` and `{kind}_{digits}_{detail}`), else not found.
fn lookup(
    mocks: &Map<String, Value>,
    tool: &str,
    facts: &Map<String, Value>,
    kind: &str,
    id: &str,
    detail: &str,
) -> Value {
    if let Some(mock) = mocks.get(tool) {
        return mock.clone();
    }
    let digits = id.rsplit('-').next().unwrap_or_default();
    let Some(status) = facts.get(&format!("{kind}_{digits}_status")) else {
        return json!({ "status": "not_found" });
    };
    let mut response = json!({ "status": status });
    if let Some(value) = facts.get(&format!("{kind}_{digits}_{detail}")) {
        response[detail] = value.clone();
    }
    response
}

fn order_message(order: &str, response: &Value) -> String {
    let status = response["status"].as_str().unwrap_or("not_found");
    let state = match status {
        "not_found" => {
            return format!(
                "I wasn't able to find that order ({order}). Could you double-check the order ID?"
            );
        }
        "shipped" => "has shipped".to_owned(),
        "delivered" => "has been delivered".to_owned(),
        "processing" => "is being processed".to_owned(),
        other => format!("is {}", other.replace('_', " ")),
    };
    match response["eta"].as_str() {
        Some(eta) => format!(
            "Your order {order} {state} and should arrive by {}.",
            friendly_date(eta)
        ),
        None => format!("Your order {order} {state}."),
    }
}

fn invoice_message(invoice: &str, response: &Value) -> String {
    let status = response["status"].as_str().unwrap_or("not_found");
    if status == "not_found" {
        return format!("I couldn't find invoice {invoice}. Could you check the number?");
    }
    let status = status.replace('_', " ");
    match &response["amount"] {
        Value::Null => format!("Invoice {invoice} is {status}."),
        Value::String(amount) => format!("Invoice {invoice} is {status}, amount {amount}."),
        amount => format!("Invoice {invoice} is {status}, amount {amount}."),
    }
}

/// `2026-04-18` as `April 18th`; anything else unchanged.
fn friendly_date(date: &str) -> String {
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    let mut parts = date.splitn(3, '-').map(str::parse::<usize>);
    let (Some(Ok(_year)), Some(Ok(month @ 1..=12)), Some(Ok(day @ 1..=31))) =
        (parts.next(), parts.next(), parts.next())
    else {
        return date.to_owned();
    };
    let suffix = match (day % 10, day) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{} {day}{suffix}", MONTHS[month - 1])
}

fn reply_object(request: &Value, turn: Turn, error: Option<&str>) -> Value {
    let mut reply = Map::new();
    if let Some(id) = request.get("id") {
        reply.insert("id".into(), id.clone());
    }
    let messages: Vec<Value> = turn
        .messages
        .into_iter()
        .map(|text| json!({ "text": text, "agent": AGENT_NAME }))
        .collect();
    if !messages.is_empty() {
        reply.insert("messages".into(), Value::Array(messages));
    }
    if !turn.tool_calls.is_empty() {
        reply.insert("tool_calls".into(), Value::Array(turn.tool_calls));
    }
    if let Some(agent) = turn.transfer {
        reply.insert("transfer".into(), json!({ "agent": agent }));
    }
    if turn.handoff {
        reply.insert("handoff".into(), json!({ "status": "requested" }));
    }
    if let Some(message) = error {
        reply.insert(
            "error".into(),
            json!({ "code": "BAD_REQUEST", "message": message }),
        );
    }
    Value::Object(reply)
}
