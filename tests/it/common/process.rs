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

/// `command` run to its end with both streams read, and the most memory it held, in KiB: its
/// own peak or that of any descendant it waited for. Measured per run with `wait4`, since the
/// process-wide `RUSAGE_CHILDREN` would report the largest child of any test in this binary.
/// Killed after 120 s, as [`super::command`] is, so that a hung run fails the test.
#[cfg(unix)]
pub fn measured(command: &mut Command) -> (super::Outcome, u64) {
    use std::io::Read;
    #[allow(clippy::zombie_processes)] // Reaped by wait4 below, which also gives its usage.
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the command starts");
    let drain = |mut stream: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = stream.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped")));
    let pid = child.id() as libc::pid_t;
    let started = Instant::now();
    let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    loop {
        // SAFETY: wait4 writes the status and usage it is given, for the child this test owns.
        let waited = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        assert!(waited >= 0, "wait4: {}", std::io::Error::last_os_error());
        if waited == pid {
            break;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let outcome = super::Outcome {
        code,
        stdout: stdout.join().expect("stdout is read"),
        stderr: stderr.join().expect("stderr is read"),
    };
    // Linux reports KiB, macOS bytes.
    let unit = if cfg!(target_os = "macos") { 1024 } else { 1 };
    (outcome, usage.ru_maxrss as u64 / unit)
}
