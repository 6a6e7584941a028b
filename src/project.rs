//! The project root, and golden files named from it.
//!
//! Reports match a case across runs by its file and id ([`crate::shard::key`]), so the file
//! must be named the same way however goldgate was started: `goldgate run .` from `evals/`,
//! `goldgate run /abs/repo/evals` and `goldgate run evals` from the root all name
//! `evals/a.yaml`. The anchor is the project root of the golden's directory: the nearest
//! ancestor holding `.git` (a directory, or a file in worktrees and submodules), else the
//! nearest holding `goldgate.yaml`, else the current directory. Names use `/` separators so
//! that a baseline written on Windows matches one written on Linux.
//!
//! Paths are resolved lexically (`.` and `..` dropped, links kept), so that goldens reached
//! through a linked directory inside the project keep the name they have there.

use std::path::{Component, Path, PathBuf};

use crate::config::DEFAULT_FILE as CONFIG_FILE;

/// The project root of `dir` (absolute): see the module doc; `cwd` when neither marker is
/// found above it.
pub fn root(dir: &Path, cwd: &Path) -> PathBuf {
    let holding = |marker: &str| dir.ancestors().find(|d| d.join(marker).exists());
    holding(".git")
        .or_else(|| holding(CONFIG_FILE))
        .unwrap_or(cwd)
        .to_path_buf()
}

/// `file` (relative to `cwd`, or absolute) as reports name it: relative to its project root,
/// `/`-separated. Absolute when it lies outside that root (a file outside the current
/// directory, in no project).
pub fn name(file: &Path, cwd: &Path) -> String {
    let absolute = lexical(&cwd.join(file));
    let dir = absolute.parent().unwrap_or(&absolute);
    let root = root(dir, cwd);
    let relative = absolute
        .strip_prefix(&root)
        .ok()
        .map(Path::to_path_buf)
        .or_else(|| {
            // Only the `cwd` fallback can miss: the same place reached by another path (macOS's
            // `/var` is `/private/var`).
            let (file, root) = (absolute.canonicalize().ok()?, root.canonicalize().ok()?);
            file.strip_prefix(root).ok().map(Path::to_path_buf)
        });
    match relative {
        Some(relative) => slashed(&relative),
        None => {
            let mut name = slashed(&absolute);
            if absolute.has_root() && !name.starts_with('/') {
                name.insert(0, '/');
            }
            name
        }
    }
}

/// `path` with `.` dropped and `..` taking off the component before it.
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn slashed(path: &Path) -> String {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::name;
    use std::fs;
    use std::path::Path;

    #[test]
    fn every_way_of_naming_a_golden_gives_one_name() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        fs::create_dir_all(repo.join(".git")).unwrap();
        fs::create_dir_all(repo.join("evals/sub")).unwrap();
        let evals = repo.join("evals");
        let want = "evals/a.yaml";
        assert_eq!(name(Path::new("evals/a.yaml"), &repo), want);
        assert_eq!(name(Path::new("./a.yaml"), &evals), want);
        assert_eq!(name(Path::new("../a.yaml"), &evals.join("sub")), want);
        assert_eq!(name(&evals.join("a.yaml"), dir.path()), want);
        assert_eq!(name(&evals.join("./sub/../a.yaml"), Path::new("/")), want);
    }

    #[test]
    fn a_git_file_marks_a_root_and_beats_a_nearer_config() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("wt");
        fs::create_dir_all(repo.join("evals")).unwrap();
        fs::write(repo.join(".git"), "gitdir: /elsewhere\n").unwrap();
        fs::write(repo.join("evals/goldgate.yaml"), "").unwrap();
        assert_eq!(
            name(Path::new("a.yaml"), &repo.join("evals")),
            "evals/a.yaml"
        );
    }

    #[test]
    fn without_git_the_config_then_the_current_directory_anchor() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        fs::create_dir_all(project.join("evals")).unwrap();
        // A `.git` above the temporary directory would win; the test needs none.
        if dir.path().ancestors().any(|d| d.join(".git").exists()) {
            return;
        }
        assert_eq!(
            name(Path::new("p/evals/a.yaml"), dir.path()),
            "p/evals/a.yaml"
        );
        fs::write(project.join("goldgate.yaml"), "").unwrap();
        assert_eq!(
            name(Path::new("a.yaml"), &project.join("evals")),
            "evals/a.yaml"
        );
        let outside = tempfile::tempdir().unwrap();
        let elsewhere = outside.path().join("x.yaml");
        assert_eq!(
            name(&elsewhere, dir.path()),
            format!("/{}", super::slashed(&elsewhere))
        );
    }
}
