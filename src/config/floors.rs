//! `floors:` in goldgate.yaml: bars the whole run must clear whatever the baseline says, for
//! every format (Regtrace configs state theirs in `quality_gates`).

use std::path::Path;
use std::sync::Arc;

use crate::diagnostic::{Code, Diagnostics};
use crate::model::{Floor, FloorKind, Location};
use crate::yaml::{Fields, Node};

/// `floors: { min_pass_rate, min_suite_score, max_failed_cases }`.
pub fn parse(node: &Node, path: &Path, diags: &mut Diagnostics) -> Vec<Floor> {
    let Some(mut fields) = Fields::of(node, "floors", diags) else {
        return Vec::new();
    };
    let file: Arc<Path> = Arc::from(path);
    let mut floors = Vec::new();
    for (key, kind) in [
        ("min_pass_rate", FloorKind::MinPassRate),
        ("min_suite_score", FloorKind::MinSuiteScore),
        ("max_failed_cases", FloorKind::MaxFailedCases),
    ] {
        let Some(value) = fields.take(key) else {
            continue;
        };
        let number = value.as_f64();
        let valid = match (kind, number) {
            (FloorKind::MaxFailedCases, Some(n)) => n >= 0.0 && n.fract() == 0.0,
            (_, Some(n)) => (0.0..=1.0).contains(&n),
            (_, None) => false,
        };
        match number.filter(|_| valid) {
            Some(limit) => floors.push(Floor {
                kind,
                limit,
                location: Location::new(&file, value.line, value.column),
            }),
            None => {
                let expected = if kind == FloorKind::MaxFailedCases {
                    "a whole number, 0 or more"
                } else {
                    "a share between 0 and 1, e.g. 0.9"
                };
                diags
                    .at(value)
                    .error(Code::G111, format!("`floors.{key}` must be {expected}"))
                    .field(format!("floors.{key}"));
            }
        }
    }
    fields.finish(diags);
    floors
}
