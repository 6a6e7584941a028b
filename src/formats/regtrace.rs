//! Regtrace golden sets and regtrace.config.yaml.
use crate::diagnostic::Diagnostics;
use crate::model::Case;
use crate::yaml::Node;

/// Settings a `regtrace.config.yaml` gives the golden sets it lists.
#[derive(Clone, Debug)]
pub struct SetDefaults {
    /// `metrics.default_threshold`.
    pub default_threshold: f64,
    /// The `weight` of the set's entry in `golden_sets`.
    pub weight: f64,
}

impl Default for SetDefaults {
    fn default() -> Self {
        Self {
            default_threshold: 0.7,
            weight: 1.0,
        }
    }
}

pub fn load_set(_root: &Node, _defaults: &SetDefaults, _diags: &mut Diagnostics) -> Vec<Case> {
    Vec::new()
}
