//! gecx's `eval.config.json`, read once for everything goldgate takes from it: its
//! `regressionThresholds` (over goldgate.yaml's `thresholds:`) and each provider's judge model
//! (`providers.<name>.model`). Its other keys are gecx's and left alone.

use std::path::Path;
use std::sync::Arc;

use super::ConfigError;
use crate::diagnostic::{Code, Diagnostics, Position};
use crate::model::Provider;
use crate::results::Threshold;
use crate::yaml;

/// Where gecx keeps it: the directory goldgate runs in.
pub const FILE: &str = "eval.config.json";

/// What goldgate reads of an `eval.config.json`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EvalConfig {
    pub thresholds: Vec<(Threshold, f64)>,
    pub judge_models: Vec<(Provider, String)>,
}

impl EvalConfig {
    /// `./eval.config.json`, when there is one.
    pub fn in_current_dir() -> Result<Option<Self>, ConfigError> {
        let path = Path::new(FILE);
        if !path.is_file() {
            return Ok(None);
        }
        Self::read(path).map(Some)
    }

    pub fn read(path: &Path) -> Result<Self, ConfigError> {
        let file: Arc<Path> = Arc::from(path);
        let mut diags = Diagnostics::new(&file);
        let mut read = Self::default();
        match std::fs::read_to_string(path) {
            Ok(text) => match yaml::parse(&text) {
                Ok(root) => {
                    if let Some(section) = root.get(super::thresholds::SECTION) {
                        read.thresholds = super::thresholds::parse_limits(
                            section,
                            super::thresholds::SECTION,
                            &[],
                            &mut diags,
                        );
                    }
                    if let Some(providers) = root.get("providers") {
                        read.judge_models = super::llm::provider_models(providers, &mut diags);
                    }
                }
                Err(err) => yaml::report_parse_error(&err, &mut diags),
            },
            Err(err) => {
                diags
                    .at(Position::START)
                    .error(Code::G112, format!("cannot read {}: {err}", path.display()));
            }
        }
        if diags.has_errors() {
            return Err(ConfigError {
                diagnostics: diags.items,
            });
        }
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` read as the eval.config.json of a fresh directory.
    fn read(text: &str) -> Result<EvalConfig, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(&path, text).unwrap();
        EvalConfig::read(&path)
    }

    #[test]
    fn reads_thresholds_and_provider_models_and_ignores_gecx_keys() {
        // gecx's file, tab-indented as editors write JSON, with keys that are gecx's own.
        let gecx = read(
            "{\n\t\"judges\": {\"default\": \"anthropic\"},\n\t\"providers\": { \"anthropic\": { \"model\": \"claude-haiku-4-5\" }, \"openai\": { \"apiKeyEnv\": \"X\" } },\n\t\"regressionThresholds\": { \"deflectionDropPp\": 7 }\n}\n",
        );
        assert_eq!(
            gecx.unwrap(),
            EvalConfig {
                thresholds: vec![(Threshold::DeflectionDropPp, 7.0)],
                judge_models: vec![(Provider::Anthropic, "claude-haiku-4-5".to_owned())],
            }
        );
        assert_eq!(read("{\"judges\": {}}").unwrap(), EvalConfig::default());
    }

    #[test]
    fn errors_name_the_file_line_and_key_with_a_suggestion() {
        let text = read(
            "{\n  \"providers\": {\n    \"anthropics\": { \"model\": \"m\" }\n  },\n  \"regressionThresholds\": {\n    \"passRateDropPP\": 1,\n    \"deflectionDropPp\": \"five\"\n  }\n}\n",
        )
        .unwrap_err()
        .to_string();
        for expected in [
            "eval.config.json:3: error [G107] providers.anthropics",
            "did you mean `anthropic`?",
            ":6: error [G100] regressionThresholds.passRateDropPP: unknown key",
            "did you mean `passRateDropPp`?",
            ":7: error [G101] regressionThresholds.deflectionDropPp: expected a non-negative number, found a string",
        ] {
            assert!(text.contains(expected), "{expected:?} in {text}");
        }
    }
}
