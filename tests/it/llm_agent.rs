//! `goldgate run` with an LLM agent (`agent: { anthropic | openai | gemini: {...} }`) against
//! a fake of each provider on 127.0.0.1: the real tool loop, each call answered with its own
//! mock, tokens in the report, recordings that replay without a provider, and provider errors
//! as errors of the run.

use crate::{common, llm_support};
use common::case;
use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use llm_support::{
    Answer, Brain, FakeProvider, KEY, Provider, Seen, assert_no_key_under, goldgate, run,
};

const PROMPT: &str = "You are Acme's support agent. Look orders up before answering.";

/// The fake model: looks both orders up at once, then reports what each lookup returned, in
/// the calls' order. A case whose prompt never arrived gets a telling answer instead.
fn support_model() -> Brain {
    Arc::new(|seen: &Seen| {
        if !seen.system.contains(PROMPT) || !seen.system.contains("\"customer_tier\":\"gold\"") {
            return Answer::Text(format!("MISSING SYSTEM PROMPT: {}", seen.system));
        }
        if seen.user.contains("cancel") {
            return match seen.tool_results.first() {
                None => Answer::Calls(vec![(
                    "cancel_order".into(),
                    json!({ "order_id": "ORD-1" }),
                )]),
                Some((_, result)) => Answer::Text(format!("Could not cancel: {result}")),
            };
        }
        match seen.tool_results.as_slice() {
            [] => Answer::Calls(vec![
                ("lookup_order".into(), json!({ "order_id": "ORD-1" })),
                ("lookup_order".into(), json!({ "order_id": "ORD-2" })),
            ]),
            [(first, one), (second, two)]
                if first == "lookup_order" && second == "lookup_order" =>
            {
                Answer::Text(format!(
                    "ORD-1: {}. ORD-2: {}.",
                    one["status"].as_str().unwrap_or("?"),
                    two["status"].as_str().unwrap_or("?")
                ))
            }
            other => Answer::Text(format!("unexpected results {other:?}")),
        }
    })
}

/// `goldgate run FLAGS goldens` in `dir` with the key of `fake`'s provider.
fn run_goldens(dir: &Path, fake: &FakeProvider, flags: &[&str]) -> llm_support::Ran {
    run(
        goldgate(dir)
            .env(fake.provider.key_var(), KEY)
            .arg("run")
            .args(flags)
            .arg("goldens"),
        dir,
    )
}

/// A project in a temporary directory whose LLM agent is `brain` behind a fake `provider`,
/// set up by [`setup`] with `extra`.
fn project(provider: Provider, brain: Brain, extra: &str) -> (tempfile::TempDir, FakeProvider) {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeProvider::start(provider, brain);
    setup(dir.path(), &fake, extra);
    (dir, fake)
}

