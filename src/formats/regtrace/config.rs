//! `regtrace.config.yaml`: which golden sets to load, with what defaults, and the quality
//! gates a run must meet.
//!
//! Every section Regtrace's own loader requires (`project`, `golden_sets`, `metrics`, `judge`,
//! `run`, `quality_gates`, `output`) is checked as strictly as Regtrace checks it, so a config
//! that Regtrace refuses is refused here too, at its line. goldgate only uses the golden set
//! entries, `metrics.default_threshold` and `quality_gates`; the rest (judge models, format
//! and tone tuning, output styles) is validated and otherwise left to Regtrace.

use std::path::PathBuf;

use super::SetDefaults;
use super::shape::{
    self, Field, NON_EMPTY_TEXT, Range, Shape, TEXT, flag, lookup, optional, required,
};
use crate::diagnostic::{Code, Diagnostics};
use crate::model::Metric;
use crate::yaml::Node;

/// What goldgate takes from a `regtrace.config.yaml`.
#[derive(Clone, Debug, PartialEq)]
pub struct RegtraceConfig {
    /// Every readable entry of `golden_sets`, enabled or not, in file order.
    pub golden_sets: Vec<GoldenSetEntry>,
    /// `metrics.default_threshold`: the passing score of a metric a case does not override.
    pub default_threshold: f64,
    pub quality_gates: QualityGates,
}

impl RegtraceConfig {
    /// The defaults the sets of `entry` are loaded with.
    pub fn set_defaults(&self, entry: &GoldenSetEntry) -> SetDefaults {
        SetDefaults {
            default_threshold: self.default_threshold,
            weight: entry.weight,
        }
    }
}

/// One `golden_sets` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct GoldenSetEntry {
    /// As written: relative to the config's directory.
    pub path: PathBuf,
    /// Another name for `regtrace run --set`.
    pub alias: Option<String>,
    pub enabled: bool,
    /// Multiplies the weight of every case of the set.
    pub weight: f64,
    /// Where `path` is written, for problems with the set file.
    pub line: u32,
    pub column: u32,
}

/// `quality_gates`: when a whole run fails, beyond single cases.
#[derive(Clone, Debug, PartialEq)]
pub struct QualityGates {
    /// The weighted suite score must reach this.
    pub suite_score_minimum: f64,
    /// More failed cases than this fail the run.
    pub max_failed_test_cases: u32,
    /// Share of judge verdicts given with low confidence that is tolerated.
    pub max_low_confidence_ratio: f64,
    /// Whether a regression against the baseline fails the run.
    pub regression_gate: bool,
    /// Per metric, the minimum mean score over the suite.
    pub metric_score_minimums: Vec<(Metric, f64)>,
}

impl Default for QualityGates {
    /// Regtrace's defaults.
    fn default() -> Self {
        Self {
            suite_score_minimum: 0.7,
            max_failed_test_cases: 0,
            max_low_confidence_ratio: 0.1,
            regression_gate: true,
            metric_score_minimums: Vec::new(),
        }
    }
}

const BOOL: Shape = Shape::Bool;
const UNIT: Shape = Shape::Number(Range::UNIT);
const METRIC: Shape = Shape::OneOf(&super::METRIC_NAMES);
const SUB_DIMENSIONS: [&str; 5] = [
    "formality",
    "sentiment",
    "assertiveness",
    "persona_consistency",
    "verbosity",
];

/// A judge or generator model.
const MODEL: Shape = Shape::Object(&[
    required(
        "provider",
        Shape::OneOf(&["openai", "anthropic", "gemini", "groq", "ollama"]),
    ),
    required("model", TEXT),
    optional("temperature", Shape::Number(Range::between(0.0, 2.0))),
    optional("max_tokens", Shape::Number(Range::POSITIVE_INT)),
    optional("timeout_ms", Shape::Number(Range::POSITIVE_INT)),
    optional("retry_attempts", Shape::Number(Range::NON_NEGATIVE_INT)),
    optional("local_endpoint", Shape::Nullable(&TEXT)),
]);

const GOLDEN_SET_ENTRY: Shape = Shape::Object(&[
    required("path", NON_EMPTY_TEXT),
    optional("alias", Shape::Nullable(&TEXT)),
    optional("enabled", BOOL),
    // Positive, like a case weight (zod allows 0).
    optional("weight", Shape::Number(Range::POSITIVE)),
    optional("store_in_db", BOOL),
]);

