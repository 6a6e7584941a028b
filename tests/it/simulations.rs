//! `goldgate run` plays SCRAPI simulation files end to end: the binary against a loopback
//! agent and a loopback LLM provider that plays a user who wants to know where ORD-12345 is
//! (and judges the expectations). An agent that gets there passes; one that never does fails
//! at the step's max_turns; on each of the three providers. Without a key the simulations are
//! skipped with the reason; `simulator:` is checked like any key; answers are cached; `list`
//! shows the simulations.

use crate::{common, llm_support};
use common::case;
use std::fs;
use std::path::Path;
use std::sync::Arc;

use axum::Json;
use serde_json::{Value, json};

use llm_support::{Answer, FakeProvider, KEY, Provider, Ran, Seen, checks, goldgate, run};

const SIMULATIONS: &str = "evals:
  - name: reaches_goal
    tags: [orders]
    steps:
      - goal: Find out where order ORD-12345 is
        success_criteria: The agent says the order's status
        response_guide: Give ORD-12345 when asked for the order
        max_turns: 4
    expectations:
      - The agent never invents a delivery date
    session_parameters: { customer: gold }
  - name: never_helps
    tags: [orders]
    steps:
      - goal: Find out where order ORD-12345 is
        success_criteria: The agent says the order's status
        max_turns: 4
";

/// The user (for `record_user_turn`): greets, asks, gives the id when asked, and marks the
/// step completed once the agent says the order shipped. The judge (any other tool): met.
fn brain() -> llm_support::Brain {
    Arc::new(|seen: &Seen| {
        let tool = seen.forced.clone().unwrap_or_default();
        if tool != "record_user_turn" {
            return Answer::Calls(vec![(
                tool,
                json!({"passed": true, "explanation": "No date was invented."}),
            )]);
        }
        let conversation = seen.user.split("<conversation>").nth(1).unwrap_or("");
        let (say, status, why) = if conversation.contains("has shipped") {
            ("", "completed", "The agent said the order has shipped.")
        } else if conversation.contains("order number") {
            (
                "It's ORD-12345.",
                "in_progress",
                "The agent asked for the number.",
            )
        } else {
            ("Where is my order?", "in_progress", "Nothing yet.")
        };
        Answer::Calls(vec![(
            tool,
            json!({"next_user_utterance": say, "step_progresses": [
                {"step": 1, "status": status, "justification": why}]}),
        )])
    })
}

/// An order agent: helpful in conversation `reaches_goal`, never understanding elsewhere.
fn agent() -> String {
    let addr = common::serve_turn(
        |Json(request): Json<Value>| async move {
            let text = request["input"]["text"].as_str().unwrap_or("");
            let helpful = request["conversation"] == "reaches_goal";
            let mut reply = match (helpful, text) {
                (false, _) => json!({"messages": [{"text": "Sorry, I did not get that."}]}),
                (true, t) if t.contains("ORD-12345") => {
                    json!({"messages": [{"text": "Your order ORD-12345 has shipped."}]})
                }
                (true, "") => json!({"messages": [{"text": "Welcome to Acme! How can I help?"}]}),
                (true, _) => json!({"messages": [{"text": "Sure, what is your order number?"}]}),
            };
            reply["id"] = request["id"].clone();
            Json(reply)
        },
        (),
    );
    format!("http://{addr}/turn")
}

fn suite(dir: &Path, config: &str) {
    common::write(dir, "goldgate.yaml", config);
    common::write(dir, "goldens/sims.yaml", SIMULATIONS);
}

fn judged_by(agent: &str, fake: &FakeProvider) -> String {
    format!(
        "agent:\n  http: {{ url: \"{agent}\" }}\njudge:\n  provider: {}\n  model: judge-model\n  base_url: \"{}\"\n",
        fake.provider.name(),
        fake.base_url()
    )
}

/// `goldgate run --no-cache FLAGS .` in `dir` with the key of `provider`.
fn run_with_key(dir: &Path, provider: Provider, flags: &[&str]) -> Ran {
    let mut command = goldgate(dir);
    command.env(provider.key_var(), KEY);
    run(
        command.args(["run", "--no-cache"]).args(flags).arg("."),
        dir,
    )
}

