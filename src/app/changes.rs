//! `run --changed-since REF`: the goldens a change touched, found with the `git` binary.
//!
//! A pull request is compared with where it left its base, not with the base's tip: the files
//! that changed are those between the merge base of REF and HEAD and the working tree
//! (`git diff --name-only MERGE_BASE`, which also holds what is staged or not yet committed),
//! and the untracked files git does not ignore. A commit that landed on the base since the
//! branch was cut is not the PR's change and selects nothing.
//!
//! Selection fails closed: part of the suite plays only when every changed file is a golden
//! of the suite (its cases play) or matches an `affects_nothing:` glob (docs, say). Every case
//! plays when any other file changed: the config, what the agent is made of as far as the
//! config says (an LLM agent's prompt and tools files, the files a command agent's command
//! line names, a replay agent's transcripts), a `regtrace.config.yaml` (its sets' settings and
//! quality gates), a path matching an `affects:` glob (which wins over `affects_nothing:`),
//! and any file goldgate knows nothing of: an HTTP agent's source, a lockfile. A change
//! goldgate cannot place must not leave the agent untested.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use globset::GlobMatcher;

use crate::config::{AgentConfig, Config, affects};
use crate::load::Suite;
use crate::model::Format;
use crate::project::lexical;
use crate::shard::case_key;

/// The files changed since a base.
#[derive(Clone, Debug)]
pub struct Changes {
    /// The base, as given (`origin/main`).
    pub since: String,
    /// The merge base of the base and HEAD: the commit compared with.
    pub merge_base: String,
    /// The repository's top level.
    pub root: PathBuf,
    /// Each changed path, relative to `root`, `/`-separated as git writes them.
    pub files: Vec<String>,
}

/// Why the changes cannot be known: the run stops (exit 2) rather than guess.
#[derive(Debug, thiserror::Error)]
pub enum ChangesError {
    #[error(
        "--changed-since: cannot run git ({0})\nhint: install git, or leave --changed-since out to run every case"
    )]
    NoGit(std::io::Error),
    #[error("--changed-since: {} is not in a git repository ({why})\nhint: run goldgate inside the repository's checkout, or leave --changed-since out", dir.display())]
    NotARepository { dir: PathBuf, why: String },
    #[error(
        "--changed-since: `{0}` names no commit here\nhint: a branch of the remote needs its remote's name (`origin/main`); in CI, fetch the base first (`git fetch origin main`, or actions/checkout with `fetch-depth: 0`)"
    )]
    UnknownRef(String),
    #[error(
        "--changed-since: `{0}` and HEAD have no common ancestor here\nhint: a shallow clone (actions/checkout's default `fetch-depth: 1`) lacks the history to find where the branch left its base: use `fetch-depth: 0`, or deepen it (`git fetch --deepen=100 origin`)"
    )]
    NoMergeBase(String),
    #[error("--changed-since: `git {args}` failed: {stderr}")]
    Git { args: String, stderr: String },
}

/// Runs `git args` in `dir`: its standard output, or its standard error as the error.
fn git(dir: &Path, args: &[&str]) -> Result<Result<Vec<u8>, String>, ChangesError> {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(ChangesError::NoGit)?;
    Ok(if output.status.success() {
        Ok(output.stdout)
    } else {
        Err(String::from_utf8_lossy(&output.stderr).trim().to_owned())
    })
}

/// `git args` in `dir`, its failure an error naming the command.
fn git_ok(dir: &Path, args: &[&str]) -> Result<Vec<u8>, ChangesError> {
    git(dir, args)?.map_err(|stderr| ChangesError::Git {
        args: args.join(" "),
        stderr,
    })
}

fn line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim().to_owned()
}

/// What changed since `since` (a branch, tag or commit) in the repository holding `dir`.
pub fn since(since: &str, dir: &Path) -> Result<Changes, ChangesError> {
    let root = match git(dir, &["rev-parse", "--show-toplevel"])? {
        Ok(out) => PathBuf::from(line(&out)),
        Err(why) => {
            return Err(ChangesError::NotARepository {
                dir: dir.to_owned(),
                why,
            });
        }
    };
    // A revision starting with `-` would be read as an option.
    if since.starts_with('-') || since.trim().is_empty() {
        return Err(ChangesError::UnknownRef(since.to_owned()));
    }
    let commit = format!("{since}^{{commit}}");
    let base = match git(&root, &["rev-parse", "--verify", "--quiet", &commit])? {
        Ok(out) => line(&out),
        Err(_) => return Err(ChangesError::UnknownRef(since.to_owned())),
    };
    let merge_base = match git(&root, &["merge-base", &base, "HEAD"])? {
        Ok(out) => line(&out),
        Err(_) => return Err(ChangesError::NoMergeBase(since.to_owned())),
    };
    let diff = ["diff", "--name-only", "--no-renames", "-z", &merge_base];
    let mut files = names(&git_ok(&root, &diff)?);
    let untracked = ["ls-files", "--others", "--exclude-standard", "-z"];
    files.extend(names(&git_ok(&root, &untracked)?));
    files.sort();
    files.dedup();
    Ok(Changes {
        since: since.to_owned(),
        merge_base,
        root,
        files,
    })
}

