//! `goldgate init`: write the starter files, never over existing ones, and say what is next.

use anyhow::Context as _;

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
    let action = args.action.clone().unwrap_or_else(init::default_action);
    let files = init::files(agent, &action, args.secret.as_deref());
    let existing: Vec<String> = files
        .iter()
        .map(|(path, _)| args.dir.join(path))
        // A symlink is there even when it points nowhere: writing through it would create a
        // file wherever it points.
        .filter(|path| std::fs::symlink_metadata(path).is_ok())
        .map(|path| path.display().to_string())
        .collect();
    if !existing.is_empty() {
        let (verb, them) = if existing.len() == 1 {
            ("exists", "it")
        } else {
            ("exist", "them")
        };
        eprintln!(
            "goldgate init: {} already {verb}; nothing was written (move {them} away, or edit \
             {them} by hand)",
            existing.join(", ")
        );
        return Ok(Exit::Error);
    }
    // Every folder first, so that one that cannot be made (a dangling link in its place, a
    // read-only disk) stops init before any file is written.
    for (path, _) in &files {
        if let Some(parent) = args.dir.join(path).parent() {
            std::fs::create_dir_all(parent).with_context(|| {
                format!("cannot create {}; nothing was written", parent.display())
            })?;
        }
    }
    for (path, text) in &files {
        let path = args.dir.join(path);
        goldgate::atomic::write(&path, |out| out.write_all(text.as_bytes()))
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    // Added to, not refused: most repositories have a .gitignore already.
    let ignore = args.dir.join(".gitignore");
    let existing = match std::fs::read_to_string(&ignore) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        read => read?,
    };
    if let Some(text) = init::gitignore(&existing) {
        goldgate::atomic::write(&ignore, |out| out.write_all(text.as_bytes()))?;
        let verb = if existing.is_empty() {
            "wrote"
        } else {
            "added goldgate's reports to"
        };
        println!("{verb} {}", ignore.display());
    }
    let start = match (agent, agent.key_var()) {
        (_, Some(key_var)) => format!("set {key_var} to the model's API key, then "),
        (AgentKind::Http, None) => "put your agent's start command in place of \
            `./start-agent` in the workflow, start your agent (goldgate.yaml says where it \
            listens), then "
            .to_owned(),
        (AgentKind::Command, None) => {
            "point goldgate.yaml's `command` at your agent, then ".to_owned()
        }
        _ => "set the app in goldgate.yaml and CXAS_OAUTH_TOKEN, then ".to_owned(),
    };
    if let Some(secret) = &args.secret {
        println!(
            "\nthe workflow reads the secret {secret}: add it in the repository's Settings > \
             Secrets and variables > Actions (or `gh secret set {secret}`)"
        );
    }
    println!(
        "\nnext: {start}run `goldgate run {}`; when it passes, `goldgate run {} --update-baseline {}` and commit goldgate.yaml, .gitignore, {} and .github/workflows/goldgate.yml",
        init::GOLDENS,
        init::GOLDENS,
        init::BASELINE,
        init::GOLDENS
    );
    Ok(Exit::Success)
}
