//! The run, resolved: a [`Request`] (the flags), the config and the environment ([`Env`])
//! into one [`RunPlan`]. Each setting comes from the first of these that gives it:
//!
//! 1. its flag (`--agent-url`, `--concurrency`, `--cache-dir`, `--startup-timeout`, ...);
//! 2. its environment variable (`GOLDGATE_AGENT_URL`, `GOLDGATE_CACHE_DIR`);
//! 3. goldgate.yaml (`agent:`, `run:`, a command agent's `startup_timeout`, ...);
//! 4. its default ([`crate::config::RunSettings::default`], [`BACKOFF`],
//!    [`limit::DEFAULT_WAIT_BUDGET`], [`crate::config::DEFAULT_STARTUP_TIMEOUT`]).
//!
//! A switch (`--allow-extra-tool-calls`) is on when either the flag or the file turns it on.
//! `run` resolves the whole plan with [`resolve`]; `list` only the cases, with [`choose`],
//! which [`resolve`] starts with: so `list` lists what `run` plays.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::grading::{self, GradingError, GradingFlags};
use super::publish;
use super::request::{Env, GateRequest, Request};
use super::select::Selection;
use super::session::RunPlan;
use super::setup::{self, GateError};
use super::subset::{self, Chosen, Subset, SubsetError};
use super::tags::{TagExpr, TagExprError};
use crate::agent::connect;
use crate::config::http::{UrlError, check_url, shown};
use crate::config::{AgentConfig, Config};
use crate::gate::Gate;
use crate::limit::{self, Limits};
use crate::load::Suite;
use crate::model::{Case, Floor};
use crate::report::console;
use crate::results::Policy;
use crate::run::{Repeat, RepeatError, RunOptions};
use crate::shard::{Shard, ShardError};

/// The first wait before a turn is retried; doubled on each attempt, with full jitter.
pub const BACKOFF: Duration = Duration::from_millis(200);

/// Why a run cannot be planned: it stops before anything is played (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("{flag} {}: {source}", path.display())]
    Unwritable {
        flag: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--shard: {0}")]
    Shard(#[from] ShardError),
    #[error("--filter {0}")]
    Filter(#[from] TagExprError),
    #[error("--repeat / --min-pass: {0}")]
    Repeat(#[from] RepeatError),
    #[error(
        "--fail-on-inconclusive needs --fail-on-regress: without it the gate does not decide the exit code"
    )]
    InconclusiveWithoutRegress,
    #[error("--baseline FILE is required (the report to compare with)")]
    NoBaseline,
    #[error("--max-repeat {max} is below --repeat {repeat}: adaptive repeats add runs to those")]
    MaxRepeatBelowRepeat { max: u32, repeat: u32 },
    #[error(transparent)]
    Gate(#[from] GateError),
    #[error(transparent)]
    Subset(#[from] SubsetError),
    #[error(
        "the agent reads a variable that is not set: {0}; nothing was run\nhint: set it in the environment (in a workflow, as `env:` from a secret)"
    )]
    AgentVariable(String),
    #[error(
        "no agent to test\nhint: pass --agent-url URL or --agent-cmd CMD, or set `agent:` in goldgate.yaml (see `goldgate run --help`)"
    )]
    NoAgent,
    #[error(transparent)]
    Grading(#[from] GradingError),
    #[error(
        "--rerun: the saved report is of the agent `{}`, this run's is `{}`: a report of both would mean neither; nothing was played and nothing was written",
        console::escape(saved),
        console::escape(now)
    )]
    OtherAgent { saved: String, now: String },
    #[error("{given} `{}` {error}{}", console::escape(&shown(url)), hint_line(error.hint(Some(url))))]
    AgentUrl {
        given: &'static str,
        url: String,
        error: UrlError,
    },
}

/// A hint on a line of its own, as the errors above write theirs.
fn hint_line(hint: Option<String>) -> String {
    hint.map_or(String::new(), |hint| {
        format!("\nhint: {}", console::escape(&hint))
    })
}

/// A request whose flags hold together on their own, checked before anything is loaded.
#[derive(Clone, Debug)]
pub struct Checked {
    pub request: Request,
    pub selection: Selection,
    pub repeat: Repeat,
    pub policy: Policy,
}

