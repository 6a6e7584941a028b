//! Faults of the agent and of goldgate's own surroundings (issue 12): each ends as an error of
//! the run with a message that says what happened, within a bounded time, leaving no process
//! behind. Also the command agent's start-up handshake, which keeps start-up out of latency.

use crate::{common, faults_support};
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use faults_support::*;
use serde_json::Value;

#[cfg(unix)]
#[test]
fn a_command_agent_slow_to_start_is_timed_apart_from_its_turns() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 4);
    let script = format!(
        r#"{SH_REPLY}
sleep 2
while IFS= read -r line; do
  reply_with_rest '"messages":[{{"text":"Your order ORD-12345 has shipped and should arrive by April 18th."}}]'
done"#
    );
    command_agent(dir.path(), &script, "");
    let (outcome, report, _) = run(dir.path(), &[]);
    let report = report.expect("a report");
    assert_eq!(outcome.code, Some(1), "{}", outcome.stderr); // the tool call is missing
    let startup = report["agent_startup_ms"].as_u64().unwrap();
    assert!(startup >= 2000, "start-up {startup} ms");
    for case in report["cases"].as_array().unwrap() {
        let latency = case["turns"][0]["latency_ms"].as_u64().unwrap();
        assert!(
            latency < 1000,
            "turn latency {latency} ms includes start-up"
        );
    }
    outcome.says(&["Agent start-up: 2"]);
}

// ---------------------------------------------------------------------------------------------
// Bounds every fault test shares

/// A fault run: exit 2, within `limit`, memory bounded; the report and all output as text.
fn run_fault(dir: &Path, extra: &[&str], limit: Duration) -> (Option<Value>, String) {
    #[cfg(unix)]
    let (outcome, report, elapsed, peak_kib) = run_measured(dir, extra);
    #[cfg(not(unix))]
    let (outcome, report, elapsed) = run(dir, extra);
    let text = format!("{}\n{}", outcome.stdout, outcome.stderr);
    assert_eq!(outcome.code, Some(2), "{text}");
    assert!(elapsed < limit, "took {elapsed:?}: {text}");
    #[cfg(unix)]
    {
        assert_stayed_small(peak_kib);
        // Every agent process that noted its pid is gone with goldgate.
        if dir.join("pids").exists() {
            assert_no_agent_left(dir);
        }
    }
    (report, text)
}

