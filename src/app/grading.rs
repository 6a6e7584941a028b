//! The grader a run scores with: its options, the LLM judge and the simulated user of
//! simulations, each cached and limited like the agent. A judge or simulator without its API
//! key is not an error: its checks are skipped, with why.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::{AgentConfig, Config, JudgeConfig, SimulatorConfig};
use crate::limit;
use crate::llm::cache::{self, JudgeCache};
use crate::llm::client::{LlmClient, Patience, SetupError, model_name};
use crate::llm::judge::JudgePanel;
use crate::llm::simulator::Simulator;
use crate::model::Provider;
use crate::run::{Pricing, RunOptions};
use crate::score::simulated_user::SimulatedUser;
use crate::score::{Grader, Judge, ScoreOptions};

/// What the command line adds to the config for grading.
#[derive(Clone, Debug, Default)]
pub struct GradingFlags {
    /// `--allow-extra-tool-calls`.
    pub allow_extra_tool_calls: bool,
    /// `--no-cache`.
    pub no_cache: bool,
    /// `--cache-dir`.
    pub cache_dir: Option<PathBuf>,
    /// `--record DIR`: the simulated user's answers are recorded there too.
    pub record: Option<PathBuf>,
    /// The run replays this recording: the simulated user's answers come from it.
    pub replay: Option<PathBuf>,
}

/// Why the judge or the simulated user cannot be set up: their settings are wrong (a key they
/// lack is no error: their checks are skipped, with why).
#[derive(Debug, thiserror::Error)]
pub enum GradingError {
    #[error("judge: {0}")]
    Judge(String),
    #[error("simulator: {0}")]
    Simulator(String),
    /// A setting that names itself (`simulator.base_url: ...`), or the HTTP client.
    #[error("{0}")]
    Setup(String),
}

/// The grader, and the notices a person should read (a judge skipped for want of its key).
pub fn grader(
    flags: &GradingFlags,
    config: &Config,
    options: &RunOptions,
) -> Result<(Grader, Vec<String>), GradingError> {
    let mut notices = Vec::new();
    let mut grader = Grader::new(
        None,
        ScoreOptions {
            allow_extra_tool_calls: flags.allow_extra_tool_calls
                || config.run.allow_extra_tool_calls,
            ..ScoreOptions::default()
        },
    );
    let (simulator, no_simulator) = simulator(flags, config, options)?;
    grader.simulator = simulator.map(|s| Arc::new(s) as Arc<dyn SimulatedUser>);
    grader.no_simulator = no_simulator;
    let Some(judge_config) = &config.judge else {
        return Ok((grader, notices));
    };
    grader.options.similarity_pass = judge_config.similarity_pass;
    match judge(
        flags,
        (judge_config, &config.eval_config.judge_models),
        options,
    ) {
        Ok(built) => grader.judge = Some(built),
        Err(SetupError::MissingKey { var }) => {
            let reason = format!(
                "the {} judge needs {var}, which is not set",
                judge_config.provider.name()
            );
            notices.push(format!(
                "{reason}: LLM-judge checks are skipped, semantic matches use local similarity"
            ));
            grader.no_judge = Some(reason);
        }
        Err(SetupError::Invalid(message)) => return Err(GradingError::Judge(message)),
    }
    Ok((grader, notices))
}

/// The judge cache, unless `--no-cache`; what it stores is masked of the run's credentials.
fn cache(flags: &GradingFlags, options: &RunOptions) -> Option<JudgeCache> {
    let dir = flags.cache_dir.as_deref();
    (!flags.no_cache).then(|| {
        JudgeCache::new(dir.unwrap_or(Path::new(cache::DEFAULT_DIR)))
            .masking(options.secrets.clone())
    })
}

fn patience(options: &RunOptions) -> Patience {
    Patience {
        timeout: options.timeout,
        retries: options.retries,
        backoff: options.backoff,
    }
}

/// Where `--record DIR` keeps the simulated user's answers (`DIR/simulated-user/`), and where
/// a replay of `DIR` reads them.
pub const RECORDED_USER: &str = "simulated-user";

