//! Floors: bars the whole run must clear whatever the baseline says (Regtrace's
//! `quality_gates`, goldgate.yaml's `floors:`). A format or the config states them; the run
//! checks them against its aggregates ([`crate::results::FloorResult`]).

use serde::{Deserialize, Serialize};

use super::Location;

/// What a floor bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum FloorKind {
    /// The share of judged cases that passed, at least `limit` (in `0..=1`).
    MinPassRate,
    /// The weighted suite score, at least `limit` (in `0..=1`).
    MinSuiteScore,
    /// Failed cases (quarantined ones aside), at most `limit`.
    MaxFailedCases,
}

/// One floor, where it is written.
#[derive(Clone, Debug, PartialEq)]
pub struct Floor {
    pub kind: FloorKind,
    pub limit: f64,
    pub location: Location,
}
