//! `--html FILE` as users get it: `run` and `report` write one self-contained page; hostile
//! agent text (the Markdown tests' payloads, with `alert()` replaced by writes to
//! `window.pwned` so that a browser can tell) stays data; and the page works in a real
//! headless Chromium: no console error, filters and sorting change the rows, nothing from
//! the agent runs, and a screenshot is saved under the target directory.

use crate::common;
mod chromium;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use common::{Outcome, goldgate};

const GOOD: &str = "Your order ORD-12345 has shipped and should arrive by April 18th.";
const WRONG: &str = "Your order ORD-12346 was cancelled.";

/// Script, markup that loads, a forged end of the data block, a comment opener, the line
/// separators JSON allows and JavaScript once did not, and a bidi override.
const PWN: &str = "<script>window.pwned=1</script>\n<img src=x onerror=\"window.pwned=2\">\n</script><script>window.pwned=3</script>\n<!-- <svg onload=window.pwned=4>\n\u{2028}\u{2029} \u{202e}gnp.exe";

/// The hostile reply of tests/github_support: mentions, HTML, fences and 70 KB of two-byte text.
fn hostile_reply() -> String {
    let mut text = format!(
        "@octocat and @acme/security, see #1.\n<script>window.pwned='md'</script>\n<img src=x onerror=window.pwned=5>\n</details>\n```\n````\nescaped?\n{PWN}\n"
    );
    text.push_str(&"é".repeat(35_000));
    text
}

/// How often `sometimes` was asked: it is right on the 1st, 3rd, 5th... time only.
static SOMETIMES: AtomicUsize = AtomicUsize::new(0);

/// The agent: right for every case when `good`; otherwise wrong for `order_wrong`, hostile
/// for `hostile`, for `hostile_error` a refusal whose body lands in the error of the run, and
/// right every other time for `sometimes` (flaky under `--repeat`).
async fn agent(State(good): State<Arc<AtomicBool>>, Json(request): Json<Value>) -> Response {
    let name = request["conversation"].as_str().unwrap_or_default();
    let text = match name {
        _ if good.load(Ordering::SeqCst) => GOOD.to_owned(),
        "order_wrong" => WRONG.to_owned(),
        "sometimes" if SOMETIMES.fetch_add(1, Ordering::SeqCst) % 2 == 1 => WRONG.to_owned(),
        "hostile" => hostile_reply(),
        "hostile_error" => {
            let body = format!("@octocat {PWN} [click](https://evil.example) #1 `x`");
            return (StatusCode::BAD_REQUEST, body).into_response();
        }
        _ => GOOD.to_owned(),
    };
    Json(json!({ "messages": [{ "text": text }] })).into_response()
}

/// A workspace with four conversations, and the agent's URL and switch.
fn workspace() -> (tempfile::TempDir, String, Arc<AtomicBool>) {
    let dir = tempfile::tempdir().unwrap();
    let user_pwn = serde_json::to_string(PWN).unwrap();
    let golden = format!(
        "conversations:\n\
         - conversation: order_lookup\n  tags: [P0]\n  turns:\n    - user: Where is ORD-12345?\n      agent: {GOOD}\n\
         - conversation: order_wrong\n  tags: [P1]\n  turns:\n    - user: Where is ORD-12345?\n      agent: {GOOD}\n\
         - conversation: hostile\n  tags: [\"<img src=x onerror=window.pwned=6>\"]\n  turns:\n    - user: {user_pwn}\n      agent: {GOOD}\n\
         - conversation: hostile_error\n  turns:\n    - user: Where is ORD-12345?\n      agent: {GOOD}\n"
    );
    common::write(dir.path(), "goldens/orders.yaml", golden);
    let good = Arc::new(AtomicBool::new(false));
    let addr = common::serve_turn(agent, good.clone());
    (dir, format!("http://{addr}/turn"), good)
}

/// `goldgate run` against the agent, with `extra` flags.
fn run(dir: &Path, url: &str, extra: &[&str]) -> Outcome {
    let mut args = vec![
        "run",
        "--agent-url",
        url,
        "--retries",
        "0",
        "--max-errors",
        "1",
    ];
    args.extend_from_slice(extra);
    args.push("goldens");
    goldgate(dir, &args)
}

/// The page without its data block: the markup goldgate wrote.
fn without_data(page: &str) -> String {
    let start = page.find("<script type=\"application/json\"").unwrap();
    let end = start + page[start..].find("</script>").unwrap();
    format!("{}{}", &page[..start], &page[end..])
}

