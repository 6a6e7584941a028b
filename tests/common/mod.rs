//! Helpers shared by the integration tests.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::Value;

/// The example agent, built once. Cargo names the executable in its JSON messages, so the
/// target directory (`CARGO_TARGET_DIR`, `--target`) never has to be guessed.
#[allow(dead_code)] // Not every test crate plays the demo agent.
pub fn support_agent() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let output = std::process::Command::new(env!("CARGO"))
                .args([
                    "build",
                    "--package",
                    "support-agent",
                    "--bin",
                    "support-agent",
                ])
                .arg("--message-format=json-render-diagnostics")
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .stderr(std::process::Stdio::inherit())
                .output()
                .expect("cargo runs");
            assert!(output.status.success(), "building the example agent failed");
            String::from_utf8_lossy(&output.stdout)
                .lines()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .find(|message| message["target"]["name"] == "support-agent")
                .and_then(|message| message["executable"].as_str().map(PathBuf::from))
                .expect("cargo reports the example's executable")
        })
        .clone()
}

/// Serves `app` on a free port of 127.0.0.1, on its own thread and runtime, for the rest of
/// the test process: a real loopback agent for `goldgate run --agent-url`.
#[allow(dead_code)] // Not every test crate starts an HTTP agent.
pub fn serve(app: axum::Router) -> std::net::SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().expect("a runtime for the agent");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("a loopback port");
            tx.send(listener.local_addr().expect("a bound address"))
                .expect("the test waits for the address");
            axum::serve(listener, app).await.expect("the agent serves");
        });
    });
    rx.recv().expect("the agent starts")
}

/// Whether `name` (an external checker: xmllint, actionlint) runs here, probed with
/// `version_arg`. When it does not, the test that needs it fails under CI on Linux, where
/// `.ci/run` and the Linux GitHub job install it (`install` says how), so that CI cannot pass
/// the check silently; elsewhere the check is skipped with a line saying why.
#[allow(dead_code)] // Not every test crate needs an external tool.
pub fn has_tool(name: &str, version_arg: &str, install: &str) -> bool {
    let runs = std::process::Command::new(name)
        .arg(version_arg)
        .output()
        .is_ok_and(|output| output.status.success());
    if runs {
        return true;
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    assert!(
        !(ci && cfg!(target_os = "linux")),
        "{name} does not run: {install} (CI must not skip this check)"
    );
    eprintln!("skipping the {name} check: {name} does not run here ({install})");
    false
}