const SUB_CHECKS: [Field; 7] = [
    optional("length", BOOL),
    optional("json_validity", BOOL),
    optional("json_schema", BOOL),
    optional("markdown_structure", BOOL),
    optional("required_fields", BOOL),
    optional("forbidden_content", BOOL),
    optional("regex_match", BOOL),
];

const METRICS: Shape = Shape::Object(&[
    optional(
        "enabled",
        Shape::List {
            item: &METRIC,
            non_empty: false,
        },
    ),
    optional("default_threshold", UNIT),
    optional("default_weight", Shape::Number(Range::NON_NEGATIVE)),
    required(
        "factuality",
        Shape::Object(&[
            optional(
                "mode",
                Shape::OneOf(&["strict", "lenient", "json_structural"]),
            ),
            optional("claim_extraction_depth", Shape::OneOf(&["shallow", "deep"])),
            optional("rag_faithfulness_only", BOOL),
        ]),
    ),
    required(
        "format",
        Shape::Object(&[
            required("sub_checks", Shape::Object(&SUB_CHECKS)),
            optional("length_tolerance", UNIT),
            optional("strict_json", BOOL),
        ]),
    ),
    required(
        "tone",
        Shape::Object(&[
            optional("tone_profile", Shape::Nullable(&TEXT)),
            required(
                "sub_dimensions",
                Shape::Object(&[
                    optional("formality", BOOL),
                    optional("sentiment", BOOL),
                    optional("assertiveness", BOOL),
                    optional("persona_consistency", BOOL),
                    optional("verbosity", BOOL),
                ]),
            ),
            optional(
                "sub_dimension_weights",
                Shape::Record {
                    keys: Some(&SUB_DIMENSIONS),
                    value: &Shape::Number(Range::NON_NEGATIVE),
                },
            ),
        ]),
    ),
    required(
        "regression",
        Shape::Object(&[
            optional("enabled", BOOL),
            optional(
                "baseline_strategy",
                Shape::OneOf(&["last_passing", "pinned"]),
            ),
            optional("pinned_run_id", Shape::Nullable(&TEXT)),
            optional("tolerance", UNIT),
            optional(
                "metric_tolerances",
                Shape::Record {
                    keys: Some(&super::METRIC_NAMES),
                    value: &UNIT,
                },
            ),
            optional("critical_threshold", UNIT),
            optional("exclude_new_test_cases", BOOL),
            optional("branch_aware", BOOL),
            optional("fallback_baseline", TEXT),
        ]),
    ),
]);

const CONFIG: Shape = Shape::Object(&[
    required(
        "project",
        Shape::Object(&[
            required("name", NON_EMPTY_TEXT),
            optional("version", NON_EMPTY_TEXT),
            optional("description", Shape::Nullable(&TEXT)),
        ]),
    ),
    required(
        "golden_sets",
        Shape::List {
            item: &GOLDEN_SET_ENTRY,
            non_empty: true,
        },
    ),
    required("metrics", METRICS),
    required(
        "judge",
        Shape::Object(&[
            required("primary", MODEL),
            optional("fallback", Shape::Nullable(&MODEL)),
        ]),
    ),
    optional("generator", MODEL),
    required(
        "run",
        Shape::Object(&[optional(
            "concurrency",
            Shape::Number(Range::between(1.0, 20.0).whole()),
        )]),
    ),
    optional(
        "nfr_gates",
        Shape::Object(&[
            optional("max_latency_ms", Shape::Number(Range::POSITIVE_INT)),
            optional("max_cost_usd", Shape::Number(Range::NON_NEGATIVE)),
            optional("min_coverage", UNIT),
        ]),
    ),
    required(
        "quality_gates",
        Shape::Object(&[
            optional("suite_score_minimum", UNIT),
            optional(
                "metric_score_minimums",
                Shape::Record {
                    keys: Some(&super::METRIC_NAMES),
                    value: &UNIT,
                },
            ),
            optional(
                "max_failed_test_cases",
                Shape::Number(Range::NON_NEGATIVE_INT),
            ),
            optional("max_low_confidence_ratio", UNIT),
            optional("regression_gate", BOOL),
        ]),
    ),
    required(
        "output",
        Shape::Object(&[
            optional("run_history_limit", Shape::Number(Range::POSITIVE_INT)),
            optional(
                "default_format",
                Shape::OneOf(&["terminal", "json", "markdown"]),
            ),
            optional("explain_by_default", BOOL),
            optional("color", Shape::OneOf(&["auto", "always", "never"])),
            optional("report_path", Shape::Nullable(&TEXT)),
            optional("ci_mode_auto_detect", BOOL),
        ]),
    ),
    optional(
        "storage",
        Shape::Object(&[required(
            "db",
            Shape::Object(&[optional("enabled", BOOL), optional("path", TEXT)]),
        )]),
    ),
]);