/// The JSON inside the page's data block.
fn embedded_report(page: &str) -> Value {
    let start = page
        .find("<script type=\"application/json\" id=\"goldgate-data\">")
        .expect("a data block");
    let body = &page[start..];
    let body = &body[body.find('>').unwrap() + 1..];
    serde_json::from_str(&body[..body.find("</script>").unwrap()]).expect("the data is JSON")
}

#[test]
fn run_writes_one_self_contained_page_where_hostile_text_is_data() {
    let (dir, url, _) = workspace();
    run(
        dir.path(),
        &url,
        &["--output", "report.json", "--html", "report.html"],
    )
    .exits(1);
    let page = fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));

    // The policy comes before any style or script, and allows nothing else to load or run.
    let csp = page
        .find("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'sha256-")
        .expect("a CSP");
    assert!(csp < page.find("<style").unwrap() && csp < page.find("<script").unwrap());
    assert!(!page.contains("unsafe-inline") && !page.contains("unsafe-eval"));
    // Self-contained: the page's own scripts, no source to fetch, one data: icon.
    assert_eq!(
        page.matches("<script").count(),
        3,
        "only the data, the case notes and the page's script"
    );
    let markup = without_data(&page);
    assert!(!markup.contains(" src="), "nothing to load");
    assert_eq!(markup.matches("href=").count(), 1);
    assert!(page.contains("<link rel=\"icon\" href=\"data:,\">"));

    // Agent and golden text is nowhere as markup.
    for markup in [
        "<script>window",
        "<img",
        "<svg onload",
        "</script><script>window",
        "<!-- <svg",
        "</details>",
        "\u{2028}",
        "\u{2029}",
    ] {
        assert!(!page.contains(markup), "{markup:?} in the page");
    }
    // It is all there as data, and reads back as the JSON report.
    let report: Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("report.json")).unwrap()).unwrap();
    assert_eq!(embedded_report(&page), report);
    let hostile = common::case(&report, "hostile");
    assert!(
        hostile["turns"][0]["reply"]["text"]
            .as_str()
            .unwrap()
            .contains(PWN)
    );
    // The summary the Rust side writes: the verdict and the cases counted.
    // One error within --max-errors 1: the two failures decide, as the exit code does, and
    // the error is named beside them.
    common::assert_contains(
        &page,
        &["<title>goldgate: 2 of 4 cases failed (1 errored)</title>"],
    );
    assert!(page.contains("<b>1</b> passed · <b>2</b> failed · <b>1</b> errors"));
}

#[test]
fn report_rewrites_the_same_page_and_shows_the_gate_against_a_baseline() {
    let (dir, url, good) = workspace();
    good.store(true, Ordering::SeqCst);
    run(dir.path(), &url, &["--output", "baseline.json"]).exits(0);
    good.store(false, Ordering::SeqCst);
    run(
        dir.path(),
        &url,
        &["--output", "report.json", "--html", "run.html"],
    )
    .exits(1);

    goldgate(
        dir.path(),
        &["report", "report.json", "--html", "again.html"],
    )
    .exits(1);
    assert_eq!(
        fs::read(dir.path().join("again.html")).unwrap(),
        fs::read(dir.path().join("run.html")).unwrap(),
        "the same report makes the same page"
    );
    assert!(
        fs::read_to_string(dir.path().join("run.html"))
            .unwrap()
            .contains("No baseline: run with <code>--baseline FILE</code>")
    );

    goldgate(
        dir.path(),
        &[
            "report",
            "report.json",
            "--baseline",
            "baseline.json",
            "--html",
            "gated.html",
        ],
    )
    .exits(1);
    let page = fs::read_to_string(dir.path().join("gated.html")).unwrap();
    common::assert_contains(
        &page,
        &[
            "<span class=\"badge failed\">regressed</span> against the baseline <code>baseline.json</code>",
        ],
    );
    // The pass rate fell from 100% (3 of 3 judged) to 33.3%: 66.7 pp over a 0 pp limit, but
    // three cases run once a side cannot show it beyond noise; the two cases that flipped are
    // decided by verdict, and say so.
    common::assert_contains(
        &page,
        &[
            "<td><code>passRateDropPp</code></td><td>pass rate</td><td class=\"num\">100.0%</td><td class=\"num\">33.3%</td><td class=\"num\">66.7 pp</td><td class=\"num\">0 pp</td><td><span class=\"badge warn\">not enough runs to tell</span></td><td class=\"evidence\">p = 0.25 (adjusted ",
        ],
    );
    // Holm's adjustment depends on the latency tests' p-values too, which vary with timing.
    assert!(page.contains("interval -14.8 pp to 95.2 pp; 3 vs 3 judged runs</td>"));
    assert!(page.contains("decided by verdict: one run a side and no history"));
    common::assert_contains(&page, &["<h3>Newly failing (2)</h3>"]);
    assert!(
        page.contains("<li><code>order_wrong</code> <span class=\"where\">goldens/orders.yaml:")
    );
    assert!(page.contains("(passed → failed)"));
    assert!(
        page.contains("baseline p95"),
        "the baseline's p95 on the chart"
    );
    assert_eq!(embedded_report(&page)["gate"]["baseline"], "baseline.json");
}

