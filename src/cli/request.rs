//! The parsed flags of `run` and `list` as the library's [`Request`]: plain data, one field
//! per flag, which [`goldgate::app::plan`] resolves (flag > env > goldgate.yaml > default).

use goldgate::app::request::{
    AgentRequest, Execution, GateRequest, JudgeRequest, Output, Request, RerunRequest,
    SelectionRequest,
};
use goldgate::results::Status;

use super::subset::RerunOnly;
use super::{GateArgs, ListArgs, OptInGateArgs, RunArgs, SelectionArgs, SuiteArgs};

impl RunArgs {
    /// What `run` was asked.
    pub fn request(&self) -> Request {
        let flags = &self.selection;
        let rerun = flags.rerun.as_ref().map(|report| RerunRequest {
            report: report.clone(),
            only: match flags.only {
                Some(RerunOnly::Failed) => vec![Status::Failed],
                Some(RerunOnly::Errored) => vec![Status::Error],
                None => vec![Status::Failed, Status::Error],
            },
        });
        let baseline = ("--update-baseline", &self.update_baseline);
        Request {
            selection: SelectionRequest {
                changed_since: flags.changed_since.clone(),
                rerun,
                ..selection(&flags.common)
            },
            agent: AgentRequest {
                url: self.agent_url.clone(),
                command: self.agent_cmd.clone(),
                startup_timeout: self.startup_timeout,
            },
            execution: Execution {
                concurrency: self.concurrency,
                timeout: self.timeout,
                retries: self.retries,
                rate_limit_wait: self.rate_limit_wait,
                allow_extra_tool_calls: self.allow_extra_tool_calls,
                record: self.record.clone(),
                repeat: self.repeat,
                min_pass: self.min_pass,
                max_repeat: self.max_repeat,
                budget: self.budget,
                max_errors: self.max_errors,
            },
            judge: JudgeRequest {
                no_cache: self.no_cache,
                cache_dir: self.cache_dir.clone(),
            },
            gate: self.gate.request(),
            writes: (self.reports().into_iter().chain([baseline]))
                .filter_map(|(flag, path)| {
                    let path = path.clone()?;
                    Some(Output { flag, path })
                })
                .collect(),
            ..suite(&self.suite)
        }
    }

    /// The reports a run writes, by the flag that asks for each.
    pub fn reports(&self) -> [(&'static str, &Option<std::path::PathBuf>); 4] {
        [
            ("--output", &self.output),
            ("--junit", &self.junit),
            ("--markdown", &self.github.markdown),
            ("--html", &self.html),
        ]
    }
}

impl ListArgs {
    /// What `list` was asked: the selection `run` takes, nothing else.
    pub fn request(&self) -> Request {
        Request {
            selection: SelectionRequest {
                changed_since: self.selection.changed_since.clone(),
                ..selection(&self.selection.common)
            },
            ..suite(&self.suite)
        }
    }
}

impl OptInGateArgs {
    pub fn request(&self) -> GateRequest {
        GateRequest {
            fail_on_regress: self.fail_on_regress,
            ..self.gate.request()
        }
    }
}

impl GateArgs {
    /// The request of a gate that decides the exit code only when asked (`--fail-on-regress`,
    /// see [`OptInGateArgs`]), or always (`compare`).
    pub fn request(&self) -> GateRequest {
        GateRequest {
            baseline: self.baseline.clone(),
            fail_on_regress: false,
            fail_on_inconclusive: self.fail_on_inconclusive,
            regression_config: self.regression_config.clone(),
            false_alarm_rate: self.false_alarm_rate,
        }
    }
}

fn suite(args: &SuiteArgs) -> Request {
    Request {
        paths: args.paths.clone(),
        config: args.config.path.clone(),
        ..Request::default()
    }
}

fn selection(args: &SelectionArgs) -> SelectionRequest {
    SelectionRequest {
        filters: args.filters.clone(),
        excludes: args.excludes.clone(),
        name: args.name.clone(),
        shard: args.shard.clone(),
        ..SelectionRequest::default()
    }
}
