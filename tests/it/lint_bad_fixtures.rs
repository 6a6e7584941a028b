//! Every broken file in fixtures/bad/ is linted by the real binary; its stdout must equal the
//! `.expected` file beside it, byte for byte, and the exit code must be 1. One snapshot per bad
//! input, so a changed message or line number shows up as a reviewable diff.

use crate::common;
use std::fs;
use std::path::{Path, PathBuf};

fn bad_fixtures() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir("fixtures/bad")
        .expect("fixtures/bad exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_none_or(|e| e != "expected"))
        .collect();
    files.sort();
    files
}

fn expected_for(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap().to_os_string();
    name.push(".expected");
    path.with_file_name(name)
}

#[test]
fn there_are_enough_bad_fixtures_and_each_has_a_snapshot() {
    let files = bad_fixtures();
    assert!(files.len() >= 25, "only {} bad fixtures", files.len());
    for file in &files {
        assert!(
            expected_for(file).is_file(),
            "{} has no .expected snapshot",
            file.display()
        );
    }
}

#[test]
fn each_bad_fixture_fails_lint_with_its_expected_messages() {
    let mut mismatches = Vec::new();
    for file in bad_fixtures() {
        let Ok(expected) = fs::read_to_string(expected_for(&file)) else {
            continue; // reported by the test above
        };
        let output = common::command().arg("lint").arg(&file).output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        if common::blessing() && output.status.code() == Some(1) {
            fs::write(expected_for(&file), stdout.as_bytes()).unwrap();
            continue;
        }
        if output.status.code() != Some(1) || stdout != expected {
            mismatches.push(format!(
                "{}: exit {:?}\n--- expected\n{expected}--- got\n{stdout}--- stderr\n{}",
                file.display(),
                output.status.code(),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
