//! [`ResultCheck`]s: checks on what a directly executed tool returned, as SCRAPI's tool tests
//! judge them (`ToolEvals.validate_tool_test`).
//!
//! The value at the path is what SCRAPI's JSONPath library gives: nothing when no node
//! matches, the node when one does, the list of nodes when several do; a JSON `null` is
//! nothing too. The operators then behave as the Python expressions SCRAPI evaluates:
//! `equals` is `==` (numbers by value, `true == 1`), `contains` is `in` (a substring, a list
//! element, a mapping key), the comparisons and `length_*` fail where Python raises a
//! `TypeError` (a string against a number, the length of a number).

use std::cmp::Ordering;

use serde_json::Value;

use super::matchers::{equal_by, text_of};
use super::{Graded, Verdict};
use crate::model::{ResultCheck, ResultOperator, ResultPart};
use crate::results::Method;
use crate::transcript::Reply;

const METHOD: Method = Method::deterministic("json-path");
const NOTHING: &str = "(nothing at the path)";

/// The label and the expected text `check` is reported under.
pub fn describe(check: &ResultCheck) -> (String, String) {
    let label = format!(
        "{} {} {}",
        check.part.name(),
        check.path.source,
        check.operator.name()
    );
    let expected = if check.operator.takes_value() {
        format!("{} {}", check.operator.name(), render(&check.value))
    } else {
        check.operator.name().to_owned()
    };
    (label, expected)
}

/// The check of a tool test with no expectations: the tool ran and answered.
pub(super) fn ran(tool: &str, reply: &Reply) -> Graded {
    let answered = reply.tool_calls.first().and_then(|c| c.response.as_ref());
    let actual = answered.map_or_else(|| "no response".to_owned(), render);
    Verdict::decided(
        answered.is_some(),
        Method::deterministic("execution"),
        Some(format!("{tool} gave no response")),
    )
    .labelled(format!("tool {tool} ran"), "a response".to_owned(), actual)
}

/// Grades `check` against the executed tool in `reply` (its one tool call).
pub(super) fn grade(check: &ResultCheck, reply: &Reply) -> Graded {
    let (label, expected) = describe(check);
    let variables = reply.variables.clone().map(Value::Object);
    let data = match check.part {
        ResultPart::Response => reply.tool_calls.first().and_then(|c| c.response.as_ref()),
        ResultPart::Variables => variables.as_ref(),
    };
    let actual = data
        .and_then(|d| check.path.select(d))
        .filter(|v| !v.is_null());
    let passed = holds(check.operator, actual.as_ref(), &check.value);
    let shown = actual.as_ref().map_or_else(|| NOTHING.to_owned(), render);
    let reason = format!("`{}` is {shown}; expected {expected}", check.path.source);
    Verdict::decided(passed, METHOD, Some(reason)).labelled(label, expected, shown)
}

/// Whether `operator` holds between the value found (`None`: nothing) and `expected`.
fn holds(operator: ResultOperator, actual: Option<&Value>, expected: &Value) -> bool {
    let length = || compare_length(actual.and_then(length_of), expected);
    match operator {
        ResultOperator::IsNull => actual.is_none(),
        ResultOperator::IsNotNull => actual.is_some(),
        ResultOperator::Equals => match actual {
            None => expected.is_null(),
            Some(actual) => python_equal(actual, expected),
        },
        ResultOperator::Contains => actual.is_some_and(|a| contains(a, expected)),
        ResultOperator::GreaterThan => {
            actual.and_then(|a| compare(a, expected)) == Some(Ordering::Greater)
        }
        ResultOperator::LessThan => {
            actual.and_then(|a| compare(a, expected)) == Some(Ordering::Less)
        }
        // Python compares `len(x)` with any number: `len(x) == 3.0` holds, as does `== True`.
        ResultOperator::LengthEquals => length() == Some(Ordering::Equal),
        ResultOperator::LengthGreaterThan => length() == Some(Ordering::Greater),
        ResultOperator::LengthLessThan => length() == Some(Ordering::Less),
    }
}