/// The error a run's only case ended in.
fn case_error(report: &Option<Value>) -> String {
    let report = report.as_ref().expect("a report");
    report["cases"][0]["error"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

// ---------------------------------------------------------------------------------------------
// HTTP agents at fault: raw loopback servers that misbehave on purpose

const FOREVER: Duration = Duration::from_secs(3600);

/// A one-case fault run (see [`run_fault`]) against a [`raw_server`] that answers with
/// `answer`, with `--timeout timeout`, ending within `limit_s` seconds: the case's error.
fn http_fault(answer: fn(std::net::TcpStream), timeout: &str, limit_s: u64) -> String {
    let dir = tempfile::tempdir().unwrap();
    http_suite(dir.path(), &raw_server(answer));
    let limit = Duration::from_secs(limit_s);
    let (report, _) = run_fault(dir.path(), &["--timeout", timeout], limit);
    case_error(&report)
}

/// Writes `head`, then `piece` again and again, `pause` apart, until the client hangs up or
/// `times` pieces are out.
fn keep_sending(
    stream: &std::net::TcpStream,
    head: &str,
    piece: &[u8],
    pause: Duration,
    times: usize,
) {
    write_all(stream, head.as_bytes());
    for _ in 0..times {
        if !write_all(stream, piece) {
            break;
        }
        std::thread::sleep(pause);
    }
}

#[test]
fn http_server_that_accepts_and_never_answers_times_out() {
    let error = http_fault(|_stream| std::thread::sleep(FOREVER), "1s", 20);
    common::assert_contains(&error, &["timed out: no complete reply within 1s"]);
}

#[test]
fn http_server_dripping_a_byte_a_second_times_out() {
    let error = http_fault(
        |stream| {
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n";
            keep_sending(&stream, head, b" ", Duration::from_secs(1), usize::MAX);
        },
        "2s",
        20,
    );
    common::assert_contains(&error, &["timed out"]);
}

#[test]
fn http_connection_reset_mid_body_is_a_connection_error() {
    let error = http_fault(
        |stream| {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"messages\":[";
            write_all(&stream, head.as_bytes());
            // SO_LINGER 0: closing sends RST instead of FIN.
            #[cfg(unix)]
            {
                use std::os::fd::AsRawFd;
                let linger = libc::linger {
                    l_onoff: 1,
                    l_linger: 0,
                };
                // SAFETY: a valid socket and a pointer to a linger struct of the size given.
                let set = unsafe {
                    libc::setsockopt(
                        stream.as_raw_fd(),
                        libc::SOL_SOCKET,
                        libc::SO_LINGER,
                        (&raw const linger).cast(),
                        std::mem::size_of::<libc::linger>() as libc::socklen_t,
                    )
                };
                assert_eq!(set, 0, "SO_LINGER");
            }
            drop(stream);
        },
        "5s",
        20,
    );
    assert!(error.starts_with("connection failed"), "{error}");
    #[cfg(unix)]
    common::assert_contains(&error, &["reset"]);
}

#[test]
fn http_200_mb_body_is_refused_past_the_cap() {
    let error = http_fault(
        |stream| {
            // No Content-Length: the size is only known by reading.
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n";
            keep_sending(&stream, head, &[b' '; 64 * 1024], Duration::ZERO, 200 * 16);
        },
        "30s",
        40,
    );
    common::assert_contains(&error, &["larger than 16 MiB"]);
}

#[test]
fn http_200_mb_streamed_body_is_refused_past_the_cap() {
    let error = http_fault(
        |stream| {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nContent-Length: 209715200\r\n\r\n";
            let line = format!(
                "{{\"messages\":[{{\"text\":\"{}\"}}]}}\n",
                "x".repeat(60_000)
            );
            keep_sending(&stream, head, line.as_bytes(), Duration::ZERO, 4000);
        },
        "30s",
        40,
    );
    common::assert_contains(&error, &["larger than 16 MiB"]);
}

#[test]
fn http_invalid_utf8_is_a_protocol_error() {
    let error = http_fault(
        |stream| {
            let body = b"{\"messages\":[{\"text\":\"caf\xe9 \xff\xfe\"}]}";
            write_reply(&stream, "application/json", body);
        },
        "5s",
        20,
    );
    assert!(
        error.starts_with("bad reply: reply is not protocol JSON"),
        "{error}"
    );
}

/// A 200 that is not the protocol (a proxy's login page): the error says what the server
/// declared and quotes the start of what it sent.
#[test]
fn http_a_reply_that_is_not_the_protocol_is_quoted_with_its_content_type() {
    let error = http_fault(
        |stream| {
            let body = "<html><title>Sign in to the proxy</title></html>";
            write_reply(&stream, "text/html; charset=utf-8", body.as_bytes());
        },
        "5s",
        20,
    );
    common::assert_contains(
        &error,
        &[
            "reply is not protocol JSON (expected value at line 1 column 1)",
            "it is `text/html`: `<html><title>Sign in to the proxy</title></html>`",
        ],
    );
}

#[test]
fn http_ndjson_stream_that_never_ends_times_out() {
    let error = http_fault(
        |stream| {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n";
            let line = "{\"messages\":[{\"text\":\"more\"}]}\n";
            let chunk = format!("{:x}\r\n{line}\r\n", line.len());
            let pause = Duration::from_millis(20);
            keep_sending(&stream, head, chunk.as_bytes(), pause, usize::MAX);
        },
        "2s",
        20,
    );
    common::assert_contains(&error, &["timed out"]);
}

#[test]
fn http_redirect_loop_is_an_error_without_retries() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 1);
    let url = raw_server(|stream| {
        // 307 keeps the method and body: the loop is followed until reqwest's limit.
        write_all(
            &stream,
            b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /turn\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
    });
    common::write(
        dir.path(),
        "goldgate.yaml",
        format!("agent:\n  http: {{ url: \"{url}\" }}\nrun: {{ retries: 2 }}\n"),
    );
    let (report, _) = run_fault(dir.path(), &["--timeout", "5s"], Duration::from_secs(20));
    let error = case_error(&report);
    assert!(error.starts_with("refused: "), "{error}");
    common::assert_contains(&error, &["redirects in a loop"]);
    let attempts = &report.unwrap()["cases"][0]["turns"][0]["attempts"];
    assert_eq!(attempts, 1, "a redirect loop is not retried");
}

#[test]
fn http_self_signed_tls_certificate_is_refused() {
    use std::sync::Arc;

    let _ = rustls::crypto::ring::default_provider().install_default();
    let tls = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tls");
    let certificates = {
        use rustls::pki_types::pem::PemObject;
        let certs: Vec<_> =
            rustls::pki_types::CertificateDer::pem_file_iter(tls.join("self-signed.pem"))
                .unwrap()
                .map(Result::unwrap)
                .collect();
        let key =
            rustls::pki_types::PrivateKeyDer::from_pem_file(tls.join("self-signed.key")).unwrap();
        (certs, key)
    };
    let config = Arc::new(
        rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(certificates.0, certificates.1)
            .unwrap(),
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut connection = rustls::ServerConnection::new(Arc::clone(&config)).unwrap();
            // The client gives up during the handshake; this side only has to offer the cert.
            let _ = connection.complete_io(&mut stream);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    http_suite(
        dir.path(),
        &format!("https://127.0.0.1:{}/turn", addr.port()),
    );
    let (report, _) = run_fault(dir.path(), &["--timeout", "5s"], Duration::from_secs(20));
    let error = case_error(&report);
    assert!(error.starts_with("refused: "), "{error}");
    common::assert_contains(&error, &["certificate is not trusted"]);
}

// ---------------------------------------------------------------------------------------------
// Command agents at fault

/// Notes its pid in `pids` (for the check that no agent is left), answers the start-up ping
/// (the first line) and nothing after it unless `then` does.
fn after_ping(then: &str) -> String {
    format!(
        "{SH_REPLY}\necho $$ >> pids\nIFS= read -r line; reply_with_rest '\"messages\":[]'\n{then}"
    )
}

/// A one-case fault run (see [`run_fault`]) of the command agent `sh -c script` with
/// `settings` after it, with `extra` args, ending within `limit_s` seconds: the report and all
/// output.
#[cfg(unix)]
fn command_fault(
    script: &str,
    settings: &str,
    extra: &[&str],
    limit_s: u64,
) -> (Option<Value>, String) {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 1);
    command_agent(dir.path(), script, settings);
    run_fault(dir.path(), extra, Duration::from_secs(limit_s))
}

#[cfg(unix)]
#[test]
fn command_agent_that_exits_at_start_up_is_an_error_with_its_stderr() {
    let (_, text) = command_fault("echo 'no model key set' >&2; exit 3", "", &[], 20);
    common::assert_contains(
        &text,
        &["agent process exited", "exit status: 3", "no model key set"],
    );
}

#[cfg(unix)]
#[test]
fn command_agent_that_exits_on_a_turn_is_an_error_after_its_retries() {
    let script = after_ping("IFS= read -r line; exit 4");
    let (report, _) = command_fault(&script, "", &["--retries", "1"], 20);
    let error = case_error(&report);
    common::assert_contains(&error, &["agent process exited: exit status: 4"]);
    assert_eq!(report.unwrap()["cases"][0]["turns"][0]["attempts"], 2);
}

#[cfg(unix)]
#[test]
fn command_agent_printing_garbage_is_bounded_and_times_out() {
    // 64 MB of random bytes on stdout, then silence.
    let script = after_ping("head -c 67108864 /dev/urandom; sleep 3600");
    let (report, text) = command_fault(&script, "", &["--timeout", "3s"], 30);
    assert!(case_error(&report).contains("timed out"), "{text}");
    let log = report.unwrap()["agent_log"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        log.contains("unparseable stdout line") || log.contains("line dropped: the agent wrote"),
        "{log}"
    );
}

#[cfg(unix)]
#[test]
fn command_agent_that_never_answers_a_turn_times_out() {
    let script = after_ping("cat > /dev/null");
    let (report, _) = command_fault(&script, "", &["--timeout", "1s"], 20);
    let error = case_error(&report);
    common::assert_contains(&error, &["timed out: no complete reply within 1s"]);
}

#[cfg(unix)]
#[test]
fn command_agent_that_never_answers_its_ping_fails_start_up() {
    let (_, text) = command_fault("cat > /dev/null", ", startup_timeout: 1s", &[], 20);
    common::assert_contains(&text, &["did not answer the start-up ping within 1s"]);
}

/// An agent that prints text instead of the protocol's JSON, or a reply without the ping's
/// `id`, is told what it printed when its start-up times out: the last lines, each cut short
/// and with control characters escaped, and how many there were.
#[cfg(unix)]
#[test]
fn command_agent_printing_no_reply_to_its_ping_is_told_what_it_printed() {
    let long = "x".repeat(300);
    let script = format!(
        "echo 'Starting agent'; echo {long}; printf 'ready \\033[32mOK\\033[0m\\n'; \
         IFS= read -r line; echo '{{\"messages\":[{{\"text\":\"hi\"}}]}}'; cat > /dev/null"
    );
    let (_, text) = command_fault(&script, ", startup_timeout: 1s", &[], 20);
    let cut = format!("`{}...`", "x".repeat(120));
    common::assert_contains(
        &text,
        &[
            "did not answer the start-up ping within 1s",
            "it printed 4 stdout lines that are not replies (JSON with an `id`), ignored; the \
             last 3: ",
            &cut,
            r"`ready \u{1b}[32mOK\u{1b}[0m`",
            r#"`{"messages":[{"text":"hi"}]}`"#,
        ],
    );
    // The first line is past the last three, and no escape sequence reaches the terminal.
    common::assert_lacks(&text, &["`Starting agent`", "\u{1b}"]);
}

#[cfg(unix)]
#[test]
fn command_agent_ignoring_sigterm_is_killed_with_its_children() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 1);
    // Ignores SIGTERM (its children inherit that), starts a child, and never answers a turn.
    let script =
        after_ping("trap '' TERM\nsleep 3600 &\necho $$ $! > pids\nwhile :; do sleep 1; done");
    command_agent(dir.path(), &script, "");
    let started = Instant::now();
    let (report, _) = run_fault(dir.path(), &["--timeout", "1s"], Duration::from_secs(20));
    assert!(case_error(&report).contains("timed out"));
    // One second of turn, then the grace period before SIGKILL: not much more.
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_no_agent_left(dir.path());
}