fn setup(dir: &Path, provider: &FakeProvider, extra: &str) {
    let tools = match provider.provider {
        // OpenAI's own form, to show both are read.
        Provider::OpenAi => {
            r#"[
            {"type": "function", "function": {"name": "lookup_order", "description": "Finds an order",
             "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}},
            {"type": "function", "function": {"name": "cancel_order", "description": "Cancels an order",
             "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}}
        ]"#
        }
        _ => {
            r#"[
            {"name": "lookup_order", "description": "Finds an order",
             "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}},
            {"name": "cancel_order", "description": "Cancels an order",
             "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}
        ]"#
        }
    };
    common::write(dir, "agent/tools.json", tools);
    common::write(dir, "agent/prompt.md", format!("{PROMPT}\n"));
    common::write(
        dir,
        "goldgate.yaml",
        format!(
            "agent:\n  {}:\n    model: agent-model\n    system_prompt: agent/prompt.md\n    tools: agent/tools.json\n    base_url: \"{}\"\n    temperature: 0\n{extra}run: {{ retries: 1 }}\n",
            provider.provider.name(),
            provider.base_url()
        ),
    );
    common::write(
        dir,
        "goldens/orders.yaml",
        "common_session_parameters:\n  customer_tier: gold\nconversations:\n\
         \x20 - conversation: two_orders\n    turns:\n      - user: Where are ORD-1 and ORD-2?\n        tool_calls:\n\
         \x20         - action: lookup_order\n            args: { order_id: ORD-2 }\n            output: { status: cancelled }\n\
         \x20         - action: lookup_order\n            args: { order_id: ORD-1 }\n            output: { status: shipped }\n\
         \x20       agent: \"ORD-1: shipped. ORD-2: cancelled.\"\n",
    );
}

#[test]
fn each_parallel_call_to_one_tool_gets_its_own_mock_on_every_provider() {
    for provider in Provider::ALL {
        let (dir, fake) = project(provider, support_model(), "");
        let ran = run_goldens(dir.path(), &fake, &["--record", "recorded"]);
        assert_eq!(
            ran.code,
            Some(0),
            "{provider:?}: {}\n{}",
            ran.stderr,
            ran.stdout
        );
        let two = case(&ran.report, "two_orders");
        let reply = &two["turns"][0]["reply"];
        assert_eq!(
            reply["text"], "ORD-1: shipped. ORD-2: cancelled.",
            "{provider:?}"
        );
        assert_eq!(
            reply["tool_calls"],
            json!([
                { "name": "lookup_order", "args": { "order_id": "ORD-1" }, "response": { "status": "shipped" } },
                { "name": "lookup_order", "args": { "order_id": "ORD-2" }, "response": { "status": "cancelled" } }
            ])
        );
        // Two model calls: the parallel lookups, then the answer; the fake's model has no
        // price, so the turn's cost is unknown (one unpriced reply), never zero.
        assert_eq!(
            two["usage"],
            json!({ "input_tokens": 200, "output_tokens": 20, "unpriced": 1 })
        );
        assert_eq!(ran.report["aggregates"]["tokens"]["input_tokens"], 200);
        let agent = ran.report["agent"].as_str().unwrap();
        let described = format!(
            "llm {}/agent-model at http://{}/",
            provider.name(),
            fake.addr
        );
        assert!(agent.starts_with(&described), "{agent}");
        fake.assert_valid();
        assert_eq!(fake.requests(), 2);
        assert_no_key_under(dir.path());

        // The recording replays with no provider and no key.
        common::write(dir.path(), "goldgate.yaml", "agent: { replay: recorded }\n");
        let replayed = run(goldgate(dir.path()).args(["run", "goldens"]), dir.path()).exits(0);
        assert_eq!(
            case(&replayed.report, "two_orders")["turns"][0]["reply"]["tool_calls"],
            reply["tool_calls"]
        );
        assert_eq!(fake.requests(), 2);
    }
}

#[test]
fn a_call_without_a_mock_gets_a_tool_error_that_the_report_shows() {
    for provider in Provider::ALL {
        let (dir, fake) = project(provider, support_model(), "");
        common::write(
            dir.path(),
            "goldens/cancel.yaml",
            "common_session_parameters:\n  customer_tier: gold\nconversations:\n  - conversation: cancel\n    turns:\n      - user: Please cancel ORD-1\n        agent: I cancelled ORD-1.\n",
        );
        let ran = run_goldens(dir.path(), &fake, &["--name", "cancel"]).exits(1);
        let turn = &case(&ran.report, "cancel")["turns"][0];
        let call = &turn["reply"]["tool_calls"][0];
        assert_eq!(call["name"], "cancel_order");
        let error = call["response"]["error"].as_str().unwrap();
        common::assert_contains(error, &["no mock for `cancel_order`"]);
        // The model was told, and said so.
        assert!(turn["reply"]["text"].as_str().unwrap().contains("no mock"));
        let unexpected = common::item(&turn["checks"], "label", "unexpected tool call");
        assert_eq!(unexpected["status"], "failed");
        fake.assert_valid();
    }
}

#[test]
fn a_model_that_keeps_calling_tools_fails_the_turn_at_max_tool_rounds() {
    let (dir, fake) = project(
        Provider::Anthropic,
        Arc::new(|_: &Seen| {
            Answer::Calls(vec![(
                "lookup_order".into(),
                json!({ "order_id": "ORD-1" }),
            )])
        }),
        "    max_tool_rounds: 2\n",
    );
    let ran = run_goldens(dir.path(), &fake, &[]).exits(2);
    let error = case(&ran.report, "two_orders")["error"].as_str().unwrap();
    common::assert_contains(error, &["still calling tools after 2 rounds"]);
    assert_eq!(
        fake.requests(),
        3,
        "two rounds answered, the third call refused"
    );
    fake.assert_valid();
}

#[test]
fn provider_errors_are_errors_of_the_run_and_rate_limits_are_retried() {
    for provider in Provider::ALL {
        let (dir, fake) = project(
            provider,
            Arc::new(|_: &Seen| Answer::Error {
                status: 400,
                retry_after: None,
                message: "model: agent-model is not a model".into(),
            }),
            "",
        );
        let ran = run_goldens(dir.path(), &fake, &[]).exits(2);
        let error = case(&ran.report, "two_orders")["error"].as_str().unwrap();
        common::assert_contains(
            error,
            &[
                &format!("{} answered 400", provider.name()),
                "model: agent-model is not a model",
            ],
        );
        assert_eq!(fake.requests(), 1, "a 400 is not retried");
    }

    let model = support_model();
    let (dir, fake) = project(
        Provider::OpenAi,
        Arc::new(move |seen: &Seen| match seen.number {
            1 => Answer::Error {
                status: 429,
                retry_after: Some("1"),
                message: "Rate limit reached".into(),
            },
            _ => model(seen),
        }),
        "",
    );
    let ran = run_goldens(dir.path(), &fake, &[]).exits(0);
    // A 429 is waited out by the agent's rate limiter: not an attempt (issue 12).
    assert_eq!(case(&ran.report, "two_orders")["turns"][0]["attempts"], 1);
    assert_eq!(fake.requests(), 3);
    assert_eq!(ran.report["rate_limits"][0]["endpoint"], "agent");
}

#[test]
fn regtrace_cases_without_an_answer_ask_the_model_with_their_prompt_and_documents() {
    let (dir, fake) = project(
        Provider::Gemini,
        Arc::new(|seen: &Seen| {
            let grounded = seen
                .system
                .starts_with("You answer from the documents only.")
                && seen
                    .system
                    .contains("Context documents:\n[1] refund-policy.md\nRefunds take 14 days.")
                && !seen.system.contains(PROMPT);
            Answer::Text(if grounded && seen.user == "How long do refunds take?" {
                "Refunds take 14 days.".into()
            } else {
                format!("ungrounded: {} / {}", seen.system, seen.user)
            })
        }),
        "",
    );
    common::write(
        dir.path(),
        "rag.yaml",
        "name: refunds\nversion: \"1.0.0\"\ndescription: RAG answers\ninteraction_type: rag\ntags: []\nauthor: qa\ncreated_at: \"2026-01-01\"\nupdated_at: \"2026-01-01\"\ntest_cases:\n\
         \x20 - id: refund-time\n    description: asked of the model\n    input: How long do refunds take?\n\
         \x20   system_prompt: You answer from the documents only.\n    expected_output: Refunds take 14 days.\n\
         \x20   actual_output: null\n    metrics: [factuality]\n    tags: []\n\
         \x20   context:\n      documents:\n        - source: refund-policy.md\n          content: Refunds take 14 days.\n",
    );
    let ran = run(
        goldgate(dir.path())
            .env("GEMINI_API_KEY", KEY)
            .args(["run", "rag.yaml"]),
        dir.path(),
    )
    .exits(0);
    let turn = &case(&ran.report, "refund-time")["turns"][0];
    assert_eq!(turn["reply"]["text"], "Refunds take 14 days.");
    fake.assert_valid();
}

#[test]
fn llm_agent_settings_are_checked_when_the_config_loads() {
    let dir = tempfile::tempdir().unwrap();
    common::write(
        dir.path(),
        "tools.json",
        r#"[{"name": "a", "paramters": {}}]"#,
    );
    common::write(
        dir.path(),
        "goldgate.yaml",
        "agent:\n  anthropic:\n    system_prompt: prompts/missing.md\n    tools: tools.json\n    temperature: 3\n    max_tool_round: 2\n",
    );
    common::write(
        dir.path(),
        "goldens/a.yaml",
        "conversations:\n  - conversation: a\n    turns:\n      - user: hi\n        agent: hello\n",
    );
    let ran = run(goldgate(dir.path()).args(["run", "goldens"]), dir.path()).exits(2);
    ran.warns(&[
        "agent.anthropic.system_prompt: no file",
        "agent.anthropic.tools:",
        "tool [0]: unknown field `paramters`",
        "agent.anthropic.temperature: expected a number from 0 to 2",
        "unknown key `max_tool_round`",
        "did you mean `max_tool_rounds`",
    ]);

    // A valid agent without its key cannot start: an error of the run naming the variable.
    common::write(
        dir.path(),
        "goldgate.yaml",
        "agent:\n  anthropic:\n    system_prompt: Be brief and kind.\n",
    );
    let ran = run(goldgate(dir.path()).args(["run", "goldens"]), dir.path()).exits(2);
    ran.warns(&["agent.anthropic: ANTHROPIC_API_KEY is not set"]);
}