#[test]
fn a_simulation_that_reaches_its_goal_passes_and_one_that_never_does_fails_at_max_turns() {
    let agent = agent();
    for provider in Provider::ALL {
        let dir = tempfile::tempdir().unwrap();
        let fake = FakeProvider::start(provider, brain());
        suite(dir.path(), &judged_by(&agent, &fake));
        let reports = ["--junit", "junit.xml", "--html", "report.html"];
        let flags = [
            &["--repeat", "2"],
            &reports[..],
            &["--markdown", "summary.md"],
        ]
        .concat();
        let ran = run_with_key(dir.path(), provider, &flags);
        assert_eq!(ran.code, Some(1), "{provider:?}: {}", ran.stderr);
        // Repeats play each simulation twice, each run its own conversation.
        assert_eq!(
            case(&ran.report, "reaches_goal")["repeats"]["runs"],
            json!(["passed", "passed"])
        );
        // Every output shows the failed step with the simulated user's justification.
        for output in ["junit.xml", "report.html", "summary.md"] {
            let text = fs::read_to_string(dir.path().join(output)).unwrap();
            assert!(
                text.contains("never_helps") && text.contains("the simulated user said"),
                "{provider:?}: {output}:\n{text}"
            );
        }

        assert_reaches_its_goal(&ran, provider);
        assert_never_helps_fails_at_max_turns(&ran, provider);
        fake.assert_valid();
    }
}

/// `reaches_goal` passed on the welcome event and two simulated turns, its step completed
/// and its expectation met, both by the judge of `provider`.
fn assert_reaches_its_goal(ran: &Ran, provider: Provider) {
    let passed = case(&ran.report, "reaches_goal");
    assert_eq!(passed["status"], "passed", "{provider:?}: {passed:#}");
    assert_eq!(passed["format"], "scrapi");
    let turns = passed["turns"].as_array().unwrap();
    // The welcome event, "Where is my order?", "It's ORD-12345."
    assert_eq!(turns.len(), 3, "{provider:?}: {turns:#?}");
    assert_eq!(turns[0]["input"], "<event welcome>");
    assert_eq!(turns[2]["input"], "It's ORD-12345.");
    assert_eq!(
        turns[2]["reply"]["messages"][0]["text"],
        "Your order ORD-12345 has shipped."
    );
    let found = checks(&ran.report, "reaches_goal");
    assert_eq!(found.len(), 2, "the step and the expectation: {found:#?}");
    assert_eq!(
        found[0]["label"],
        "step 1: Find out where order ORD-12345 is"
    );
    assert_eq!(found[0]["status"], "passed");
    assert_eq!(found[0]["actual"], "completed");
    assert_eq!(found[0]["reason"], "The agent said the order has shipped.");
    assert_eq!(
        found[0]["method"],
        format!("judge:{}/{}", provider.name(), "judge-model")
    );
    assert_eq!(found[1]["status"], "passed");
    // The judge's verdict on the expectation, over the whole transcript.
    assert_eq!(found[1]["label"], "criterion");
    assert_eq!(
        found[1]["method"],
        format!("judge:{}/judge-model", provider.name())
    );
    assert!(
        found[1]["actual"]
            .as_str()
            .unwrap()
            .contains("Your order ORD-12345 has shipped."),
        "{:#}",
        found[1]
    );
}

/// `never_helps` failed after `max_turns`, and its step says why, in the report and on the
/// terminal.
fn assert_never_helps_fails_at_max_turns(ran: &Ran, provider: Provider) {
    let failed = case(&ran.report, "never_helps");
    assert_eq!(failed["status"], "failed", "{provider:?}: {failed:#}");
    assert_eq!(
        failed["turns"].as_array().unwrap().len(),
        4,
        "max_turns is 4"
    );
    let step = &checks(&ran.report, "never_helps")[0];
    assert_eq!(step["status"], "failed");
    let reason = step["reason"].as_str().unwrap();
    common::assert_contains(reason, &["max_turns (4)", "step 1 used all its max_turns"]);
    // The terminal shows the failed step with its justification.
    ran.says(&[
        "FAILED never_helps",
        "the simulated user said: Nothing yet.",
    ]);
}

#[test]
fn without_a_key_simulations_are_skipped_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeProvider::start(Provider::Anthropic, brain());
    suite(dir.path(), &judged_by(&agent(), &fake));
    let ran = run(goldgate(dir.path()).args(["run", "."]), dir.path());
    // A suite of simulations on a fork's PR with no key judged nothing: never a pass.
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);
    assert!(
        ran.stderr.contains(
            "goldgate: nothing was judged, so the run cannot pass: the anthropic simulated user needs ANTHROPIC_API_KEY"
        ),
        "{}",
        ran.stderr
    );
    for id in ["reaches_goal", "never_helps"] {
        assert_eq!(case(&ran.report, id)["status"], "skipped");
        let found = checks(&ran.report, id);
        assert!(!found.is_empty());
        for check in found {
            assert_eq!(check["status"], "skipped");
            assert_eq!(
                check["reason"],
                "the anthropic simulated user needs ANTHROPIC_API_KEY, which is not set"
            );
        }
    }
    assert_eq!(fake.requests(), 0);

    // No judge and no simulator at all.
    common::write(
        dir.path(),
        "goldgate.yaml",
        format!("agent:\n  http: {{ url: \"{}\" }}\n", agent()),
    );
    let ran = run(goldgate(dir.path()).args(["run", "."]), dir.path()).exits(2);
    let reason = checks(&ran.report, "never_helps")[0]["reason"].clone();
    assert!(
        reason.as_str().unwrap().contains("configure `simulator:`"),
        "{reason}"
    );
}

