//! What a run costs, as a user sees it: a real HTTP agent on 127.0.0.1 reports its tokens (or
//! its own cost), goldgate prices them from the table or `prices:`, reports the cost per turn,
//! case and run, gates a rise in cost per conversation when asked, and stops at `--budget`.

use crate::{common, llm_support};
use std::fs;
use std::net::SocketAddr;
use std::path::Path;

use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

use common::{Outcome, case, goldgate, order_conversation, order_golden, read_json};

/// What the agent reports with every reply.
#[derive(Clone, Copy)]
struct Spends {
    input_tokens: u64,
    output_tokens: u64,
    cost_usd: Option<f64>,
}

/// A million tokens in and a hundred thousand out: $0.21 a turn at gpt-4o-mini's prices
/// ($0.15 and $0.60 per million).
const TURN: Spends = Spends {
    input_tokens: 1_000_000,
    output_tokens: 100_000,
    cost_usd: None,
};
const TURN_USD: f64 = 0.21;

async fn agent(State(spends): State<Spends>, Json(_): Json<Value>) -> Json<Value> {
    let mut usage = json!({
        "input_tokens": spends.input_tokens,
        "output_tokens": spends.output_tokens,
    });
    if let Some(cost) = spends.cost_usd {
        usage["cost_usd"] = json!(cost);
    }
    Json(json!({
        "messages": [{"text": "Your order ORD-12345 has shipped and should arrive by April 18th."}],
        "tool_calls": [{"name": "lookup_order", "args": {"order_id": "ORD-12345"}}],
        "usage": usage,
    }))
}

/// `count` passing one-turn conversations, and a config for an agent spending `spends` a turn,
/// with `extra` config lines.
fn suite(dir: &Path, count: usize, spends: Spends, extra: &str) -> SocketAddr {
    let conversations: String = (1..=count)
        .map(|i| order_conversation(&format!("order_{i:02}")))
        .collect();
    order_golden(dir, &conversations);
    let addr = common::serve_turn(agent, spends);
    write_config(dir, addr, extra);
    addr
}

fn write_config(dir: &Path, addr: SocketAddr, extra: &str) {
    fs::write(
        dir.join("goldgate.yaml"),
        format!("agent:\n  http: {{ url: \"http://{addr}/turn\" }}\n{extra}"),
    )
    .unwrap();
}

fn close(actual: &Value, expected: f64) {
    let actual = actual
        .as_f64()
        .unwrap_or_else(|| panic!("{actual} is not a number"));
    assert!((actual - expected).abs() < 1e-9, "{actual} != {expected}");
}

#[test]
fn an_agent_priced_from_its_model_reports_cost_per_turn_case_and_run() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 3, TURN, "  model: gpt-4o-mini\n");

    goldgate(dir.path(), &["run", "goldens", "--output", "report.json"])
        .exits(0)
        .says(&["Cost: $0.63\n"]);

    let report = read_json(&dir.path().join("report.json"));
    let first = case(&report, "order_01");
    close(&first["turns"][0]["reply"]["usage"]["cost_usd"], TURN_USD);
    close(&first["usage"]["cost_usd"], TURN_USD);
    close(&report["aggregates"]["tokens"]["cost_usd"], 3.0 * TURN_USD);
    close(&report["aggregates"]["cost_per_conversation"], TURN_USD);
    close(
        &report["aggregates"]["tokens_per_conversation"],
        1_100_000.0,
    );
}

#[test]
fn a_model_without_a_price_costs_unknown_never_zero_until_prices_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let addr = suite(dir.path(), 2, TURN, "  model: acme-finetune-7\n");

    let unknown = goldgate(dir.path(), &["run", "goldens", "--output", "report.json"]).exits(0);
    unknown.says(&["Cost: unknown\n"]).warns(&[
        "no price is known for the agent's model `acme-finetune-7`",
        "`prices:`",
    ]);
    let report = read_json(&dir.path().join("report.json"));
    assert_eq!(report["aggregates"]["tokens"]["cost_usd"], Value::Null);
    assert_eq!(report["aggregates"]["tokens"]["unpriced"], 2);
    assert_eq!(report["aggregates"]["cost_per_conversation"], Value::Null);

    write_config(
        dir.path(),
        addr,
        "  model: acme-finetune-7\nprices:\n  acme-finetune-7: { input: 1.00, output: 4.00 }\n",
    );
    goldgate(dir.path(), &["run", "goldens"])
        .exits(0)
        .says(&["Cost: $2.80\n"])
        .never_prints(&["no price is known"]);
}

