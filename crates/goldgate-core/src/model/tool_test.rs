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

    /// The paths this one goes through, longest first and the root left out: `$.a.b[*]` goes
    /// through `$.a.b` and `$.a`. A path that finds nothing where one of these finds something
    /// met a reply of the expected shape with nothing at its end.
    pub fn parents(&self) -> Vec<JsonPath> {
        let canonical = self.compiled.to_string();
        let (starts, _) = segments(&canonical);
        starts
            .iter()
            .skip(1)
            .rev()
            .filter_map(|&end| {
                let prefix = &canonical[..end];
                let compiled = serde_json_path::JsonPath::parse(prefix).ok()?;
                Some(JsonPath {
                    source: prefix.to_owned(),
                    compiled,
                })
            })
            .collect()
    }

    /// Whether the path's first step takes items of a list (`$[*]`, `$[0]`, `$.*`): then an
    /// empty list is the shape it expects, with nothing in it.
    pub fn starts_with_items(&self) -> bool {
        let canonical = self.compiled.to_string();
        let rest = canonical.strip_prefix('$').unwrap_or_default();
        rest.starts_with(".*")
            || (rest.starts_with('[') && !rest[1..].starts_with(['\'', '"', '?']))
    }

    /// How many descendant segments (`..`) the path holds, its filters' included: each one
    /// after the first multiplies the nodes evaluation visits by up to the document's depth.
    pub fn descendant_segments(&self) -> usize {
        segments(&self.compiled.to_string()).1
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

/// Where each top-level segment of a canonical RFC 9535 path starts, and how many descendant
/// segments (`..`) it holds anywhere, filters included. Quoted names are read past.
fn segments(canonical: &str) -> (Vec<usize>, usize) {
    let bytes = canonical.as_bytes();
    let (mut starts, mut descendants) = (Vec::new(), 0);
    let (mut depth, mut quote, mut escaped) = (0usize, None::<u8>, false);
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        match byte {
            b'\'' | b'"' => quote = Some(byte),
            b'.' if bytes.get(i + 1) == Some(&b'.') => {
                descendants += 1;
                if depth == 0 {
                    starts.push(i);
                }
                // `..[0]` is one segment: its bracket starts none of its own.
                if bytes.get(i + 2) == Some(&b'[') {
                    depth += 1;
                    i += 1;
                }
                i += 2;
                continue;
            }
            b'.' if depth == 0 => starts.push(i),
            b'[' => {
                if depth == 0 {
                    starts.push(i);
                }
                depth += 1;
            }
            b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    (starts, descendants)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(paths: Vec<JsonPath>) -> Vec<String> {
        paths.into_iter().map(|p| p.source).collect()
    }

    #[test]
    fn a_paths_parents_and_descendant_segments() {
        let path = JsonPath::parse("$.reply.parts[*].text").unwrap();
        let parents = path.parents();
        let found = serde_json::json!({ "reply": { "parts": [] } });
        assert!(parents.iter().any(|p| !p.nodes(&found).is_empty()));
        assert_eq!(parents.len(), 3, "{:?}", sources(parents));
        assert!(JsonPath::parse("$.answer").unwrap().parents().is_empty());
        assert!(JsonPath::parse("$[*].text").unwrap().starts_with_items());
        assert!(
            !JsonPath::parse("$['answer'][*]")
                .unwrap()
                .starts_with_items()
        );
        let quoted = JsonPath::parse("$['a.b']['c[d']").unwrap();
        assert_eq!(quoted.parents().len(), 1);
        assert_eq!(quoted.descendant_segments(), 0);
        for (source, descendants) in [
            ("$..*..*..*", 3),
            ("$..[0]", 1),
            ("$.a[?@..b]", 1),
            ("$['..']", 0),
        ] {
            let path = JsonPath::parse(source).unwrap();
            assert_eq!(path.descendant_segments(), descendants, "{source}");
        }
    }
}
