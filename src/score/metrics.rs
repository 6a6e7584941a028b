//! Regtrace metrics: the final answer (the last agent text of the case) graded against the
//! case's `expected_output` into a score in 0..=1 that passes at the metric's threshold.
//!
//! - `format` is deterministic: the share of the applicable checks that hold. Always: the
//!   answer's length (trimmed, in characters) is within 20% of the expected one's. When the
//!   expected output is a JSON object or array: the answer parses as JSON, and for an object
//!   has the same top-level keys. When the expected output has markdown headings (`# `) or list
//!   items (`- `, `* `, `+ `, `1. `): so does the answer.
//! - `factuality` asks the judge when one is configured. Without one it runs in shallow mode
//!   (method `local-similarity`): the share of the expected output's content words found in
//!   the answer ([`super::semantic::recall`]), or, for JSON expected output, the share of its
//!   leaves found at the same place in the answer with an equal value ([`json_equal`]).
//! - `tone` needs a judge and is skipped without one.
//! - `regression` compares with the baseline's score, which scoring does not have: it is
//!   skipped here and decided by the gate.

use std::collections::BTreeSet;

use serde_json::Value;

use super::judge::JudgeQuestion;
use super::matchers::json_equal;
use super::{Graded, Grader, Verdict, semantic};
use crate::model::Metric;
use crate::results::Method;

/// Why a `regression` metric is not scored per case.
pub const NEEDS_BASELINE: &str = "needs a baseline (goldgate run --baseline)";

/// How far the answer's length may stray from the expected one's, as a share of it.
const LENGTH_TOLERANCE: f64 = 0.2;

impl Grader {
    pub(super) async fn metric(
        &self,
        label: &str,
        metric: Metric,
        threshold: f64,
        expected: &str,
        answer: &str,
        transcript: &str,
    ) -> Graded {
        let verdict = match metric {
            Metric::Format => {
                let (score, problems) = format_score(expected, answer);
                graded(
                    score,
                    threshold,
                    Method::deterministic("format"),
                    &problems.join("; "),
                )
            }
            Metric::Factuality if self.judge.is_none() => {
                shallow_factuality(expected, answer, threshold)
            }
            Metric::Factuality => {
                let question = JudgeQuestion::Factuality { expected };
                self.judged(question, threshold, transcript).await
            }
            Metric::Tone => {
                let question = JudgeQuestion::Tone { expected };
                self.judged(question, threshold, transcript).await
            }
            Metric::Regression => Verdict::skipped(NEEDS_BASELINE),
        };
        let actual = if answer.trim().is_empty() {
            "(no answer)".to_owned()
        } else {
            answer.to_owned()
        };
        verdict.labelled(label, expected.to_owned(), actual)
    }

    /// A judge's graded answer against the threshold (its yes/no when it gives no score).
    async fn judged(
        &self,
        question: JudgeQuestion<'_>,
        threshold: f64,
        transcript: &str,
    ) -> Verdict {
        match self.consult(question, None, transcript).await {
            Ok((answer, method)) => {
                let score = answer
                    .score
                    .unwrap_or(if answer.passed { 1.0 } else { 0.0 })
                    .clamp(0.0, 1.0);
                let why = answer.explanation.unwrap_or_default();
                graded(score, threshold, method, &why)
            }
            Err(verdict) => verdict,
        }
    }
}

fn graded(score: f64, threshold: f64, method: Method, why: &str) -> Verdict {
    let mut reason = format!("score {score:.2} is below the threshold {threshold}");
    if !why.is_empty() {
        reason.push_str(": ");
        reason.push_str(why);
    }
    Verdict::decided(score >= threshold, method, Some(reason)).with_score(score)
}