/// The suite in `dir` judged by an Anthropic fake, with a `simulator:` block of its own that
/// a Gemini fake plays: the judge and the simulated user.
fn suite_with_its_own_simulator(dir: &Path) -> (FakeProvider, FakeProvider) {
    let judge = FakeProvider::start(Provider::Anthropic, brain());
    let user = FakeProvider::start(Provider::Gemini, brain());
    let config = format!(
        "{}simulator:\n  provider: gemini\n  model: user-model\n  base_url: \"{}\"\n",
        judged_by(&agent(), &judge),
        user.base_url()
    );
    suite(dir, &config);
    (judge, user)
}

#[test]
fn a_simulation_whose_expectation_cannot_be_graded_is_skipped_not_passed() {
    let dir = tempfile::tempdir().unwrap();
    // The simulated user is served for the whole test, though only the judge is asked about.
    let (judge, _user) = suite_with_its_own_simulator(dir.path());
    // A scripted case with an expectation the judge would grade, beside a passing turn.
    common::write(
        dir.path(),
        "goldens/scripted.yaml",
        "conversations:\n  - conversation: scripted\n    turns:\n      - user: Hello\n        agent: Sorry, I did not get that.\n    expectations:\n      - \"The agent is polite\"\n",
    );
    // The simulated user's key, not the judge's: the steps are played, the expectations not.
    let ran = run_with_key(dir.path(), Provider::Gemini, &["--junit", "junit.xml"]).exits(1);
    assert_eq!(judge.requests(), 0);
    let reached = case(&ran.report, "reaches_goal");
    assert_eq!(reached["status"], "skipped", "{reached:#}");
    assert_eq!(reached["checks"][0]["status"], "passed", "the step");
    assert_eq!(reached["checks"][1]["status"], "skipped", "the expectation");
    let why = reached["error"].as_str().unwrap_or_default();
    assert!(
        why.starts_with("an expectation could not be graded: ")
            && why.contains("ANTHROPIC_API_KEY"),
        "{why}"
    );
    let junit = fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    common::assert_contains(&junit, &[&format!("<skipped message=\"{why}\"")]);
    // A failed step still fails the simulation; other kinds keep their rule.
    assert_eq!(case(&ran.report, "never_helps")["status"], "failed");
    let scripted = case(&ran.report, "scripted");
    assert_eq!(scripted["status"], "passed", "{scripted:#}");
    assert_eq!(scripted["checks"][0]["status"], "skipped", "{scripted:#}");
    assert_eq!(scripted["error"], Value::Null);
}

#[test]
fn the_simulator_block_picks_its_own_provider_and_answers_are_cached() {
    let dir = tempfile::tempdir().unwrap();
    let (judge, user) = suite_with_its_own_simulator(dir.path());
    let command = || {
        let mut command = goldgate(dir.path());
        command
            .env("ANTHROPIC_API_KEY", KEY)
            .env("GEMINI_API_KEY", KEY)
            .args(["run", "--cache-dir", "cache", "."]);
        command
    };
    let ran = run(&mut command(), dir.path()).exits(1);
    let step = &checks(&ran.report, "reaches_goal")[0];
    assert_eq!(step["method"], "judge:gemini/user-model");
    assert_eq!(step["status"], "passed");
    // The user's turns went to gemini (3 + 4), the expectation to the anthropic judge.
    assert_eq!(user.requests(), 7);
    assert_eq!(judge.requests(), 1);
    assert!(
        user.bodies()
            .iter()
            .all(|b| b.to_string().contains("record_user_turn"))
    );

    let usage = &ran.report["judge_usage"];
    assert_eq!(
        usage[1]["judge"], "gemini/user-model (simulated user)",
        "{usage}"
    );
    assert_eq!(usage[1]["calls"], 7);

    // Run again: the same conversation, every answer from the cache.
    let again = run(&mut command(), dir.path()).exits(1);
    assert_eq!(user.requests(), 7, "the simulated user was asked again");
    assert_eq!(judge.requests(), 1);
    let inputs = |report: &Value| -> Vec<Value> {
        case(report, "reaches_goal")["turns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["input"].clone())
            .collect()
    };
    assert_eq!(inputs(&again.report), inputs(&ran.report));
    let usage = &again.report["judge_usage"];
    assert_eq!(usage[1]["calls"], 0, "{usage}");
    assert_eq!(usage[1]["cached"], 7, "{usage}");
    user.assert_valid();
}

#[test]
fn a_misspelt_simulator_key_is_an_error_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    suite(
        dir.path(),
        "agent: { http: { url: 'http://127.0.0.1:9/turn' } }\nsimulator:\n  provider: antropic\n  modle: x\n",
    );
    let outcome = common::goldgate(dir.path(), &["run", "."]).exits(2);
    outcome.warns(&[":3:", "anthropic", ":4:", "model"]);
}

