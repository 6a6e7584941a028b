//! The limits the gate applies, merged from every place a team may keep them.
//!
//! Later sources win, key by key: the seed's defaults, `goldgate.yaml`'s `thresholds:`, a gecx
//! `eval.config.json` (its `regressionThresholds`; the rest of that file is gecx's and is not
//! read), then `--regression-config FILE`, JSON or YAML, holding either
//! `regressionThresholds: {...}` or the threshold keys at its top level. Both files are read
//! with the spanned YAML walker (JSON is YAML), so a typo is an error with its line and a
//! "did you mean", like everywhere else.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::ConfigError;
use crate::diagnostic::{Code, Diagnostics, Position};
use crate::results::Threshold;
use crate::yaml::{self, Fields, Node};

/// The key that holds the thresholds in gecx's files.
pub(crate) const SECTION: &str = "regressionThresholds";

/// A limit for each threshold, in its unit (see [`Threshold::unit`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Thresholds {
    limits: BTreeMap<Threshold, f64>,
}

impl Default for Thresholds {
    /// The seed's defaults.
    fn default() -> Self {
        Self {
            limits: Threshold::ALL
                .into_iter()
                .filter_map(|t| Some((t, t.default_limit()?)))
                .collect(),
        }
    }
}

impl Thresholds {
    /// Merges, in this order: the defaults, `config` (goldgate.yaml's `thresholds:`, keyed
    /// by seed name), `eval_config` (an eval.config.json's, see [`super::eval_config`]) and
    /// `regression_config` (a file of thresholds).
    pub fn resolve(
        config: &[(Threshold, f64)],
        eval_config: &[(Threshold, f64)],
        regression_config: Option<&Path>,
    ) -> Result<Self, ConfigError> {
        let mut thresholds = Self::default();
        let file = match regression_config {
            Some(path) => read(path)?,
            None => Vec::new(),
        };
        for &(threshold, limit) in config.iter().chain(eval_config).chain(&file) {
            thresholds.set(threshold, limit);
        }
        Ok(thresholds)
    }

    /// The limit of `threshold`; `None` when it is off.
    pub fn limit(&self, threshold: Threshold) -> Option<f64> {
        self.limits.get(&threshold).copied()
    }

    /// The thresholds that are on, with their limits.
    pub fn active(&self) -> impl Iterator<Item = (Threshold, f64)> + '_ {
        self.limits.iter().map(|(&t, &limit)| (t, limit))
    }

    pub fn set(&mut self, threshold: Threshold, limit: f64) {
        self.limits.insert(threshold, limit);
    }
}

/// A file of thresholds: `regressionThresholds`, or the keys at the top level.
fn read(path: &Path) -> Result<Vec<(Threshold, f64)>, ConfigError> {
    let file: Arc<Path> = Arc::from(path);
    let mut diags = Diagnostics::new(&file);
    let limits = match std::fs::read_to_string(path) {
        Ok(text) => match yaml::parse(&text) {
            Ok(root) => limits_in(&root, &mut diags),
            Err(err) => {
                yaml::report_parse_error(&err, &mut diags);
                Vec::new()
            }
        },
        Err(err) => {
            diags
                .at(Position::START)
                .error(Code::G112, format!("cannot read thresholds: {err}"));
            Vec::new()
        }
    };
    if diags.has_errors() {
        return Err(ConfigError {
            diagnostics: diags.items,
        });
    }
    Ok(limits)
}

fn limits_in(root: &Node, diags: &mut Diagnostics) -> Vec<(Threshold, f64)> {
    if let Some(section) = root.get(SECTION) {
        return parse_limits(section, SECTION, &[], diags);
    }
    if root.is_null() {
        return Vec::new();
    }
    parse_limits(root, "", &[SECTION], diags)
}

