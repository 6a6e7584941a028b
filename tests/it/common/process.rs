//! goldgate as a process the test signals, as a user's Ctrl-C or a CI cancel would: started
//! in the background, sent SIGINT or SIGTERM, and waited for within a limit.
#![allow(dead_code)] // Not every test crate signals goldgate.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The goldgate binary as a plain process in `dir`, with no colour and none of the ambient
/// variables (see [`super::command`]).
pub fn command_in(dir: &Path) -> Command {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("goldgate"));
    command.current_dir(dir).env("NO_COLOR", "1");
    for name in super::AMBIENT {
        command.env_remove(name);
    }
    command
}

/// A goldgate run in the background; killed if the test ends before it does.
pub struct Running(Option<Child>);

impl Running {
    /// `goldgate args...` in `dir`, its stdout discarded and its stderr kept for [`Running::finish`].
    pub fn start(dir: &Path, args: &[&str]) -> Running {
        let child = command_in(dir)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("goldgate starts");
        Running(Some(child))
    }

    /// `goldgate run goldens` in `dir` with `extra` flags, writing report.json and junit.xml,
    /// and turns that may take five minutes: a run the test stops before it ends.
    pub fn start_run(dir: &Path, extra: &[&str]) -> Running {
        let mut args = vec!["run", "goldens", "--timeout", "5m"];
        args.extend(["--output", "report.json", "--junit", "junit.xml"]);
        args.extend(extra);
        Running::start(dir, &args)
    }

    fn child(&mut self) -> &mut Child {
        self.0.as_mut().expect("the run is still held")
    }

    /// Sends the signal `name` (`INT`, `TERM`) to goldgate.
    pub fn signal(&mut self, name: &str) {
        let pid = self.child().id().to_string();
        let sent = Command::new("kill")
            .args([format!("-{name}"), pid])
            .status()
            .expect("kill runs");
        assert!(sent.success(), "kill -{name} failed");
    }

    /// Whether goldgate exits within `limit`.
    pub fn exited_within(&mut self, limit: Duration) -> bool {
        let start = Instant::now();
        loop {
            if self
                .child()
                .try_wait()
                .expect("goldgate can be waited for")
                .is_some()
            {
                return true;
            }
            if start.elapsed() >= limit {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Goldgate's exit status and stderr, once it has exited.
    pub fn finish(mut self) -> (Option<i32>, String) {
        let output = self
            .0
            .take()
            .expect("the run is still held")
            .wait_with_output()
            .expect("goldgate can be waited for");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Waits up to 30 s for `path` to exist: an agent's sign that a turn is in flight.
#[track_caller]
pub fn wait_for_file(path: &Path) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether `pid` is still a live process a second after it was told to go (SIGKILL is
/// delivered asynchronously).
pub fn alive(pid: u32) -> bool {
    for _ in 0..20 {
        if !alive_now(pid) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    true
}

/// Whether `pid` is a live process now (a zombie waiting for a parent that never reaps, as in
/// some containers, counts as gone: it holds no resources but its pid).
pub fn alive_now(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        // Without /proc (macOS): kill -0 says whether it exists.
        Err(_) if !Path::new("/proc/self").exists() => Command::new("kill")
            .args(["-0", &pid.to_string()])
            .status()
            .is_ok_and(|s| s.success()),
        Err(_) => false,
    }
}

/// Shell for a command agent written in sh: `reply_with_rest '"messages":[…]'` replies
/// `{"id":N, ...rest}` to the request in `$line` (the ping and every turn).
pub const SH_REPLY: &str = r#"
reply_with_rest() {
  id=$(printf '%s\n' "$line" | sed -n 's/^{"id":\([0-9]*\).*/\1/p')
  printf '{"id":%s,%s}\n' "$id" "$1"
}
"#;
