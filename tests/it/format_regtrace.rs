//! Regtrace golden sets and `regtrace.config.yaml` load into the neutral model: one case per
//! test case, one turn, one metric check per metric, weights and thresholds from the config.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use goldgate::diagnostic::{Code, Diagnostics};
use goldgate::formats::memory::Tally;
use goldgate::formats::regtrace::{self, SetDefaults};
use goldgate::formats::{LoadedFile, load_golden};
use goldgate::model::{Case, CheckKind, ContextDocument, FloorKind, Format, Input, Metric};
use goldgate::yaml;

/// The `N` cases of the set at `path`, which loads cleanly.
#[track_caller]
fn load_cases<const N: usize>(path: &str) -> [Case; N] {
    let cases: Vec<Case> = load(path)
        .cases
        .into_iter()
        .map(std::sync::Arc::unwrap_or_clone)
        .collect();
    cases.try_into().unwrap_or_else(|cases: Vec<Case>| {
        panic!("{path}: {N} cases expected, {} found", cases.len())
    })
}

fn load(path: &str) -> LoadedFile {
    let text = fs::read_to_string(path).unwrap();
    let file = load_golden(&Arc::from(Path::new(path)), &text, Format::RegtraceSet);
    assert!(
        file.diagnostics.is_empty(),
        "{path}: {:#?}",
        file.diagnostics
    );
    file
}

/// `(metric, threshold, expected_output)` of every check, in order.
fn metrics(case: &Case) -> Vec<(Metric, f64, &str)> {
    case.checks
        .iter()
        .map(|check| match &check.kind {
            CheckKind::Metric {
                metric,
                threshold,
                expected_output,
            } => (*metric, *threshold, expected_output.as_str()),
            other => panic!("{}: unexpected check {other:?}", case.id),
        })
        .collect()
}

fn input(case: &Case) -> &str {
    assert_eq!(case.turns.len(), 1, "{}", case.id);
    let turn = &case.turns[0];
    assert_eq!(turn.index, 1);
    assert!(turn.expectations.is_empty() && turn.tool_mocks.is_empty());
    match turn.inputs.as_slice() {
        [Input::Text(text)] => text,
        other => panic!("{}: unexpected inputs {other:?}", case.id),
    }
}

#[test]
fn single_turn_set_maps_each_test_case_to_one_case() {
    let [refund, greeting] = &load_cases("fixtures/regtrace/golden-sets/single-turn.yaml");

    assert_eq!(
        (refund.id.as_str(), refund.name.as_str()),
        ("qa-001", "qa-001")
    );
    assert_eq!(
        refund.description.as_deref(),
        Some("States the refund window")
    );
    assert_eq!(refund.format, Format::RegtraceSet);
    assert_eq!(refund.location.line, 12);
    assert_eq!(refund.turns[0].location.line, 14);
    assert_eq!(refund.tags, ["support", "billing", "refund"]);
    assert!(refund.session_parameters.is_empty() && refund.context.is_empty());
    assert_eq!(
        refund.system_prompt.as_deref(),
        Some("You answer billing questions for Northwind. Be brief.")
    );
    assert_eq!(input(refund), "How long do I have to ask for a refund?");
    assert_eq!(
        refund.turns[0].recorded_reply.as_deref(),
        Some("Refunds can be requested up to 14 days after you were charged.")
    );
    let expected = "You can ask for a refund within 14 days of the charge.";
    assert_eq!(
        metrics(refund),
        [
            (Metric::Factuality, 0.9, expected),
            (Metric::Format, 0.7, expected),
            (Metric::Tone, 0.7, expected),
        ]
    );
    assert_eq!(refund.checks[0].location.line, 18);
    assert_eq!(refund.weight, 1.5);

    // Placeholders stay literal; `regression: null` falls back to the default threshold.
    assert_eq!(greeting.id, "qa-002");
    assert_eq!(greeting.tags, ["support", "billing", "template"]);
    assert_eq!(greeting.system_prompt, None);
    assert_eq!(greeting.turns[0].recorded_reply, None);
    let placeholder = "Hi {{name}}, your plan renews on ${renewal_date}.";
    assert_eq!(
        metrics(greeting),
        [
            (Metric::Format, 0.5, placeholder),
            (Metric::Regression, 0.7, placeholder),
        ]
    );
    assert_eq!(greeting.weight, 1.0);
}