#[test]
fn the_agents_own_cost_wins_over_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let own = Spends {
        cost_usd: Some(0.5),
        ..TURN
    };
    suite(dir.path(), 2, own, "  model: gpt-4o-mini\n");
    goldgate(dir.path(), &["run", "goldens"])
        .exits(0)
        .says(&["Cost: $1.00\n"]);
}

#[test]
fn a_budget_stops_scheduling_writes_every_report_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 10, TURN, "  model: gpt-4o-mini\n");

    let ran = goldgate(
        dir.path(),
        &[
            "run",
            "goldens",
            "--budget",
            "0.50",
            "--concurrency",
            "1",
            "--output",
            "report.json",
            "--junit",
            "junit.xml",
        ],
    )
    .exits(2);
    // $0.21 a conversation: after three, $0.63 is past $0.50 and nothing more starts.
    ran.says(&["stopped at the budget: spent $0.63 of $0.50; 7 cases skipped"])
        .warns(&[
            "the run was stopped at its budget: the reports cover only the cases that finished",
        ])
        .never_prints(&["interrupted"]);
    let report = read_json(&dir.path().join("report.json"));
    assert_eq!(report["incomplete"], true);
    assert_eq!(report["verdict"], "error");
    assert_eq!(report["exit"], 2);
    assert_eq!(
        report["budget"],
        json!({ "limit_usd": 0.5, "reached": true })
    );
    assert_eq!(report["aggregates"]["cases"]["passed"], 3);
    assert_eq!(report["aggregates"]["cases"]["skipped"], 7);
    let junit = fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(
        junit.contains("the run reached its budget of $0.50 before every case ran"),
        "{junit}"
    );
}

#[test]
fn a_budget_the_run_stays_within_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    suite(
        dir.path(),
        2,
        TURN,
        "  model: gpt-4o-mini\nrun: { budget: 5 }\n",
    );
    goldgate(dir.path(), &["run", "goldens"])
        .exits(0)
        .says(&["Cost: $0.42; budget $5.00\n"]);
}

/// A baseline of 20 conversations at `TURN`, then the same suite against an agent spending
/// `now` a turn, gated with `thresholds`: what it printed, and its Markdown summary (the PR
/// comment's body).
fn gated(now: Spends, thresholds: &str) -> (Outcome, String) {
    gated_over(20, now, thresholds)
}

/// [`gated`] over `count` conversations.
fn gated_over(count: usize, now: Spends, thresholds: &str) -> (Outcome, String) {
    let dir = tempfile::tempdir().unwrap();
    let config = format!("  model: gpt-4o-mini\nthresholds: {{ {thresholds} }}\n");
    suite(dir.path(), count, TURN, &config);
    goldgate(
        dir.path(),
        &["run", "goldens", "--update-baseline", "base.json"],
    )
    .exits(0);
    let addr = common::serve_turn(agent, now);
    write_config(dir.path(), addr, &config);
    let ran = goldgate(
        dir.path(),
        &[
            "run",
            "goldens",
            "--baseline",
            "base.json",
            "--fail-on-regress",
            "--markdown",
            "summary.md",
        ],
    );
    let summary = fs::read_to_string(dir.path().join("summary.md")).unwrap_or_default();
    (ran, summary)
}

