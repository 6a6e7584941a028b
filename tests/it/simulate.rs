//! A SCRAPI simulation played against a real HTTP agent with a simulated user on each of the
//! three providers (loopback fakes): an agent that reaches the user's goal completes the
//! simulation, one that never does fails at the step's max_turns, and an agent that ends the
//! session stops it.

use crate::{common, llm_support};
use std::sync::Arc;

use axum::Json;
use serde_json::{Value, json};

use goldgate::agent::Agent;
use goldgate::agent::connect;
use goldgate::config::AgentConfig;
use goldgate::model::Provider as Model;
use goldgate::model::SimulationStep as Step;
use goldgate::score::simulated_user::StepStatus;
use goldgate::simulate::{self, Plan, Stop};

use llm_support::{Answer, FakeProvider, Provider, Seen, simulator};

/// A user who wants to know where ORD-12345 is: greets, asks, gives the id when asked, and
/// marks the step completed once the agent says the order shipped.
fn user() -> llm_support::Brain {
    Arc::new(|seen: &Seen| {
        let conversation = seen.user.split("<conversation>").nth(1).unwrap_or("");
        let shipped = conversation.contains("has shipped");
        let asked_for_id = conversation.contains("order number");
        let (say, status) = match (shipped, asked_for_id) {
            (true, _) => ("", "completed"),
            (false, true) => ("It's ORD-12345.", "in_progress"),
            (false, false) => ("Where is my order?", "in_progress"),
        };
        Answer::Calls(vec![(
            seen.forced.clone().unwrap_or_default(),
            json!({"next_user_utterance": say, "step_progresses": [
                {"step": 1, "status": status, "justification": "From the agent's last message."}]}),
        )])
    })
}

/// An agent that answers every request with `reply` (and the request's id), and hands each
/// request it got to the receiver, for the test to read what it was sent.
fn recording_agent(reply: Value) -> (std::net::SocketAddr, std::sync::mpsc::Receiver<Value>) {
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    let tx = Arc::new(std::sync::Mutex::new(tx));
    let addr = common::serve_turn(
        move |Json(request): Json<Value>| {
            let tx = Arc::clone(&tx);
            let mut reply = reply.clone();
            async move {
                tx.lock().unwrap().send(request.clone()).unwrap();
                reply["id"] = request["id"].clone();
                Json(reply)
            }
        },
        (),
    );
    (addr, rx)
}

/// A simulated user on `provider` that always says `say`, marks step 1 completed and leaves
/// step 2 in progress.
fn first_step_done_user(provider: Provider, say: &'static str) -> FakeProvider {
    FakeProvider::start(
        provider,
        Arc::new(move |seen: &Seen| {
            Answer::Calls(vec![(
                seen.forced.clone().unwrap_or_default(),
                json!({"next_user_utterance": say, "step_progresses": [
                    {"step": 1, "status": "completed", "justification": "."},
                    {"step": 2, "status": "in_progress", "justification": "."}]}),
            )])
        }),
    )
}

/// The plan of the first simulation of the SCRAPI simulations file `yaml`, which must load
/// without a diagnostic.
fn plan_of(yaml: &str) -> Plan {
    let root = goldgate::yaml::parse(yaml).unwrap();
    let file: Arc<std::path::Path> = Arc::from(std::path::Path::new("sims.yaml"));
    let mut diags = goldgate::diagnostic::Diagnostics::new(&file);
    let simulations = goldgate::formats::scrapi::simulation::load(&root, &mut diags);
    assert!(diags.items.is_empty(), "{:?}", diags.items);
    Plan::of(&simulations[0])
}

/// An order agent: asks for the order number, then reports it; or, `helpful: false`, never
/// understands; or, with `ends`, hangs up at once.
fn agent(kind: &'static str) -> std::net::SocketAddr {
    common::serve_turn(
        move |Json(request): Json<Value>| async move {
            let text = request["input"]["text"].as_str().unwrap_or("");
            let mut reply = match (kind, text) {
                ("ends", _) => json!({"messages": [{"text": "Goodbye."}],
                    "tool_calls": [{"name": "end_session", "args": {}}]}),
                ("unhelpful", _) => json!({"messages": [{"text": "Sorry, I did not get that."}]}),
                (_, t) if t.contains("ORD-12345") => {
                    json!({"messages": [{"text": "Your order ORD-12345 has shipped."}]})
                }
                (_, "") => json!({"messages": [{"text": "Welcome to Acme! How can I help?"}]}),
                _ => json!({"messages": [{"text": "Sure, what is your order number?"}]}),
            };
            reply["id"] = request["id"].clone();
            Json(reply)
        },
        (),
    )
}

async fn connect_to(addr: std::net::SocketAddr) -> Arc<dyn Agent> {
    connect::connect(&AgentConfig::Http {
        url: format!("http://{addr}/turn"),
        headers: Vec::new(),
        template: None,
    })
    .await
    .unwrap()
}

