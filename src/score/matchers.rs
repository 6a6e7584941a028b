//! Matchers (SCRAPI's `$matchType`) over agent text and JSON values, argument matching, and
//! the assignment of actual tool calls to expected ones.
//!
//! - `exact`: agent text is compared trimmed; JSON values by [`json_equal`].
//! - `contains`: substring, **case-sensitive** as in SCRAPI (gecx `message-contains` is the
//!   case-insensitive one); a JSON value is compared by its text (a string's content, else its
//!   JSON).
//! - `regexp`: the pattern is searched anywhere in the text (anchor it to match all of it).
//! - `ignore`: always passes, even when the value is missing.
//! - `semantic`: the judge's 0-4 similarity, passing at
//!   [`super::ScoreOptions::similarity_pass`] (3), when a judge is configured; else
//!   [`super::semantic::compare`] at [`super::ScoreOptions::semantic_threshold`].

use std::borrow::Cow;
use std::fmt::Write as _;

use regex::Regex;
use serde_json::Value;

use super::{Graded, Grader, Verdict, semantic};
use crate::config::llm::SIMILARITY_MAX;
use crate::model::{ArgsMatcher, ExpectedToolCall, MatchType, Matcher, ValueMatcher};
use crate::results::{Method, Status};
use crate::transcript::{Reply, ToolCall};

/// Whether a name the agent reported is the expected one: equal, or a platform resource name
/// that ends with it (SCRAPI's rule for tool names and transfer targets).
pub fn name_matches(actual: &str, expected: &str) -> bool {
    actual == expected || actual.ends_with(expected)
}

/// The one transfer check of golden turns and turn evals: some target of the reply
/// ([`Reply::transfer_targets`]) names `agent`.
pub(super) fn transfer_to(agent: &str, reply: &Reply) -> Graded {
    let targets = reply.transfer_targets();
    let passed = targets.iter().any(|t| name_matches(t, agent));
    let actual = if targets.is_empty() {
        "no transfer".to_owned()
    } else {
        format!("transfer to {}", targets.join(", "))
    };
    let reason = format!("expected a transfer to {agent}, got {actual}");
    Verdict::decided(passed, Method::deterministic("transfer"), Some(reason)).labelled(
        format!("transfer to {agent}"),
        format!("transfer to {agent}"),
        actual,
    )
}

/// JSON equality with the leniency agents need: a number equals a string holding the same
/// number (`5` and `"5"`, `19.99` and `"19.99"`), a boolean equals `"true"`/`"false"`, and an
/// object or array equals a string holding it as JSON (tool arguments sent as a JSON string).
/// Objects must have the same keys; arrays the same items in the same order.
pub fn json_equal(expected: &Value, actual: &Value) -> bool {
    equal_by(expected, actual, lenient_leaf)
}

fn lenient_leaf(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Number(e), Value::Number(a)) => e == a || e.as_f64() == a.as_f64(),
        (Value::String(s), other) | (other, Value::String(s)) if !other.is_string() => {
            match other {
                Value::Number(n) => s.trim().parse::<f64>().ok() == n.as_f64(),
                Value::Bool(b) => s.trim() == if *b { "true" } else { "false" },
                Value::Object(_) | Value::Array(_) => {
                    serde_json::from_str::<Value>(s).is_ok_and(|parsed| json_equal(&parsed, other))
                }
                _ => false,
            }
        }
        _ => expected == actual,
    }
}

/// Objects equal with the same keys and equal values, arrays with equal items in the same
/// order; `leaf` decides every other pair (where the equalities differ).
pub(super) fn equal_by(a: &Value, b: &Value, leaf: fn(&Value, &Value) -> bool) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, v)| y.get(key).is_some_and(|w| equal_by(v, w, leaf)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| equal_by(v, w, leaf))
        }
        _ => leaf(a, b),
    }
}