#[test]
fn a_doubled_cost_per_conversation_fails_the_gate_only_under_cost_increase_pct() {
    let doubled = Spends {
        input_tokens: 2 * TURN.input_tokens,
        output_tokens: 2 * TURN.output_tokens,
        cost_usd: None,
    };
    let (ran, summary) = gated(doubled, "costIncreasePct: 20");
    ran.exits(1).says(&[
        "cost per conversation",
        "$0.21 -> $0.42",
        "rose 100% (limit 20%)",
        "REGRESSED",
    ]);
    common::assert_contains(&summary, &["| Cost per conversation | $0.42 | $0.21 |"]);
    let (ran, summary) = gated(doubled, "tokensIncreasePct: 50");
    ran.exits(1).says(&[
        "tokens per conversation",
        "1100000 tokens -> 2200000 tokens",
    ]);
    common::assert_contains(&summary, &["| Tokens per conversation | 2200000 tokens |"]);
    // Off unless set: the same rise passes the default gate.
    let (ran, summary) = gated(doubled, "");
    ran.exits(0).never_prints(&["cost per conversation"]);
    common::assert_lacks(&summary, &["per conversation"]);
    // A rise within the limit is clear.
    let cheaper = Spends {
        input_tokens: TURN.input_tokens / 2,
        ..TURN
    };
    gated(cheaper, "costIncreasePct: 20").0.exits(0);
}

#[test]
fn too_few_conversations_to_tell_a_cost_rise_from_noise_say_so_and_what_would_tell() {
    let doubled = Spends {
        input_tokens: 2 * TURN.input_tokens,
        ..TURN
    };
    // Six pairs: even all six dearer is a 1.6% chance, above the 1% false-alarm rate.
    let (ran, _) = gated_over(6, doubled, "costIncreasePct: 20");
    ran.exits(0)
        .says(&[
            "NOT ENOUGH RUNS",
            "too few conversations were priced on both sides",
            "more conversations would, repeats would not",
        ])
        .never_prints(&["more repeats"]);
}

#[test]
fn bad_prices_and_budgets_are_errors_that_say_where() {
    let dir = tempfile::tempdir().unwrap();
    let addr = suite(dir.path(), 1, TURN, "");
    let cases: [(&str, &[&str], &[&str]); 3] = [
        (
            "prices:\n  acme: { input: cheap }\n",
            &[],
            &[
                "goldgate.yaml:4",
                "prices.acme.input",
                "a non-negative number of US dollars",
            ],
        ),
        (
            "prices:\n  acme: { input: 1, outptu: 2 }\n",
            &[],
            &["did you mean `output`?"],
        ),
        (
            "",
            &["--budget", "0"],
            &["`0` is not an amount of US dollars above 0"],
        ),
    ];
    for (config, flags, says) in cases {
        write_config(dir.path(), addr, config);
        let args = [&["run", "goldens"], flags].concat();
        goldgate(dir.path(), &args).exits(2).warns(says);
    }
}

/// A suite of two goldens judged by an Anthropic `model` on a fake provider, with two expected
/// replies of their own: two questions (the same question twice is paid for once). Also the
/// config's judge lines, for a test that moves the agent.
fn two_judged_questions(model: &str) -> (tempfile::TempDir, llm_support::FakeProvider, String) {
    use llm_support::{FakeProvider, Provider};
    let dir = tempfile::tempdir().unwrap();
    let same = llm_support::judge(|_| json!({ "score": 4, "explanation": "the same" }));
    let fake = FakeProvider::start(Provider::Anthropic, same);
    let judge = format!(
        "  model: gpt-4o-mini\njudge:\n  provider: anthropic\n  model: {model}\n  base_url: \"{}\"\n",
        fake.base_url()
    );
    suite(dir.path(), 2, TURN, &judge);
    let conversations: String = [18, 19]
        .map(|day| {
            common::order_conversation(&format!("order_{day}"))
                .replace("April 18th", &format!("April {day}th"))
        })
        .concat();
    common::order_golden(dir.path(), &conversations);
    (dir, fake, judge)
}

#[test]
fn judges_are_priced_and_what_their_cache_saved_is_reported() {
    use llm_support::{KEY, Provider};
    let (dir, _fake, _) = two_judged_questions("claude-haiku-4-5");
    let run = || {
        Outcome::of(
            llm_support::goldgate(dir.path())
                .env(Provider::Anthropic.key_var(), KEY)
                .args(["run", "goldens", "--cache-dir", "cache"]),
        )
    };
    // Two similarity questions of 100 tokens in and 10 out, at $1 and $5 per million.
    run().exits(0).says(&[
        "Judge anthropic/claude-haiku-4-5: 2 calls, 0 answers from the cache, 200 tokens in, 20 out, cost $0.000300",
        "Cost: $0.420 (agent $0.42, judges $0.000300)",
    ]);
    run().exits(0).says(&[
        "2 answers from the cache",
        "the judge cache saved $0.000300",
    ]);
}