/// Reads a mapping of threshold names to non-negative numbers; every other key is a G100
/// with a "did you mean" among the names (and `also_known`).
pub(crate) fn parse_limits(
    node: &Node,
    path: &str,
    also_known: &[&'static str],
    diags: &mut Diagnostics,
) -> Vec<(Threshold, f64)> {
    let Some(mut fields) = Fields::of(node, path, diags) else {
        return Vec::new();
    };
    let mut limits = Vec::new();
    for threshold in Threshold::ALL {
        let Some(value) = fields.take(threshold.name()) else {
            continue;
        };
        match value.as_f64() {
            Some(limit) if limit >= 0.0 => limits.push((threshold, limit)),
            _ => {
                value
                    .wrong_type("a non-negative number", diags)
                    .field(fields.path_of(threshold.name()));
            }
        }
    }
    for key in also_known {
        fields.know(key);
    }
    fields.finish(diags);
    limits
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::Thresholds;
    use crate::results::Threshold;

    /// Each threshold has the limit `want` pairs it with.
    #[track_caller]
    fn assert_limits(t: &Thresholds, want: &[(Threshold, Option<f64>)]) {
        for &(threshold, limit) in want {
            assert_eq!(t.limit(threshold), limit, "{threshold:?}");
        }
    }

    #[test]
    fn defaults_are_the_seeds() {
        assert_limits(
            &Thresholds::default(),
            &[
                (Threshold::PassRateDropPp, Some(0.0)),
                (Threshold::DeflectionDropPp, Some(5.0)),
                (Threshold::P95LatencyIncreasePct, Some(20.0)),
                (Threshold::TtftP95IncreasePct, Some(20.0)),
                (Threshold::HallucinationRateIncreasePp, Some(2.0)),
                // Cost and tokens are off unless set: not every agent reports them.
                (Threshold::CostIncreasePct, None),
                (Threshold::TokensIncreasePct, None),
            ],
        );
    }

    #[test]
    fn later_sources_win_key_by_key() {
        let dir = tempfile::tempdir().unwrap();
        let flag = dir.path().join("gate.yaml");
        fs::write(&flag, "p95LatencyIncreasePct: 50\n").unwrap();
        let config = [
            (Threshold::PassRateDropPp, 1.5),
            (Threshold::DeflectionDropPp, 6.0),
        ];
        let eval = [
            (Threshold::DeflectionDropPp, 7.0),
            (Threshold::P95LatencyIncreasePct, 30.0),
        ];

        let t = Thresholds::resolve(&config, &eval, Some(&flag)).unwrap();
        assert_limits(
            &t,
            &[
                (Threshold::PassRateDropPp, Some(1.5)),
                (Threshold::DeflectionDropPp, Some(7.0)),
                (Threshold::P95LatencyIncreasePct, Some(50.0)),
                (Threshold::TtftP95IncreasePct, Some(20.0)),
            ],
        );

        // The flag's file may also use gecx's section.
        fs::write(
            &flag,
            "{\"regressionThresholds\": {\"ttftP95IncreasePct\": 0}}",
        )
        .unwrap();
        let t = Thresholds::resolve(&[], &[], Some(&flag)).unwrap();
        assert_eq!(t.limit(Threshold::TtftP95IncreasePct), Some(0.0));
    }

    #[test]
    fn errors_name_the_file_line_and_key_with_a_suggestion() {
        let dir = tempfile::tempdir().unwrap();
        let flag = dir.path().join("gate.yaml");
        fs::write(&flag, "p95LatencyIncrease: 10\nttftP95IncreasePct: -1\n").unwrap();
        let text = Thresholds::resolve(&[], &[], Some(&flag))
            .unwrap_err()
            .to_string();
        for words in [
            ":1: error [G100] p95LatencyIncrease: unknown key",
            "did you mean `p95LatencyIncreasePct`?",
            ":2: error [G101] ttftP95IncreasePct",
        ] {
            assert!(text.contains(words), "{words:?} in {text}");
        }

        let missing = dir.path().join("absent.json");
        let text = Thresholds::resolve(&[], &[], Some(&missing))
            .unwrap_err()
            .to_string();
        assert!(text.contains("absent.json:1: error [G112]"), "{text}");
        fs::write(&flag, "{ not json").unwrap();
        let text = Thresholds::resolve(&[], &[], Some(&flag))
            .unwrap_err()
            .to_string();
        assert!(text.contains("gate.yaml:"), "{text}");
    }
}
