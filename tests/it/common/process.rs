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
/// own peak or that of any descendant it waited for.
///
/// Neither `RUSAGE_CHILDREN` (the largest child of any test in this binary) nor `wait4` on a
/// child of this process will do: a child's peak starts at its parent's at the moment it was
/// spawned, and this test binary may hold hundreds of megabytes for another test. So a small
/// Python process starts `command` and reports that child's own peak, from `wait4`.
/// Killed with its process group after 120 s, as [`super::command`] is, so that a hung run
/// fails the test.
#[cfg(unix)]
pub fn measured(command: &mut Command) -> (super::Outcome, u64) {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    const REPORT_PEAK: &str = "import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
open(sys.argv[1], 'w').write(str(usage.ru_maxrss))
os._exit(os.waitstatus_to_exitcode(status) % 256)";
    let peak_file = tempfile::NamedTempFile::new().expect("a temporary file");
    let mut wrapper = Command::new("python3");
    wrapper
        .args(["-c", REPORT_PEAK])
        .arg(peak_file.path())
        .arg(command.get_program())
        .args(command.get_args());
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => wrapper.env(name, value),
            None => wrapper.env_remove(name),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        wrapper.current_dir(dir);
    }
    let mut child = wrapper
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 starts (it measures the run's memory)");
    let drain = |mut stream: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = stream.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped")));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("the run can be waited for") {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            // SAFETY: kill(2) on the process group this test made; it touches no memory.
            unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let outcome = super::Outcome {
        code: status.code(),
        stdout: stdout.join().expect("stdout is read"),
        stderr: stderr.join().expect("stderr is read"),
    };
    let peak: u64 = std::fs::read_to_string(peak_file.path())
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak was reported: {}", outcome.stderr));
    // Linux reports KiB, macOS bytes.
    let unit = if cfg!(target_os = "macos") { 1024 } else { 1 };
    (outcome, peak / unit)
}
