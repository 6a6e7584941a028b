//! CX Agent Studio as the agent under test, through the binary against loopback servers: a
//! SCRAPI golden and a CES golden CSV get the same verdicts from a CES app as from an HTTP
//! agent with the same behaviour; a client-function tool is answered from the golden's mock;
//! refused credentials are an error of the run; Google credentials come from a
//! service-account key or an `external_account` file whose endpoints are loopback servers, and
//! no token reaches the output or the report.

use crate::{ces_support, common};
use std::net::SocketAddr;
use std::path::Path;

use axum::routing::post;

use ces_support::{APP, Ces};

/// tests/fixtures/ces-support.yaml
const SCRAPI_GOLDEN: &str = include_str!("../fixtures/ces-support.yaml");

/// tests/fixtures/ces-support.golden.csv: the CES golden of the same support app.
const CES_CSV: &str = include_str!("../fixtures/ces-support.golden.csv");

fn write_goldens(dir: &Path) {
    common::write(dir, "goldens/support.yaml", SCRAPI_GOLDEN);
    common::write(dir, "goldens/support.golden.csv", CES_CSV);
}

fn start_ces(ces: &Ces) -> SocketAddr {
    common::serve(
        axum::Router::new()
            .fallback(post(ces_support::run_session))
            .with_state(ces.clone()),
    )
}

fn ces_config(dir: &Path, addr: SocketAddr) {
    common::write(
        dir,
        "goldgate.yaml",
        format!(
            "agent:\n  ces:\n    app: {APP}\n    base_url: http://{addr}\nrun:\n  retries: 0\n"
        ),
    );
}

/// A fake CES app that accepts [`TOKEN`], serving, and the config in `dir` that points at it.
fn ces_app(dir: &Path) -> Ces {
    let ces = Ces::accepting(TOKEN);
    ces_config(dir, start_ces(&ces));
    ces
}

const TOKEN: &str = "ya29.loopback-token-0123456789";

#[test]
fn goldens_get_the_same_verdicts_from_a_ces_app_as_from_an_http_agent() {
    let dir = tempfile::tempdir().unwrap();
    write_goldens(dir.path());
    let http = common::serve(axum::Router::new().route("/turn", post(ces_support::http_turn)));
    let (http_code, http_report, printed) = common::run_without_google(
        dir.path(),
        &["--agent-url", &format!("http://{http}/turn")],
        &[],
    );
    let expected = common::case_statuses(&http_report);

    let ces = ces_app(dir.path());
    let (code, report, ces_printed) =
        common::run_without_google(dir.path(), &[], &[("CXAS_OAUTH_TOKEN", TOKEN)]);
    assert_eq!(ces.violations(), Vec::<String>::new(), "{ces_printed}");
    assert_eq!(
        common::case_statuses(&report),
        expected,
        "{ces_printed}\n--- http\n{printed}"
    );
    assert_eq!(code, http_code);
    assert_eq!(code, Some(1), "{ces_printed}");
    // Both kinds of verdict, in both formats: the comparison means something.
    for (case, status) in [
        ("order_shipped", "passed"),
        ("weather_from_the_mock", "passed"),
        ("refund_goes_to_billing", "passed"),
        ("wrong_order_tool", "failed"),
        ("Weather from the tool response", "passed"),
        ("Refund to billing", "passed"),
        ("Refund to sales", "failed"),
    ] {
        assert_eq!(
            expected.get(case).map(String::as_str),
            Some(status),
            "{case}: {expected:?}"
        );
    }
    // The client tool was answered from the mock, and recorded as a call with its response.
    let weather = common::case(&report, "weather_from_the_mock");
    let call = &weather["turns"][0]["reply"]["tool_calls"][0];
    assert_eq!(call["name"], "get_weather", "{weather:#}");
    assert_eq!(call["response"], "sunny", "{weather:#}");
    // Goldens match display names; the report keeps the app's resource names beside them.
    let order = common::case(&report, "order_shipped");
    let lookup = &order["turns"][0]["reply"]["tool_calls"][0];
    assert_eq!(lookup["name"], "lookup_order", "{order:#}");
    assert_eq!(
        lookup["resource"],
        format!("{APP}/tools/0c4f7a"),
        "{order:#}"
    );
    let refund = common::case(&report, "refund_goes_to_billing");
    let transfer = &refund["turns"][0]["reply"]["transfer"];
    assert_eq!(transfer["agent"], "Billing Agent", "{refund:#}");
    assert_eq!(
        transfer["resource"],
        format!("{APP}/agents/7b1e"),
        "{refund:#}"
    );
    assert!(
        report["agent"].as_str().unwrap().contains(APP),
        "{}",
        report["agent"]
    );
    assert!(!ces_printed.contains(TOKEN) && !report.to_string().contains(TOKEN));
}

