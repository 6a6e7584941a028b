//! Bakes in the commit goldgate is built from (`GOLDGATE_COMMIT`) when it is built from a git
//! checkout of its own repository: `goldgate init` pins the Action to that commit, a ref that
//! exists on GitHub before any release is tagged. A build from a packaged release (no git)
//! pins the release's tag instead.
//!
//! Also embeds the JSON Schemas of `schemas/` without their indentation (a third of their
//! 186 KB, and the binary has an 8 MB budget); `goldgate schema` prints them indented again,
//! byte for byte as checked in (tests/it/schema.rs holds it to that).

use std::fs;
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    embed_schemas();
    bake_in_the_commit();
}

fn bake_in_the_commit() {
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

fn embed_schemas() {
    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR");
    // A directory is scanned whole: an edited, added or removed schema reruns this.
    println!("cargo:rerun-if-changed=schemas");
    for entry in fs::read_dir("schemas").expect("schemas/ is readable") {
        let path = entry.expect("schemas/ is readable").path();
        if path.extension().is_some_and(|ext| ext == "json") {
            let text = fs::read_to_string(&path).expect("a schema is UTF-8 text");
            let name = path.file_name().expect("a file name");
            fs::write(Path::new(&out).join(name), compact(&text)).expect("OUT_DIR is writable");
        }
    }
}

/// JSON without the whitespace between tokens; strings, escapes included, kept as they are.
fn compact(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in json.chars() {
        if in_string {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_ascii_whitespace() {
            out.push(c);
        }
    }
    out
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
