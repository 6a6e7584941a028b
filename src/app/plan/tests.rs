//! One test per rule of the precedence (flag > env > goldgate.yaml > default), and the flags
//! that cannot go together.

use std::path::PathBuf;
use std::time::Duration;

use super::{BACKOFF, Inputs, PlanError, Resolved, check, grading_flags, resolve};
use crate::app::request::{AgentRequest, Env, Execution, GateRequest, Request, SelectionRequest};
use crate::config::{AgentConfig, Config, DEFAULT_STARTUP_TIMEOUT, RunSettings};
use crate::load::Suite;

fn command(argv: &str, startup_timeout: Duration) -> AgentConfig {
    AgentConfig::Command {
        argv: vec![argv.to_owned()],
        processes: 1,
        working_dir: None,
        startup_timeout,
    }
}

/// A goldgate.yaml with a command agent (starting in 30 s) and `run:` settings of its own.
fn config() -> Config {
    Config {
        agent: Some(command("./agent", Duration::from_secs(30))),
        run: RunSettings {
            concurrency: 3,
            timeout: Duration::from_secs(7),
            retries: 5,
            allow_extra_tool_calls: false,
            budget: None,
        },
        ..Config::default()
    }
}

fn resolved(request: Request, config: &Config, env: &Env) -> Resolved {
    let checked = check(request).expect("the flags hold together");
    let suite = Suite::default();
    let inputs = Inputs {
        config,
        gate: None,
        suite: &suite,
    };
    resolve(&checked, inputs, env).expect("the plan resolves")
}

fn url(agent: Option<&AgentConfig>) -> &str {
    match agent {
        Some(AgentConfig::Http { url, .. }) => url,
        other => panic!("not an HTTP agent: {other:?}"),
    }
}

fn with_agent(agent: AgentRequest) -> Request {
    Request {
        agent,
        ..Request::default()
    }
}

fn env_url(url: &str) -> Env {
    Env {
        agent_url: Some(url.to_owned()),
        ..Env::default()
    }
}

#[test]
fn a_flag_beats_its_environment_variable() {
    let flag = with_agent(AgentRequest {
        url: Some("http://127.0.0.1:1/flag".into()),
        ..AgentRequest::default()
    });
    let plan = resolved(flag, &config(), &env_url("http://127.0.0.1:1/env")).plan;
    assert_eq!(url(plan.agent.as_ref()), "http://127.0.0.1:1/flag");

    // Even a flag that names another kind of agent.
    let command_flag = with_agent(AgentRequest {
        command: Some("./flagged".into()),
        ..AgentRequest::default()
    });
    let plan = resolved(command_flag, &config(), &env_url("http://127.0.0.1:1/env")).plan;
    assert!(
        matches!(&plan.agent, Some(AgentConfig::Command { argv, .. }) if argv.last().unwrap() == "./flagged"),
        "{:?}",
        plan.agent
    );

    let mut request = Request::default();
    request.judge.cache_dir = Some(PathBuf::from("flag-cache"));
    let env = Env {
        cache_dir: Some(PathBuf::from("env-cache")),
        ..Env::default()
    };
    let flags = grading_flags(&request, None, &env);
    assert_eq!(flags.cache_dir, Some(PathBuf::from("flag-cache")));
}

#[test]
fn an_environment_variable_beats_goldgate_yaml() {
    let plan = resolved(
        Request::default(),
        &config(),
        &env_url("http://127.0.0.1:1/env"),
    )
    .plan;
    assert_eq!(url(plan.agent.as_ref()), "http://127.0.0.1:1/env");

    let env = Env {
        cache_dir: Some(PathBuf::from("env-cache")),
        ..Env::default()
    };
    let flags = grading_flags(&Request::default(), None, &env);
    assert_eq!(flags.cache_dir, Some(PathBuf::from("env-cache")));
}

#[test]
fn a_flag_beats_goldgate_yaml() {
    let request = Request {
        agent: AgentRequest {
            startup_timeout: Some(Duration::from_secs(90)),
            ..AgentRequest::default()
        },
        execution: Execution {
            concurrency: Some(11),
            timeout: Some(Duration::from_secs(2)),
            retries: Some(0),
            allow_extra_tool_calls: true,
            ..Execution::default()
        },
        ..Request::default()
    };
    let plan = resolved(request, &config(), &Env::default()).plan;
    assert_eq!(plan.options.concurrency, 11);
    assert_eq!(plan.options.timeout, Duration::from_secs(2));
    assert_eq!(plan.options.retries, 0);
    assert_eq!(
        plan.agent,
        Some(command("./agent", Duration::from_secs(90))),
        "--startup-timeout over the config's"
    );
    assert!(plan.grader.options.allow_extra_tool_calls);
}

#[test]
fn goldgate_yaml_beats_the_defaults() {
    let plan = resolved(Request::default(), &config(), &Env::default()).plan;
    assert_eq!(plan.options.concurrency, 3);
    assert_eq!(plan.options.timeout, Duration::from_secs(7));
    assert_eq!(plan.options.retries, 5);
    assert_eq!(
        plan.agent,
        Some(command("./agent", Duration::from_secs(30)))
    );

    // A switch the file turns on stays on without the flag.
    let mut config = config();
    config.run.allow_extra_tool_calls = true;
    let plan = resolved(Request::default(), &config, &Env::default()).plan;
    assert!(plan.grader.options.allow_extra_tool_calls);
}