// ---------------------------------------------------------------------------------------------
// goldgate's own faults

#[cfg(unix)]
#[test]
fn sigterm_to_goldgate_writes_the_reports_marked_incomplete_and_stops_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 3);
    command_agent(
        dir.path(),
        &after_ping("echo $$ > pids\ncat > /dev/null"),
        "",
    );
    let stopped = terminate_goldgate(dir.path());
    assert_stopped_cleanly(dir.path(), stopped, 3);
}

#[cfg(unix)]
#[test]
fn sigterm_during_the_agents_start_up_still_writes_the_reports_and_stops_it() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 2);
    // A build that takes a minute: its `sleep` is a child of the agent, in its process group.
    let script = format!("sleep 60 &\necho $$ $! > pids\nwait\n{}", after_ping("cat"));
    command_agent(dir.path(), &script, "");
    let stopped = terminate_goldgate(dir.path());
    let report: Value =
        serde_json::from_slice(&fs::read(dir.path().join("report.json")).unwrap()).unwrap();
    assert!(
        report["agent"]
            .as_str()
            .unwrap()
            .contains("interrupted during its start-up"),
        "{report}"
    );
    assert_stopped_cleanly(dir.path(), stopped, 2);
}

/// A directory nobody may write in: a read-only one, or /sys where the tests run as root.
#[cfg(unix)]
fn read_only_dir(base: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = base.join("read-only");
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o555)).unwrap();
    if fs::write(dir.join("probe"), "").is_ok() {
        // Root ignores the mode bits; sysfs refuses new files even to root.
        let _ = fs::remove_file(dir.join("probe"));
        return Path::new("/sys").to_path_buf();
    }
    dir
}

