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
/// Where the HTTP agent of the starter config listens.
const AGENT_URL: &str = "http://127.0.0.1:8080/turn";

/// The repository of goldgate's Action.
pub const ACTION_REPOSITORY: &str = "goldgate/goldgate";

/// The action a workflow uses unless told otherwise: goldgate's Action at the commit this
/// goldgate was built from (the Action builds it from source, once per runner system, cached),
/// else, for a build from a packaged release, that release's tag. `@vX.Y.Z` needs its tag and
/// release to exist, which the commit does before any release.
pub fn default_action() -> String {
    match option_env!("GOLDGATE_COMMIT") {
        Some(commit) => format!("{ACTION_REPOSITORY}@{commit}"),
        None => format!("{ACTION_REPOSITORY}@v{}", env!("CARGO_PKG_VERSION")),
    }
}

/// What runs write and nobody commits, which `init` makes sure `.gitignore` lists (the
/// baseline is committed, so it is not among them).
pub const IGNORED: [&str; 5] = [
    "goldgate-report.json",
    "goldgate-junit.xml",
    "goldgate-report.html",
    "goldgate-report.md",
    ".goldgate/",
];

/// `.gitignore`'s text with the [`IGNORED`] entries it lacks added at the end; `None` when it
/// lists them all.
pub fn gitignore(existing: &str) -> Option<String> {
    let listed: std::collections::HashSet<&str> = existing.lines().map(str::trim).collect();
    let missing: Vec<&str> = IGNORED
        .into_iter()
        .filter(|e| !listed.contains(e))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let mut text = existing.to_owned();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# goldgate's reports and judge cache, written by every run (goldgate init)\n");
    for entry in missing {
        text.push_str(entry);
        text.push('\n');
    }
    Some(text)
}

/// The files to write, relative to the project root, with their text. `action` is the
/// workflow's `uses:`; `secret` the GitHub secret passed to the agent and goldgate.
pub fn files(agent: AgentKind, action: &str, secret: Option<&str>) -> Vec<(PathBuf, String)> {
    vec![
        (PathBuf::from("goldgate.yaml"), config(agent, secret)),
        (
            PathBuf::from(GOLDENS).join("goldens/example.yaml"),
            GOLDEN.to_owned(),
        ),
        (
            PathBuf::from(".github/workflows/goldgate.yml"),
            workflow(agent, action, secret),
        ),
    ]
}