fn plan() -> Plan {
    let mut plan = Plan::new(
        "order_status",
        vec![Step {
            goal: "Find out where order ORD-12345 is".into(),
            success_criteria: Some("The agent says the order's status".into()),
            response_guide: Some("Give ORD-12345 when asked for the order".into()),
            max_turns: Some(4),
            ..Step::default()
        }],
    );
    plan.session_parameters
        .insert("customer".into(), json!("gold"));
    plan
}

#[tokio::test]
async fn a_helpful_agent_completes_the_goal_and_an_unhelpful_one_fails_at_max_turns() {
    let helpful = connect_to(agent("helpful")).await;
    let unhelpful = connect_to(agent("unhelpful")).await;
    for provider in Provider::ALL {
        let fake = FakeProvider::start(provider, user());
        let user = simulator(&fake, None);

        let played = simulate::play(helpful.as_ref(), &user, &plan(), "s-1")
            .await
            .unwrap();
        assert_eq!(played.stop, Stop::Completed, "{provider:?}");
        assert!(played.goals_met());
        // welcome, "Where is my order?", "It's ORD-12345."
        assert_eq!(played.turns.len(), 3, "{provider:?}: {:#?}", played.turns);
        assert!(played.simulator_usage.input_tokens > 0);

        let played = simulate::play(unhelpful.as_ref(), &user, &plan(), "s-2")
            .await
            .unwrap();
        assert_eq!(played.stop, Stop::OutOfTurns { step: 1 }, "{provider:?}");
        assert_eq!(played.turns.len(), 4, "{provider:?}: max_turns is 4");
        assert_eq!(played.steps[0].status, StepStatus::Failed);
        assert!(
            played.steps[0].justification.contains("max_turns (4)"),
            "{}",
            played.steps[0].justification
        );
        assert!(!played.goals_met());
        fake.assert_valid();
    }
}

#[tokio::test]
async fn the_first_turn_is_the_welcome_event_or_the_opening_with_the_session_parameters() {
    let (addr, rx) = recording_agent(json!({"messages": [{"text": "Goodbye."}],
        "tool_calls": [{"name": "end_session", "args": {}}]}));
    let agent = connect_to(addr).await;
    let fake = FakeProvider::start(Provider::Gemini, user());
    let played = simulate::play(agent.as_ref(), &simulator(&fake, None), &plan(), "s-3")
        .await
        .unwrap();
    assert_eq!(played.stop, Stop::AgentEnded);
    let first = rx.recv().unwrap();
    assert_eq!(first["input"], json!({"event": "welcome"}));
    assert_eq!(first["session_parameters"], json!({"customer": "gold"}));
    assert_eq!(first["conversation"], "order_status");

    let mut opening = plan();
    opening.opening = Some("Hi, where is ORD-12345?".into());
    simulate::play(agent.as_ref(), &simulator(&fake, None), &opening, "s-4")
        .await
        .unwrap();
    let first = rx.recv().unwrap();
    assert_eq!(first["input"], json!({"text": "Hi, where is ORD-12345?"}));
}

#[tokio::test]
async fn the_turn_cap_stops_a_conversation_that_never_ends() {
    let agent = connect_to(agent("unhelpful")).await;
    let fake = FakeProvider::start(Provider::OpenAi, user());
    let mut plan = plan();
    plan.steps[0].max_turns = None;
    plan.turn_cap = 5;
    let played = simulate::play(agent.as_ref(), &simulator(&fake, None), &plan, "s-5")
        .await
        .unwrap();
    assert_eq!(played.stop, Stop::TurnCap);
    assert_eq!(played.turns.len(), 5);
    assert_eq!(played.steps[0].status, StepStatus::InProgress);
}

#[tokio::test]
async fn a_loaded_simulation_opens_with_its_static_utterance_and_injects_each_steps_variables() {
    let yaml = "evals:\n  - name: two_steps\n    steps:\n      - static_utterance: Hi, where is ORD-12345?\n        inject_variables: { channel: web }\n      - goal: Ask for a refund\n        static_utterance: I also want a refund.\n        inject_variables: { refund: true }\n    session_parameters: { customer: gold }\n";
    let plan = plan_of(yaml);

    let (addr, rx) = recording_agent(json!({"messages": [{"text": "Your order has shipped."}]}));
    let agent = connect_to(addr).await;
    // Step 1 completes at once; step 2 then stays open until the cap.
    let fake = first_step_done_user(Provider::Anthropic, "And?");
    let mut plan = plan;
    plan.turn_cap = 3;
    let played = simulate::play(agent.as_ref(), &simulator(&fake, None), &plan, "s-6")
        .await
        .unwrap();
    assert_eq!(played.stop, Stop::TurnCap);
    let sent: Vec<Value> = (0..3)
        .map(|_| rx.recv().unwrap()["input"].clone())
        .collect();
    assert_eq!(
        sent,
        [
            json!({"variables": {"channel": "web"}, "text": "Hi, where is ORD-12345?"}),
            json!({"variables": {"refund": true}, "text": "I also want a refund."}),
            json!({"text": "And?"}),
        ]
    );
}