/// NUL-separated names.
fn names(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|&b| b == 0)
        .filter(|name| !name.is_empty())
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .collect()
}

/// What a change selects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Affected {
    /// Every case: these changed files (relative to the repository) may affect any golden:
    /// what the agent is made of, a path of `affects:`, or any file that is neither a golden
    /// nor matched by `affects_nothing:` (goldgate cannot tell that it does not matter).
    All(Vec<String>),
    /// The cases (by [`crate::shard::key`]) of the golden files that changed; maybe none.
    Cases {
        keys: HashSet<String>,
        /// The other changed files, each matched by an `affects_nothing:` glob.
        affecting_nothing: Vec<String>,
    },
}

impl Changes {
    /// Each changed file, absolute, with its name in the repository.
    fn paths(&self) -> Vec<(PathBuf, &str)> {
        self.files
            .iter()
            .map(|name| (resolved(&self.root.join(name)), name.as_str()))
            .collect()
    }

    /// The cases of `suite` this change selects, under `config` and the `agent` the run
    /// tests; relative paths are relative to `cwd`. Part of the suite only when every changed
    /// file is a golden or matches `affects_nothing:`; anything else plays every case.
    pub fn affected(
        &self,
        suite: &Suite,
        config: &Config,
        agent: Option<&AgentConfig>,
        cwd: &Path,
    ) -> Affected {
        let depends = Dependencies::of(suite, config, agent, cwd);
        let goldens: HashSet<PathBuf> = suite
            .files
            .iter()
            .map(|file| resolved(&cwd.join(&file.path)))
            .collect();
        let was_golden = |path: &Path| !path.exists() && goldens.iter().any(|g| sibling(g, path));
        let (mut whole, mut affecting_nothing) = (Vec::new(), Vec::new());
        let mut changed_goldens = HashSet::new();
        for (path, name) in self.paths() {
            if depends.affects(&path) {
                whole.push(name.to_owned());
            } else if goldens.contains(&path) {
                changed_goldens.insert(path);
            } else if was_golden(&path) {
                // Deleted: its cases did not run, and the gate reports the baseline's missing.
            } else if depends.affects_nothing(&path) {
                affecting_nothing.push(name.to_owned());
            } else {
                whole.push(name.to_owned());
            }
        }
        if !whole.is_empty() {
            return Affected::All(whole);
        }
        let keys = suite
            .files
            .iter()
            .filter(|file| changed_goldens.contains(&resolved(&cwd.join(&file.path))))
            .flat_map(|file| file.cases.iter().map(|c| case_key(c)))
            .collect();
        Affected::Cases {
            keys,
            affecting_nothing,
        }
    }
}

/// `path` sits in `golden`'s folder with its extension: once deleted, the golden it was
/// cannot be told apart by its content, so its place and name tell it.
fn sibling(golden: &Path, path: &Path) -> bool {
    golden.parent() == path.parent() && golden.extension() == path.extension()
}

/// `path` made absolute without `.` and `..`, through its links when it exists (macOS's
/// `/var` is `/private/var`, and git names the top level by its real path).
fn resolved(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| lexical(path))
}

/// What the config says of the files around the goldens: those the whole suite depends on
/// (absolute), and the globs of `affects:` and `affects_nothing:`.
struct Dependencies {
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
    config_dir: PathBuf,
    affects: Vec<GlobMatcher>,
    affects_nothing: Vec<GlobMatcher>,
}

impl Dependencies {
    fn of(suite: &Suite, config: &Config, agent: Option<&AgentConfig>, cwd: &Path) -> Self {
        let absolute = |path: &Path| resolved(&cwd.join(path));
        let mut files: Vec<PathBuf> = config.path.iter().map(|p| absolute(p)).collect();
        let mut dirs: Vec<PathBuf> = Vec::new();
        match agent {
            Some(AgentConfig::Llm(llm)) => {
                files.extend(llm.settings.files.iter().map(|p| absolute(p)));
            }
            Some(AgentConfig::Command {
                argv, working_dir, ..
            }) => {
                let dir = absolute(working_dir.as_deref().unwrap_or(Path::new(".")));
                // `sh -c 'python agent.py'` names its files inside one argument.
                let words = argv.iter().flat_map(|arg| arg.split_whitespace());
                files.extend(words.map(|word| dir.join(word)).filter(|p| p.is_file()));
            }
            Some(AgentConfig::Replay { dir }) => dirs.push(absolute(dir)),
            _ => {}
        }
        // A regtrace.config.yaml: loaded as a file of its own that holds no case.
        files.extend(
            suite
                .files
                .iter()
                .filter(|f| f.cases.is_empty() && f.format == Some(Format::RegtraceSet))
                .map(|f| absolute(&f.path)),
        );
        let globs = |texts: &[String]| -> Vec<GlobMatcher> {
            texts.iter().filter_map(|g| affects::glob(g).ok()).collect()
        };
        Self {
            files: files.iter().map(|p| resolved(p)).collect(),
            dirs,
            config_dir: config
                .path
                .as_deref()
                .and_then(Path::parent)
                .map_or_else(|| resolved(cwd), absolute),
            affects: globs(&config.affects),
            affects_nothing: globs(&config.affects_nothing),
        }
    }