/// The format score and the checks that failed.
fn format_score(expected: &str, answer: &str) -> (f64, Vec<String>) {
    let mut applicable = 0usize;
    let mut problems = Vec::new();
    let mut check = |holds: bool, problem: String| {
        applicable += 1;
        if !holds {
            problems.push(problem);
        }
    };

    let expected_len = expected.trim().chars().count();
    let answer_len = answer.trim().chars().count();
    let drift = (answer_len as f64 - expected_len as f64).abs();
    check(
        drift <= LENGTH_TOLERANCE * expected_len as f64,
        format!("length {answer_len} is not within 20% of {expected_len}"),
    );

    if let Some(expected_json) = json_document(expected) {
        let answer_json = json_document(answer);
        check(answer_json.is_some(), "the answer is not JSON".to_owned());
        if let Value::Object(expected_keys) = &expected_json {
            let want: BTreeSet<&String> = expected_keys.keys().collect();
            let got: BTreeSet<&String> = answer_json
                .as_ref()
                .and_then(Value::as_object)
                .map(|object| object.keys().collect())
                .unwrap_or_default();
            let missing: Vec<&str> = want.difference(&got).map(|k| k.as_str()).collect();
            let extra: Vec<&str> = got.difference(&want).map(|k| k.as_str()).collect();
            check(
                missing.is_empty() && extra.is_empty(),
                format!(
                    "top-level keys differ (missing: {}; extra: {})",
                    missing.join(", "),
                    extra.join(", ")
                ),
            );
        }
    }

    let want = Markdown::of(expected);
    let got = Markdown::of(answer);
    if want.headings {
        check(got.headings, "no markdown headings".to_owned());
    }
    if want.lists {
        check(got.lists, "no markdown list".to_owned());
    }

    let score = (applicable - problems.len()) as f64 / applicable as f64;
    (score, problems)
}

/// A JSON object or array (a bare string or number is not a JSON document here).
fn json_document(text: &str) -> Option<Value> {
    serde_json::from_str::<Value>(text.trim())
        .ok()
        .filter(|value| value.is_object() || value.is_array())
}

/// The markdown structure a text uses.
struct Markdown {
    headings: bool,
    lists: bool,
}

impl Markdown {
    fn of(text: &str) -> Self {
        let lines = || text.lines().map(str::trim_start);
        let heading = |line: &str| {
            let level = line.chars().take_while(|&c| c == '#').count();
            (1..=6).contains(&level) && line[level..].starts_with(' ')
        };
        let list_item = |line: &str| {
            if ["- ", "* ", "+ "].iter().any(|m| line.starts_with(m)) {
                return true;
            }
            let digits = line.chars().take_while(char::is_ascii_digit).count();
            digits > 0 && (line[digits..].starts_with(". ") || line[digits..].starts_with(") "))
        };
        Self {
            headings: lines().any(heading),
            lists: lines().any(list_item),
        }
    }
}

fn shallow_factuality(expected: &str, answer: &str, threshold: f64) -> Verdict {
    const SHALLOW: &str = "shallow mode, no judge configured";
    let (score, why) = match json_document(expected) {
        Some(expected_json) => match json_document(answer) {
            Some(answer_json) => {
                let mut leaves = Vec::new();
                json_leaves(&expected_json, String::new(), &mut leaves);
                let equal = leaves
                    .iter()
                    .filter(|(pointer, value)| {
                        answer_json
                            .pointer(pointer)
                            .is_some_and(|got| json_equal(value, got))
                    })
                    .count();
                let score = if leaves.is_empty() {
                    1.0
                } else {
                    equal as f64 / leaves.len() as f64
                };
                (
                    score,
                    format!("{equal} of {} JSON values equal ({SHALLOW})", leaves.len()),
                )
            }
            None => (0.0, format!("the answer is not JSON ({SHALLOW})")),
        },
        None => {
            let recall = semantic::recall(expected, answer);
            (recall.score, format!("{recall} ({SHALLOW})"))
        }
    };
    graded(score, threshold, Method::LocalSimilarity, &why)
}

/// Every scalar (and empty container) of a JSON value with its JSON pointer.
fn json_leaves<'v>(value: &'v Value, pointer: String, out: &mut Vec<(String, &'v Value)>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, item) in map {
                let key = key.replace('~', "~0").replace('/', "~1");
                json_leaves(item, format!("{pointer}/{key}"), out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, item) in items.iter().enumerate() {
                json_leaves(item, format!("{pointer}/{i}"), out);
            }
        }
        leaf => out.push((pointer, leaf)),
    }
}