#[test]
fn rag_set_keeps_the_context_documents() {
    let [quote, combined] = &load_cases("fixtures/regtrace/golden-sets/rag.yaml");

    assert_eq!(quote.id, "rag-001");
    assert_eq!(input(quote), "What is the API rate limit?");
    assert_eq!(
        quote.context,
        [ContextDocument {
            source: "docs/api-reference.md".into(),
            content: "The API rate limit is 500 requests per minute.".into(),
            retrieval_score: Some(0.94),
        }]
    );
    assert_eq!(
        metrics(quote),
        [
            (Metric::Factuality, 0.7, "500 requests per minute"),
            (Metric::Format, 0.7, "500 requests per minute"),
        ]
    );
    assert_eq!(quote.weight, 2.0);
    assert_eq!(quote.tags, ["rag", "handbook", "api"]);

    assert_eq!(combined.id, "rag-002");
    let sources: Vec<(&str, Option<f64>)> = combined
        .context
        .iter()
        .map(|doc| (doc.source.as_str(), doc.retrieval_score))
        .collect();
    assert_eq!(
        sources,
        [
            ("handbook/remote.md#policy", None),
            ("https://intranet.example.org/onboarding", None),
        ]
    );
    assert_eq!(
        combined.system_prompt.as_deref(),
        Some("Answer only from the handbook excerpts.")
    );
    assert_eq!(combined.weight, 1.0, "weight defaults to 1");
}

#[test]
fn recorded_and_null_outputs() {
    let [recorded, pending] = &load_cases("fixtures/regtrace/recorded-outputs.yaml");
    assert_eq!(
        recorded.turns[0].recorded_reply.as_deref(),
        Some("{\"status\": \"shipped\", \"eta_days\": 2}\n")
    );
    assert_eq!(
        metrics(recorded),
        [(
            Metric::Format,
            0.7,
            "{\"status\": \"shipped\", \"eta_days\": 2}"
        )]
    );
    assert!(recorded.context.is_empty(), "`context: null` is no context");
    assert_eq!(recorded.weight, 0.5);
    assert_eq!(recorded.tags, ["json"]);

    assert_eq!(pending.turns[0].recorded_reply, None);
    assert!(pending.tags.is_empty());
    assert_eq!(pending.weight, 3.0);
}

#[test]
fn set_defaults_set_the_threshold_and_multiply_the_weight() {
    let text = fs::read_to_string("fixtures/regtrace/golden-sets/single-turn.yaml").unwrap();
    let root = yaml::parse(&text).unwrap();
    let mut diags = Diagnostics::new(&Arc::from(Path::new("set.yaml")));
    let defaults = SetDefaults {
        default_threshold: 0.5,
        weight: 4.0,
    };
    let cases = regtrace::load_set(&root, &defaults, &mut diags);
    assert!(diags.items.is_empty(), "{:#?}", diags.items);
    let thresholds: Vec<f64> = metrics(&cases[0]).iter().map(|m| m.1).collect();
    assert_eq!(thresholds, [0.9, 0.5, 0.5], "the case's override wins");
    assert_eq!(cases[0].weight, 6.0);
    assert_eq!(cases[1].weight, 4.0);
}

#[test]
fn config_lists_sets_defaults_and_quality_gates() {
    let text = fs::read_to_string("fixtures/regtrace/regtrace.config.yaml").unwrap();
    let root = yaml::parse(&text).unwrap();
    let mut diags = Diagnostics::new(&Arc::from(Path::new("regtrace.config.yaml")));
    let config = regtrace::load_config(&root, &mut diags);
    assert!(diags.items.is_empty(), "{:#?}", diags.items);

    let entries: Vec<(&str, Option<&str>, bool, f64, u32)> = config
        .golden_sets
        .iter()
        .map(|e| {
            let path = e.path.to_str().unwrap();
            (path, e.alias.as_deref(), e.enabled, e.weight, e.line)
        })
        .collect();
    assert_eq!(
        entries,
        [
            (
                "golden-sets/single-turn.yaml",
                Some("support"),
                true,
                2.0,
                8
            ),
            ("golden-sets/rag.yaml", None, true, 1.0, 12),
            ("golden-sets/retired.yaml", None, false, 1.0, 14),
        ]
    );
    assert_eq!(config.default_threshold, 0.8);
    let gates = &config.quality_gates;
    assert_eq!(gates.suite_score_minimum, 0.75);
    assert_eq!(gates.max_failed_test_cases, 2);
    assert_eq!(gates.max_low_confidence_ratio, 0.2);
    assert!(!gates.regression_gate);
    assert_eq!(
        gates.metric_score_minimums,
        [(Metric::Factuality, 0.85), (Metric::Tone, 0.6)]
    );
}

