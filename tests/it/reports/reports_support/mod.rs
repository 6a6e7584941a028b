//! The hand-built run the sink tests read: a passed case, a failed one (a wrong answer and a
//! wrong tool argument, the agent writing ANSI escapes), one that timed out and one whose only
//! check was skipped for lack of a judge.
#![allow(dead_code)] // Each helper serves some of the tests.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use goldgate::model::{
    ArgsMatcher, Case, CaseCheck, CheckKind, Expectation, ExpectationKind, ExpectedToolCall,
    Format, Location, MatchType, Matcher, Scorer, Turn,
};
use goldgate::results::{
    Aggregates, CaseResult, CheckCategory, CheckResult, Method, Report, SCHEMA_VERSION, Status,
    TurnResult,
};
use goldgate::shard::SuiteId;
use goldgate::transcript::{Exchange, Handoff, Message, Reply, ToolCall, Usage};
use serde_json::json;

pub const ORDERS: &str = "evals/goldens/orders.yaml";
pub const SCENARIO: &str = "evals/slow.scenario.yaml";
pub const ANSWER: &str = "Your order has shipped.\x1b[2J";

pub fn at(file: &str, line: u32) -> Location {
    Location::new(&Arc::from(Path::new(file)), line, 1)
}

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

pub fn model_turn(file: &str, index: usize, line: u32, expectations: Vec<Expectation>) -> Turn {
    Turn {
        index,
        location: at(file, line),
        inputs: Vec::new(),
        expectations,
        tool_mocks: Vec::new(),
        recorded_reply: None,
        comments: Vec::new(),
    }
}

pub fn agent_says(line: u32, text: &str) -> Expectation {
    Expectation {
        location: at(ORDERS, line),
        kind: ExpectationKind::AgentText {
            matcher: Matcher::new(MatchType::Semantic, json!(text)),
            agent: None,
        },
        note: None,
    }
}

pub fn calls_lookup(line: u32) -> Expectation {
    Expectation {
        location: at(ORDERS, line),
        kind: ExpectationKind::ToolCall(ExpectedToolCall {
            name: "lookup_order".into(),
            args: ArgsMatcher::default(),
            agent: None,
        }),
        note: None,
    }
}

/// A case of the orders golden (SCRAPI) or the scenario file (gecx), tagged `P0`.
pub fn model_case(id: &str, file: &str, line: u32, turns: Vec<Turn>) -> Case {
    let format = if file == ORDERS {
        Format::ScrapiGolden
    } else {
        Format::GecxScenario
    };
    Case {
        id: id.into(),
        name: id.into(),
        description: None,
        format,
        location: at(file, line),
        tags: vec!["P0".into()],
        session_parameters: Default::default(),
        system_prompt: None,
        context: Vec::new(),
        turns,
        checks: Vec::new(),
        weight: 1.0,
        simulated_user: None,
        comments: Vec::new(),
    }
}

pub fn check(
    category: CheckCategory,
    label: &str,
    line: u32,
    status: Status,
    expected: &str,
    actual: &str,
) -> CheckResult {
    CheckResult {
        label: label.into(),
        category,
        line,
        status,
        expected: expected.into(),
        actual: actual.into(),
        method: Method::deterministic("exact"),
        score: None,
        reason: None,
    }
}

pub fn exchange(text: &str, latency: u64, ttft: Option<u64>) -> Exchange {
    Exchange {
        reply: Reply {
            messages: vec![Message {
                text: text.into(),
                agent: None,
            }],
            ..Reply::default()
        },
        latency: ms(latency),
        ttft: ttft.map(ms),
    }
}

/// The result of the case's turn `index` (1-based), played when `exchange` is given.
pub fn turn(
    case: &Case,
    index: usize,
    status: Status,
    input: &str,
    checks: Vec<CheckResult>,
    exchange: Option<Exchange>,
) -> TurnResult {
    TurnResult {
        index,
        line: case.turns[index - 1].location.line,
        status,
        input: input.into(),
        attempts: 1,
        error: None,
        latency: exchange.as_ref().map(|e| e.latency),
        ttft: exchange.as_ref().and_then(|e| e.ttft),
        reply: exchange.map(|e| e.reply),
        cut: None,
        checks,
    }
}

pub fn case_result(case: Case, status: Status, turns: Vec<TurnResult>, score: f64) -> CaseResult {
    CaseResult {
        status,
        score,
        turns,
        ..CaseResult::of(&case)
    }
}

pub fn tokens(input_tokens: u64, output_tokens: u64) -> Usage {
    Usage {
        input_tokens,
        output_tokens,
        ..Usage::default()
    }
}

pub fn passed_case() -> CaseResult {
    let case = model_case(
        "happy_path_order_lookup",
        ORDERS,
        3,
        vec![
            model_turn(ORDERS, 1, 5, vec![agent_says(6, "How can I help?")]),
            model_turn(ORDERS, 2, 7, vec![calls_lookup(8)]),
        ],
    );
    let mut semantic = check(
        CheckCategory::AgentText,
        "agent text",
        6,
        Status::Passed,
        "How can I help?",
        "Hi, how?",
    );
    semantic.method = Method::LocalSimilarity;
    let args = r#"{"order_id":"ORD-12345"}"#;
    let tool = check(
        CheckCategory::ToolCall,
        "tool call lookup_order",
        8,
        Status::Passed,
        args,
        args,
    );
    let mut with_tool = exchange("It has shipped.", 300, None);
    with_tool.reply.tool_calls.push(ToolCall {
        name: "lookup_order".into(),
        args: json!({"order_id": "ORD-12345"}),
        response: Some(json!({"status": "shipped"})),
        resource: None,
    });
    let first = Some(exchange("Hi, how can I help?", 100, Some(40)));
    let turns = vec![
        turn(&case, 1, Status::Passed, "hello", vec![semantic], first),
        turn(
            &case,
            2,
            Status::Passed,
            "ORD-12345",
            vec![tool],
            Some(with_tool),
        ),
    ];
    let mut result = case_result(case, Status::Passed, turns, 1.0);
    result.duration = ms(450);
    result.usage = tokens(100, 10);
    result
}

