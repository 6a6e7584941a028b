//! Bakes in the commit goldgate is built from (`GOLDGATE_COMMIT`) when it is built from a git
//! checkout of its own repository: `goldgate init` pins the Action to that commit, a ref that
//! exists on GitHub before any release is tagged. A build from a packaged release (no git)
//! pins the release's tag instead.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let Ok(dir) = std::env::var("CARGO_MANIFEST_DIR") else {
        return;
    };
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(args)
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        out.status.success().then(|| text.trim().to_owned())
    };
    // A goldgate vendored inside another repository would read that repository's commit.
    let own = git(&["rev-parse", "--show-toplevel"])
        .is_some_and(|top| same_dir(Path::new(&top), Path::new(&dir)));
    let Some(commit) = own.then(|| git(&["rev-parse", "HEAD"])).flatten() else {
        return;
    };
    println!("cargo:rustc-env=GOLDGATE_COMMIT={commit}");
    // Rebuilt when HEAD moves: HEAD itself, the branch it names, and packed refs.
    let mut watched = vec!["HEAD".to_owned(), "packed-refs".to_owned()];
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--git-path", &name]) {
            let path = Path::new(&dir).join(path);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
