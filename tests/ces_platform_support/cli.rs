//! Running the binary against the fake: its config, and `goldgate run goldens` with no
//! Google credentials of the machine's.

use std::fs;
use std::net::SocketAddr;
use std::path::Path;

use serde_json::Value;

use super::{APP, Fake};

pub const TOKEN: &str = "ya29.platform-loopback-token-42";
pub const GOOGLE_ENV: [&str; 5] = [
    "CXAS_OAUTH_TOKEN",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GCE_METADATA_HOST",
    "CLOUDSDK_CONFIG",
    "GOOGLE_CLOUD_PROJECT",
];
/// The corpus's SCRAPI platform goldens (dataset form), each conversation name once.
pub fn start(fake: &Fake) -> SocketAddr {
    crate::common::serve(
        axum::Router::new()
            .fallback(super::handle)
            .with_state(fake.clone()),
    )
}

pub fn config(dir: &Path, addr: SocketAddr, platform: &str) {
    let text = format!(
        "agent:\n  ces:\n    app: {APP}\n    base_url: http://{addr}\n    platform: {platform}\nrun:\n  retries: 0\n"
    );
    fs::write(dir.join("goldgate.yaml"), text).unwrap();
}

/// `goldgate run goldens` in `dir`: exit code, report (null when none) and all it printed.
pub fn run(dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> (Option<i32>, Value, String) {
    let report = dir.join("report.json");
    let _ = fs::remove_file(&report);
    let mut command = crate::common::command_in(dir);
    for name in GOOGLE_ENV {
        command.env_remove(name);
    }
    command.env("HOME", dir);
    command.envs(env.iter().copied());
    let output = command
        .args(["run", "--output"])
        .arg(&report)
        .args(extra)
        .arg("goldens")
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    let report =
        serde_json::from_slice(&fs::read(&report).unwrap_or_default()).unwrap_or(Value::Null);
    (output.status.code(), report, printed)
}

pub fn with_token(dir: &Path, extra: &[&str]) -> (Option<i32>, Value, String) {
    run(dir, extra, &[("CXAS_OAUTH_TOKEN", TOKEN)])
}
