//! An answer quoted in an error is masked before it is cut: a cut inside a secret leaves no
//! part of it, from the agent (its 4,096 bytes read, then trimmed and cut to 200 characters)
//! or from a judge (cut to 300), and the rate-limit notice masks what the judge echoed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::http::StatusCode;
use axum::response::IntoResponse;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::{answering_hello, failing, run_writing_everything, workspace};
use crate::common;
use crate::secrets::{AGENT_KEY, PROVIDER_KEY};

const TOKEN: &str = crate::secrets::github_support::TOKEN;

#[test]
fn an_agent_error_read_up_to_inside_a_secret_quotes_none_of_it() {
    // Spaces up to a few bytes short of the 4,096 read: trimmed away, they bring the part of
    // the key that was read to the start of the quote.
    let body = format!("{}{AGENT_KEY} is not a key we know", " ".repeat(4090));
    let agent = common::serve(axum::Router::new().route(
        "/turn",
        axum::routing::post(move || {
            let body = body.clone();
            async move { failing(StatusCode::INTERNAL_SERVER_ERROR, body) }
        }),
    ));
    let config = format!(
        "agent:\n  http:\n    url: \"http://{agent}/turn\"\n    headers: {{ X-Api-Key: \"${{AGENT_KEY}}\" }}\n"
    );
    let dir = workspace(&["padded"], "hello", &config);
    let (outcome, everything) =
        run_writing_everything(dir.path(), &[("AGENT_KEY", AGENT_KEY)], |_| {});
    let outcome = outcome.exits(2);
    outcome.says(&["HTTP 500: 500 Internal Server Error: ***"]);
    common::assert_lacks(&everything, &[&AGENT_KEY[..6]]);
}

/// A judge at a loopback address answering each request with `answer(n)`, n counting from 0;
/// the config of an agent answering "hello" to goldens expecting something else, which only
/// the judge can grade.
fn judged(
    answer: impl Fn(usize) -> axum::response::Response + Clone + Send + Sync + 'static,
) -> String {
    let asked = Arc::new(AtomicUsize::new(0));
    let judge = common::serve(axum::Router::new().fallback(axum::routing::post(move || {
        let n = asked.fetch_add(1, Ordering::SeqCst);
        let answer = answer.clone();
        async move { answer(n) }
    })));
    let agent =
        common::serve(axum::Router::new().route("/turn", axum::routing::post(answering_hello)));
    format!(
        "agent:\n  http:\n    url: \"http://{agent}/turn\"\n    headers: {{ X-Api-Key: \"${{AGENT_KEY}}\" }}\n\
         judge: {{ provider: anthropic, model: judge-model, base_url: \"http://{judge}\" }}\n"
    )
}

const EXPECTED: &str = "Good morning, how may I assist you with your order today?";

#[test]
fn a_judge_error_cut_inside_its_key_quotes_none_of_it() {
    // Not JSON: quoted, and cut to 300 characters in the middle of the key.
    let config = judged(|_| {
        let body = format!("{}{PROVIDER_KEY}", "x".repeat(280));
        failing(StatusCode::BAD_REQUEST, body)
    });
    let dir = workspace(&["judged"], EXPECTED, &config);
    let env = [
        ("AGENT_KEY", AGENT_KEY),
        ("ANTHROPIC_API_KEY", PROVIDER_KEY),
    ];
    let (_, everything) = run_writing_everything(dir.path(), &env, |_| {});
    let report = std::fs::read_to_string(dir.path().join("report.json")).unwrap();
    common::assert_contains(
        &report,
        &["anthropic answered 400 Bad Request: xxx", "x***"],
    );
    common::assert_lacks(&everything, &[&PROVIDER_KEY[..8]]);
}

#[test]
fn the_rate_limit_notice_masks_what_the_judge_echoes() {
    let echo = format!(
        "slow down; you sent x-api-key {} and {} from {AGENT_KEY}",
        STANDARD.encode(PROVIDER_KEY),
        TOKEN
    );
    let config = judged(move |n| match n {
        0 => (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", "0")],
            echo.clone(),
        )
            .into_response(),
        _ => failing(StatusCode::BAD_REQUEST, "no more".into()),
    });
    let dir = workspace(&["judged"], EXPECTED, &config);
    let env = [
        ("AGENT_KEY", AGENT_KEY),
        ("ANTHROPIC_API_KEY", PROVIDER_KEY),
        ("GITHUB_TOKEN", TOKEN),
    ];
    let (outcome, everything) = run_writing_everything(dir.path(), &env, |_| {});
    outcome.warns(&[
        "on the judge anthropic's rate limit",
        "slow down; you sent x-api-key *** and *** from ***",
    ]);
    let base64 = STANDARD.encode(PROVIDER_KEY);
    common::assert_lacks(&everything, &[TOKEN, AGENT_KEY, &base64]);
}

/// A command agent that prints its provider key on stdout instead of answering its start-up
/// ping: the start-up error quotes the line cut to 120 characters, and the key straddling the
/// cut is masked before it, so no part of it is quoted.
#[test]
fn a_command_agents_stdout_quoted_in_its_start_up_error_holds_no_part_of_a_key() {
    let padding = "x".repeat(110);
    let config = format!(
        "agent:\n  command:\n    argv: [sh, -c, \"echo {padding}$ANTHROPIC_API_KEY; sleep 30\"]\n    startup_timeout: 1s\n"
    );
    let dir = workspace(&["printed"], "hello", &config);
    let (outcome, everything) =
        run_writing_everything(dir.path(), &[("ANTHROPIC_API_KEY", PROVIDER_KEY)], |_| {});
    outcome.exits(2).warns(&[
        "did not answer the start-up ping within 1s",
        "ignored: `xxx",
    ]);
    common::assert_lacks(&everything, &[&PROVIDER_KEY[..6]]);
}

/// A running command agent that prints its key on stdout beside its reply: the agent log
/// notes the line cut to 200 characters, and a key straddling the cut is masked before it.
#[test]
fn a_command_agents_stray_stdout_line_in_the_agent_log_holds_no_part_of_a_key() {
    let padding = "y".repeat(190);
    let script = format!(
        "{}IFS= read -r line; reply_with_rest '\"messages\":[]'\n\
         while IFS= read -r line; do\n  echo {padding}$ANTHROPIC_API_KEY\n  \
         reply_with_rest '\"messages\":[{{\"text\":\"hello\"}}]'\ndone\n",
        common::process::SH_REPLY
    );
    let config = "agent:\n  command:\n    argv: [sh, agent.sh]\n";
    let dir = workspace(&["stray"], "hello", config);
    common::write(dir.path(), "agent.sh", script);
    let (outcome, everything) =
        run_writing_everything(dir.path(), &[("ANTHROPIC_API_KEY", PROVIDER_KEY)], |_| {});
    outcome.exits(0);
    common::assert_contains(&everything, &["unparseable stdout line: yyy"]);
    common::assert_lacks(&everything, &[&PROVIDER_KEY[..6]]);
}
