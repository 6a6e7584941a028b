//! The neutral model every format loads into and every later stage works on.
//!
//! A [`Case`] is one scripted conversation (a SCRAPI conversation, a CES evaluation, a gecx
//! scenario or a Regtrace test case). It holds ordered [`Turn`]s, each with what is sent to the
//! agent ([`Input`]) and what must come back ([`Expectation`]), plus checks that look at the
//! whole conversation ([`CaseCheck`]). Nothing here knows which format it came from except
//! [`Case::format`], which is kept for reports only.

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

mod floor;
mod tool_test;

pub use floor::{Floor, FloorKind};
pub use tool_test::{JsonPath, ResultCheck, ResultOperator, ResultPart, ToolExecution, ToolState};

/// Where an item was written: file, 1-based line and column.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    pub file: Arc<Path>,
    pub line: u32,
    pub column: u32,
}

impl Location {
    pub fn new(file: &Arc<Path>, line: u32, column: u32) -> Self {
        Self {
            file: Arc::clone(file),
            line,
            column,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// The four input formats goldgate reads. Written in reports by [`Format::name`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Format {
    /// SCRAPI / CX Agent Studio platform golden YAML (`conversations:`).
    #[serde(rename = "scrapi")]
    ScrapiGolden,
    /// CX Agent Studio golden CSV (`display_name,turn_index,action_type,...`).
    #[serde(rename = "ces-csv")]
    CesCsv,
    /// gecx `*.scenario.yaml` (`id`, `when`, `then`).
    #[serde(rename = "scenario")]
    GecxScenario,
    /// Regtrace golden set (`test_cases:`), loaded alone or through `regtrace.config.yaml`.
    #[serde(rename = "regtrace")]
    RegtraceSet,
}

impl Format {
    pub const ALL: [Format; 4] = [
        Format::ScrapiGolden,
        Format::CesCsv,
        Format::GecxScenario,
        Format::RegtraceSet,
    ];

    /// The stable name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Format::ScrapiGolden => "scrapi",
            Format::CesCsv => "ces-csv",
            Format::GecxScenario => "scenario",
            Format::RegtraceSet => "regtrace",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What kind of test a case is: the runner plays each kind its own way, and the aggregates
/// keep the latency of tool executions apart from the turns of conversations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum CaseKind {
    /// Scripted turns.
    #[default]
    Conversation,
    /// An LLM plays the user ([`Case::simulated_user`]).
    Simulation,
    /// One direct execution of a tool ([`Input::ExecuteTool`]), no conversation.
    ToolTest,
}

/// One scripted conversation.
#[derive(Clone, Debug)]
pub struct Case {
    /// Unique within its file: the conversation name, evaluation id, scenario id or test id.
    pub id: String,
    /// Human-readable label (equal to `id` where the format has no separate name).
    pub name: String,
    pub description: Option<String>,
    pub format: Format,
    /// Where the case starts.
    pub location: Location,
    pub tags: Vec<String>,
    /// Session parameters: the file's common ones with the case's merged over them.
    pub session_parameters: Map<String, Value>,
    /// System instruction in effect (Regtrace `system_prompt`), for LLM agents.
    pub system_prompt: Option<String>,
    /// Retrieved documents the answer must rest on (Regtrace `rag` cases).
    pub context: Vec<ContextDocument>,
    pub turns: Vec<Turn>,
    /// Checks over the whole conversation.
    pub checks: Vec<CaseCheck>,
    /// Relative importance in the weighted suite score (Regtrace `weight`, 1 elsewhere).
    pub weight: f64,
    /// The steps an LLM-simulated user pursues (a SCRAPI simulation): the runner plays the
    /// conversation turn by turn with the simulated user instead of scripted `turns` (then
    /// empty), and `checks` are judged over the conversation it played. `None`: scripted.
    pub simulated_user: Option<Vec<SimulationStep>>,
    /// The author's comment lines above the case, top first, without `#` (goldgate's own
    /// annotations left out): `convert` writes them back where the target has comments.
    pub comments: Vec<String>,
}

impl Case {
    /// A scripted case `id`, named `id` too, of `format` at `location`, with nothing else
    /// yet (no tags, parameters, turns or checks; weight 1): loaders fill in the rest.
    pub fn named(id: String, format: Format, location: Location) -> Self {
        Self {
            name: id.clone(),
            id,
            description: None,
            format,
            location,
            tags: Vec::new(),
            session_parameters: Map::new(),
            system_prompt: None,
            context: Vec::new(),
            turns: Vec::new(),
            checks: Vec::new(),
            weight: 1.0,
            simulated_user: None,
            comments: Vec::new(),
        }
    }

    /// Names `file` in every location of the case: loading names a case's file as reports do
    /// (see `goldgate::project`), while diagnostics keep the path the file was opened by.
    pub fn set_file(&mut self, file: &Arc<Path>) {
        let locations = std::iter::once(&mut self.location)
            .chain(self.checks.iter_mut().map(|c| &mut c.location))
            .chain(self.turns.iter_mut().flat_map(|t| {
                std::iter::once(&mut t.location)
                    .chain(t.expectations.iter_mut().map(|e| &mut e.location))
                    .chain(t.tool_mocks.iter_mut().map(|m| &mut m.location))
            }));
        for location in locations {
            location.file = Arc::clone(file);
        }
    }

    pub fn kind(&self) -> CaseKind {
        if self.simulated_user.is_some() {
            CaseKind::Simulation
        } else if self.turns.iter().any(|t| t.executed_tool().is_some()) {
            CaseKind::ToolTest
        } else {
            CaseKind::Conversation
        }
    }
}

/// How a tag that `goldgate convert` puts on a case starts when the target format could not
/// hold all of the case: `not-carried: <what was left out>`. Tags are what every format keeps,
/// so the mark survives the file and further conversions.
pub const NOT_CARRIED: &str = "not-carried: ";

impl Case {
    /// What `convert` could not carry into this case's format, when it says so in a
    /// [`NOT_CARRIED`] tag: the case then cannot pass (a check left out might have failed), its
    /// checks that ran may still fail it.
    pub fn not_carried(&self) -> Option<&str> {
        self.tags.iter().find_map(|t| t.strip_prefix(NOT_CARRIED))
    }
}

impl Turn {
    /// The tool this turn runs directly, when it is a tool test's.
    pub fn executed_tool(&self) -> Option<&ToolExecution> {
        self.inputs.iter().find_map(|input| match input {
            Input::ExecuteTool(execution) => Some(execution),
            _ => None,
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ContextDocument {
    pub source: String,
    pub content: String,
    pub retrieval_score: Option<f64>,
}

/// One exchange: inputs sent to the agent in one request, expectations on its reply.
#[derive(Clone, Debug)]
pub struct Turn {
    /// 1-based position in the case.
    pub index: usize,
    pub location: Location,
    /// What the user side sends; usually one item, CES turns may carry several.
    pub inputs: Vec<Input>,
    pub expectations: Vec<Expectation>,
    /// Tool outputs the agent receives when it calls these tools during this turn.
    pub tool_mocks: Vec<ToolMock>,
    /// A reply recorded in the golden file itself (Regtrace `actual_output`): scored as is,
    /// without calling any agent.
    pub recorded_reply: Option<String>,
    /// The author's comment lines above the turn, as [`Case::comments`].
    pub comments: Vec<String>,
}

/// The platform event that opens a conversation: what SCRAPI sends for a turn without user
/// text, and CES for a turn that sends nothing.
pub const WELCOME_EVENT: &str = "welcome";

/// What the user side sends in a turn.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    Text(String),
    /// A platform event such as `welcome`.
    Event(String),
    /// Responses to tool calls the agent made (CES `INPUT_TOOL_RESPONSE`).
    ToolResponse {
        name: String,
        response: Value,
    },
    /// Variables that update the session (CES `INPUT_UPDATED_VARIABLES`).
    Variables(Map<String, Value>),
    Image {
        mime_type: String,
        data: String,
    },
    /// Approve the pending tool call with this tag (gecx `approveToolCall`).
    ApproveToolCall(String),
    /// Deny the pending tool call with this tag (gecx `denyToolCall`).
    DenyToolCall(String),
    /// Run one of the agent's tools directly, outside any conversation (a SCRAPI tool test).
    ExecuteTool(ToolExecution),
}

/// A mocked tool output for one tool, optionally only for calls whose arguments match.
#[derive(Clone, Debug)]
pub struct ToolMock {
    pub tool: String,
    pub args: Option<ArgsMatcher>,
    pub output: Value,
    pub location: Location,
}

/// One expectation on the agent's reply to a turn.
#[derive(Clone, Debug)]
pub struct Expectation {
    pub location: Location,
    pub kind: ExpectationKind,
    /// Free-text note the author attached (CES `expectation_note`).
    pub note: Option<String>,
}

#[derive(Clone, Debug)]
pub enum ExpectationKind {
    /// One expected chunk of agent text, optionally from a named agent.
    AgentText {
        matcher: Matcher,
        agent: Option<String>,
    },
    /// The agent must say nothing (SCRAPI `# silent`, `agent: null`).
    NoAgentText,
    /// The turn names no agent reply: any text is an UNEXPECTED RESPONSE (SCRAPI E008).
    UnexpectedResponse,
    ToolCall(ExpectedToolCall),
    /// The transcript must show this tool's response (CES `EXPECTATION_TOOL_RESPONSE`).
    ToolResponse {
        tool: String,
        output: Option<Value>,
    },
    Transfer {
        agent: String,
    },
    /// A check over the turn's whole reply that looks only at what it names (SCRAPI turn
    /// evals): other tool calls in the turn are not unexpected.
    Reply(ReplyCheck),
    /// A check on what a directly executed tool returned (SCRAPI tool tests).
    ToolResult(ResultCheck),
}

/// A check over everything the agent did in one turn: all its text joined, every tool call,
/// every transfer. Written by SCRAPI turn evals (`expectations: [{type, value}]`).
#[derive(Clone, Debug)]
pub enum ReplyCheck {
    /// The joined text contains this, ignoring case.
    TextContains(String),
    /// The joined text, trimmed, equals this trimmed.
    TextEquals(String),
    /// The joined text means what this says (SCRAPI's `fuzzy_match`, which compares embeddings;
    /// here goldgate's semantic comparison: the judge, or local similarity without one).
    TextSimilar(String),
    /// Some call's tool name is this or ends with it (a resource name ends with the id).
    ToolCalled(String),
    /// No tool was called.
    NoToolCalls,
    /// Some call's arguments, or the map of tool name to arguments, hold this subset (an empty
    /// object only requires the key).
    ToolInput(Map<String, Value>),
    /// Some response, or the map of tool name to response, holds this subset.
    ToolOutput(Map<String, Value>),
    /// A transfer to this agent (or to a name ending with it).
    TransferTo(String),
}

#[derive(Clone, Debug)]
pub struct ExpectedToolCall {
    pub name: String,
    pub args: ArgsMatcher,
    /// The agent expected to make the call, when the golden names one.
    pub agent: Option<String>,
}

/// Expected arguments: every listed key must match; keys not listed are not checked.
#[derive(Clone, Debug, Default)]
pub struct ArgsMatcher {
    pub fields: Vec<(String, ValueMatcher)>,
}

impl ArgsMatcher {
    /// Every value of `args` matched exactly, objects recursing so that only the keys written
    /// are checked: how CES and gecx compare a call's arguments.
    pub fn exact(args: Map<String, Value>) -> Self {
        fn fields(object: Map<String, Value>) -> Vec<(String, ValueMatcher)> {
            let matcher = |value| match value {
                Value::Object(inner) => ValueMatcher::Object(fields(inner)),
                leaf => ValueMatcher::Leaf(Matcher::new(MatchType::Exact, leaf)),
            };
            object.into_iter().map(|(k, v)| (k, matcher(v))).collect()
        }
        Self {
            fields: fields(args),
        }
    }
}

/// A matcher over a JSON value, recursing into objects so that a `$matchType` may sit at any
/// depth below an argument.
#[derive(Clone, Debug)]
pub enum ValueMatcher {
    Leaf(Matcher),
    Object(Vec<(String, ValueMatcher)>),
}

/// How expected and actual text are compared (SCRAPI's `$matchType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatchType {
    Exact,
    Contains,
    Regexp,
    Ignore,
    Semantic,
}

impl MatchType {
    pub const NAMES: [&'static str; 5] = ["exact", "contains", "regexp", "ignore", "semantic"];

    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "exact" => MatchType::Exact,
            "contains" => MatchType::Contains,
            "regexp" | "regex" => MatchType::Regexp,
            "ignore" => MatchType::Ignore,
            "semantic" => MatchType::Semantic,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            MatchType::Exact => "exact",
            MatchType::Contains => "contains",
            MatchType::Regexp => "regexp",
            MatchType::Ignore => "ignore",
            MatchType::Semantic => "semantic",
        }
    }
}

/// One comparison. `expected` is JSON so that arguments keep their type; agent text is a
/// string. A regexp is compiled when the file is loaded, so a bad pattern is a load error.
#[derive(Clone, Debug)]
pub struct Matcher {
    pub match_type: MatchType,
    pub expected: Value,
    pub regex: Option<Regex>,
}

impl Matcher {
    /// A matcher that needs no compilation (anything but `regexp`).
    pub fn new(match_type: MatchType, expected: Value) -> Self {
        debug_assert!(match_type != MatchType::Regexp);
        Self {
            match_type,
            expected,
            regex: None,
        }
    }

    /// A `regexp` matcher, compiled now.
    pub fn regexp(pattern: &str) -> Result<Self, regex::Error> {
        Ok(Self {
            match_type: MatchType::Regexp,
            expected: Value::String(pattern.to_owned()),
            regex: Some(Regex::new(pattern)?),
        })
    }
}

/// A check over the whole conversation rather than one turn.
#[derive(Clone, Debug)]
pub struct CaseCheck {
    pub location: Location,
    /// What the check is called where it was written (a gecx scorer's name, a Regtrace
    /// metric, `criterion`): reports label its result with it.
    pub label: String,
    pub kind: CheckKind,
}

#[derive(Clone, Debug)]
pub enum CheckKind {
    /// A built-in scorer (gecx `then`).
    Scorer(Scorer),
    /// A free-text criterion an LLM judge checks over the transcript (SCRAPI `expectations`).
    Criterion(String),
    /// A graded metric of the final answer against a reference (Regtrace `metrics`).
    Metric {
        metric: Metric,
        /// Passing score in 0..=1: the case's override, else the suite default.
        threshold: f64,
        expected_output: String,
    },
}

/// The gecx scorers, with their arguments already validated.
#[derive(Clone, Debug)]
pub enum Scorer {
    MessageContains {
        pattern: String,
    },
    MessageMatchesRegex {
        regex: Regex,
    },
    FinalMessageEquals {
        pattern: String,
    },
    ToolCalled {
        name: String,
    },
    ToolCalledWithInput {
        name: String,
        input: ArgsMatcher,
    },
    NoToolCalled {
        name: Option<String>,
    },
    ToolCallAccuracy {
        expected: Vec<ExpectedToolCall>,
    },
    HandoffTriggered,
    NoHandoff,
    ErrorCode {
        code: String,
    },
    NoError,
    LatencyP50Under {
        limit: Duration,
    },
    LatencyP95Under {
        limit: Duration,
    },
    JudgeNotHallucinating {
        grounding_context: String,
        provider: Option<Provider>,
    },
    JudgeHelpfulness {
        criteria: Option<String>,
        provider: Option<Provider>,
    },
    JudgeToneMatches {
        tone: String,
        provider: Option<Provider>,
    },
}

/// LLM providers that can judge and play the agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Provider {
    Anthropic,
    OpenAi,
    Gemini,
}

impl Provider {
    pub const NAMES: [&'static str; 3] = ["anthropic", "openai", "gemini"];

    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "anthropic" => Provider::Anthropic,
            "openai" => Provider::OpenAi,
            "gemini" => Provider::Gemini,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// Regtrace's metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Metric {
    Factuality,
    Format,
    Tone,
    Regression,
}

/// A SCRAPI simulation: an LLM plays the user towards the goals of its steps, in order, and
/// the conversation is judged by whether every step completed and every expectation is met.
/// Loaded by `goldgate::formats::scrapi::simulation`, played by `goldgate::simulate`.
#[derive(Clone, Debug)]
pub struct Simulation {
    pub name: String,
    pub location: Location,
    pub tags: Vec<String>,
    pub steps: Vec<SimulationStep>,
    /// Free-text criteria an LLM judge checks over the transcript ([`CheckKind::Criterion`]).
    pub expectations: Vec<CaseCheck>,
    /// Sent with the first turn.
    pub session_parameters: Map<String, Value>,
}

impl Simulation {
    /// The simulation as a case of the neutral model: no scripted turns, its steps for the
    /// simulated user, its expectations as checks over the conversation.
    pub fn into_case(self) -> Case {
        Case {
            tags: self.tags,
            session_parameters: self.session_parameters,
            checks: self.expectations,
            simulated_user: Some(self.steps),
            ..Case::named(self.name, Format::ScrapiGolden, self.location)
        }
    }
}

/// One step of a [`Simulation`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SimulationStep {
    /// What the simulated user wants from this step (empty for a step that only says its
    /// `static_utterance`).
    pub goal: String,
    pub success_criteria: Option<String>,
    /// How the user answers the agent (facts to give, tone).
    pub response_guide: Option<String>,
    /// User turns allowed for this step before it fails.
    pub max_turns: Option<u32>,
    /// What the user says, word for word, when the step starts.
    pub static_utterance: Option<String>,
    /// Variables sent to the agent when the step starts.
    pub inject_variables: Map<String, Value>,
}
