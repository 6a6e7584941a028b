//! The HTML report: one self-contained page to look at a run in a browser or keep as a CI
//! artifact (`run --html FILE`, `report REPORT --html FILE`).
//!
//! The top of the page is written here, from the typed results: the verdict, the aggregates,
//! the gate's evidence (each threshold's metric before and now against its limit, the cases
//! that flipped, the ones not run) and two inline SVG charts (latency distribution, rates
//! against the baseline). The cases below are drawn by the page's own script from the report,
//! embedded as JSON, because they are filtered and sorted in the browser; beside it, what the
//! summary says of each case (whether a failure blocks), which the script shows as it is.
//!
//! Agent text is hostile, so the page can neither run it nor load anything:
//! - Everything the Rust side writes goes through [`escape::text`]; the report goes in as JSON
//!   inside `<script type="application/json">` ([`escape::script_json`]); the script builds
//!   elements and sets `textContent`, never markup.
//! - A Content-Security-Policy allows nothing (`default-src 'none'`) but the page's own style
//!   and script, by their SHA-256 hashes, and `data:` images: an injected tag could neither
//!   run nor fetch.
//!
//! The static CSS and JavaScript live next to this file (`html/page.css`, `html/page.js`).

mod charts;
pub(crate) mod escape;
mod summary;

use std::io::{self, Write};
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ring::digest::{SHA256, digest};

use crate::report::Summary;

const CSS: &str = include_str!("html/page.css");
const JS: &str = include_str!("html/page.js");

/// The whole page. The same report always makes the same page (no time, no random nonce).
pub fn render(summary: &Summary) -> serde_json::Result<String> {
    let report = summary.report;
    let json = crate::results::json::to_string(report)?;
    let mut page = String::with_capacity(json.len() + CSS.len() + JS.len() + 16_384);
    page.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    page.push_str(&format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n",
        content_security_policy()
    ));
    page.push_str(concat!(
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
        "<meta name=\"referrer\" content=\"no-referrer\">\n",
        // No favicon request: the CSP would refuse it, and say so in the console.
        "<link rel=\"icon\" href=\"data:,\">\n",
    ));
    page.push_str(&format!(
        "<title>goldgate: {}</title>\n",
        escape::text(&summary.headline)
    ));
    page.push_str(&format!("<style>{CSS}</style>\n</head>\n<body>\n"));
    summary::write(&mut page, summary);
    page.push_str(&charts::section(report));
    page.push_str(CASES);
    page.push_str(&format!(
        "<script type=\"application/json\" id=\"goldgate-data\">{}</script>\n",
        escape::script_json(&json)
    ));
    page.push_str(&format!(
        "<script type=\"application/json\" id=\"goldgate-notes\">{}</script>\n",
        escape::script_json(&case_notes(summary)?)
    ));
    page.push_str(&format!("<script>{JS}</script>\n</body>\n</html>\n"));
    Ok(page)
}

/// What the summary says of each case beside its status ([`Summary::case_notes`]), in the
/// report's order: the script shows them in the case's row, so that the page, like every
/// output, says which failures do not block without working it out again.
fn case_notes(summary: &Summary) -> serde_json::Result<String> {
    let notes: Vec<Vec<String>> = (summary.report.cases.iter())
        .map(|case| summary.case_notes(case))
        .collect();
    serde_json::to_string(&notes)
}

/// Writes the page to `path` atomically (see [`crate::atomic`]).
pub fn write_file(path: &Path, summary: &Summary) -> io::Result<()> {
    let page = render(summary).map_err(io::Error::other)?;
    crate::atomic::write(path, |out: &mut dyn Write| out.write_all(page.as_bytes()))
}

/// Nothing may load or run but the page's own style and script.
fn content_security_policy() -> String {
    format!(
        "default-src 'none'; script-src '{}'; style-src '{}'; img-src data:; base-uri 'none'; form-action 'none'",
        hash_source(JS),
        hash_source(CSS)
    )
}

/// A CSP hash source: `sha256-BASE64` of the element's exact text.
fn hash_source(text: &str) -> String {
    format!("sha256-{}", BASE64.encode(digest(&SHA256, text.as_bytes())))
}

/// The case browser's frame; the script fills it. Without script the page says so.
const CASES: &str = r#"<section id="cases">
<h2>Cases</h2>
<div class="filters">
<div class="status-filter" role="group" aria-label="Status">
<button type="button" data-status="" aria-pressed="true">All</button>
<button type="button" data-status="failed" aria-pressed="false">Failed</button>
<button type="button" data-status="error" aria-pressed="false">Error</button>
<button type="button" data-status="passed" aria-pressed="false">Passed</button>
<button type="button" data-status="skipped" aria-pressed="false">Skipped</button>
<button type="button" data-status="flaky" aria-pressed="false">Flaky</button>
</div>
<label>Tag <select id="tag-filter"><option value="">any</option></select></label>
<label>File <select id="file-filter"><option value="">any</option></select></label>
<label>Search <input id="search" type="search" placeholder="id, name, input, reply, expected…" autocomplete="off"></label>
<span id="shown" aria-live="polite"></span>
</div>
<table id="case-table">
<thead><tr>
<th data-sort="status" aria-sort="ascending">Status</th>
<th data-sort="id">Case</th>
<th data-sort="file">File</th>
<th>Tags</th>
<th data-sort="score" class="num">Score</th>
<th data-sort="turns" class="num">Turns</th>
<th data-sort="duration" class="num">Duration</th>
<th data-sort="runs">Runs</th>
</tr></thead>
<tbody></tbody>
</table>
<noscript><p>The case browser needs JavaScript; the JSON report holds the same data.</p></noscript>
</section>
"#;

#[cfg(test)]
mod tests {
    use super::{CSS, JS, content_security_policy, hash_source};

    #[test]
    fn the_static_parts_cannot_end_their_elements() {
        // They are inlined verbatim: `</` inside would close the <style> or <script> early.
        assert!(!CSS.contains("</"));
        assert!(!JS.contains("</"));
        assert!(!JS.contains("innerHTML") && !JS.contains("outerHTML"));
        assert!(!JS.contains("insertAdjacentHTML") && !JS.contains("document.write"));
    }

    #[test]
    fn the_policy_allows_only_the_page_itself() {
        let csp = content_security_policy();
        assert!(csp.starts_with("default-src 'none'; "), "{csp}");
        assert!(csp.contains(&format!("script-src '{}'", hash_source(JS))));
        assert!(!csp.contains("unsafe"), "{csp}");
        // echo -n abc | sha256sum, in base64.
        assert_eq!(
            hash_source("abc"),
            "sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="
        );
    }
}