#[test]
fn help_teaches_the_flag_and_a_path_that_cannot_be_written_is_an_error() {
    let (dir, url, _) = workspace();
    let help = goldgate(dir.path(), &["run", "--help"]);
    help.says(&[
        "--html <FILE>",
        "self-contained page",
        "Content-Security-Policy",
    ]);
    let help = goldgate(dir.path(), &["report", "--help"]);
    help.says(&["--html <FILE>"]);

    // Refused before the agent is called, naming the flag and the file.
    let ran = run(dir.path(), &url, &["--html", "missing/dir/report.html"]).exits(2);
    ran.warns(&["--html missing/dir/report.html: cannot write in missing/dir"]);
    ran.never_prints(&["Result:"]);
    // Nothing half-written is left behind.
    assert!(!dir.path().join("missing").exists());
}

/// Where the browser test leaves its page, screenshot and browser log.
fn output_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html-report");
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// The `file://` URL of an absolute path, percent-encoded (a space or `#` in the target
/// directory must not cut it).
fn file_url(path: &Path) -> String {
    let path = path.to_string_lossy().replace('\\', "/");
    let mut url = String::from(if path.starts_with('/') {
        "file://"
    } else {
        "file:///"
    });
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~:".contains(&byte) {
            url.push(char::from(byte));
        } else {
            url.push_str(&format!("%{byte:02X}"));
        }
    }
    url
}

/// How many case rows the table shows.
const ROWS: &str = "document.querySelectorAll('#case-table tbody tr.case').length";

/// A click with real mouse events on the first element `selector` finds.
fn click(selector: &str) -> String {
    format!(
        "(() => {{ const e = document.querySelector({selector:?}); e.dispatchEvent(new MouseEvent('click', {{ bubbles: true, cancelable: true, view: window }})); return true; }})()"
    )
}

/// A click on the case row whose id is `id`.
fn click_case(id: &str) -> String {
    format!(
        "(() => {{ const row = Array.from(document.querySelectorAll('tr.case')).find(r => r.querySelector('code').textContent === {id:?}); row.dispatchEvent(new MouseEvent('click', {{ bubbles: true }})); return row.getAttribute('aria-expanded'); }})()"
    )
}

/// The unfolded detail row of the case whose id is `id`.
fn detail_of(id: &str) -> String {
    format!(
        "Array.from(document.querySelectorAll('tr.case')).find(r => r.querySelector('code').textContent === {id:?}).nextElementSibling"
    )
}

#[test]
#[ignore = "needs chromium: run with --ignored (.ci/run does)"]
fn the_page_works_in_headless_chromium_and_runs_nothing_from_the_agent() {
    let binary = chromium::find();
    let out = output_dir();
    let page = write_a_flaky_run_page(&out);
    let mut browser = chromium::Chromium::start(&binary, &out.join("chromium.log"));
    browser.open_page();
    for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
        browser.call(domain, json!({}));
    }
    browser.call(
        "Emulation.setDeviceMetricsOverride",
        json!({ "width": 1280, "height": 1400, "deviceScaleFactor": 1, "mobile": false }),
    );
    browser.call("Page.navigate", json!({ "url": file_url(&page) }));
    browser.wait_for("Page.loadEventFired");

    the_status_filter_and_the_flaky_runs_work(&mut browser);
    a_failure_that_does_not_block_says_so(&mut browser);
    the_file_search_tag_filters_and_sorting_work(&mut browser);
    unfolded_cases_show_hostile_text_as_text_and_the_differing_words(&mut browser);
    nothing_from_the_agent_ran_or_loaded(&mut browser);
    take_a_screenshot(&mut browser, &out);
    let errors = browser.errors();
    assert!(
        errors.is_empty(),
        "the page reported errors:\n{}",
        errors.join("\n")
    );
    the_checks_above_are_live(&mut browser);
    browser.close();
}