#[test]
fn the_defaults_hold_where_nothing_else_gives_a_setting() {
    let request = with_agent(AgentRequest {
        command: Some("./agent".into()),
        ..AgentRequest::default()
    });
    let plan = resolved(request, &Config::default(), &Env::default()).plan;
    let defaults = RunSettings::default();
    assert_eq!(plan.options.concurrency, defaults.concurrency);
    assert_eq!(plan.options.timeout, defaults.timeout);
    assert_eq!(plan.options.retries, defaults.retries);
    assert_eq!(plan.options.backoff, BACKOFF);
    assert_eq!(BACKOFF, Duration::from_millis(200));
    assert!(matches!(
        plan.agent,
        Some(AgentConfig::Command { startup_timeout, .. }) if startup_timeout == DEFAULT_STARTUP_TIMEOUT
    ));
    assert!(!plan.grader.options.allow_extra_tool_calls);
    let flags = grading_flags(&Request::default(), None, &Env::default());
    assert_eq!(flags.cache_dir, None, "the judge cache's own default");
}

#[test]
fn a_url_replaces_only_the_url_of_an_http_template() {
    let yaml = "agent:\n  http:\n    url: http://127.0.0.1:1/old\n    headers: { X-Team: evals }\n    method: post\n    body: { q: '{{text}}' }\n    response:\n      text: $.answer\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("goldgate.yaml");
    std::fs::write(&path, yaml).unwrap();
    let config = Config::load(&path).expect("the template loads");
    let Some(AgentConfig::Http {
        template: Some(_), ..
    }) = &config.agent
    else {
        panic!("the fixture is not an HTTP template: {:?}", config.agent);
    };
    let plan = resolved(
        Request::default(),
        &config,
        &env_url("http://127.0.0.1:1/new"),
    )
    .plan;
    match &plan.agent {
        Some(AgentConfig::Http {
            url,
            headers,
            template,
        }) => {
            assert_eq!(url, "http://127.0.0.1:1/new");
            assert_eq!(headers.len(), 1);
            assert!(template.is_some());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn flags_that_cannot_go_together_are_refused_before_anything_loads() {
    let inconclusive = Request {
        gate: GateRequest {
            baseline: Some("base.json".into()),
            fail_on_inconclusive: true,
            ..GateRequest::default()
        },
        ..Request::default()
    };
    assert!(matches!(
        check(inconclusive),
        Err(PlanError::InconclusiveWithoutRegress)
    ));
    let below = Request {
        execution: Execution {
            repeat: 3,
            max_repeat: Some(2),
            ..Execution::default()
        },
        ..Request::default()
    };
    assert!(matches!(
        check(below),
        Err(PlanError::MaxRepeatBelowRepeat { max: 2, repeat: 3 })
    ));
    let shard = Request {
        selection: SelectionRequest {
            shard: Some("4/3".into()),
            ..SelectionRequest::default()
        },
        ..Request::default()
    };
    assert!(matches!(check(shard), Err(PlanError::Shard(_))));
}

#[test]
fn no_agent_anywhere_is_refused_with_how_to_name_one() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("hello.scenario.yaml");
    let scenario =
        "id: hello\nname: Hello\nwhen:\n  - user: Hi\nthen:\n  - scorer: handoff-triggered\n";
    std::fs::write(&golden, scenario).unwrap();
    let suite = crate::app::setup::discover_and_load(&[golden]).expect("the golden loads");
    let checked = check(Request::default()).unwrap();
    let config = Config::default();
    let inputs = Inputs {
        config: &config,
        gate: None,
        suite: &suite,
    };
    let error = resolve(&checked, inputs, &Env::default())
        .err()
        .expect("no agent");
    assert!(matches!(error, PlanError::NoAgent));
}

#[test]
fn a_url_without_a_scheme_is_refused_naming_the_flag_or_the_variable_it_came_from() {
    let refused = |request: Request, env: &Env| {
        let checked = check(request).expect("the flags hold together");
        let suite = Suite::default();
        let inputs = Inputs {
            config: &config(),
            gate: None,
            suite: &suite,
        };
        resolve(&checked, inputs, env).err().expect("refused")
    };
    let flag = with_agent(AgentRequest {
        url: Some("localhost:8080/turn".into()),
        ..AgentRequest::default()
    });
    let error = refused(flag, &Env::default());
    assert!(
        matches!(
            error,
            PlanError::AgentUrl {
                given: "--agent-url",
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "--agent-url `localhost:8080/turn` has no scheme: a URL needs `http://` or `https://`\n\
         hint: did you mean `http://localhost:8080/turn`?"
    );
    let error = refused(Request::default(), &env_url("127.0.0.1:8080/turn"));
    assert!(
        matches!(
            error,
            PlanError::AgentUrl {
                given: "GOLDGATE_AGENT_URL",
                ..
            }
        ),
        "{error:?}"
    );

    // A variable a flag overrides is not read, so not refused either.
    let command_flag = with_agent(AgentRequest {
        command: Some("./flagged".into()),
        ..AgentRequest::default()
    });
    let plan = resolved(command_flag, &config(), &env_url("127.0.0.1:8080/turn")).plan;
    assert!(matches!(plan.agent, Some(AgentConfig::Command { .. })));
}
