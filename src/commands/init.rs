//! `goldgate init`: write the starter files, never over existing ones, and say what is next.

use goldgate::app::init::{self, AgentKind};
use goldgate::exit::Exit;

use crate::cli::{InitAgent, InitArgs};

pub fn run(args: &InitArgs) -> anyhow::Result<Exit> {
    let agent = match args.agent {
        InitAgent::Http => AgentKind::Http,
        InitAgent::Command => AgentKind::Command,
        InitAgent::Openai => AgentKind::OpenAi,
        InitAgent::Anthropic => AgentKind::Anthropic,
        InitAgent::Gemini => AgentKind::Gemini,
        InitAgent::Ces => AgentKind::Ces,
    };
    let files = init::files(agent, &args.action);
    let existing: Vec<String> = files
        .iter()
        .map(|(path, _)| args.dir.join(path))
        .filter(|path| path.exists())
        .map(|path| path.display().to_string())
        .collect();
    if !existing.is_empty() {
        eprintln!(
            "goldgate init: {} already exist(s); nothing was written (move it away, or edit it by hand)",
            existing.join(", ")
        );
        return Ok(Exit::Error);
    }
    for (path, text) in &files {
        let path = args.dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        goldgate::atomic::write(&path, |out| out.write_all(text.as_bytes()))?;
        println!("wrote {}", path.display());
    }
    let start = match agent {
        AgentKind::Http => "start your agent (goldgate.yaml says where it listens), then ",
        AgentKind::Command => "point goldgate.yaml's `command` at your agent, then ",
        AgentKind::Ces => "set the app in goldgate.yaml and CXAS_OAUTH_TOKEN, then ",
        _ => "set the model's API key in the environment, then ",
    };
    println!(
        "\nnext: {start}run `goldgate run {}`; when it passes, `goldgate run {} --update-baseline {}` and commit goldgate.yaml, {} and .github/workflows/goldgate.yml",
        init::GOLDENS,
        init::GOLDENS,
        init::BASELINE,
        init::GOLDENS
    );
    Ok(Exit::Success)
}