/// The simulated user of SCRAPI simulations (`simulator:`, else the judge's provider and
/// model), cached like the judge and recorded with `--record`; without its key, replaying
/// what was recorded, else why simulations are skipped.
fn simulator(
    flags: &GradingFlags,
    config: &Config,
    options: &RunOptions,
) -> Result<(Option<Simulator>, Option<String>), GradingError> {
    let Some(wanted) = SimulatorConfig::of(config) else {
        return Ok((None, None));
    };
    let endpoint = crate::config::Endpoint {
        base_url: crate::config::expanded_base_url(
            wanted.endpoint.base_url.as_deref(),
            "simulator",
        )
        .map_err(GradingError::Setup)?,
        model: wanted.endpoint.model.clone(),
    };
    let http = crate::net::http_client().map_err(GradingError::Setup)?;
    match LlmClient::from_env(wanted.provider, &endpoint, http.clone(), patience(options)) {
        Ok(client) => {
            let client = client.masking(options.secrets.clone());
            let client = match &options.limits {
                Some(limits) => client.limited_by(limits.endpoint(
                    &format!("simulator {}", wanted.provider.name()),
                    limit::Pacing::default(),
                )),
                None => client,
            };
            let simulator = Simulator::new(client, cache(flags, options));
            Ok((
                Some(match &flags.record {
                    Some(dir) => simulator.recording_to(
                        JudgeCache::new(dir.join(RECORDED_USER)).masking(options.secrets.clone()),
                    ),
                    None => simulator,
                }),
                None,
            ))
        }
        // Replaying a recorded run: the simulated user's answers were recorded with it.
        Err(SetupError::MissingKey { .. }) if let Some(dir) = &flags.replay => {
            let recorded = JudgeCache::new(dir.join(RECORDED_USER));
            Simulator::replaying(wanted.provider, &endpoint, recorded, http)
                .map(|simulator| (Some(simulator), None))
                .map_err(|e| GradingError::Simulator(e.to_string()))
        }
        Err(SetupError::MissingKey { var }) => Ok((
            None,
            Some(format!(
                "the {} simulated user needs {var}, which is not set",
                wanted.provider.name()
            )),
        )),
        Err(SetupError::Invalid(message)) => Err(GradingError::Simulator(message)),
    }
}

/// The judge `judge:` configures, with the cache unless `--no-cache`; it retries and times out
/// like the agent.
/// gecx's eval.config.json may name each provider's judge model (`models`), as it may the
/// thresholds.
fn judge(
    flags: &GradingFlags,
    (judge, models): (&JudgeConfig, &[(Provider, String)]),
    options: &RunOptions,
) -> Result<Arc<dyn Judge>, SetupError> {
    let http = crate::net::http_client().map_err(SetupError::Invalid)?;
    let limits = options.limits.clone();
    Ok(Arc::new(JudgePanel::build(
        judge,
        models,
        cache(flags, options),
        patience(options),
        &http,
        limits.as_deref(),
        &options.secrets,
    )?))
}

/// How the run prices what it spends: the agent's model (`agent.model`, or an LLM agent's
/// own) at its price, the judges' at theirs, under `budget`; with a notice for each model that
/// has no price (its tokens then cost "unknown", never zero), and one when a budget cannot see
/// part of the spend. A budget over unpriced spend is warned about, not refused: an HTTP agent
/// may report its own `cost_usd`, which only the run can tell.
pub fn pricing(
    config: &Config,
    agent: Option<&AgentConfig>,
    budget: Option<f64>,
) -> (Pricing, Vec<String>) {
    let model = match agent {
        Some(AgentConfig::Llm(llm)) => Some(model_name(llm.provider, &llm.endpoint)),
        _ => config.agent_model.clone(),
    };
    let price = model.as_deref().and_then(|m| config.prices.of(m));
    let mut unpriced: Vec<(&str, String)> = Vec::new();
    if let Some(model) = model.clone().filter(|_| price.is_none()) {
        unpriced.push(("the agent's", model));
    }
    let judge = (config.judge.as_ref()).map(|j| ("the judge's", j.provider, &j.endpoint));
    let simulator = SimulatorConfig::of(config);
    let simulator = (simulator.as_ref()).map(|s| ("the simulated user's", s.provider, &s.endpoint));
    for (whose, provider, endpoint) in judge.into_iter().chain(simulator) {
        let model = model_name(provider, endpoint);
        if config.prices.of(&model).is_none() && unpriced.iter().all(|(_, m)| *m != model) {
            unpriced.push((whose, model));
        }
    }
    let budget = budget.or(config.run.budget);
    let mut notices: Vec<String> = (unpriced.iter())
        .map(|(whose, model)| {
            format!(
                "no price is known for {whose} model `{model}`: its cost is unknown (add it \
                 under `prices:` in goldgate.yaml, USD per million tokens)"
            )
        })
        .collect();
    let mut unseen: Vec<String> = unpriced.iter().map(|(_, m)| format!("`{m}`")).collect();
    if model.is_none()
        && matches!(
            agent,
            Some(AgentConfig::Http { .. } | AgentConfig::Command { .. } | AgentConfig::Ces(_))
        )
    {
        unseen
            .push("the agent's tokens unless it reports `cost_usd` (no `agent.model`)".to_owned());
    }
    if let Some(limit) = budget.filter(|_| !unseen.is_empty()) {
        notices.push(format!(
            "the budget (${limit:.2}) cannot see what has no price: {}; it counts only the \
             priced spend, so the run may spend more (docs/cost.md#a-budget)",
            unseen.join(", ")
        ));
    }
    let pricing = Pricing {
        agent: price,
        prices: config.prices.clone(),
        budget,
    };
    (pricing, notices)
}
