//! gecx scenario YAML.
use crate::diagnostic::Diagnostics;
use crate::model::Case;
use crate::yaml::Node;

pub fn load(_root: &Node, _diags: &mut Diagnostics) -> Vec<Case> {
    Vec::new()
}
