//! `goldgate run` with `judge:` configured, against a fake of each provider on 127.0.0.1:
//! verdicts follow the judge's answers, bad answers are errors, the cache spares calls, and
//! provider errors are errors of the run with the provider's message.

use crate::{common, llm_support};
use std::collections::HashMap;
use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use llm_support::{
    Answer, FakeProvider, KEY, Provider, assert_no_key_under, checks, goldgate, judge, run,
    start_agent,
};

const EXPECTED: &str = "Your order ORD-12345 has shipped and should arrive by April 18th.";

/// A similarity judge: contradictions (a "not") score 1, anything else 4.
fn similarity_judge() -> llm_support::Brain {
    judge(|prompt| {
        let actual = prompt.split("<actual>").nth(1).unwrap_or_default();
        if actual.contains(" not ") {
            json!({ "score": 1, "explanation": "it says the order has not shipped" })
        } else {
            json!({ "score": 4, "explanation": "the same meaning" })
        }
    })
}

/// A verdict judge: no when the criterion says "(judge says no)". Similarity questions (the
/// goldens' agent text) score 4.
fn verdict_judge() -> llm_support::Brain {
    std::sync::Arc::new(|seen: &llm_support::Seen| {
        let tool = seen.forced.clone().unwrap_or_default();
        let args = if tool == "record_similarity" {
            json!({ "score": 4, "explanation": "the same" })
        } else {
            let passed = !seen.user.contains("(judge says no)");
            json!({ "passed": passed, "explanation": if passed { "met" } else { "not met" } })
        };
        Answer::Calls(vec![(tool, args)])
    })
}