/// A baseline of the good agent, then a run of the wrong agent with a second file whose case
/// passes two runs of three (flaky), as an HTML page copied into `out`.
fn write_a_flaky_run_page(out: &Path) -> PathBuf {
    let (dir, url, good) = workspace();
    good.store(true, Ordering::SeqCst);
    assert_eq!(
        run(dir.path(), &url, &["--output", "baseline.json"]).code,
        Some(0)
    );
    good.store(false, Ordering::SeqCst);
    common::write(
        dir.path(),
        "goldgate.yaml",
        "quarantine:\n  - case: goldens/orders.yaml#order_wrong\n    owner: \"@maria\"\n    reason: INC-2211\n    expires: 2999-12-31\n",
    );
    common::write(
        dir.path(),
        "goldens/flaky.yaml",
        format!(
            "conversations:\n- conversation: sometimes\n  turns:\n    - user: Where is ORD-12345?\n      agent: {GOOD}\n"
        ),
    );
    run(
        dir.path(),
        &url,
        &[
            "--baseline",
            "baseline.json",
            "--repeat",
            "3",
            "--min-pass",
            "2",
            // Three runs exactly: no adaptive repeats on top.
            "--max-repeat",
            "3",
            "--html",
            "report.html",
        ],
    )
    .exits(1);
    let page = out.join("report.html");
    fs::copy(dir.path().join("report.html"), &page).unwrap();
    println!("the page: {}", page.display());
    page
}

/// Sets the form control `id` to `value` and fires `event` on it, as a person would.
fn set_control(browser: &mut chromium::Chromium, id: &str, value: &str, event: &str) {
    browser.eval(&format!(
        "{{ const f = document.getElementById({id:?}); f.value = {value:?}; f.dispatchEvent(new Event({event:?}, {{ bubbles: true }})); }}"
    ));
}

fn the_status_filter_and_the_flaky_runs_work(browser: &mut chromium::Chromium) {
    // Every case is listed, worst first.
    assert_eq!(browser.eval(ROWS), 5);
    assert_eq!(
        browser.eval("document.querySelector('tr.case .badge').textContent"),
        "error"
    );
    // A status filter.
    browser.eval(&click(".status-filter button[data-status='failed']"));
    assert_eq!(browser.eval(ROWS), 2);
    assert_eq!(
        browser.eval("document.getElementById('shown').textContent"),
        "showing 2 of 5 cases"
    );
    // Flaky: the case whose runs disagree, with each run shown.
    browser.eval(&click(".status-filter button[data-status='flaky']"));
    assert_eq!(browser.eval(ROWS), 1);
    assert_eq!(browser.eval(&click_case("sometimes")), "true");
    assert_eq!(
        browser.eval("document.querySelectorAll('tr.detail .runs span.passed').length"),
        2
    );
    assert!(
        browser
            .eval("document.querySelector('tr.detail .runs').textContent")
            .as_str()
            .unwrap()
            .contains("2 of 3 passed (at least 2 needed)")
    );
    browser.eval(&click(".status-filter button[data-status='']"));
    assert_eq!(browser.eval(ROWS), 5);
}

/// The status cell of the case `id`'s row, as shown.
fn status_of(browser: &mut chromium::Chromium, id: &str) -> String {
    let script = format!(
        "[...document.querySelectorAll('tr.case')].find(r => r.querySelector('code').textContent === {id:?}).cells[0].textContent"
    );
    browser.eval(&script).as_str().unwrap().to_owned()
}

fn a_failure_that_does_not_block_says_so(browser: &mut chromium::Chromium) {
    // Quarantined, it fails without failing the run, as the terminal and the Markdown say.
    assert_eq!(
        status_of(browser, "order_wrong"),
        "failednot blocking: quarantined"
    );
    assert_eq!(status_of(browser, "hostile"), "failednewly failing");
}