/// Python's `==` on JSON values: numbers (and booleans, which are numbers in Python) by value,
/// everything else by structure.
fn python_equal(a: &Value, b: &Value) -> bool {
    equal_by(a, b, |a, b| match (number(a), number(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    })
}

/// Python's `expected in actual`: a substring of a string, an element of a list, a key of a
/// mapping. Anything else (a number, a non-string in a string) is false.
fn contains(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::String(text), Value::String(part)) => text.contains(part.as_str()),
        (Value::Array(items), _) => items.iter().any(|item| python_equal(item, expected)),
        (Value::Object(map), Value::String(key)) => map.contains_key(key),
        _ => false,
    }
}

/// Python's ordering where it has one: numbers with numbers, strings with strings (by code
/// point). `None` where Python raises.
fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::String(x), Value::String(y)) => Some(x.chars().cmp(y.chars())),
        _ => number(a)?.partial_cmp(&number(b)?),
    }
}

fn compare_length(length: Option<u64>, expected: &Value) -> Option<Ordering> {
    (length? as f64).partial_cmp(&number(expected)?)
}

/// Python's `len`: characters of a string, items of a list, keys of a mapping.
fn length_of(value: &Value) -> Option<u64> {
    let n = match value {
        Value::String(s) => s.chars().count(),
        Value::Array(items) => items.len(),
        Value::Object(map) => map.len(),
        _ => return None,
    };
    u64::try_from(n).ok()
}

/// A number as Python sees it: booleans are 0 and 1.
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
}

fn render(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        other => text_of(other).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::holds;
    use crate::model::ResultOperator::{self, *};

    fn check(op: ResultOperator, actual: Value, expected: Value) -> bool {
        let actual = Some(actual).filter(|v| !v.is_null());
        holds(op, actual.as_ref(), &expected)
    }

    #[test]
    fn equals_is_pythons_equality() {
        assert!(check(Equals, json!("success"), json!("success")));
        assert!(!check(Equals, json!("Success"), json!("success")));
        assert!(check(Equals, json!(1), json!(1.0)));
        assert!(check(Equals, json!(true), json!(1)));
        assert!(
            !check(Equals, json!("1"), json!(1)),
            "no text-to-number coercion"
        );
        assert!(check(Equals, json!({"a": [1, 2]}), json!({"a": [1.0, 2]})));
        assert!(check(Equals, Value::Null, Value::Null), "None == None");
        assert!(!check(Equals, json!(0), Value::Null));
    }

    #[test]
    fn contains_is_pythons_in() {
        assert!(check(Contains, json!("billing service"), json!("service")));
        assert!(!check(Contains, json!("billing"), json!("Billing")));
        assert!(check(Contains, json!([1, "a"]), json!("a")));
        assert!(check(
            Contains,
            json!({"agent_action": 1}),
            json!("agent_action")
        ));
        assert!(!check(Contains, json!(12345), json!("123")));
        assert!(!check(Contains, json!("12345"), json!(123)));
        assert!(!check(Contains, Value::Null, json!("x")));
    }

    #[test]
    fn comparisons_fail_where_python_raises() {
        assert!(check(GreaterThan, json!(10.5), json!(10)));
        assert!(!check(GreaterThan, json!(10), json!(10)));
        assert!(check(LessThan, json!("apple"), json!("banana")));
        assert!(!check(GreaterThan, json!("11"), json!(10)));
        assert!(!check(LessThan, Value::Null, json!(10)));
    }

    #[test]
    fn lengths_count_characters_items_and_keys() {
        assert!(check(LengthEquals, json!("héllo"), json!(5)));
        assert!(check(LengthEquals, json!([1, 2, 3]), json!(3.0)));
        assert!(check(LengthGreaterThan, json!({"a": 1, "b": 2}), json!(1)));
        assert!(check(LengthLessThan, json!([]), json!(1)));
        assert!(
            !check(LengthEquals, json!(123), json!(3)),
            "len(int) raises"
        );
        assert!(!check(LengthEquals, json!("abc"), json!("3")));
    }

    #[test]
    fn null_checks_treat_json_null_as_nothing() {
        assert!(check(IsNull, Value::Null, Value::Null));
        assert!(!check(IsNotNull, Value::Null, Value::Null));
        assert!(check(IsNotNull, json!(0), Value::Null));
        assert!(check(IsNotNull, json!(""), Value::Null));
    }
}