/// Reads a `regtrace.config.yaml`, reporting every problem; missing values take Regtrace's
/// defaults.
pub fn load_config(root: &Node, diags: &mut Diagnostics) -> RegtraceConfig {
    let start = diags.items.len();
    if root.as_map().is_none() {
        root.wrong_type("a mapping", diags).hint(
            "regtrace.config.yaml has `project`, `golden_sets` and `metrics` at the top level",
        );
    } else {
        shape::check(root, &CONFIG, "", diags);
        check_cross_field(root, diags);
        shape::sort_from(diags, start);
    }
    let number = |keys: &[&str]| lookup(root, keys).and_then(Node::as_f64);
    let gates = QualityGates::default();
    let quality_gates = QualityGates {
        suite_score_minimum: number(&["quality_gates", "suite_score_minimum"])
            .unwrap_or(gates.suite_score_minimum),
        max_failed_test_cases: number(&["quality_gates", "max_failed_test_cases"])
            .and_then(|n| u32::try_from(n as i64).ok())
            .unwrap_or(gates.max_failed_test_cases),
        max_low_confidence_ratio: number(&["quality_gates", "max_low_confidence_ratio"])
            .unwrap_or(gates.max_low_confidence_ratio),
        regression_gate: lookup(root, &["quality_gates", "regression_gate"])
            .and_then(flag)
            .unwrap_or(gates.regression_gate),
        metric_score_minimums: lookup(root, &["quality_gates", "metric_score_minimums"])
            .and_then(Node::as_map)
            .unwrap_or_default()
            .iter()
            .filter_map(|(key, value)| Some((super::parse_metric(&key.name)?, value.as_f64()?)))
            .collect(),
    };
    RegtraceConfig {
        golden_sets: golden_set_entries(root),
        default_threshold: number(&["metrics", "default_threshold"]).unwrap_or(0.7),
        quality_gates,
    }
}

fn golden_set_entries(root: &Node) -> Vec<GoldenSetEntry> {
    root.get("golden_sets")
        .and_then(Node::as_seq)
        .unwrap_or_default()
        .iter()
        .filter_map(|entry| {
            let path = entry.get("path")?;
            Some(GoldenSetEntry {
                path: PathBuf::from(path.as_str()?),
                alias: entry.get("alias").and_then(Node::as_str).map(str::to_owned),
                enabled: entry.get("enabled").and_then(flag).unwrap_or(true),
                weight: entry.get("weight").and_then(Node::as_f64).unwrap_or(1.0),
                line: path.line,
                column: path.column,
            })
        })
        .collect()
}

/// The rules Regtrace checks after its schema.
fn check_cross_field(root: &Node, diags: &mut Diagnostics) {
    if let Some(sets) = root.get("golden_sets").filter(|sets| {
        sets.as_seq().is_some_and(|entries| {
            !entries.is_empty()
                && entries
                    .iter()
                    .all(|entry| entry.get("enabled").and_then(flag) == Some(false))
        })
    }) {
        diags
            .at(sets)
            .error(Code::G111, "no golden set is enabled")
            .field("golden_sets")
            .hint("set `enabled: true` on at least one entry");
    }
    if let Some(regression) = lookup(root, &["metrics", "regression"]) {
        let pinned = regression.get("baseline_strategy").and_then(Node::as_str) == Some("pinned");
        let run_id = regression.get("pinned_run_id").and_then(Node::as_str);
        if pinned && run_id.is_none_or(str::is_empty) {
            diags
                .at(regression)
                .error(
                    Code::G102,
                    "`pinned_run_id` is required when `baseline_strategy` is `pinned`",
                )
                .field("metrics.regression.pinned_run_id");
        }
    }
    if let Some(factuality) = lookup(root, &["metrics", "factuality"]) {
        // Regtrace's default mode is `strict`.
        let mode = factuality.get("mode").and_then(Node::as_str);
        let strict = mode.is_none_or(|mode| mode == "strict");
        let rag_only = factuality.get("rag_faithfulness_only").and_then(flag) == Some(true);
        if strict && rag_only {
            diags
                .at(factuality)
                .error(
                    Code::G111,
                    "`mode: strict` and `rag_faithfulness_only: true` cannot be combined",
                )
                .field("metrics.factuality")
                .hint("use `mode: lenient`, or set `rag_faithfulness_only: false`");
        }
    }
}