/// A value as text: a string's content, anything else as compact JSON.
pub(super) fn text_of(value: &Value) -> Cow<'_, str> {
    match value {
        Value::String(s) => Cow::Borrowed(s),
        other => Cow::Owned(other.to_string()),
    }
}

/// `name({"key":value})`, as reports show an actual call.
pub(super) fn render_call(call: &ToolCall) -> String {
    format!("{}({})", call.name, call.args)
}

/// Actual calls for a report: `a(...); b(...)`, or `(no tool calls)`.
pub fn render_calls(calls: &[&ToolCall]) -> String {
    if calls.is_empty() {
        return "(no tool calls)".to_owned();
    }
    calls
        .iter()
        .map(|call| render_call(call))
        .collect::<Vec<_>>()
        .join("; ")
}

/// `name(key: "value", other: contains "x")`, as reports show an expected call.
pub(super) fn render_expected_call(call: &ExpectedToolCall) -> String {
    let mut out = format!("{}(", call.name);
    render_fields(&call.args.fields, &mut out);
    out.push(')');
    out
}

fn render_fields(fields: &[(String, ValueMatcher)], out: &mut String) {
    for (i, (key, matcher)) in fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{key}: ");
        match matcher {
            ValueMatcher::Object(inner) => {
                out.push('{');
                render_fields(inner, out);
                out.push('}');
            }
            ValueMatcher::Leaf(leaf) => match leaf.match_type {
                MatchType::Exact => {
                    let _ = write!(out, "{}", leaf.expected);
                }
                MatchType::Ignore => out.push_str("(any)"),
                other => {
                    let _ = write!(out, "{} {}", other.name(), leaf.expected);
                }
            },
        }
    }
}

pub(super) fn has_semantic(fields: &[(String, ValueMatcher)]) -> bool {
    fields.iter().any(|(_, matcher)| match matcher {
        ValueMatcher::Leaf(leaf) => leaf.match_type == MatchType::Semantic,
        ValueMatcher::Object(inner) => has_semantic(inner),
    })
}

/// Every leaf matcher with its path below the arguments.
fn leaves<'m>(
    fields: &'m [(String, ValueMatcher)],
    prefix: &[&'m str],
    out: &mut Vec<(Vec<&'m str>, &'m Matcher)>,
) {
    for (key, matcher) in fields {
        let mut path = prefix.to_vec();
        path.push(key);
        match matcher {
            ValueMatcher::Leaf(leaf) => out.push((path, leaf)),
            ValueMatcher::Object(inner) => leaves(inner, &path, out),
        }
    }
}

fn lookup<'v>(value: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter().try_fold(value, |value, key| value.get(key))
}

/// How many differing arguments a failed tool call names; the rest are counted.
const ARG_DIFFS_SHOWN: usize = 5;

/// Which actual call each expected call claimed, and why the others found none.
pub(super) struct CallAssignment {
    /// Per expected call: its verdict (passed when it claimed a call).
    pub verdicts: Vec<Verdict>,
    /// Per actual call: whether an expected call claimed it, matched or with other arguments
    /// (then the expectation's failure, not an extra call).
    pub claimed: Vec<bool>,
}

impl Grader {
    /// The method of `semantic` matches: the judge when configured, else local similarity.
    pub(super) fn semantic_method(&self) -> Method {
        match &self.judge {
            Some(judge) => judge.method(),
            None => Method::LocalSimilarity,
        }
    }

    pub(super) fn method_for(&self, match_type: MatchType) -> Method {
        match match_type {
            MatchType::Semantic => self.semantic_method(),
            other => Method::deterministic(other.name()),
        }
    }