#[test]
fn list_shows_the_simulations() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), "");
    let outcome = common::goldgate(dir.path(), &["list", "goldens"]).exits(0);
    outcome.says(&[
        "reaches_goal",
        "never_helps",
        "simulated user, 1 step, 1 check",
    ]);
    let outcome = common::goldgate(dir.path(), &["list", "--json", "goldens"]);
    let listing: Value = serde_json::from_str(&outcome.stdout).unwrap();
    assert_eq!(listing["cases"][0]["id"], "reaches_goal");
    assert_eq!(listing["cases"][0]["steps"], 1);
    assert_eq!(listing["cases"][0]["turns"], 0);
}

#[test]
fn a_recorded_simulation_replays_with_no_provider() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeProvider::start(Provider::OpenAi, brain());
    suite(dir.path(), &judged_by(&agent(), &fake));
    let recorded = run_with_key(dir.path(), Provider::OpenAi, &["--record", "recorded"]).exits(1);
    let asked = fake.requests();

    // The same suite, the agent replayed, no key: the provider is never asked.
    let config = judged_by("http://127.0.0.1:9/turn", &fake).replace(
        "agent:\n  http: { url: \"http://127.0.0.1:9/turn\" }",
        "agent:\n  replay: recorded",
    );
    common::write(dir.path(), "goldgate.yaml", config);
    let replayed = run(goldgate(dir.path()).args(["run", "."]), dir.path()).exits(1);
    assert_eq!(
        fake.requests(),
        asked,
        "the provider was asked during the replay"
    );
    for id in ["reaches_goal", "never_helps"] {
        let (before, after) = (case(&recorded.report, id), case(&replayed.report, id));
        // The expectation needs the judge, which has no key now: not graded, not passed.
        let status = match id {
            "reaches_goal" => "skipped".into(),
            _ => before["status"].clone(),
        };
        assert_eq!(after["status"], status, "{id}: {after:#}");
        let inputs = |c: &Value| -> Vec<Value> {
            c["turns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["input"].clone())
                .collect()
        };
        assert_eq!(inputs(after), inputs(before), "{id}");
        assert_eq!(after["checks"][0], before["checks"][0], "{id}: the step");
    }
    assert_eq!(case(&recorded.report, "reaches_goal")["status"], "passed");
    let expectation = &checks(&replayed.report, "reaches_goal")[1];
    assert_eq!(expectation["status"], "skipped");
}

#[test]
fn a_simulated_user_that_cannot_answer_is_an_error_of_the_run_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeProvider::start(
        Provider::Gemini,
        Arc::new(|_: &Seen| Answer::Error {
            status: 400,
            retry_after: None,
            message: "model not found".to_owned(),
        }),
    );
    suite(dir.path(), &judged_by(&agent(), &fake));
    let ran = run_with_key(dir.path(), Provider::Gemini, &[]).exits(2);
    let errored = case(&ran.report, "reaches_goal");
    assert_eq!(errored["status"], "error");
    let error = errored["error"].as_str().unwrap();
    common::assert_contains(
        error,
        &["the simulated user could not be asked", "model not found"],
    );
    // The turn played before the simulated user failed is kept.
    assert_eq!(errored["turns"][0]["input"], "<event welcome>");
}

#[test]
fn a_simulation_with_a_misspelt_key_is_not_run_and_lint_says_where() {
    let dir = tempfile::tempdir().unwrap();
    common::write(
        dir.path(),
        "goldens/sims.yaml",
        "evals:\n  - name: x\n    steps:\n      - goal: g\n        max_turn: 3\n",
    );
    let outcome = common::goldgate(dir.path(), &["lint", "goldens"]).exits(1);
    assert!(
        outcome
            .stdout
            .contains("sims.yaml:5: error [G100] evals[0].steps[0].max_turn: unknown key `max_turn` (did you mean `max_turns`?)"),
        "{}",
        outcome.stdout
    );
    common::goldgate(
        dir.path(),
        &["run", "--agent-url", "http://127.0.0.1:9/turn", "goldens"],
    )
    .exits(2);
}