#[test]
fn cases_asking_the_same_question_at_once_pay_for_it_once() {
    use llm_support::{FakeProvider, KEY, Provider};
    let dir = tempfile::tempdir().unwrap();
    // A slow judge: every case has asked before the first answer is back.
    let slow = llm_support::judge(|_| {
        std::thread::sleep(std::time::Duration::from_millis(300));
        json!({ "score": 4, "explanation": "the same" })
    });
    let fake = FakeProvider::start(Provider::Anthropic, slow);
    let judge = format!(
        "judge:\n  provider: anthropic\n  model: claude-haiku-4-5\n  base_url: \"{}\"\n",
        fake.base_url()
    );
    // Four conversations with one expected reply, the agent's: one question.
    suite(dir.path(), 4, TURN, &judge);
    Outcome::of(
        llm_support::goldgate(dir.path())
            .env(Provider::Anthropic.key_var(), KEY)
            .args([
                "run",
                "goldens",
                "--cache-dir",
                "cache",
                "--concurrency",
                "4",
            ]),
    )
    .exits(0)
    .says(&["Judge anthropic/claude-haiku-4-5: 1 call, 3 answers from the cache"]);
    assert_eq!(fake.requests(), 1);
}

/// A judge whose model has no price warns once, like the agent's; the total's "unpriced"
/// counts the judge's replies (two questions here), not the one judge; and a budget says it
/// cannot see that spend.
#[test]
fn an_unpriced_judge_warns_once_and_counts_its_replies() {
    use llm_support::{KEY, Provider};
    let (dir, _fake, _) = two_judged_questions("claude-acme-9");
    let ran = Outcome::of(
        llm_support::goldgate(dir.path())
            .env(Provider::Anthropic.key_var(), KEY)
            .args(["run", "goldens", "--no-cache", "--budget", "5"]),
    )
    .exits(0);
    ran.warns(&[
        "no price is known for the judge's model `claude-acme-9`: its cost is unknown",
        "the budget ($5.00) cannot see what has no price: `claude-acme-9`; it counts only the \
         priced spend",
    ])
    .says(&["Cost: at least $0.42 (2 unpriced) (agent $0.42, judges unknown)"]);
    assert_eq!(
        ran.stderr.matches("no price is known").count(),
        1,
        "{}",
        ran.stderr
    );
}

/// `run --dry-run` says what a run would play and cost, by the baseline's own figures, and
/// calls nothing: the judge is asked no question and the agent gets no request.
#[test]
fn a_dry_run_prints_the_plan_and_its_cost_and_calls_nothing() {
    use llm_support::{KEY, Provider};
    let (dir, fake, judge) = two_judged_questions("claude-haiku-4-5");
    let run = |args: &[&str]| {
        Outcome::of(
            llm_support::goldgate(dir.path())
                .env(Provider::Anthropic.key_var(), KEY)
                .args([&["run", "goldens", "--no-cache"], args].concat()),
        )
    };
    run(&["--update-baseline", "baseline.json"]).exits(0);
    assert_eq!(fake.requests(), 2);
    // Nothing listens where the agent now is: a request would be an error of the run.
    write_config(dir.path(), "127.0.0.1:9".parse().unwrap(), &judge);
    run(&["--dry-run", "--baseline", "baseline.json", "--repeat", "2"])
        .exits(0)
        .says(&[
            "Dry run: nothing was called.\nCases: 2 (2 runs each)\nAgent requests: 4\n",
            "Judge questions: at most 4 (fewer from the judge cache)\n",
            "Expected cost: $0.841 (agent $0.84, judges $0.000600), by the baseline's cost per case\n",
        ])
        .never_prints(&["error"]);
    assert_eq!(fake.requests(), 2, "the dry run asked the judge");
    // Without a baseline the cost is said to be unknown, not zero.
    run(&["--dry-run"])
        .exits(0)
        .says(&["Expected cost: unknown without --baseline"]);
}