/// A judge that meets a criterion when the transcript holds its `needle`, or cannot answer.
struct Needle(Option<&'static str>);

#[async_trait::async_trait]
impl goldgate::score::Judge for Needle {
    fn provider(&self) -> Model {
        Model::Anthropic
    }

    fn model(&self) -> String {
        "needle".into()
    }

    async fn similarity(
        &self,
        _: &str,
        _: &str,
    ) -> Result<goldgate::score::JudgeScore, goldgate::score::JudgeError> {
        unreachable!("simulations judge criteria only")
    }

    async fn criterion(
        &self,
        _: goldgate::score::JudgeQuestion<'_>,
        transcript: &str,
    ) -> Result<goldgate::score::JudgeVerdict, goldgate::score::JudgeError> {
        let needle = self
            .0
            .ok_or_else(|| goldgate::score::JudgeError::Request("HTTP 503".into()))?;
        Ok(goldgate::score::JudgeVerdict {
            passed: transcript.contains(needle),
            score: None,
            explanation: Some(format!("looked for {needle}")),
        })
    }
}

#[tokio::test]
async fn a_simulation_passes_when_every_step_completed_and_every_expectation_is_met() {
    use goldgate::simulate::Verdict;
    let helpful = connect_to(agent("helpful")).await;
    let unhelpful = connect_to(agent("unhelpful")).await;
    let fake = FakeProvider::start(Provider::Anthropic, user());
    let user = simulator(&fake, None);
    let expectations = [goldgate::model::CaseCheck {
        location: goldgate::model::Location::new(&Arc::from(std::path::Path::new("s.yaml")), 7, 7),
        label: "criterion".into(),
        kind: goldgate::model::CheckKind::Criterion("The agent gives the order's status".into()),
    }];
    let reached = simulate::play(helpful.as_ref(), &user, &plan(), "j-1")
        .await
        .unwrap();
    assert!(reached.goals_met());
    let transcript = simulate::transcript(&reached);
    assert!(
        transcript
            .contains("[turn 3] user: It's ORD-12345.\nagent: Your order ORD-12345 has shipped."),
        "{transcript}"
    );

    let met = Needle(Some("has shipped"));
    let (verdict, judged) = simulate::judge(&reached, &expectations, Some(&met)).await;
    assert_eq!(verdict, Verdict::Passed);
    assert_eq!(judged[0].met, Some(true));

    let unmet = Needle(Some("refund"));
    let (verdict, _) = simulate::judge(&reached, &expectations, Some(&unmet)).await;
    assert_eq!(verdict, Verdict::Failed);

    let (verdict, judged) = simulate::judge(&reached, &expectations, None).await;
    assert_eq!(verdict, Verdict::Skipped(goldgate::score::NO_JUDGE.into()));
    assert_eq!(judged[0].met, None);

    let (verdict, _) = simulate::judge(&reached, &expectations, Some(&Needle(None))).await;
    assert!(
        matches!(verdict, Verdict::Error(ref why) if why.contains("503")),
        "{verdict:?}"
    );

    let missed = simulate::play(unhelpful.as_ref(), &user, &plan(), "j-2")
        .await
        .unwrap();
    let (verdict, _) = simulate::judge(&missed, &expectations, None).await;
    assert_eq!(
        verdict,
        Verdict::Failed,
        "a failed step fails it even without a judge"
    );
}

#[tokio::test]
async fn a_step_of_only_words_completes_when_they_are_said() {
    let yaml = "evals:\n  - name: polite\n    steps:\n      - goal: Find out where ORD-12345 is\n      - static_utterance: Thanks, that's all.\n";
    let mut plan = plan_of(yaml);
    plan.turn_cap = 6;
    let addr = common::serve_turn(
        |Json(request): Json<Value>| async move {
            Json(json!({"id": request["id"], "messages": [{"text": "Your order has shipped."}]}))
        },
        (),
    );
    let agent = connect_to(addr).await;
    // A simulated user that completes the first step and never marks the second.
    let fake = first_step_done_user(Provider::OpenAi, "Anything else?");
    let played = simulate::play(agent.as_ref(), &simulator(&fake, None), &plan, "s-9")
        .await
        .unwrap();
    assert_eq!(played.stop, Stop::Completed, "{:?}", played.steps);
    assert_eq!(played.turns.len(), 2);
    assert_eq!(played.steps[1].status, StepStatus::Completed);
}
