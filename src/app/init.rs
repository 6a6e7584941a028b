//! `goldgate init`: the files a team needs to test its own agent, each commented: a
//! `goldgate.yaml` for the chosen kind of agent, one golden to copy from, and a GitHub workflow
//! that gates pull requests and keeps the baseline's history on main.

use std::path::PathBuf;

use crate::model::Provider;

/// The kinds of agent `init` writes a config for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentKind {
    /// Any HTTP endpoint speaking goldgate's turn protocol.
    Http,
    /// A program reading one JSON request per line on stdin.
    Command,
    /// A model with a system prompt plays the agent.
    OpenAi,
    Anthropic,
    Gemini,
    /// A CX Agent Studio app.
    Ces,
}

impl AgentKind {
    /// The environment variable holding the API key of the model that plays the agent, for
    /// the model kinds.
    pub fn key_var(self) -> Option<&'static str> {
        let provider = match self {
            AgentKind::OpenAi => Provider::OpenAi,
            AgentKind::Anthropic => Provider::Anthropic,
            AgentKind::Gemini => Provider::Gemini,
            AgentKind::Http | AgentKind::Command | AgentKind::Ces => return None,
        };
        Some(crate::llm::info(provider).key_var)
    }
}

/// Where the goldens live, relative to the project root.
pub const GOLDENS: &str = "evals";
/// The committed baseline.
pub const BASELINE: &str = "evals/baseline.json";

/// The files to write, relative to the project root, with their text.
pub fn files(agent: AgentKind, action: &str) -> Vec<(PathBuf, String)> {
    vec![
        (PathBuf::from("goldgate.yaml"), config(agent)),
        (
            PathBuf::from(GOLDENS).join("goldens/example.yaml"),
            GOLDEN.to_owned(),
        ),
        (
            PathBuf::from(".github/workflows/goldgate.yml"),
            workflow(agent, action),
        ),
    ]
}

const GOLDEN: &str = r#"# A SCRAPI golden: scripted conversations with what the agent should answer and call.
# Replace it with your own; goldgate also reads CES golden CSVs, *.scenario.yaml scenarios and
# Regtrace golden sets (goldgate's docs/formats.md).
conversations:
  - conversation: greets_and_asks_how_to_help
    tags: [P0]
    turns:
      - user: Hello!
        # Plain text, always compared by meaning (`semantic`). $matchType (exact, contains,
        # regexp, ignore) applies to tool-call arguments. For an exact or regexp reply, use a
        # turn eval's `equals`/`contains` or a gecx scenario's `final-message-equals`,
        # `message-contains` or `message-matches-regex` (goldgate's docs/formats.md).
        agent: Hi! How can I help you today?
"#;

fn config(agent: AgentKind) -> String {
    let agent_block = match agent {
        AgentKind::Http => {
            r#"agent:
  # goldgate POSTs one JSON request per turn and reads the reply (goldgate's
  # docs/agents.md). ${VAR}s come from the environment and are never printed.
  http:
    url: "http://127.0.0.1:8080/turn"
    # headers: { Authorization: "Bearer ${AGENT_TOKEN}" }
    # Your endpoint speaks its own JSON? Describe it instead of writing an adapter:
    # body: { message: "{{text}}", session_id: "{{session}}" }
    # response: { text: $.reply, session: $.session_id }"#
        }
        AgentKind::Command => {
            r#"agent:
  # goldgate starts the program once, sends one JSON request per line on stdin and reads one
  # reply per line on stdout (goldgate's docs/agents.md). Paths are relative to this file.
  command:
    argv: ["python3", "agent.py"]
    startup_timeout: 2m"#
        }
        AgentKind::OpenAi | AgentKind::Anthropic | AgentKind::Gemini => {
            let (name, model) = match agent {
                AgentKind::OpenAi => ("openai", "gpt-4o-mini"),
                AgentKind::Anthropic => ("anthropic", "claude-sonnet-4-6"),
                _ => ("gemini", "gemini-2.5-flash"),
            };
            let key_var = agent.key_var().unwrap_or_default();
            return format!(
                "# goldgate.yaml: how goldgate plays the goldens (goldgate's docs/reference.md).\n\
                 agent:\n  # A model plays the agent with this prompt; its key comes from \
                 {key_var} in the environment.\n  {name}:\n    model: {model}\n    \
                 system_prompt: You are a helpful support agent. Greet the user and ask how you \
                 can help.\n{COMMON}"
            );
        }
        AgentKind::Ces => {
            r#"agent:
  # A CX Agent Studio app, one session per case (goldgate's docs/ces.md).
  # Credentials: CXAS_OAUTH_TOKEN, GOOGLE_APPLICATION_CREDENTIALS or gcloud's.
  ces:
    app: projects/PROJECT/locations/us/apps/APP"#
        }
    };
    format!(
        "# goldgate.yaml: how goldgate plays the goldens (goldgate's docs/reference.md).\n\
         {agent_block}\n{COMMON}"
    )
}

