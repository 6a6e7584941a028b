//! The two charts, as inline SVG drawn from numbers only (no agent text reaches them): how
//! the turns' latencies spread, with the p50, the p95 and the baseline's p95 marked; and the
//! run's rates next to the baseline's.
//!
//! No `style` attributes: the page's policy allows only its hashed stylesheet, so shapes get
//! classes (and SVG presentation attributes) instead.

use std::fmt::Write as _;

use crate::report::rate;
use crate::results::{Comparison, Report, Threshold, millis};

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 240.0;
const LEFT: f64 = 44.0;
const RIGHT: f64 = 16.0;
/// Room above the plot for the p50, p95 and baseline labels, one row each.
const TOP: f64 = 44.0;
const BOTTOM: f64 = 34.0;
/// The rates chart's room above its bars, for the legend.
const RATES_TOP: f64 = 22.0;
/// About this many bars, at a round width.
const BINS: u64 = 24;

/// The charts' section.
pub fn section(report: &Report) -> String {
    let mut out = String::from("<section id=\"charts\"><h2>Charts</h2><div class=\"charts\">\n");
    out.push_str(&latency(report));
    out.push_str(&rates(report));
    out.push_str("</div></section>\n");
    out
}

/// Every played turn's latency, in whole milliseconds.
fn latencies(report: &Report) -> Vec<u64> {
    report
        .cases
        .iter()
        .flat_map(|c| &c.turns)
        .filter_map(|t| t.latency)
        .map(|d| millis::of(&d))
        .collect()
}

/// The smallest of 1, 2, 5, 10, 20, 50... at least `raw`.
fn round_step(raw: u64) -> u64 {
    let mut magnitude = 1u64;
    loop {
        for factor in [1, 2, 5] {
            let step = magnitude.saturating_mul(factor);
            if step >= raw || step == u64::MAX {
                return step.max(1);
            }
        }
        magnitude = magnitude.saturating_mul(10);
    }
}

/// `850 ms`, `1.2 s`, `12 s`: short, for an axis.
fn short(ms: u64) -> String {
    if ms < 1_000 {
        format!("{ms} ms")
    } else if ms < 10_000 {
        format!("{:.1} s", ms as f64 / 1_000.0)
    } else {
        format!("{} s", ms / 1_000)
    }
}

fn latency(report: &Report) -> String {
    let sample = latencies(report);
    let mut out = String::from(
        "<figure class=\"chart\" id=\"latency-chart\"><figcaption>Latency per turn</figcaption>",
    );
    let Some(&max) = sample.iter().max() else {
        out.push_str("<p>No turn was played: no latency to show.</p></figure>\n");
        return out;
    };
    let baseline_p95 = report
        .gate
        .as_ref()
        .and_then(|c| metric(c, Threshold::P95LatencyIncreasePct))
        .map(|ms| ms.round().max(0.0) as u64);
    let top = max.max(baseline_p95.unwrap_or(0)).saturating_add(1);
    let histogram = Histogram::of(&sample, top);
    let _ = write!(
        out,
        "<svg viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" aria-label=\"Histogram of {} turn latencies\"><title>Latency of {} turns, in bins of {}</title>",
        sample.len(),
        sample.len(),
        short(histogram.step)
    );
    write_axes(&mut out, histogram.tallest);
    write_bars(&mut out, &histogram);
    write_ticks(&mut out, &histogram);
    write_marks(&mut out, &histogram, &marks(report, baseline_p95));
    out.push_str("</svg></figure>\n");
    out
}

/// The latency plot's size inside the chart, and the height of its bottom edge.
const PLOT_W: f64 = WIDTH - LEFT - RIGHT;
const PLOT_H: f64 = HEIGHT - TOP - BOTTOM;
const PLOT_BOTTOM: f64 = TOP + PLOT_H;

/// Turn latencies counted into bins of one round width.
struct Histogram {
    /// Each bin's width, in ms.
    step: u64,
    counts: Vec<usize>,
    /// The largest count, at least 1: the plot's full height.
    tallest: usize,
}

impl Histogram {
    /// About [`BINS`] bins from 0 to at least `top` ms.
    fn of(sample: &[u64], top: u64) -> Self {
        let step = round_step(top.div_ceil(BINS));
        let bins = usize::try_from(top.div_ceil(step)).unwrap_or(1).max(1);
        let mut counts = vec![0usize; bins];
        for ms in sample {
            let bin = usize::try_from(ms / step).unwrap_or(bins - 1).min(bins - 1);
            counts[bin] += 1;
        }
        let tallest = counts.iter().copied().max().unwrap_or(1).max(1);
        Self {
            step,
            counts,
            tallest,
        }
    }