/// Checks what the flags alone can tell: the selection parses, `--repeat` / `--min-pass` and
/// `--max-repeat` agree, the gate's policy holds, and every file the run writes can be
/// written (found out before the agent is called, not after the whole run).
pub fn check(request: Request) -> Result<Checked, PlanError> {
    check_writes(&request)?;
    let selection = selection(&request)?;
    let execution = &request.execution;
    let repeat = Repeat::new(execution.repeat, execution.min_pass)?;
    let policy = request.gate.policy()?;
    if let Some(max) = execution.max_repeat.filter(|&max| max < execution.repeat) {
        return Err(PlanError::MaxRepeatBelowRepeat {
            max,
            repeat: execution.repeat,
        });
    }
    Ok(Checked {
        request,
        selection,
        repeat,
        policy,
    })
}

impl GateRequest {
    /// What decides the exit code: `--fail-on-inconclusive` only with `--fail-on-regress`.
    pub fn policy(&self) -> Result<Policy, PlanError> {
        if self.fail_on_inconclusive && !self.fail_on_regress {
            return Err(PlanError::InconclusiveWithoutRegress);
        }
        Ok(Policy {
            fail_on_regress: self.fail_on_regress,
            fail_on_inconclusive: self.fail_on_inconclusive,
        })
    }

    /// A warning for `--regression-config` given without `--baseline`, where it does nothing.
    pub fn unused(&self) -> Option<String> {
        (self.baseline.is_none() && self.regression_config.is_some())
            .then(|| "warning: --regression-config has no effect without --baseline".to_owned())
    }

    /// The gate over `config`'s thresholds; `None` without `--baseline`.
    pub fn gate(&self, config: &Config) -> Result<Option<Gate>, GateError> {
        setup::gate(
            self.baseline.as_deref(),
            self.regression_config.as_deref(),
            self.false_alarm_rate,
            config,
        )
    }
}

fn check_writes(request: &Request) -> Result<(), PlanError> {
    let unwritable = |flag, path: &std::path::Path| {
        let path = path.to_owned();
        move |source| PlanError::Unwritable { flag, path, source }
    };
    for output in &request.writes {
        crate::atomic::check_writable(&output.path)
            .map_err(unwritable(output.flag, &output.path))?;
    }
    if let Some(dir) = &request.execution.record {
        // The transcripts go into it: it must exist (or be made) and take files.
        std::fs::create_dir_all(dir)
            .and_then(|()| crate::atomic::check_writable(&dir.join("probe")))
            .map_err(unwritable("--record", dir))?;
    }
    Ok(())
}

/// The selection flags, parsed.
fn selection(request: &Request) -> Result<Selection, PlanError> {
    let asked = &request.selection;
    let shard = asked
        .shard
        .as_deref()
        .map(str::parse::<Shard>)
        .transpose()?;
    let filters = (asked.filters.iter())
        .map(|text| TagExpr::parse(text))
        .collect::<Result<_, _>>()?;
    Ok(Selection {
        filters,
        excludes: asked.excludes.clone(),
        name: asked.name.clone(),
        keys: None,
        shard,
    })
}

/// The cases to play and what the selection said of them (an empty shard, the part of the
/// suite chosen), each a line for people, made safe for a terminal.
pub struct Choice {
    pub chosen: Chosen,
    pub notes: Vec<String>,
}

/// What a plan is resolved from besides the request, loaded by the front end (which says
/// what is wrong with each as it loads it): the config, the gate the flags set up over it
/// ([`GateRequest::gate`]: before the goldens, so that a bad baseline costs no loading), and
/// the goldens.
pub struct Inputs<'a> {
    pub config: &'a Config,
    pub gate: Option<Gate>,
    pub suite: &'a Suite,
}