    pub(super) async fn semantic(&self, expected: &str, actual: &str) -> Verdict {
        let method = self.semantic_method();
        let Some(judge) = &self.judge else {
            let local = semantic::compare(expected, actual, self.options.semantic_threshold);
            let mut verdict = Verdict::decided(local.passed, method, local.reason);
            verdict.score = Some(local.score);
            return verdict;
        };
        match judge.similarity(expected, actual).await {
            Ok(rating) => {
                let passed = rating.score >= self.options.similarity_pass;
                let reason = (!passed).then(|| {
                    let mut reason = format!("similarity {}/4", rating.score);
                    if let Some(why) = rating.explanation {
                        let _ = write!(reason, ": {why}");
                    }
                    reason
                });
                let mut verdict = Verdict::decided(passed, method, reason);
                verdict.score = Some((rating.score / SIMILARITY_MAX).clamp(0.0, 1.0));
                verdict
            }
            Err(err) => Verdict::error(method, err.to_string()),
        }
    }

    /// Agent text against one matcher.
    pub(super) async fn match_text(&self, matcher: &Matcher, actual: &str) -> Verdict {
        let expected = text_of(&matcher.expected);
        let method = self.method_for(matcher.match_type);
        match matcher.match_type {
            MatchType::Ignore => Verdict::decided(true, method, None),
            MatchType::Exact => {
                let passed = expected.trim() == actual.trim();
                Verdict::decided(
                    passed,
                    method,
                    Some("differs from the expected text".to_owned()),
                )
            }
            MatchType::Contains => {
                let passed = actual.contains(expected.as_ref());
                Verdict::decided(
                    passed,
                    method,
                    Some(format!("does not contain {expected:?}")),
                )
            }
            MatchType::Regexp => match regex_of(matcher) {
                Ok(regex) => {
                    let reason = format!("does not match /{}/", regex.as_str());
                    Verdict::decided(regex.is_match(actual), method, Some(reason))
                }
                Err(problem) => Verdict::error(method, problem),
            },
            MatchType::Semantic => self.semantic(&expected, actual).await,
        }
    }

    /// A JSON value (an argument, a part of one) against one matcher; `None` when missing.
    async fn match_value(&self, matcher: &Matcher, actual: Option<&Value>) -> Verdict {
        let method = self.method_for(matcher.match_type);
        if matcher.match_type == MatchType::Ignore {
            return Verdict::decided(true, method, None);
        }
        let Some(actual) = actual else {
            return Verdict::fail(method, "missing".to_owned());
        };
        let mut verdict = if matcher.match_type == MatchType::Exact {
            Verdict::decided(json_equal(&matcher.expected, actual), method, None)
        } else {
            self.match_text(matcher, &text_of(actual)).await
        };
        if verdict.status != Status::Passed {
            let detail = format!("expected {}, got {actual}", describe_leaf(matcher));
            verdict.reason = Some(match verdict.reason {
                Some(reason) if matcher.match_type == MatchType::Semantic => {
                    format!("{detail} ({reason})")
                }
                _ => detail,
            });
        }
        verdict
    }

    /// Every listed argument against the call's arguments: a call with other arguments fails
    /// naming each one that differs (the first [`ARG_DIFFS_SHOWN`]), so that one run shows
    /// everything to fix. An argument the judge could not rate makes the verdict an error only
    /// when no other argument differs: a definite difference is a failure whatever the judge
    /// did (an error would leave the case out of the gate). A call whose arguments arrive as a
    /// JSON string is read as the object it holds.
    pub(super) async fn match_args(&self, args: &ArgsMatcher, actual: &Value) -> Verdict {
        self.args_differences(args, actual).await.0
    }

