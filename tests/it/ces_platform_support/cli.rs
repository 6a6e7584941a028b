//! Running the binary against the fake: its config, and `goldgate run goldens` with no
//! Google credentials of the machine's.

#![allow(dead_code)] // Each test crate uses some of these.

use std::fs;
use std::net::SocketAddr;
use std::path::Path;

use serde_json::Value;

use super::{APP, Fake, Platform};

pub const TOKEN: &str = "ya29.platform-loopback-token-42";

/// The fake on a loopback port.
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

/// A project in a temporary directory whose goldens are `files` of the shared corpus, or
/// `None` when the corpus is absent (see [`crate::common::corpus`]).
pub fn corpus_goldens(files: &[&str]) -> Option<tempfile::TempDir> {
    let corpus = crate::common::corpus()?;
    let dir = tempfile::tempdir().unwrap();
    copy_goldens(&corpus, dir.path(), files);
    Some(dir)
}

/// [`platform_project`] whose goldens are `files` of the shared corpus, or `None` when the
/// corpus is absent (see [`crate::common::corpus`]).
pub fn corpus_platform(
    files: &[&str],
    set: impl FnOnce(&mut Platform),
) -> Option<(tempfile::TempDir, Fake)> {
    let corpus = crate::common::corpus()?;
    Some(platform_project(
        |dir| copy_goldens(&corpus, dir, files),
        set,
    ))
}

/// `files` (paths in the corpus) copied into `dir/goldens`, where a test reads them back.
fn copy_goldens(corpus: &crate::common::Corpus, dir: &Path, files: &[&str]) {
    fs::create_dir_all(dir.join("goldens")).unwrap();
    for file in files {
        fs::copy(corpus.path(file), golden_copy(dir, file)).unwrap();
    }
}

/// Where [`corpus_goldens`] put the corpus's `file` in the project `dir`.
pub fn golden_copy(dir: &Path, file: &str) -> std::path::PathBuf {
    dir.join("goldens")
        .join(Path::new(file).file_name().unwrap())
}

/// One small golden under `dir/goldens`: a greeting.
pub fn local_golden(dir: &Path) {
    fs::create_dir_all(dir.join("goldens")).unwrap();
    let golden = "conversations:\n  - conversation: greeting\n    turns:\n      - user: Hello\n        agent: Hi! How can I help?\n";
    fs::write(dir.join("goldens/local.yaml"), golden).unwrap();
}

/// A project in a temporary directory with the goldens `goldens` writes, configured in
/// platform mode against a fake that accepts [`TOKEN`] and that `set` prepares first.
pub fn platform_project(
    goldens: impl FnOnce(&Path),
    set: impl FnOnce(&mut Platform),
) -> (tempfile::TempDir, Fake) {
    let dir = tempfile::tempdir().unwrap();
    goldens(dir.path());
    let fake = Fake::accepting(TOKEN);
    set(&mut fake.state());
    config(dir.path(), start(&fake), "true");
    (dir, fake)
}

pub fn with_token(dir: &Path, extra: &[&str]) -> (Option<i32>, Value, String) {
    crate::common::run_without_google(dir, extra, &[("CXAS_OAUTH_TOKEN", TOKEN)])
}