#[cfg(unix)]
#[test]
fn output_into_a_read_only_directory_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 1);
    command_agent(dir.path(), "touch agent-started; cat > /dev/null", "");
    let read_only = read_only_dir(dir.path());
    let target = read_only.join("report.json");
    let target = target.to_str().unwrap();
    let outcome = common::goldgate(dir.path(), &["run", "goldens", "--output", target]).exits(2);
    assert!(
        outcome
            .stderr
            .contains(&format!("--output {target}: cannot write in")),
        "{}",
        outcome.stderr
    );
    assert!(!Path::new(target).exists());
    assert!(
        !dir.path().join("agent-started").exists(),
        "the agent was started"
    );
    if read_only.starts_with(dir.path()) {
        let written = fs::read_dir(&read_only).unwrap().count();
        assert_eq!(written, 0, "something was half-written");
    }
}

#[test]
fn a_truncated_or_foreign_baseline_is_refused_with_its_path() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 1);
    command_agent(dir.path(), "true", "");
    let whole = r#"{"schema_version": 1, "goldgate_version": "0.1.0", "agent": "x", "cases": ["#;
    common::write(dir.path(), "truncated.json", whole);
    common::write(
        dir.path(),
        "package.json",
        r#"{"name": "web", "version": "1.0.0", "dependencies": {}}"#,
    );
    for (file, words) in [
        ("truncated.json", "truncated?"),
        ("package.json", "not a goldgate JSON report"),
    ] {
        let outcome = common::goldgate(
            dir.path(),
            &["run", "goldens", "--baseline", file, "--fail-on-regress"],
        )
        .exits(2);
        assert!(outcome.stderr.contains(file), "{}", outcome.stderr);
        assert!(outcome.stderr.contains(words), "{}", outcome.stderr);
    }
}

/// `ulimit -f` makes every write past a few KiB fail, as a full disk does.
#[cfg(unix)]
#[test]
fn a_report_that_does_not_fit_on_the_disk_is_an_exit_2_with_nothing_half_written() {
    let dir = tempfile::tempdir().unwrap();
    suite(dir.path(), 20);
    let script = format!(
        r#"{SH_REPLY}
while IFS= read -r line; do
  reply_with_rest '"messages":[{{"text":"Your order ORD-12345 has shipped."}}]'
done"#
    );
    command_agent(dir.path(), &script, "");
    fs::create_dir(dir.path().join("out")).unwrap();
    // 8 blocks of 512 bytes: the config and goldens are read, the report cannot be written.
    let script = format!(
        "ulimit -f 8 && exec '{}' run goldens --output out/report.json",
        env!("CARGO_BIN_EXE_goldgate")
    );
    let output = std::process::Command::new("sh")
        .args(["-c", &script])
        .current_dir(dir.path())
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    common::assert_contains(
        &stderr,
        &["cannot write the JSON report to out/report.json: File too large"],
    );
    let left: Vec<_> = fs::read_dir(dir.path().join("out")).unwrap().collect();
    assert!(left.is_empty(), "half-written: {left:?}");
}
