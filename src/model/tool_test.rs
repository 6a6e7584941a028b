//! What a SCRAPI tool test holds in the model: one direct execution of a tool
//! ([`ToolExecution`], sent as [`super::Input::ExecuteTool`]) and checks on its result
//! ([`ResultCheck`], an [`super::ExpectationKind::ToolResult`]).

mod jsonpath_ng;

use serde_json::{Map, Value};

/// One direct execution of a tool: which tool, its arguments and the session state it reads.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolExecution {
    /// The tool's display name, as the agent's tools are named.
    pub tool: String,
    pub args: Map<String, Value>,
    pub state: ToolState,
}

/// The session state a directly executed tool sees.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolState {
    /// Session variables; a name without a value, or none at all, asks for the app's defaults.
    Variables(Map<String, Value>),
    /// A whole tool context (python tools), passed as written.
    Context(Map<String, Value>),
}

/// One check on a directly executed tool's result: the value at `path` in one part of the
/// result, compared by `operator` (SCRAPI's tool-test expectations).
#[derive(Clone, Debug)]
pub struct ResultCheck {
    pub part: ResultPart,
    pub path: JsonPath,
    pub operator: ResultOperator,
    /// What the operator compares with (`null` for `is_null` and `is_not_null`).
    pub value: Value,
}

/// Which part of a tool's result a [`ResultCheck`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultPart {
    /// What the tool returned.
    Response,
    /// The session variables after the tool ran.
    Variables,
}

impl ResultPart {
    pub fn name(self) -> &'static str {
        match self {
            ResultPart::Response => "response",
            ResultPart::Variables => "variables",
        }
    }
}

/// The operators of SCRAPI's tool tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultOperator {
    Equals,
    Contains,
    GreaterThan,
    LessThan,
    LengthEquals,
    LengthGreaterThan,
    LengthLessThan,
    IsNull,
    IsNotNull,
}

impl ResultOperator {
    pub const ALL: [ResultOperator; 9] = [
        ResultOperator::Equals,
        ResultOperator::Contains,
        ResultOperator::GreaterThan,
        ResultOperator::LessThan,
        ResultOperator::LengthEquals,
        ResultOperator::LengthGreaterThan,
        ResultOperator::LengthLessThan,
        ResultOperator::IsNull,
        ResultOperator::IsNotNull,
    ];

    /// The name written in the file.
    pub fn name(self) -> &'static str {
        match self {
            ResultOperator::Equals => "equals",
            ResultOperator::Contains => "contains",
            ResultOperator::GreaterThan => "greater_than",
            ResultOperator::LessThan => "less_than",
            ResultOperator::LengthEquals => "length_equals",
            ResultOperator::LengthGreaterThan => "length_greater_than",
            ResultOperator::LengthLessThan => "length_less_than",
            ResultOperator::IsNull => "is_null",
            ResultOperator::IsNotNull => "is_not_null",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|op| op.name() == name)
    }

    /// `is_null` and `is_not_null` compare with nothing.
    pub fn takes_value(self) -> bool {
        !matches!(self, ResultOperator::IsNull | ResultOperator::IsNotNull)
    }
}

/// A JSONPath query (RFC 9535), compiled when the file is loaded so that a bad path is a load
/// error, with the text it was written as.
#[derive(Clone, Debug)]
pub struct JsonPath {
    pub source: String,
    compiled: serde_json_path::JsonPath,
}

/// Two paths are the same when they were written the same.
impl PartialEq for JsonPath {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl JsonPath {
    /// Compiles `source`. A path without the leading `$` is read from the root, as SCRAPI's
    /// JSONPath library (jsonpath_ng) reads it (`result.status` is `$.result.status`), and so
    /// are its dot-notation names that RFC 9535 writes in brackets (`$.result.tracking-number`,
    /// `$.result.'a b'`).
    pub fn parse(source: &str) -> Result<Self, serde_json_path::ParseError> {
        let trimmed = source.trim();
        let rooted = if trimmed.starts_with('$') {
            trimmed.to_owned()
        } else if trimmed.starts_with('[') {
            format!("${trimmed}")
        } else {
            format!("$.{trimmed}")
        };
        Ok(Self {
            source: source.to_owned(),
            compiled: serde_json_path::JsonPath::parse(&jsonpath_ng::to_rfc9535(&rooted))?,
        })
    }

    /// Every node the path finds, in document order.
    pub fn nodes<'a>(&self, value: &'a Value) -> Vec<&'a Value> {
        self.compiled.query(value).all()
    }

    /// The value at the path as SCRAPI reads it: nothing when no node matches, the node when
    /// one does, a list of the nodes when several do.
    pub fn select(&self, value: &Value) -> Option<Value> {
        match self.nodes(value).as_slice() {
            [] => None,
            [one] => Some((*one).clone()),
            many => Some(Value::Array(many.iter().map(|v| (*v).clone()).collect())),
        }
    }
}