    /// [`Grader::match_args`], and how many arguments differ.
    async fn args_differences(&self, args: &ArgsMatcher, actual: &Value) -> (Verdict, usize) {
        let parsed;
        let actual = match actual {
            Value::String(text) => {
                parsed = serde_json::from_str::<Value>(text).unwrap_or(Value::Null);
                &parsed
            }
            other => other,
        };
        let method = self.args_method(args);
        let mut all = Vec::new();
        leaves(&args.fields, &[], &mut all);
        let mut first_failure: Option<Verdict> = None;
        let mut first_error: Option<Verdict> = None;
        let mut differences = Vec::new();
        for (path, matcher) in all {
            let verdict = self.match_value(matcher, lookup(actual, &path)).await;
            let reason = format!(
                "{}: {}",
                path.join("."),
                verdict.reason.as_deref().unwrap_or("")
            );
            match verdict.status {
                Status::Passed => {}
                Status::Error => {
                    first_error.get_or_insert(Verdict {
                        reason: Some(reason),
                        method: method.clone(),
                        ..verdict
                    });
                }
                _ => {
                    // A failure outranks a skip (an argument no judge could rate).
                    if first_failure
                        .as_ref()
                        .is_none_or(|f| f.status != Status::Failed)
                    {
                        first_failure = Some(verdict);
                    }
                    differences.push(reason);
                }
            }
        }
        let Some(failure) = first_failure else {
            return match first_error {
                Some(error) => (error, 1),
                None => (Verdict::decided(true, method, None), 0),
            };
        };
        let mut reason = differences[..differences.len().min(ARG_DIFFS_SHOWN)].join("; ");
        if differences.len() > ARG_DIFFS_SHOWN {
            let _ = write!(reason, "; and {} more", differences.len() - ARG_DIFFS_SHOWN);
        }
        let verdict = Verdict {
            reason: Some(reason),
            method,
            ..failure
        };
        (verdict, differences.len())
    }

    pub(super) fn args_method(&self, args: &ArgsMatcher) -> Method {
        if has_semantic(&args.fields) {
            self.semantic_method()
        } else {
            Method::deterministic("tool-call")
        }
    }

    /// Assigns actual calls to expected ones so that as many expected calls as possible are
    /// matched, each actual call serving one expected call at most (two expected calls to one
    /// tool need two calls). Unlike a greedy pass, an expected call with loose arguments does
    /// not take the only call a stricter one could match. An expected call left unmatched then
    /// takes the unclaimed call of its name with the fewest differing arguments: the call it
    /// was meant to be (CES judges such a call's parameter correctness against its
    /// expectation), so it fails once, naming the differences, and not again as an extra call.
    pub(super) async fn assign_calls(
        &self,
        expected: &[&ExpectedToolCall],
        calls: &[&ToolCall],
    ) -> CallAssignment {
        let mut pairs: Vec<Vec<Option<(Verdict, usize)>>> = Vec::with_capacity(expected.len());
        for want in expected {
            let mut row = Vec::with_capacity(calls.len());
            for call in calls {
                row.push(if call.name == want.name {
                    Some(self.args_differences(&want.args, &call.args).await)
                } else {
                    None
                });
            }
            pairs.push(row);
        }
        let edges: Vec<Vec<bool>> = pairs
            .iter()
            .map(|row| {
                row.iter()
                    .map(|v| v.as_ref().is_some_and(|(v, _)| v.status == Status::Passed))
                    .collect()
            })
            .collect();
        let owner = max_matching(&edges, calls.len());
        let mut claimed: Vec<bool> = owner.iter().map(Option::is_some).collect();
        let verdicts = expected
            .iter()
            .zip(pairs)
            .enumerate()
            .map(|(i, (want, row))| {
                if owner.contains(&Some(i)) {
                    return Verdict::decided(true, self.args_method(&want.args), None);
                }
                self.unmatched_call(want, row, &mut claimed)
            })
            .collect();
        CallAssignment { verdicts, claimed }
    }