pub fn failed_case() -> CaseResult {
    let mut case = model_case(
        "bad_order_id_handling",
        ORDERS,
        12,
        vec![
            model_turn(ORDERS, 1, 13, vec![agent_says(14, "Please share the id.")]),
            model_turn(
                ORDERS,
                2,
                16,
                vec![
                    agent_says(17, "I couldn't find that order."),
                    calls_lookup(18),
                ],
            ),
        ],
    );
    case.weight = 3.0;
    let ask = "Please share the id.";
    let first = check(
        CheckCategory::AgentText,
        "agent text",
        14,
        Status::Passed,
        ask,
        ask,
    );
    let mut semantic = check(
        CheckCategory::AgentText,
        "agent text",
        17,
        Status::Failed,
        NOT_FOUND,
        ANSWER,
    );
    semantic.method = Method::LocalSimilarity;
    semantic.score = Some(0.21);
    semantic.reason = Some("similarity 0.21 below 0.75".into());
    let tool = check(
        CheckCategory::ToolCall,
        "tool call lookup_order",
        18,
        Status::Failed,
        r#"{"order_id":"ORD-99999"}"#,
        r#"{"order_id":"ORD-12345"}"#,
    );
    let mut handed_off = exchange(ANSWER, 900, None);
    handed_off.reply.handoff = Some(Handoff {
        status: "requested".into(),
    });
    let turns = vec![
        turn(
            &case,
            1,
            Status::Passed,
            "where is my order",
            vec![first],
            Some(exchange(ask, 200, None)),
        ),
        turn(
            &case,
            2,
            Status::Failed,
            "It's ORD-99999",
            vec![semantic, tool],
            Some(handed_off),
        ),
    ];
    let mut result = case_result(case, Status::Failed, turns, 0.5);
    result.duration = ms(1200);
    result.usage = tokens(200, 20);
    result
}

pub const NOT_FOUND: &str = "I couldn't find that order.";
pub const TIMEOUT: &str = "timed out: no reply within 60s";

pub fn errored_case() -> CaseResult {
    let case = model_case(
        "slow_case",
        SCENARIO,
        1,
        vec![model_turn(SCENARIO, 1, 4, Vec::new())],
    );
    let mut timed_out = turn(&case, 1, Status::Error, "hello", Vec::new(), None);
    timed_out.error = Some(TIMEOUT.into());
    timed_out.attempts = 3;
    let mut result = case_result(case, Status::Error, vec![timed_out], 0.0);
    result.duration = ms(60_000);
    result.error = Some(TIMEOUT.into());
    result
}

pub fn skipped_case() -> CaseResult {
    let mut case = model_case(
        "needs_judge",
        SCENARIO,
        10,
        vec![model_turn(SCENARIO, 1, 12, Vec::new())],
    );
    case.checks.push(CaseCheck {
        location: at(SCENARIO, 14),
        label: "llm-judge-not-hallucinating".into(),
        kind: CheckKind::Scorer(Scorer::JudgeNotHallucinating {
            grounding_context: "orders ship in 2 days".into(),
            provider: None,
        }),
    });
    let mut skipped = check(
        CheckCategory::Hallucination,
        "llm-judge-not-hallucinating",
        14,
        Status::Skipped,
        "grounded in: orders ship in 2 days",
        "",
    );
    skipped.line = 14;
    skipped.method = Method::None;
    skipped.reason = Some("no judge configured".into());
    let played = Some(exchange("In 2 days.", 150, None));
    let turns = vec![turn(
        &case,
        1,
        Status::Skipped,
        "when will it ship",
        Vec::new(),
        played,
    )];
    let mut result = case_result(case, Status::Skipped, turns, 0.0);
    result.checks.push(skipped);
    result.duration = ms(160);
    result.usage = tokens(5, 1);
    result
}

/// The aggregates of the run, as its report computes them from its own cases.
pub fn aggregates(result: &Report) -> Aggregates {
    Aggregates::of(&result.cases)
}

/// How long the run took.
pub const RUN_TIME: Duration = Duration::from_millis(61_000);

/// The report of a run of `cases`, as the runner builds it.
pub fn report_of(cases: Vec<CaseResult>) -> Report {
    Report {
        schema_version: SCHEMA_VERSION,
        goldgate_version: env!("CARGO_PKG_VERSION").to_owned(),
        agent: "http http://127.0.0.1:8080/turn".into(),
        suite: SuiteId {
            fingerprint: "0123456789abcdef".into(),
            cases: cases.len(),
            shard: None,
            name: None,
        },
        scope: None,
        judges: Vec::new(),
        judge_usage: Vec::new(),
        incomplete: false,
        budget: None,
        max_errors: 0,
        policy: Default::default(),
        agent_log: None,
        agent_startup: None,
        rate_limits: Vec::new(),
        aggregates: Aggregates::of(&cases),
        unmeasured: Vec::new(),
        samples: Default::default(),
        alpha_share: 1.0,
        gate: None,
        floors: Vec::new(),
        cases,
    }
}

pub fn run() -> Report {
    report_of(vec![
        passed_case(),
        failed_case(),
        errored_case(),
        skipped_case(),
    ])
}