#[test]
fn config_file_loads_its_enabled_sets_with_their_defaults() {
    let path: Arc<Path> = Arc::from(Path::new("fixtures/regtrace/regtrace.config.yaml"));
    let root = yaml::parse(&fs::read_to_string(&path).unwrap()).unwrap();
    let files = regtrace::load_config_file(&path, &root, &mut Tally::default()).unwrap();

    let summary: Vec<(&Path, usize, usize)> = files
        .iter()
        .map(|f| (&*f.path, f.cases.len(), f.diagnostics.len()))
        .collect();
    // The quality gates goldgate does not apply are each said to be ignored.
    assert_eq!(
        summary,
        [
            (Path::new("fixtures/regtrace/regtrace.config.yaml"), 0, 3),
            (
                Path::new("fixtures/regtrace/golden-sets/single-turn.yaml"),
                2,
                0
            ),
            (Path::new("fixtures/regtrace/golden-sets/rag.yaml"), 2, 0),
        ]
    );
    assert!(files.iter().all(|f| f.format == Some(Format::RegtraceSet)));

    let refund = &files[1].cases[0];
    assert_eq!(refund.weight, 3.0, "1.5 times the entry's weight 2");
    let thresholds: Vec<f64> = metrics(refund).iter().map(|m| m.1).collect();
    assert_eq!(thresholds, [0.9, 0.8, 0.8], "metrics.default_threshold");
    assert_eq!(files[2].cases[0].weight, 2.0);
}

/// Every section Regtrace requires, each as small as it may be.
const MINIMAL_CONFIG: &str = "\
project: {name: demo}
golden_sets:
  - path: sets/missing.yaml
metrics:
  factuality: {}
  format: {sub_checks: {}}
  tone: {sub_dimensions: {}}
  regression: {}
judge:
  primary: {provider: gemini, model: gemini-2.5-flash}
run: {}
quality_gates: {}
output: {}
";

#[test]
fn minimal_config_takes_regtraces_defaults() {
    let root = yaml::parse(MINIMAL_CONFIG).unwrap();
    let mut diags = Diagnostics::new(&Arc::from(Path::new("regtrace.config.yaml")));
    let config = regtrace::load_config(&root, &mut diags);
    assert!(diags.items.is_empty(), "{:#?}", diags.items);
    assert_eq!(config.default_threshold, 0.7);
    assert_eq!(config.quality_gates, regtrace::QualityGates::default());
    assert_eq!(config.quality_gates.suite_score_minimum, 0.7);
    assert_eq!(config.quality_gates.max_failed_test_cases, 0);
    let entry = &config.golden_sets[0];
    assert!(entry.enabled);
    assert_eq!((entry.weight, entry.alias.as_deref()), (1.0, None));
    let defaults = config.set_defaults(entry);
    assert_eq!((defaults.default_threshold, defaults.weight), (0.7, 1.0));
}

#[test]
fn missing_set_file_is_reported_at_its_path_entry() {
    let path: Arc<Path> = Arc::from(Path::new("fixtures/regtrace/nowhere/regtrace.config.yaml"));
    let root = yaml::parse(MINIMAL_CONFIG).unwrap();
    let files = regtrace::load_config_file(&path, &root, &mut Tally::default()).unwrap();
    assert_eq!(
        files.len(),
        1,
        "the unreadable set yields no file of its own"
    );
    let [diagnostic] = files[0].diagnostics.as_slice() else {
        panic!("{:#?}", files[0].diagnostics);
    };
    assert_eq!(diagnostic.code, Code::G112);
    assert_eq!(diagnostic.location.line, 3);
    assert_eq!(diagnostic.field.as_deref(), Some("golden_sets[0].path"));
    assert!(
        diagnostic
            .message
            .contains("fixtures/regtrace/nowhere/sets/missing.yaml"),
        "{}",
        diagnostic.message
    );
}

#[test]
fn quality_gates_become_floors_of_the_run_and_the_rest_are_said_to_be_ignored() {
    let path: Arc<Path> = Arc::from(Path::new("fixtures/regtrace/regtrace.config.yaml"));
    let root = yaml::parse(&fs::read_to_string(&path).unwrap()).unwrap();
    let files = regtrace::load_config_file(&path, &root, &mut Tally::default()).unwrap();
    let floors: Vec<(FloorKind, f64, u32)> = files[0]
        .floors
        .iter()
        .map(|f| (f.kind, f.limit, f.location.line))
        .collect();
    assert_eq!(
        floors,
        [
            (FloorKind::MinSuiteScore, 0.75, 87),
            (FloorKind::MaxFailedCases, 2.0, 91)
        ]
    );
    let ignored: Vec<String> = files[0]
        .diagnostics
        .iter()
        .map(|d| format!("{}: {}", d.location.line, d.message))
        .collect();
    assert_eq!(
        ignored,
        [
            "89: `quality_gates.metric_score_minimums` is not applied by goldgate",
            "92: `quality_gates.max_low_confidence_ratio` is not applied by goldgate",
            "93: `quality_gates.regression_gate` is not applied by goldgate",
        ]
    );
}