/// An agent answering each conversation of `replies` with its reply, and the config in `dir`
/// that points at it and at `judge`, with `extra` judge settings.
fn agent_judged_by<const N: usize>(
    dir: &Path,
    replies: [(&'static str, Value); N],
    judge: &FakeProvider,
    extra: &str,
) {
    judged_config(dir, &start_agent(HashMap::from(replies)), judge, extra);
}

/// The config in `dir` that points at the agent at `agent` and at `judge`, with `extra` judge
/// settings.
fn judged_config(dir: &Path, agent: &str, judge: &FakeProvider, extra: &str) {
    common::write(
        dir,
        "goldgate.yaml",
        format!(
            "agent:\n  http: {{ url: \"{agent}\" }}\njudge:\n  provider: {}\n  model: judge-model\n  base_url: \"{}\"\n{extra}run: {{ retries: 2 }}\n",
            judge.provider.name(),
            judge.base_url()
        ),
    );
}

/// A project in a temporary directory whose agent answers as [`agent_judged_by`], judged by
/// `brain` behind a fake `provider`.
fn judged_project<const N: usize>(
    provider: Provider,
    brain: llm_support::Brain,
    replies: [(&'static str, Value); N],
) -> (tempfile::TempDir, FakeProvider) {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeProvider::start(provider, brain);
    agent_judged_by(dir.path(), replies, &fake, "");
    (dir, fake)
}

fn golden(dir: &Path, conversations: &[(&str, &str)]) {
    let mut text = String::from("conversations:\n");
    for (name, extra) in conversations {
        text.push_str(&format!(
            "  - conversation: {name}\n    turns:\n      - user: Where is ORD-12345?\n        agent: \"{EXPECTED}\"\n{extra}"
        ));
    }
    common::write(dir, "goldens/orders.yaml", text);
}

/// The scenario `tone` in `dir`: the agent answers "hi" with `reply`, and `then` (its
/// scorers) are judged by `judge` with `extra` judge settings.
fn tone_suite(dir: &Path, judge: &FakeProvider, extra: &str, reply: &str, then: &str) {
    agent_judged_by(dir, [("tone", say(reply))], judge, extra);
    common::write(
        dir,
        "tone.scenario.yaml",
        format!("id: tone\nwhen:\n  - user: hi\nthen:\n{then}"),
    );
}

/// `goldgate run .` in `dir` with the key of `provider` and the judge cache in `dir/cache`.
fn run_with_cache(dir: &Path, provider: Provider) -> llm_support::Ran {
    run(
        goldgate(dir)
            .env(provider.key_var(), KEY)
            .args(["run", "--cache-dir", "cache", "."]),
        dir,
    )
}

/// The golden `paraphrase` in `dir`, answered word for word by its agent and judged by `judge`.
fn paraphrase_suite(dir: &Path, judge: &FakeProvider) {
    agent_judged_by(dir, [("paraphrase", say(EXPECTED))], judge, "");
    golden(dir, &[("paraphrase", "")]);
}

/// [`paraphrase_suite`] run with the judge's key and no cache.
fn judge_one_paraphrase(dir: &Path, judge: &FakeProvider) -> llm_support::Ran {
    paraphrase_suite(dir, judge);
    run(
        goldgate(dir)
            .env(judge.provider.key_var(), KEY)
            .args(["run", "--no-cache", "."]),
        dir,
    )
}

fn say(text: &str) -> Value {
    json!({ "messages": [{ "text": text }] })
}

fn judged(provider: Provider) -> String {
    format!("judge:{}/judge-model", provider.name())
}

#[test]
fn the_semantic_judge_passes_a_paraphrase_and_fails_a_contradiction() {
    for provider in Provider::ALL {
        let replies = [
            // No word in common with the expected text: local similarity would fail it.
            (
                "paraphrase",
                say("Good news: it's on its way and lands on the 18th of April."),
            ),
            (
                "contradiction",
                say("Your order ORD-12345 has not shipped yet."),
            ),
        ];
        let (dir, fake) = judged_project(provider, similarity_judge(), replies);
        golden(dir.path(), &[("paraphrase", ""), ("contradiction", "")]);
        let ran = run_with_cache(dir.path(), provider);
        assert_eq!(ran.code, Some(1), "{provider:?}: {}", ran.stderr);
        let paraphrase = checks(&ran.report, "paraphrase");
        assert_eq!(paraphrase[0]["status"], "passed", "{provider:?}");
        assert_eq!(paraphrase[0]["method"], judged(provider));
        assert_eq!(paraphrase[0]["score"], 1.0);
        let contradiction = checks(&ran.report, "contradiction");
        assert_eq!(contradiction[0]["status"], "failed");
        assert_eq!(contradiction[0]["method"], judged(provider));
        let reason = contradiction[0]["reason"].as_str().unwrap();
        common::assert_contains(reason, &["similarity 1/4", "not shipped"]);
        assert_eq!(
            ran.report["judges"],
            json!([format!("{}/judge-model", provider.name())])
        );
        let usage = &ran.report["judge_usage"][0];
        assert_eq!(usage["calls"], 2);
        assert_eq!(usage["cached"], 0);
        assert_eq!(usage["input_tokens"], 200);
        assert_eq!(usage["output_tokens"], 20);
        ran.says(&["Judge ", "2 calls"]);
        fake.assert_valid();
        assert_eq!(fake.requests(), 2);
        for body in fake.bodies() {
            let temperature = match provider {
                Provider::Gemini => &body["generationConfig"]["temperature"],
                _ => &body["temperature"],
            };
            assert_eq!(
                temperature, 0.0,
                "{provider:?}: the judge asks at temperature 0"
            );
        }
        assert_no_key_under(dir.path());
    }
}

#[test]
fn gecx_judge_scorers_and_scrapi_expectations_follow_the_judge() {
    for provider in Provider::ALL {
        let replies = [
            ("judged-yes", say("Orders ship within two days.")),
            ("judged-no", say("Orders ship within two days.")),
            ("expect-yes", say(EXPECTED)),
            ("expect-no", say(EXPECTED)),
        ];
        let (dir, fake) = judged_project(provider, verdict_judge(), replies);
        for verdict in ["yes", "no"] {
            fs::write(
                dir.path().join(format!("{verdict}.scenario.yaml")),
                format!(
                    "id: judged-{verdict}\nwhen:\n  - user: how fast do you ship?\nthen:\n\
                     \x20 - scorer: llm-judge-not-hallucinating\n    args: {{ groundingContext: \"Orders ship in 2 days (judge says {verdict})\" }}\n\
                     \x20 - scorer: llm-judge-helpfulness\n    args: {{ criteria: \"answers the question (judge says {verdict})\" }}\n\
                     \x20 - scorer: llm-judge-tone-matches\n    args: {{ tone: \"friendly (judge says {verdict})\" }}\n"
                ),
            )
            .unwrap();
        }
        golden(
            dir.path(),
            &[
                (
                    "expect-yes",
                    "    expectations:\n      - \"The agent gives the delivery date (judge says yes)\"\n",
                ),
                (
                    "expect-no",
                    "    expectations:\n      - \"The agent apologises (judge says no)\"\n",
                ),
            ],
        );
        let brain_checks = run(
            goldgate(dir.path())
                .env(provider.key_var(), KEY)
                .args(["run", "--no-cache", "."]),
            dir.path(),
        )
        .exits(1);
        let report = &brain_checks.report;
        for (case, status) in [("judged-yes", "passed"), ("judged-no", "failed")] {
            let results = checks(report, case);
            let labels: Vec<&str> = results
                .iter()
                .map(|c| c["label"].as_str().unwrap())
                .collect();
            assert_eq!(
                labels,
                [
                    "llm-judge-not-hallucinating",
                    "llm-judge-helpfulness",
                    "llm-judge-tone-matches"
                ]
            );
            for check in results {
                assert_eq!(check["status"], status, "{provider:?} {case}: {check}");
                assert_eq!(check["method"], judged(provider));
            }
        }
        let expectation = |case| {
            checks(report, case)
                .into_iter()
                .find(|c| c["label"] == "criterion")
                .unwrap()
                .clone()
        };
        assert_eq!(expectation("expect-yes")["status"], "passed");
        let failed = expectation("expect-no");
        assert_eq!(failed["status"], "failed");
        assert_eq!(failed["reason"], "not met");
        fake.assert_valid();
    }
}

#[test]
fn a_scorer_naming_another_provider_uses_that_providers_judge_or_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let main = FakeProvider::start(Provider::Anthropic, verdict_judge());
    let other = FakeProvider::start(Provider::OpenAi, verdict_judge());
    tone_suite(
        dir.path(),
        &main,
        "",
        "Hi there!",
        "  - scorer: llm-judge-tone-matches\n    args: { tone: friendly, provider: openai }\n  - scorer: llm-judge-helpfulness\n    args: { provider: gemini }\n",
    );
    let ran = run(
        goldgate(dir.path())
            .env("ANTHROPIC_API_KEY", KEY)
            .env("OPENAI_API_KEY", KEY)
            .env("OPENAI_BASE_URL", other.base_url())
            .args(["run", "--no-cache", "."]),
        dir.path(),
    )
    .exits(0);
    let results = checks(&ran.report, "tone");
    assert_eq!(results[0]["status"], "passed");
    assert_eq!(results[0]["method"], "judge:openai/gpt-4o-mini");
    assert_eq!(results[1]["status"], "skipped");
    assert_eq!(
        results[1]["reason"],
        "asks for the gemini judge: GEMINI_API_KEY is not set"
    );
    assert_eq!((main.requests(), other.requests()), (0, 1));
    other.assert_valid();
}

#[test]
fn a_garbled_or_refused_answer_is_asked_once_more_then_is_an_error() {
    let garbled = || judge(|_| json!({ "score": "four", "explanation": "close enough" }));
    let refusing =
        || -> llm_support::Brain { std::sync::Arc::new(|_: &llm_support::Seen| Answer::Refusal) };
    for provider in Provider::ALL {
        let refused = match provider {
            Provider::Anthropic => "the model refused (stop_reason: refusal)",
            Provider::OpenAi => "the model refused: I can't help with grading this.",
            Provider::Gemini => "the answer was blocked (finishReason: SAFETY)",
        };
        for (brain, problem) in [
            (garbled(), "does not fit the schema"),
            (refusing(), refused),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let fake = FakeProvider::start(provider, brain);
            paraphrase_suite(dir.path(), &fake);
            let ran = run_with_cache(dir.path(), provider).exits(2);
            let check = checks(&ran.report, "paraphrase")[0];
            assert_eq!(check["status"], "error");
            let reason = check["reason"].as_str().unwrap();
            assert!(
                reason.contains(problem) && reason.contains("asked 2 times"),
                "{reason}"
            );
            assert_eq!(fake.requests(), 2, "{provider:?}: one retry");
            // A bad answer is never cached: the next run asks again.
            assert!(common::files_under(&dir.path().join("cache")).is_empty());
            fake.assert_valid();
        }
    }
}

#[test]
fn a_second_run_asks_nothing_and_repeats_are_independent_samples() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeProvider::start(Provider::Gemini, similarity_judge());
    paraphrase_suite(dir.path(), &fake);
    let suite = |extra: &[&str]| {
        let mut command = goldgate(dir.path());
        command
            .env("GEMINI_API_KEY", KEY)
            .args(["run", "--cache-dir", "judge-cache"])
            .args(extra)
            .arg(".");
        run(&mut command, dir.path())
    };
    suite(&[]).exits(0);
    assert_eq!(fake.requests(), 1);
    let second = suite(&[]).exits(0);
    assert_eq!(
        fake.requests(),
        1,
        "the second run is answered from the cache"
    );
    assert_eq!(second.report["judge_usage"][0]["calls"], 0);
    assert_eq!(second.report["judge_usage"][0]["cached"], 1);
    second.says(&["0 calls, 1 answer from the cache"]);

    suite(&["--repeat", "3"]).exits(0);
    assert_eq!(
        fake.requests(),
        3,
        "runs 2 and 3 are new samples; run 1 is cached"
    );
    suite(&["--repeat", "3"]).exits(0);
    assert_eq!(fake.requests(), 3);

    suite(&["--no-cache"]).exits(0);
    assert_eq!(fake.requests(), 4, "--no-cache asks again");
    let entries = common::files_under(&dir.path().join("judge-cache"));
    assert_eq!(entries.len(), 3);
    let entry: Value = serde_json::from_str(&fs::read_to_string(&entries[0]).unwrap()).unwrap();
    assert_eq!(entry["provider"], "gemini");
    assert_eq!(entry["model"], "judge-model");
    assert_no_key_under(dir.path());
    fake.assert_valid();
}

#[test]
fn rate_limits_and_overloads_are_retried_honouring_retry_after() {
    let answers = |provider: Provider| -> llm_support::Brain {
        std::sync::Arc::new(move |seen: &llm_support::Seen| match seen.number {
            1 => Answer::Error {
                status: 429,
                retry_after: Some("1"),
                message: "rate limited".into(),
            },
            2 if provider == Provider::Anthropic => Answer::Error {
                status: 529,
                retry_after: None,
                message: "Overloaded".into(),
            },
            2 => Answer::Error {
                status: 503,
                retry_after: None,
                message: "The service is currently unavailable.".into(),
            },
            _ => Answer::Calls(vec![(
                seen.forced.clone().unwrap(),
                json!({ "score": 4, "explanation": "same" }),
            )]),
        })
    };
    for provider in Provider::ALL {
        let dir = tempfile::tempdir().unwrap();
        let fake = FakeProvider::start(provider, answers(provider));
        let ran = judge_one_paraphrase(dir.path(), &fake);
        assert_eq!(ran.code, Some(0), "{provider:?}: {}", ran.stderr);
        assert_eq!(fake.requests(), 3);
        assert_eq!(ran.report["judge_usage"][0]["calls"], 3);
    }
}

#[test]
fn a_provider_error_is_an_error_of_the_run_with_the_providers_message() {
    for provider in Provider::ALL {
        let dir = tempfile::tempdir().unwrap();
        let fake = FakeProvider::start(
            provider,
            std::sync::Arc::new(|_: &llm_support::Seen| Answer::Error {
                status: 404,
                retry_after: None,
                message: "model: judge-model does not exist".into(),
            }),
        );
        let ran = judge_one_paraphrase(dir.path(), &fake).exits(2);
        let check = checks(&ran.report, "paraphrase")[0];
        assert_eq!(check["status"], "error");
        let reason = check["reason"].as_str().unwrap();
        common::assert_contains(
            reason,
            &[
                &format!("{} answered 404", provider.name()),
                "model: judge-model does not exist",
            ],
        );
        assert_eq!(fake.requests(), 1, "a 404 is not retried");
    }
}

#[test]
fn without_the_key_judge_checks_are_skipped_with_the_reason() {
    let replies = [("expect-yes", say(EXPECTED))];
    let (dir, fake) = judged_project(Provider::Anthropic, verdict_judge(), replies);
    golden(
        dir.path(),
        &[(
            "expect-yes",
            "    expectations:\n      - \"The agent is polite\"\n",
        )],
    );
    let mut command = goldgate(dir.path());
    command.args(["run", ".", "--markdown", "summary.md"]);
    let ran = run(&mut command, dir.path()).exits(0);
    let why = "the anthropic judge needs ANTHROPIC_API_KEY, which is not set";
    // A judge was configured: the summaries say why none ran, not that none was set up.
    ran.warns(&[why])
        .says(&[
            &format!("no judge ran: 1 check skipped ({why})"),
            // The verdict says its green is one check short.
            "(1 check not judged) (exit 0)",
        ])
        .never_prints(&["no judge configured"]);
    let summary = fs::read_to_string(dir.path().join("summary.md")).unwrap();
    common::assert_contains(&summary, &["no judge ran\\: 1 check skipped"]);
    let results = checks(&ran.report, "expect-yes");
    assert_eq!(results[0]["method"], "local-similarity");
    assert_eq!(results[1]["status"], "skipped");
    assert_eq!(
        results[1]["reason"],
        "the anthropic judge needs ANTHROPIC_API_KEY, which is not set"
    );
    assert_eq!(fake.requests(), 0);
}

#[test]
fn judge_settings_are_checked_when_the_config_loads() {
    let dir = tempfile::tempdir().unwrap();
    common::write(
        dir.path(),
        "goldgate.yaml",
        "judge:\n  provider: antropic\n  votes: 2\n  similarity_pass: 5\n  modle: x\n",
    );
    golden(dir.path(), &[("paraphrase", "")]);
    let ran = run(goldgate(dir.path()).args(["run", "."]), dir.path()).exits(2);
    ran.warns(&[
        "judge.votes: 2 votes can tie",
        "judge.similarity_pass: expected a number from 0 to 4",
        "unknown key `modle`",
        "unknown judge provider `antropic`",
        "did you mean `anthropic`",
    ]);
}

#[test]
fn votes_ask_each_judgement_n_times_and_keep_the_majority() {
    let dir = tempfile::tempdir().unwrap();
    // Votes 1 and 3 say yes, vote 2 says no.
    let fake = FakeProvider::start(
        Provider::OpenAi,
        std::sync::Arc::new(|seen: &llm_support::Seen| {
            let passed = seen.number != 2;
            Answer::Calls(vec![(
                seen.forced.clone().unwrap(),
                json!({ "passed": passed, "explanation": format!("vote {}", seen.number) }),
            )])
        }),
    );
    tone_suite(
        dir.path(),
        &fake,
        "  votes: 3\n",
        "Hi!",
        "  - scorer: llm-judge-tone-matches\n    args: { tone: friendly }\n",
    );
    let ran = run_with_cache(dir.path(), Provider::OpenAi).exits(0);
    assert_eq!(checks(&ran.report, "tone")[0]["status"], "passed");
    assert_eq!(fake.requests(), 3);
    // Each vote is its own cache entry, so that the next run keeps all three.
    assert_eq!(common::files_under(&dir.path().join("cache")).len(), 3);
}

/// A conversation's turns go to the agent one after another, and are judged once it is over: a
/// slow judge holds up neither the agent's next turn nor the place another case waits for.
#[test]
fn a_conversation_is_judged_once_its_turns_are_played() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::{Arc, Mutex};
    type Tally = (Arc<AtomicUsize>, Arc<Mutex<Vec<usize>>>);
    // One clock for the agent and the judge: which came first.
    let clock = Arc::new(AtomicUsize::new(0));
    let (turns_at, judged_at) = (Arc::default(), Arc::<Mutex<Vec<usize>>>::default());
    let agent = common::serve_turn(
        |axum::extract::State((clock, at)): axum::extract::State<Tally>| async move {
            at.lock().unwrap().push(clock.fetch_add(1, SeqCst));
            axum::Json(say("It shipped, and you can expect it by April 18th."))
        },
        (Arc::clone(&clock), Arc::clone(&turns_at)),
    );
    let judged = Arc::clone(&judged_at);
    let fake = FakeProvider::start(
        Provider::ALL[0],
        judge(move |_| {
            judged.lock().unwrap().push(clock.fetch_add(1, SeqCst));
            json!({ "score": 4, "explanation": "the same meaning" })
        }),
    );
    let dir = tempfile::tempdir().unwrap();
    judged_config(dir.path(), &format!("http://{agent}/turn"), &fake, "");
    // Three expected replies: three questions (one asked thrice is paid for once).
    let turns: String = (1..=3)
        .map(|i| {
            format!("      - user: Where is ORD-12345?\n        agent: \"{EXPECTED} ({i})\"\n")
        })
        .collect();
    common::write(
        dir.path(),
        "goldens/orders.yaml",
        format!("conversations:\n  - conversation: three_turns\n    turns:\n{turns}"),
    );
    run(
        goldgate(dir.path())
            .env(Provider::ALL[0].key_var(), KEY)
            .args(["run", "."]),
        dir.path(),
    )
    .exits(0);
    let (turns, judged) = (turns_at.lock().unwrap(), judged_at.lock().unwrap());
    assert_eq!(
        (turns.len(), judged.len()),
        (3, 3),
        "turns at {turns:?}, judged at {judged:?}"
    );
    assert!(
        turns.iter().max() < judged.iter().min(),
        "a turn was judged before the conversation was over: turns at {turns:?}, judged at {judged:?}"
    );
}