    fn bar_width(&self) -> f64 {
        PLOT_W / self.counts.len() as f64
    }

    /// Where `ms` falls on the x axis.
    fn x_of(&self, ms: f64) -> f64 {
        LEFT + ms / (self.step as f64 * self.counts.len() as f64) * PLOT_W
    }
}

/// The two axes, and the count axis's top and zero.
fn write_axes(out: &mut String, tallest: usize) {
    let bottom = PLOT_BOTTOM;
    let _ = write!(
        out,
        "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{bottom}\" x2=\"{}\" y2=\"{bottom}\"/><line class=\"axis\" x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{bottom}\"/>",
        WIDTH - RIGHT
    );
    let _ = write!(
        out,
        "<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{tallest}</text><text class=\"tick\" x=\"{}\" y=\"{bottom}\" text-anchor=\"end\">0</text>",
        LEFT - 4.0,
        TOP + 4.0,
        LEFT - 4.0
    );
}

/// One bar a bin that holds any turn, with its range and count as a tooltip.
fn write_bars(out: &mut String, histogram: &Histogram) {
    let bar_w = histogram.bar_width();
    let step = histogram.step;
    for (i, &count) in histogram.counts.iter().enumerate() {
        if count == 0 {
            continue;
        }
        let h = PLOT_H * count as f64 / histogram.tallest as f64;
        let from = step * i as u64;
        let _ = write!(
            out,
            "<rect class=\"bar\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\"><title>{} to {}: {count} turn{}</title></rect>",
            LEFT + bar_w * i as f64 + 1.0,
            PLOT_BOTTOM - h,
            (bar_w - 2.0).max(1.0),
            short(from),
            short(from + step),
            if count == 1 { "" } else { "s" }
        );
    }
}

/// About six labels along the latency axis.
fn write_ticks(out: &mut String, histogram: &Histogram) {
    let bins = histogram.counts.len();
    let labels = bins.div_ceil(6).max(1);
    for i in (0..=bins).step_by(labels) {
        let _ = write!(
            out,
            "<text class=\"tick\" x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            LEFT + histogram.bar_width() * i as f64,
            PLOT_BOTTOM + 14.0,
            short(histogram.step * i as u64)
        );
    }
}

/// A vertical line on the latency axis: its label, where (ms) and its class.
type Mark = (&'static str, u64, &'static str);

/// The run's p50 and p95, and the baseline's p95 when the gate measured it.
fn marks(report: &Report, baseline_p95: Option<u64>) -> Vec<Mark> {
    let mut marks: Vec<Mark> = Vec::new();
    if let Some(p) = report.aggregates.latency {
        marks.push(("p50", millis::of(&p.p50), "mark"));
        marks.push(("p95", millis::of(&p.p95), "mark"));
    }
    if let Some(ms) = baseline_p95 {
        marks.push(("baseline p95", ms, "mark baseline"));
    }
    marks
}

fn write_marks(out: &mut String, histogram: &Histogram, marks: &[Mark]) {
    for (row, (name, ms, class)) in marks.iter().enumerate() {
        let x = histogram.x_of(*ms as f64 + 0.5);
        // Labels right of their line, or left of it in the right half, one row each.
        let (label_x, anchor) = if x > WIDTH / 2.0 {
            (x - 4.0, "end")
        } else {
            (x + 4.0, "start")
        };
        let _ = write!(
            out,
            "<line class=\"{class}\" x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{PLOT_BOTTOM}\"/><text class=\"label {class}\" x=\"{label_x:.1}\" y=\"{}\" text-anchor=\"{anchor}\">{name} {}</text>",
            14.0 + 12.0 * row as f64,
            11.0 + 12.0 * row as f64,
            short(*ms)
        );
    }
}

/// The baseline's value of the metric a threshold watches, when the gate measured it.
fn metric(comparison: &Comparison, threshold: Threshold) -> Option<f64> {
    comparison
        .metrics
        .iter()
        .find(|m| m.threshold == threshold)
        .and_then(|m| m.baseline)
}

