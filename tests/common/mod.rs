//! Helpers shared by the integration tests.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::Value;

/// The example agent, built once. Cargo names the executable in its JSON messages, so the
/// target directory (`CARGO_TARGET_DIR`, `--target`) never has to be guessed.
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