fn the_file_search_tag_filters_and_sorting_work(browser: &mut chromium::Chromium) {
    set_control(browser, "file-filter", "goldens/flaky.yaml", "change");
    assert_eq!(browser.eval(ROWS), 1);
    set_control(browser, "file-filter", "", "change");
    // Typing in the search box: the wrong order number is in two replies (the flaky case
    // shows its failed run).
    browser.eval("document.getElementById('search').focus()");
    browser.call("Input.insertText", json!({ "text": "ORD-12346" }));
    assert_eq!(browser.eval(ROWS), 2);
    set_control(browser, "search", "", "input");
    assert_eq!(browser.eval(ROWS), 5);
    // The tag filter lists the hostile tag as text, and filters.
    set_control(browser, "tag-filter", "P0", "change");
    assert_eq!(browser.eval(ROWS), 1);
    assert_eq!(
        browser.eval("Array.from(document.querySelectorAll('#tag-filter option')).some(o => o.textContent === '<img src=x onerror=window.pwned=6>')"),
        true
    );
    set_control(browser, "tag-filter", "", "change");
    // Sorting by id.
    browser.eval(&click("#case-table th[data-sort='id']"));
    assert_eq!(
        browser.eval("Array.from(document.querySelectorAll('tr.case code')).map(c => c.textContent).join(' ')"),
        "hostile hostile_error order_lookup order_wrong sometimes"
    );
}

fn unfolded_cases_show_hostile_text_as_text_and_the_differing_words(
    browser: &mut chromium::Chromium,
) {
    // The hostile case unfolded: its script, markup and forged block end are text.
    assert_eq!(browser.eval(&click_case("hostile")), "true");
    let shown = browser.eval(&format!("{}.textContent", detail_of("hostile")));
    let shown = shown.as_str().unwrap();
    for text in [
        "<script>window.pwned=1</script>",
        "<img src=x onerror=\"window.pwned=2\">",
        "</script><script>window.pwned=3</script>",
    ] {
        assert!(shown.contains(text), "{text} is not shown as text");
    }
    assert!(
        shown.contains("\\u{202e}gnp.exe"),
        "the bidi override is shown as an escape"
    );
    assert_eq!(browser.eval(&click_case("hostile")), "false");
    assert_eq!(browser.eval(&click_case("hostile_error")), "true");
    // The failing case: expected and actual with the differing words marked, and the method.
    assert_eq!(browser.eval(&click_case("order_wrong")), "true");
    assert_eq!(
        browser.eval(&format!(
            "Array.from({}.querySelectorAll('ins')).map(e => e.textContent).join(' ')",
            detail_of("order_wrong")
        )),
        "ORD-12346 was cancelled"
    );
    assert!(
        browser
            .eval(&format!(
                "{}.querySelector('.method code').textContent",
                detail_of("order_wrong")
            ))
            .as_str()
            .unwrap()
            .contains("local-similarity")
    );
}

fn nothing_from_the_agent_ran_or_loaded(browser: &mut chromium::Chromium) {
    // Give an onerror a moment to fire first.
    browser.eval("new Promise(r => setTimeout(r, 300))");
    assert_eq!(browser.eval("typeof window.pwned"), "undefined");
    assert_eq!(
        browser.eval("document.querySelectorAll('img, iframe, object, embed').length"),
        0
    );
    assert_eq!(browser.eval("document.scripts.length"), 3);
}

fn take_a_screenshot(browser: &mut chromium::Chromium, out: &Path) {
    let shot = browser.call(
        "Page.captureScreenshot",
        json!({ "format": "png", "captureBeyondViewport": true }),
    );
    let png = data_encoding::BASE64
        .decode(shot["data"].as_str().unwrap().as_bytes())
        .unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    let screenshot = out.join("report.png");
    fs::write(&screenshot, png).unwrap();
    println!("the screenshot: {}", screenshot.display());
}

/// The checks above are live: an error is caught, and the policy itself refuses a script or
/// an image that did get into the page (and says so, as an error).
fn the_checks_above_are_live(browser: &mut chromium::Chromium) {
    browser.eval("console.error('goldgate probe')");
    browser.eval("{ const s = document.createElement('script'); s.textContent = 'window.pwned = 9'; document.body.appendChild(s); }");
    browser.eval("{ const i = document.createElement('img'); i.src = 'https://example.invalid/pixel.png'; document.body.appendChild(i); }");
    browser.eval("new Promise(r => setTimeout(r, 300))");
    assert_eq!(
        browser.eval("typeof window.pwned"),
        "undefined",
        "the CSP let an injected script run"
    );
    let probes = browser.errors().join("\n");
    common::assert_contains(&probes, &["goldgate probe"]);
    assert!(
        probes.matches("Content Security Policy").count() >= 2,
        "the CSP did not refuse both the script and the image:\n{probes}"
    );
}