const COMMON: &str = r#"run:
  concurrency: 4
  timeout: 60s
  retries: 2
# What a pull request may not make worse (goldgate's docs/gate.md); the defaults
# are these.
thresholds: { passRateDropPp: 0, deflectionDropPp: 5, p95LatencyIncreasePct: 20 }
# Bars the whole suite must clear whatever the baseline says.
# floors: { min_pass_rate: 0.8 }
# What a pull request plays (run --changed-since, the Action's default): only the goldens it
# changed when every other file it changed matches affects_nothing; every golden when it
# changed anything else (your agent's source, a lockfile, this file). Globs, relative to
# this file. A prompt your agent reads from a .md file affects every golden: list it under
# affects, which wins over affects_nothing.
affects_nothing: ["**/*.md", "docs/**"]
# affects: ["prompts/**"]
# Cases that must not block for now: who owns them, why, and until when.
# quarantine:
#   - { case: evals/goldens/example.yaml#greets_and_asks_how_to_help, owner: "@you", reason: "why", expires: 2030-01-31 }
"#;

fn workflow(agent: AgentKind, action: &str) -> String {
    let start = match agent {
        AgentKind::Http => {
            "      # Start your agent in the background, then wait until it answers, e.g.:\n      \
             #   python3 agent.py & for _ in $(seq 30); do curl -s localhost:8080 >/dev/null && break; sleep 1; done\n      \
             - name: Start the agent\n        run: echo \"start your agent here\"\n"
        }
        // goldgate starts a command agent itself; models and CES apps need only their keys.
        _ => "",
    };
    let secrets = match (agent, agent.key_var()) {
        (_, Some(key_var)) => format!("          {key_var}: ${{{{ secrets.{key_var} }}}}\n"),
        (AgentKind::Ces, None) => {
            "          CXAS_OAUTH_TOKEN: ${{ secrets.CXAS_OAUTH_TOKEN }}\n".to_owned()
        }
        _ => "          AGENT_TOKEN: ${{ secrets.AGENT_TOKEN }}   # for ${AGENT_TOKEN} in goldgate.yaml\n"
            .to_owned(),
    };
    format!(
        r#"# Pull requests: goldgate plays the goldens and fails only on a regression beyond noise
# against {BASELINE} (known failures and undecided comparisons do not). A pull request
# plays only the goldens it changed when everything else it changed matches affects_nothing
# in goldgate.yaml (docs, say); any other change (the agent's source) plays every golden.
# main: each build updates the baseline and commits it back. The baseline keeps the runs of
# the last 20 builds (its history), which is what lets the gate tell a flaky case from a
# broken one; committed, every change to it is reviewed in a diff like code.
name: goldgate
on:
  pull_request: {{}}
  push: {{ branches: [main] }}
permissions:
  contents: write        # main commits the baseline back
  pull-requests: write   # the one sticky PR comment
concurrency: {{ group: "goldgate-${{{{ github.ref }}}}", cancel-in-progress: true }}
jobs:
  goldens:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v7
{start}      - name: Gate the pull request
        if: github.event_name == 'pull_request'
        uses: {action}
        with:
          paths: {GOLDENS}
          # No baseline yet (before main's first build): failing cases decide.
          baseline: ${{{{ hashFiles('{BASELINE}') != '' && '{BASELINE}' || '' }}}}
        env:
{secrets}      - name: Update the baseline
        if: github.event_name == 'push'
        uses: {action}
        with:
          paths: {GOLDENS}
          comment: "false"
          args: --update-baseline {BASELINE}
        env:
{secrets}      - name: Commit the baseline
        if: ${{{{ !cancelled() && github.event_name == 'push' }}}}
        run: |
          git config user.name "goldgate"
          git config user.email "goldgate@users.noreply.github.com"
          git add {BASELINE}
          git diff --cached --quiet || git commit -m "goldgate: baseline of ${{GITHUB_SHA::7}} [skip ci]"
          git push
"#
    )
}