    /// The whole suite depends on `path`: the config, what the agent is made of, `affects:`.
    fn affects(&self, path: &Path) -> bool {
        self.files.iter().any(|f| f == path)
            || self.dirs.iter().any(|d| path.starts_with(d))
            || self.matches(&self.affects, path)
    }

    /// `path` matches an `affects_nothing:` glob.
    fn affects_nothing(&self, path: &Path) -> bool {
        self.matches(&self.affects_nothing, path)
    }

    /// `path`, relative to the config's directory, matches one of `globs`.
    fn matches(&self, globs: &[GlobMatcher], path: &Path) -> bool {
        path.strip_prefix(&self.config_dir).is_ok_and(|relative| {
            let name = relative.to_string_lossy().replace('\\', "/");
            globs.iter().any(|g| g.is_match(&name))
        })
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;

    use super::{Affected, Changes};
    use crate::config::{AgentConfig, Config};
    use crate::load::Suite;

    fn changes(root: &Path, files: &[&str]) -> Changes {
        Changes {
            since: "main".into(),
            merge_base: "0".repeat(40),
            root: root.to_owned(),
            files: files.iter().map(|f| (*f).to_owned()).collect(),
        }
    }

    /// What `files` changing selects under the config `yaml` (written to goldgate.yaml).
    fn affected(root: &Path, yaml: &str, files: &[&str]) -> Affected {
        fs::write(root.join("goldgate.yaml"), yaml).unwrap();
        let config = Config::load(&root.join("goldgate.yaml")).unwrap();
        let agent = config.agent.clone();
        changes(root, files).affected(&Suite::default(), &config, agent.as_ref(), root)
    }

    fn all(files: &[&str]) -> Affected {
        Affected::All(files.iter().map(|f| (*f).to_owned()).collect())
    }

    #[test]
    fn what_the_agent_is_made_of_plays_every_case() {
        let dir = tempfile::tempdir().unwrap();
        let root = &dir.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("agent")).unwrap();
        fs::write(root.join("agent/prompt.md"), "You help.").unwrap();
        fs::write(root.join("agent/tools.json"), "[]").unwrap();
        fs::write(root.join("run.py"), "").unwrap();
        let llm = "agent: { openai: { system_prompt: agent/prompt.md, tools: agent/tools.json } }";
        assert_eq!(
            affected(root, llm, &["agent/prompt.md"]),
            all(&["agent/prompt.md"])
        );
        assert_eq!(
            affected(root, llm, &["agent/tools.json"]),
            all(&["agent/tools.json"])
        );
        assert_eq!(
            affected(root, llm, &["goldgate.yaml"]),
            all(&["goldgate.yaml"])
        );
        let command = "agent: { command: [python3, run.py, --stdio] }";
        assert_eq!(affected(root, command, &["run.py"]), all(&["run.py"]));
        let replay = "agent: { replay: transcripts }";
        assert_eq!(
            affected(root, replay, &["transcripts/a.json"]),
            all(&["transcripts/a.json"])
        );
        let http = "agent: { http: { url: 'http://127.0.0.1:9' } }";
        let globs = format!("affects: ['server/**', '*.toml']\n{http}");
        assert_eq!(
            affected(root, &globs, &["server/src/main.rs"]),
            all(&["server/src/main.rs"])
        );
        assert_eq!(
            affected(root, &globs, &["Cargo.toml"]),
            all(&["Cargo.toml"])
        );
    }

    #[test]
    fn a_change_goldgate_cannot_place_plays_every_case() {
        let dir = tempfile::tempdir().unwrap();
        let root = &dir.path().canonicalize().unwrap();
        let http = "agent: { http: { url: 'http://127.0.0.1:9' } }";
        // An HTTP agent's source, a lockfile: goldgate knows nothing of them.
        assert_eq!(
            affected(root, http, &["agent/server.py", "README.md"]),
            all(&["agent/server.py", "README.md"])
        );
        let declared =
            format!("affects_nothing: ['**/*.md', 'docs/**']\naffects: ['docs/prompt.md']\n{http}");
        assert_eq!(
            affected(root, &declared, &["README.md", "docs/guide/a.png"]),
            Affected::Cases {
                keys: Default::default(),
                affecting_nothing: vec!["README.md".into(), "docs/guide/a.png".into()],
            }
        );
        // `affects:` wins over `affects_nothing:`; anything else still plays every case.
        assert_eq!(
            affected(root, &declared, &["docs/prompt.md", "README.md"]),
            all(&["docs/prompt.md"])
        );
        assert_eq!(
            affected(root, &declared, &["README.md", "poetry.lock"]),
            all(&["poetry.lock"])
        );
        assert!(matches!(
            Config::load(&root.join("goldgate.yaml")).unwrap().agent,
            Some(AgentConfig::Http { .. })
        ));
    }
}
