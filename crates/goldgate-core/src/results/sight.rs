//! What a gated run could have caught: the smallest change of each gated metric its runs could
//! show beyond noise, and what one golden must do to trip the gate. A green PR then says how
//! much it looked at ("would catch: a golden that never failed on main failing every run; the
//! pass rate down 6 pp; p95 latency up 40%"), so green is never read as more than it is.

use serde::{Deserialize, Serialize};

use super::{Threshold, Unit};

/// The smallest change a run could have caught.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Sight {
    /// Each gated metric, in the order the gate lists them.
    pub metrics: Vec<MetricSight>,
}

/// One metric's smallest worsening these runs could show beyond noise.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MetricSight {
    pub threshold: Threshold,
    /// In the threshold's unit (points, percent), never below the threshold's limit (a change
    /// within it cannot trip); `None` when no worsening could show in these runs.
    pub smallest: Option<f64>,
}

impl Sight {
    /// For people, one line, the same in every output: `a golden that never failed on main
    /// failing every run; pass rate down 6 pp; p95 latency up 40%; p95 TTFT: no rise could
    /// show`.
    pub fn describe(&self) -> String {
        let mut parts = vec!["a golden that never failed on main failing every run".to_owned()];
        for metric in &self.metrics {
            let name = metric.threshold.metric();
            parts.push(match metric.smallest {
                Some(amount) => {
                    let unit = metric.threshold.unit();
                    let direction = match (metric.threshold, unit) {
                        (Threshold::HallucinationRateIncreasePp, _) | (_, Unit::Percent) => "up",
                        _ => "down",
                    };
                    format!("{name} {direction} {}", unit.amount(amount))
                }
                None => format!("{name}: no change could show in these runs"),
            });
        }
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::{MetricSight, Sight};
    use crate::results::Threshold;

    #[test]
    fn one_line_names_each_metric_and_what_a_golden_must_do() {
        let sight = Sight {
            metrics: vec![
                MetricSight {
                    threshold: Threshold::PassRateDropPp,
                    smallest: Some(6.0),
                },
                MetricSight {
                    threshold: Threshold::P95LatencyIncreasePct,
                    smallest: Some(41.0),
                },
                MetricSight {
                    threshold: Threshold::HallucinationRateIncreasePp,
                    smallest: None,
                },
            ],
        };
        assert_eq!(
            sight.describe(),
            "a golden that never failed on main failing every run; pass rate down 6 pp; \
             p95 latency up 41%; hallucination rate: no change could show in these runs"
        );
    }
}