/// One rate of the rates chart: its name, its value now, and, when a baseline is compared,
/// the baseline's value (`Some(None)`: compared but not measured there).
type RateRow = (&'static str, Option<f64>, Option<Option<f64>>);

/// The rates measured now or in the baseline.
fn rate_rows(report: &Report) -> Vec<RateRow> {
    let aggregates = &report.aggregates;
    // Only the gated rates have a baseline value: the others get no baseline bar.
    let baseline = |threshold: Threshold| report.gate.as_ref().map(|c| metric(c, threshold));
    let rows = [
        (
            "pass rate",
            aggregates.pass_rate,
            baseline(Threshold::PassRateDropPp),
        ),
        ("turn pass rate", aggregates.turn_pass_rate, None),
        (
            "deflection rate",
            aggregates.deflection_rate,
            baseline(Threshold::DeflectionDropPp),
        ),
        ("tool-call accuracy", aggregates.tool_call_accuracy, None),
        (
            "hallucination rate",
            aggregates.hallucination_rate,
            baseline(Threshold::HallucinationRateIncreasePp),
        ),
    ];
    rows.into_iter()
        .filter(|(_, now, before)| now.is_some() || before.is_some_and(|b| b.is_some()))
        .collect()
}

/// The rates chart's label column and bar length.
const RATE_LABEL_W: f64 = 130.0;
const RATE_PLOT_W: f64 = WIDTH - RATE_LABEL_W - 70.0;

fn rates(report: &Report) -> String {
    let rows = rate_rows(report);
    let compared = report.gate.is_some();
    let caption = if compared {
        "Rates: now against the baseline"
    } else {
        "Rates (no baseline to compare with)"
    };
    let mut out =
        format!("<figure class=\"chart\" id=\"rates-chart\"><figcaption>{caption}</figcaption>");
    if rows.is_empty() {
        out.push_str("<p>Nothing was judged: no rate to show.</p></figure>\n");
        return out;
    }
    let row_h = if compared { 36.0 } else { 22.0 };
    let height = RATES_TOP + row_h * rows.len() as f64 + 8.0;
    let _ = write!(
        out,
        "<svg viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"{caption}\"><title>{caption}</title>"
    );
    if compared {
        write_rates_legend(&mut out);
    }
    for (i, row) in rows.iter().enumerate() {
        write_rate_row(&mut out, row, RATES_TOP + row_h * i as f64);
    }
    out.push_str("</svg></figure>\n");
    out
}

/// The key to the two bar colours: now and the baseline.
fn write_rates_legend(out: &mut String) {
    let label_w = RATE_LABEL_W;
    let _ = write!(
        out,
        "<rect class=\"now\" x=\"{label_w}\" y=\"4\" width=\"10\" height=\"10\"/><text class=\"tick\" x=\"{}\" y=\"13\">now</text><rect class=\"base\" x=\"{}\" y=\"4\" width=\"10\" height=\"10\"/><text class=\"tick\" x=\"{}\" y=\"13\">baseline</text>",
        label_w + 14.0,
        label_w + 60.0,
        label_w + 74.0
    );
}

/// A rate's name, its bar now and, below it, the baseline's, starting at height `y`.
fn write_rate_row(out: &mut String, (name, now, before): &RateRow, y: f64) {
    let label_w = RATE_LABEL_W;
    let _ = write!(
        out,
        "<text class=\"label\" x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{name}</text>",
        label_w - 8.0,
        y + 13.0
    );
    let mut bars = vec![("now", *now, y)];
    if let Some(before) = before {
        bars.push(("base", *before, y + 15.0));
    }
    for (class, value, y) in bars {
        let w = value.map_or(0.0, |v| RATE_PLOT_W * v.clamp(0.0, 1.0));
        let shown = match value {
            Some(_) => rate(value),
            None => "not measured".to_owned(),
        };
        let _ = write!(
            out,
            "<rect class=\"{class}\" x=\"{label_w}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"13\"><title>{name} {}: {shown}</title></rect><text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\">{shown}</text>",
            if class == "now" {
                "now"
            } else {
                "in the baseline"
            },
            label_w + w + 4.0,
            y + 11.0
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{round_step, short};

    #[test]
    fn steps_are_round() {
        for (raw, step) in [(0, 1), (1, 1), (3, 5), (7, 10), (41, 50), (101, 200)] {
            assert_eq!(round_step(raw), step, "{raw}");
        }
        for (ms, shown) in [(850, "850 ms"), (1_250, "1.2 s"), (12_500, "12 s")] {
            assert_eq!(short(ms), shown, "{ms}");
        }
    }
}