/// The cases `run` plays and `list` lists: the selection, narrowed by `--changed-since` or
/// `--rerun` as the change affects the agent under test, with the gate over them.
pub fn choose(checked: &Checked, inputs: Inputs<'_>, env: &Env) -> Result<Choice, PlanError> {
    let request = &checked.request;
    let Inputs {
        config,
        gate,
        suite,
    } = inputs;
    let agent = agent(request, config, env)?;
    let chosen = subset::choose_cases(
        (suite, config),
        agent.as_ref(),
        checked.selection.clone(),
        subset_asked(request).as_ref(),
        gate,
    )?;
    let notes = (request.gate.unused().into_iter())
        .chain(chosen.selected.empty_shard_note())
        .chain(chosen.scope.as_ref().map(|s| s.describe()))
        .map(|note| console::escape(&note).into_owned())
        .collect();
    Ok(Choice { chosen, notes })
}

/// `--changed-since` or `--rerun`; `None` when neither is given.
fn subset_asked(request: &Request) -> Option<Subset> {
    let asked = &request.selection;
    match (&asked.changed_since, &asked.rerun) {
        (Some(since), _) => Some(Subset::ChangedSince(since.clone())),
        (None, Some(rerun)) => Some(Subset::Rerun {
            report: rerun.report.clone(),
            only: rerun.only.clone(),
        }),
        (None, None) => None,
    }
}

/// A plan, with what resolving it found to tell people.
pub struct Resolved {
    pub plan: RunPlan,
    /// Lines for people, in the order found (the selection's, then warnings about prices
    /// and a judge left out), made safe for a terminal.
    pub notes: Vec<String>,
    /// The selection flags chose part of the suite (see [`super::baseline::Asked::narrowed`]).
    pub narrowed: bool,
}

/// The whole run: [`choose`], then the agent, how the cases are played, the grader and the
/// policy, each by the precedence of the module doc.
pub fn resolve(checked: &Checked, inputs: Inputs<'_>, env: &Env) -> Result<Resolved, PlanError> {
    // Appended to once the run is over: a pipe there would hang it, after every agent call.
    for (variable, path) in &env.github_files {
        crate::atomic::file_or_none(path).map_err(|source| PlanError::Unwritable {
            flag: variable,
            path: path.clone(),
            source,
        })?;
    }
    let request = &checked.request;
    let (config, suite) = (inputs.config, inputs.suite);
    let Choice { chosen, mut notes } = choose(checked, inputs, env)?;
    let agent = agent_needed(agent(request, config, env)?, &chosen.selected.cases)?;
    let (options, warnings) = run_options(request, config, agent.as_ref());
    notes.extend(warnings.into_iter().map(|w| format!("warning: {w}")));
    let flags = grading_flags(request, agent.as_ref(), env);
    let (grader, said) = grading::grader(&flags, config, &options)?;
    notes.extend(said);
    let repeat = checked.repeat;
    let plan = RunPlan {
        cases: chosen.selected.cases,
        // A rerun's report is the saved one, with its suite; the gate looks once at it.
        suite: crate::shard::SuiteId {
            name: publish::suite_name(request.config.as_deref()),
            ..(chosen.saved.as_ref()).map_or(chosen.selected.suite, |s| s.suite.clone())
        },
        repeat,
        max_repeat: (chosen.saved.as_ref())
            .map_or(request.execution.max_repeat, |_| Some(repeat.runs())),
        agent,
        grader,
        options,
        gate: chosen.gate,
        quarantine: config.quarantine.clone(),
        floors: suite
            .floors()
            .chain(&config.floors)
            .cloned()
            .collect::<Vec<Floor>>(),
        policy: checked.policy,
        max_errors: request.execution.max_errors,
        scope: chosen.scope,
        rerun_into: chosen.saved,
    };
    Ok(Resolved {
        plan,
        notes,
        narrowed: checked.selection.narrows(),
    })
}

/// The agent the flags name, else the environment's URL, else the config's;
/// `--startup-timeout` over a command agent's own. A URL that cannot be asked is refused
/// naming where it came from.
fn agent(request: &Request, config: &Config, env: &Env) -> Result<Option<AgentConfig>, PlanError> {
    let asked = &request.agent;
    let chosen = match (&asked.url, &asked.command, &env.agent_url) {
        (Some(url), _, _) => http_agent(url, "--agent-url", config)?,
        (None, None, Some(url)) => http_agent(url, "GOLDGATE_AGENT_URL", config)?,
        (None, Some(command), _) => command_agent(command),
        (None, None, None) => match &config.agent {
            Some(agent) => agent.clone(),
            None => return Ok(None),
        },
    };
    Ok(Some(match (chosen, asked.startup_timeout) {
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
    }))
}

