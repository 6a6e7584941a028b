//! The simulated user of SCRAPI simulations (`llm::simulator`) against a fake of each provider
//! on 127.0.0.1: it sends the steps and the conversation, reads the structured answer, asks
//! again after a bad one, caches, and says so when it cannot be built without a key.

use crate::llm_support;
use std::time::Duration;

use serde_json::{Value, json};

use goldgate::config::Endpoint;
use goldgate::llm::cache::JudgeCache;
use goldgate::llm::client::{LlmClient, Patience, SetupError};
use goldgate::model::SimulationStep as Step;
use goldgate::score::simulated_user::{Line, SimulatedUser, StepStatus};

use llm_support::{Answer, FakeProvider, KEY, Provider, simulator};

fn steps() -> Vec<Step> {
    vec![
        Step {
            goal: "Find out where order ORD-12345 is".into(),
            success_criteria: Some("The agent gives the order's status".into()),
            response_guide: Some("Give the order id when asked".into()),
            max_turns: Some(4),
            ..Step::default()
        },
        Step {
            goal: "Ask for a refund".into(),
            ..Step::default()
        },
    ]
}

/// A user who asks for the order until the agent names its status, then says goodbye.
fn user() -> llm_support::Brain {
    std::sync::Arc::new(|seen: &llm_support::Seen| {
        let shipped = seen.user.contains("AGENT: Your order has shipped");
        let (utterance, first) = if shipped {
            ("", "completed")
        } else {
            ("Where is ORD-12345?", "in_progress")
        };
        Answer::Calls(vec![(
            seen.forced.clone().unwrap_or_default(),
            json!({
                "next_user_utterance": utterance,
                "step_progresses": [
                    {"step": 1, "status": first, "justification": "What the agent said."},
                    {"step": 2, "status": if shipped { "completed" } else { "not_started" }, "justification": "."},
                ],
            }),
        )])
    })
}

#[tokio::test]
async fn the_simulated_user_speaks_and_tracks_steps_on_every_provider() {
    for provider in Provider::ALL {
        let fake = FakeProvider::start(provider, user());
        let simulator = simulator(&fake, None);

        let (turn, usage) = simulator.next_turn(&steps(), &[]).await.unwrap();
        assert_eq!(
            turn.utterance.as_deref(),
            Some("Where is ORD-12345?"),
            "{provider:?}"
        );
        assert_eq!(turn.steps[0].status, StepStatus::InProgress);
        assert_eq!(turn.steps[1].status, StepStatus::NotStarted);
        assert!(usage.input_tokens > 0, "{provider:?}");

        let conversation = [
            Line::User("Where is ORD-12345?".into()),
            Line::Agent("Your order has shipped.".into()),
        ];
        let (turn, _) = simulator.next_turn(&steps(), &conversation).await.unwrap();
        assert_eq!(turn.utterance, None, "{provider:?}: the user is done");
        assert!(turn.all_completed());

        fake.assert_valid();
        let body = fake
            .bodies()
            .last()
            .cloned()
            .unwrap_or(Value::Null)
            .to_string();
        for sent in [
            "Find out where order ORD-12345 is",
            "at most 4 user turns",
            "AGENT: Your order has shipped.",
        ] {
            assert!(
                body.contains(sent),
                "{provider:?} did not send {sent}: {body}"
            );
        }
        assert!(!body.contains(KEY), "the key travels in headers only");
    }
}

#[tokio::test]
async fn a_bad_answer_is_asked_once_more_then_is_an_error() {
    for provider in Provider::ALL {
        let fake = FakeProvider::start(
            provider,
            std::sync::Arc::new(|seen: &llm_support::Seen| {
                Answer::Calls(vec![(
                    seen.forced.clone().unwrap_or_default(),
                    json!({"next_user_utterance": "hi", "step_progresses": [
                        {"step": 1, "status": "done", "justification": "."}]}),
                )])
            }),
        );
        let err = simulator(&fake, None)
            .next_turn(&steps(), &[])
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("asked 2 times"), "{provider:?}: {err}");
        assert_eq!(fake.requests(), 2, "{provider:?}");
    }
}

#[tokio::test]
async fn answers_are_cached_per_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeProvider::start(Provider::Anthropic, user());
    let first = simulator(&fake, Some(JudgeCache::new(dir.path())));
    let (a, _) = first.next_turn(&steps(), &[]).await.unwrap();
    let second = simulator(&fake, Some(JudgeCache::new(dir.path())));
    let (b, usage) = second.next_turn(&steps(), &[]).await.unwrap();
    assert_eq!(
        (a, fake.requests()),
        (b, 1),
        "the second ask comes from the cache"
    );
    assert_eq!(usage.input_tokens, 0);
    second.for_repeat(1).next_turn(&steps(), &[]).await.unwrap();
    assert_eq!(fake.requests(), 2, "another repeat is another sample");
}

#[test]
fn without_the_key_there_is_no_simulator_and_the_error_names_the_variable() {
    for provider in Provider::ALL {
        let err = LlmClient::new(
            provider.model(),
            &Endpoint::default(),
            &|_| None,
            goldgate::net::http_client().unwrap(),
            Patience {
                timeout: Duration::from_secs(1),
                retries: 0,
                backoff: Duration::from_millis(1),
            },
        )
        .unwrap_err();
        assert_eq!(
            err,
            SetupError::MissingKey {
                var: provider.key_var()
            }
        );
    }
}