/// The environment variable the workflow sets from the secret, and the secret's name: a
/// model's key and a CES token keep the variable goldgate reads; any other agent's secret is
/// passed under its own name. `None`: no secret.
fn secret_env(agent: AgentKind, secret: Option<&str>) -> Option<(String, String)> {
    let fixed = match agent {
        AgentKind::Ces => Some("CXAS_OAUTH_TOKEN"),
        _ => agent.key_var(),
    };
    match (fixed, secret) {
        (Some(var), secret) => Some((var.to_owned(), secret.unwrap_or(var).to_owned())),
        (None, Some(secret)) => Some((secret.to_owned(), secret.to_owned())),
        (None, None) => None,
    }
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

fn config(agent: AgentKind, secret: Option<&str>) -> String {
    let headers = match secret {
        Some(secret) => format!("    headers: {{ Authorization: \"Bearer ${{{secret}}}\" }}"),
        None => "    # headers: { Authorization: \"Bearer ${AGENT_TOKEN}\" }   # goldgate init --secret AGENT_TOKEN".to_owned(),
    };
    let agent_block = match agent {
        AgentKind::Http => format!(
            r#"agent:
  # goldgate POSTs one JSON request per turn and reads the reply (goldgate's
  # docs/agents.md). ${{VAR}}s come from the environment and are never printed.
  http:
    url: "{AGENT_URL}"
{headers}
    # Your endpoint speaks its own JSON? Describe it instead of writing an adapter:
    # body: {{ message: "{{{{text}}}}", session_id: "{{{{session}}}}" }}
    # response: {{ text: $.reply, session: $.session_id }}"#
        ),
        AgentKind::Command => r#"agent:
  # goldgate starts the program once, sends one JSON request per line on stdin and reads one
  # reply per line on stdout (goldgate's docs/agents.md). Paths are relative to this file.
  command:
    argv: ["python3", "agent.py"]
    startup_timeout: 2m"#
            .to_owned(),
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
        AgentKind::Ces => r#"agent:
  # A CX Agent Studio app, one session per case (goldgate's docs/ces.md).
  # Credentials: CXAS_OAUTH_TOKEN, GOOGLE_APPLICATION_CREDENTIALS or gcloud's.
  ces:
    app: projects/PROJECT/locations/us/apps/APP"#
            .to_owned(),
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

fn workflow(agent: AgentKind, action: &str, secret: Option<&str>) -> String {
    let env = match secret_env(agent, secret) {
        Some((var, secret)) => format!(
            "# For the agent and goldgate.yaml's ${{VAR}}s; add what else your agent needs.\n\
             env:\n  {var}: ${{{{ secrets.{secret} }}}}\n"
        ),
        None => "# For the agent and goldgate.yaml's ${VAR}s (goldgate init --secret NAME):\n\
                 # env:\n#   AGENT_TOKEN: ${{ secrets.AGENT_TOKEN }}\n"
            .to_owned(),
    };
    let start = match agent {
        AgentKind::Http => format!(
            "      # Your agent, in the background with the env above, then a wait (60 s at most)\n      \
             # until it listens where goldgate.yaml says.\n      \
             - name: Start the agent\n        \
             run: |\n          \
             nohup ./start-agent > agent.log 2>&1 &   # your agent's start command\n          \
             curl -s -o /dev/null --retry-connrefused --retry 60 --retry-delay 1 {AGENT_URL} \\\n            \
             || {{ echo \"::error title=goldgate::the agent does not listen at {AGENT_URL}\"; cat agent.log; exit 1; }}\n"
        ),
        // goldgate starts a command agent itself; models and CES apps need only their keys.
        _ => String::new(),
    };
    format!(
        r#"# Pull requests (job `gate`): goldgate plays the goldens and fails only on a regression
# beyond noise against {BASELINE} (known failures and undecided comparisons do not).
# A pull request plays only the goldens it changed when everything else it changed matches
# affects_nothing in goldgate.yaml (docs, say); any other change plays every golden.
# main (job `baseline`): each build updates the baseline and commits it back. The baseline
# keeps the runs of the last 20 builds (its history), which is what lets the gate tell a
# flaky case from a broken one; committed, every change to it is reviewed in a diff like code.
# `uses:` pins goldgate's Action: a commit no release is tagged at builds goldgate from source
# on its first run (a few minutes, then cached); a release tag, once there is one, installs
# its binary in seconds (docs/github.md#pinning-before-and-after-a-release).
name: goldgate
on:
  pull_request: {{}}
  push: {{ branches: [main] }}
permissions: {{}}   # each job asks for what it needs
concurrency: {{ group: "goldgate-${{{{ github.ref }}}}", cancel-in-progress: true }}
{env}jobs:
  gate:
    if: github.event_name == 'pull_request'
    runs-on: ubuntu-latest
    permissions:
      contents: read
      pull-requests: write   # the one sticky PR comment
    steps:
      - uses: actions/checkout@v7
{start}      - uses: {action}
        with:
          paths: {GOLDENS}
          # No baseline yet (before main's first build): failing cases decide.
          baseline: ${{{{ hashFiles('{BASELINE}') != '' && '{BASELINE}' || '' }}}}
  baseline:
    if: github.event_name == 'push'
    runs-on: ubuntu-latest
    permissions:
      contents: write        # commits the baseline back
    steps:
      - uses: actions/checkout@v7
        with:
          # A protected main refuses github.token's push: give a token that may push to it
          # as the GOLDGATE_PUSH_TOKEN secret (docs/github.md#a-protected-main).
          token: ${{{{ secrets.GOLDGATE_PUSH_TOKEN || github.token }}}}
{start}      - uses: {action}
        with:
          paths: {GOLDENS}
          comment: "false"
          args: --update-baseline {BASELINE}
      - name: Commit the baseline
        if: ${{{{ !cancelled() }}}}
        run: |
          git config user.name "goldgate"
          git config user.email "goldgate@users.noreply.github.com"
          git add {BASELINE}
          git diff --cached --quiet && exit 0
          git commit -m "goldgate: baseline of ${{GITHUB_SHA::7}} [skip ci]"
          git push || {{ echo "::error title=goldgate::main refused the baseline: see docs/github.md#a-protected-main"; exit 1; }}
"#
    )
}