    /// The verdict of an expected call no call matched, given each call's verdict and number
    /// of differing arguments (`None` for a call of another name); claims the closest call of
    /// its name that no other expectation has.
    fn unmatched_call(
        &self,
        want: &ExpectedToolCall,
        row: Vec<Option<(Verdict, usize)>>,
        claimed: &mut [bool],
    ) -> Verdict {
        let method = self.args_method(&want.args);
        let tried: Vec<(usize, Verdict, usize)> = row
            .into_iter()
            .enumerate()
            .filter_map(|(call, tried)| tried.map(|(verdict, count)| (call, verdict, count)))
            .collect();
        if tried.is_empty() {
            return Verdict::fail(method, format!("no call to {}", want.name));
        }
        // A call that differs for sure decides before one the judge could not rate: an
        // error would take the case out of the gate's decisions.
        let closest = tried
            .iter()
            .filter(|(call, verdict, _)| !claimed[*call] && verdict.status != Status::Error)
            .min_by_key(|(_, _, count)| *count);
        if let Some((call, verdict, _)) = closest {
            claimed[*call] = true;
            let differences = verdict.reason.as_deref().unwrap_or_default();
            let reason = format!("{} called with other arguments: {differences}", want.name);
            return Verdict::fail(method, reason);
        }
        // The call the judge could not rate is still this expectation's, not an extra one.
        if let Some((call, error, _)) = tried
            .iter()
            .find(|(call, v, _)| !claimed[*call] && v.status == Status::Error)
        {
            claimed[*call] = true;
            return error.clone();
        }
        let reason = if tried.iter().any(|(_, v, _)| v.status == Status::Passed) {
            format!(
                "each {} call already matched another expectation",
                want.name
            )
        } else {
            format!(
                "each {} call already went to another expectation",
                want.name
            )
        };
        Verdict::fail(method, reason)
    }
}

/// Maximum bipartite matching (Kuhn's augmenting paths): which expected call owns each actual
/// call. Goldens list a handful of calls per turn, so the quadratic cost does not matter.
fn max_matching(edges: &[Vec<bool>], calls: usize) -> Vec<Option<usize>> {
    fn augment(
        want: usize,
        edges: &[Vec<bool>],
        owner: &mut [Option<usize>],
        seen: &mut [bool],
    ) -> bool {
        for call in 0..owner.len() {
            if edges[want][call] && !seen[call] {
                seen[call] = true;
                if owner[call].is_none_or(|other| augment(other, edges, owner, seen)) {
                    owner[call] = Some(want);
                    return true;
                }
            }
        }
        false
    }
    let mut owner = vec![None; calls];
    for want in 0..edges.len() {
        let mut seen = vec![false; calls];
        augment(want, edges, &mut owner, &mut seen);
    }
    owner
}

fn describe_leaf(matcher: &Matcher) -> String {
    match matcher.match_type {
        MatchType::Exact => matcher.expected.to_string(),
        other => format!("{} {}", other.name(), matcher.expected),
    }
}

/// The matcher's compiled pattern; loaders always compile it, but a hand-built matcher may not.
fn regex_of(matcher: &Matcher) -> Result<Cow<'_, Regex>, String> {
    match &matcher.regex {
        Some(regex) => Ok(Cow::Borrowed(regex)),
        None => Regex::new(&text_of(&matcher.expected))
            .map(Cow::Owned)
            .map_err(|err| format!("bad regexp: {err}")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::transfer_to;
    use crate::results::Status;
    use crate::transcript::{Reply, ToolCall, Transfer};

    #[test]
    fn a_transfer_counts_by_its_field_or_its_call_and_by_a_resource_name() {
        let by_field = Reply {
            transfer: Some(Transfer {
                agent: "projects/p/apps/a/agents/billing".to_owned(),
                resource: None,
            }),
            ..Reply::default()
        };
        let by_call = Reply {
            tool_calls: vec![ToolCall::new(
                "transfer_to_agent",
                json!({"agent": "billing"}),
            )],
            ..Reply::default()
        };
        for reply in [&by_field, &by_call] {
            assert_eq!(transfer_to("billing", reply).verdict.status, Status::Passed);
            assert_eq!(transfer_to("support", reply).verdict.status, Status::Failed);
        }
        let none = transfer_to("billing", &Reply::default());
        assert_eq!(none.verdict.status, Status::Failed);
        assert_eq!(none.actual, "no transfer");
    }
}
