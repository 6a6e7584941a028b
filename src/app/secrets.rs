//! The credentials a run knows before it starts, gathered from the config and the
//! environment into one [`Secrets`] set: every `${VAR}` the agent's URL, headers and base
//! URLs expand, the header values, the URLs' user names, passwords and query values, every
//! provider's API key and base URL, Google's and GitHub's tokens, and the user and password
//! `GITHUB_API_URL` may carry (a proxy's). Tokens fetched during the
//! run join the set as the agent obtains them (see [`crate::agent::Agent::secrets`]).

use crate::config::{AgentConfig, Config};
use crate::model::Provider;
use crate::secrets::Secrets;

/// The secrets of a run against `agent` (the one the flags or the config chose) with
/// `config`, reading the process environment.
pub fn known(config: &Config, agent: Option<&AgentConfig>) -> Secrets {
    known_in(config, agent, &|name| std::env::var(name).ok())
}

/// As [`known`], with the environment given.
pub fn known_in(
    config: &Config,
    agent: Option<&AgentConfig>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Secrets {
    let secrets = Secrets::new();
    secrets.add_vars(env);
    if let Some(url) = env("GITHUB_API_URL") {
        secrets.add_url(&url);
    }
    for provider in [Provider::Anthropic, Provider::OpenAi, Provider::Gemini] {
        let info = crate::llm::info(provider);
        secrets.extend(env(info.key_var));
        if let Some(url) = env(info.base_url_var) {
            secrets.add_url(&url);
        }
    }
    let mut urls: Vec<&str> = Vec::new();
    match agent {
        Some(AgentConfig::Http { url, headers, .. }) => {
            urls.push(url);
            for (_, value) in headers {
                secrets.add_value(&add_template(&secrets, value, env));
            }
        }
        Some(AgentConfig::Llm(llm)) => urls.extend(llm.endpoint.base_url.as_deref()),
        Some(AgentConfig::Ces(ces)) => urls.extend(ces.base_url.as_deref()),
        Some(AgentConfig::Command { .. } | AgentConfig::Replay { .. }) | None => {}
    }
    urls.extend(
        config
            .judge
            .iter()
            .filter_map(|j| j.endpoint.base_url.as_deref()),
    );
    urls.extend(
        config
            .simulator
            .iter()
            .filter_map(|s| s.endpoint.base_url.as_deref()),
    );
    for url in urls {
        secrets.add_url(&add_template(&secrets, url, env));
    }
    secrets
}

/// Adds the value of every `${VAR}` in `template` that `env` has; returns `template` with
/// them expanded (as [`crate::config::expand_env`] does, a variable not set left as written).
fn add_template(secrets: &Secrets, template: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let mut expanded = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            break;
        };
        expanded.push_str(&rest[..start]);
        match env(&after[..end]) {
            Some(value) => {
                secrets.add_value(&value);
                expanded.push_str(&value);
            }
            None => expanded.push_str(&rest[start..start + 2 + end + 1]),
        }
        rest = &after[end + 1..];
    }
    expanded.push_str(rest);
    expanded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expanded_variables_headers_userinfo_and_keys_are_known() {
        let env = |name: &str| {
            let value = match name {
                "AGENT_TOKEN" => "path-token-123",
                "AGENT_KEY" => "header-key-456",
                "OPENAI_API_KEY" => "sk-openai-789",
                "GH_TOKEN" => "ghs_github_000",
                "GITHUB_API_URL" => "http://ghuser:ghPASS-SECRET-1@127.0.0.1:1/api",
                "HOME" => "/home/someone",
                _ => return None,
            };
            Some(value.to_owned())
        };
        let agent = AgentConfig::Http {
            url: "http://bob.builder:pass-word-1@127.0.0.1:1/turn/${AGENT_TOKEN}".to_owned(),
            headers: vec![("X-Api-Key".to_owned(), "Key ${AGENT_KEY}".to_owned())],
            template: None,
        };
        let secrets = known_in(&Config::default(), Some(&agent), &env);
        let text = "path-token-123 header-key-456 sk-openai-789 ghs_github_000 \
                    pass-word-1 bob.builder:pass-word-1 /home/someone Key header-key-456 \
                    ghPASS-SECRET-1";
        assert_eq!(
            secrets.mask(text),
            "*** *** *** *** *** *** /home/someone *** ***"
        );
    }
}