/// The agent at `url`, which `given` (the flag or the variable) gave. A template describes
/// the endpoint's JSON, wherever it runs (a preview URL in CI): only the URL is replaced. A
/// protocol agent is replaced whole.
fn http_agent(url: &str, given: &'static str, config: &Config) -> Result<AgentConfig, PlanError> {
    check_url(url).map_err(|error| PlanError::AgentUrl {
        given,
        url: url.to_owned(),
        error,
    })?;
    Ok(match &config.agent {
        Some(AgentConfig::Http {
            headers,
            template: Some(template),
            ..
        }) => AgentConfig::Http {
            url: url.to_owned(),
            headers: headers.clone(),
            template: Some(template.clone()),
        },
        _ => AgentConfig::Http {
            url: url.to_owned(),
            headers: Vec::new(),
            template: None,
        },
    })
}

/// `--agent-cmd`, through the shell, so that quoting and paths work as the user typed them.
fn command_agent(command: &str) -> AgentConfig {
    let argv = if cfg!(windows) {
        vec!["cmd".into(), "/C".into(), command.to_owned()]
    } else {
        vec!["sh".into(), "-c".into(), command.to_owned()]
    };
    AgentConfig::Command {
        argv,
        processes: 1,
        working_dir: None,
        startup_timeout: crate::config::DEFAULT_STARTUP_TIMEOUT,
    }
}

/// The agent to test: the one given, or none when every turn of `cases` has its reply
/// recorded in its golden (Regtrace `actual_output`). Refused when a `${VAR}` it reads is not
/// set.
fn agent_needed(
    agent: Option<AgentConfig>,
    cases: &[Arc<Case>],
) -> Result<Option<AgentConfig>, PlanError> {
    let recorded = || (cases.iter()).all(|c| c.turns.iter().all(|t| t.recorded_reply.is_some()));
    match agent {
        Some(agent) => match connect::check_variables(&agent) {
            Ok(()) => Ok(Some(agent)),
            Err(why) => Err(PlanError::AgentVariable(why)),
        },
        None if recorded() => Ok(None),
        None => Err(PlanError::NoAgent),
    }
}

/// How the run plays: flags over `run:` in the config over the defaults, with the
/// credentials to mask; and the warnings about prices not known.
fn run_options(
    request: &Request,
    config: &Config,
    agent: Option<&AgentConfig>,
) -> (RunOptions, Vec<String>) {
    let asked = &request.execution;
    let concurrency = asked.concurrency.unwrap_or(config.run.concurrency);
    let (pricing, warnings) = grading::pricing(config, agent, asked.budget);
    let options = RunOptions {
        concurrency,
        timeout: asked.timeout.unwrap_or(config.run.timeout),
        retries: asked.retries.unwrap_or(config.run.retries),
        backoff: BACKOFF,
        record: asked.record.clone(),
        limits: Some(Limits::new(
            concurrency,
            asked.rate_limit_wait.unwrap_or(limit::DEFAULT_WAIT_BUDGET),
        )),
        agent_pacing: config.agent_rate_limit,
        // Masked out of recordings, errors and every report (see crate::secrets).
        secrets: super::secrets::known(config, agent),
        pricing,
        spend: Default::default(),
    };
    (options, warnings)
}

/// What the flags and the environment add to the config for grading.
fn grading_flags(request: &Request, agent: Option<&AgentConfig>, env: &Env) -> GradingFlags {
    GradingFlags {
        allow_extra_tool_calls: request.execution.allow_extra_tool_calls,
        no_cache: request.judge.no_cache,
        cache_dir: (request.judge.cache_dir.clone()).or_else(|| env.cache_dir.clone()),
        record: request.execution.record.clone(),
        replay: match agent {
            Some(AgentConfig::Replay { dir }) => Some(dir.clone()),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests;