#[test]
fn a_refused_token_is_an_error_of_the_run_with_googles_message() {
    let dir = tempfile::tempdir().unwrap();
    write_goldens(dir.path());
    ces_app(dir.path());
    let wrong = "ya29.expired-token-abcdef";
    let (code, report, printed) =
        common::run_without_google(dir.path(), &[], &[("CXAS_OAUTH_TOKEN", wrong)]);
    assert_eq!(code, Some(2), "{printed}");
    common::assert_contains(&printed, &["refused the credentials of CXAS_OAUTH_TOKEN"]);
    common::assert_contains(
        &printed,
        &["Request had invalid authentication credentials"],
    );
    assert!(
        common::case_statuses(&report)
            .values()
            .all(|s| s == "error"),
        "{report:#}"
    );
    assert!(!printed.contains(wrong) && !report.to_string().contains(wrong));
}

#[test]
fn a_mistyped_ces_key_is_an_error_with_its_line_and_a_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    write_goldens(dir.path());
    common::write(
        dir.path(),
        "goldgate.yaml",
        format!("agent:\n  ces:\n    app: {APP}\n    deploymnet: prod\n"),
    );
    let (code, _, printed) =
        common::run_without_google(dir.path(), &[], &[("CXAS_OAUTH_TOKEN", TOKEN)]);
    assert_eq!(code, Some(2), "{printed}");
    common::assert_contains(&printed, &["goldgate.yaml:4"]);
    common::assert_contains(&printed, &["did you mean `deployment`"]);

    common::write(
        dir.path(),
        "goldgate.yaml",
        "agent:\n  ces:\n    app: my-app\n",
    );
    let (code, _, printed) =
        common::run_without_google(dir.path(), &[], &[("CXAS_OAUTH_TOKEN", TOKEN)]);
    assert_eq!(code, Some(2), "{printed}");
    common::assert_contains(&printed, &["goldgate.yaml:3"]);
    common::assert_contains(&printed, &["projects/my-project/locations/us/apps/my-app"]);
}

#[test]
fn throttling_is_retried_and_deployment_and_entry_agent_reach_the_session_config() {
    let dir = tempfile::tempdir().unwrap();
    common::order_golden(dir.path(), &common::order_conversation("one"));
    let ces = Ces::accepting(TOKEN);
    *ces.throttle.lock().unwrap() = 2;
    let addr = start_ces(&ces);
    common::write(
        dir.path(),
        "goldgate.yaml",
        format!(
            "agent:\n  ces:\n    app: {APP}\n    base_url: http://{addr}\n    deployment: prod\n    entry_agent: {APP}/agents/root\nrun:\n  retries: 3\n"
        ),
    );
    let (code, report, printed) =
        common::run_without_google(dir.path(), &[], &[("CXAS_OAUTH_TOKEN", TOKEN)]);
    assert_eq!(code, Some(0), "{printed}");
    assert_eq!(report["cases"][0]["status"], "passed", "{report:#}");
    // A 429 and a 503, then the turn: through the limiter and the runner's retries.
    assert_eq!(*ces.requests.lock().unwrap(), 3);
    let config = ces.last_config.lock().unwrap().clone();
    assert_eq!(config["deployment"], format!("{APP}/deployments/prod"));
    assert_eq!(config["entryAgent"], format!("{APP}/agents/root"));
}

#[test]
fn a_client_tool_without_a_mock_gets_an_error_response_reported_in_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    common::write(
        dir.path(),
        "goldens/weather.yaml",
        "conversations:\n  - conversation: no_mock\n    turns:\n      - user: What's the weather?\n        agent: It is sunny in Oslo.\n",
    );
    let ces = ces_app(dir.path());
    let (code, report, printed) =
        common::run_without_google(dir.path(), &[], &[("CXAS_OAUTH_TOKEN", TOKEN)]);
    assert_eq!(ces.violations(), Vec::<String>::new());
    assert_eq!(code, Some(1), "{printed}");
    let reply = &report["cases"][0]["turns"][0]["reply"];
    assert_eq!(reply["error"]["code"], "no_mock", "{reply:#}");
    let response = reply["tool_calls"][0]["response"]["error"]
        .as_str()
        .unwrap();
    common::assert_contains(response, &["no mock for client tool `get_weather`"]);
}

#[test]
fn without_credentials_the_run_says_where_it_looked() {
    let dir = tempfile::tempdir().unwrap();
    write_goldens(dir.path());
    let ces = ces_app(dir.path());
    // Nothing listens there: the metadata server of a machine outside Google Cloud.
    let (code, _, printed) =
        common::run_without_google(dir.path(), &[], &[("GCE_METADATA_HOST", "127.0.0.1:9")]);
    assert_eq!(code, Some(2), "{printed}");
    common::assert_contains(&printed, &["no Google credentials found"]);
    assert_eq!(*ces.requests.lock().unwrap(), 0);
}
