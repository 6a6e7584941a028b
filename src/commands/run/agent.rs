//! The agent `run` plays against: the one its flags name, else the config's.

use goldgate::config::{AgentConfig, Config};

use crate::cli::RunArgs;

/// The agent the flags name, else the config's; `--startup-timeout` over a command agent's own.
pub(super) fn agent_config(args: &RunArgs, config: &Config) -> Option<AgentConfig> {
    let chosen = if let Some(url) = &args.agent_url {
        // A template describes the endpoint's JSON, wherever it runs (a preview URL in CI):
        // only the URL is replaced. A protocol agent is replaced whole.
        match &config.agent {
            Some(AgentConfig::Http {
                headers,
                template: Some(template),
                ..
            }) => AgentConfig::Http {
                url: url.clone(),
                headers: headers.clone(),
                template: Some(template.clone()),
            },
            _ => AgentConfig::Http {
                url: url.clone(),
                headers: Vec::new(),
                template: None,
            },
        }
    } else if let Some(command) = &args.agent_cmd {
        // Through the shell, so that quoting and paths work as the user typed them.
        let argv = if cfg!(windows) {
            vec!["cmd".into(), "/C".into(), command.clone()]
        } else {
            vec!["sh".into(), "-c".into(), command.clone()]
        };
        AgentConfig::Command {
            argv,
            processes: 1,
            working_dir: None,
            startup_timeout: goldgate::config::DEFAULT_STARTUP_TIMEOUT,
        }
    } else {
        config.agent.clone()?
    };
    Some(match (chosen, args.startup_timeout) {
        (
            AgentConfig::Command {
                argv,
                processes,
                working_dir,
                ..
            },
            Some(startup_timeout),
        ) => AgentConfig::Command {
            argv,
            processes,
            working_dir,
            startup_timeout,
        },
        (chosen, _) => chosen,
    })
}
