//! The operating-system side of a command agent's process: stopping its whole process group
//! (SIGTERM, then SIGKILL after a grace period), and reading its stdout a bounded line at a
//! time, so that neither a stubborn agent nor an endless one outlives or outgrows goldgate.

use tokio::io::AsyncBufReadExt;
use tokio::process::Child;

use super::STOP_GRACE;

/// SIGTERM to the process group, then SIGKILL to whatever is left after [`STOP_GRACE`].
pub(super) async fn terminate(child: &mut Child, pid: Option<u32>) {
    let deadline = tokio::time::Instant::now() + STOP_GRACE;
    kill_group(pid, Signal::Term);
    let _ = tokio::time::timeout_at(deadline, child.wait()).await;
    // The leader may leave at once (`sh -c` running the agent) while the agent it started
    // still winds down: the group keeps the rest of the grace before SIGKILL.
    while group_alive(pid) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    kill_group(pid, Signal::Kill);
    let _ = child.kill().await;
}

/// Some process of the group is still there, once the members goldgate adopted (see
/// [`adopt_orphans`]) and that have exited are reaped: a shell that does not `exec` its agent
/// (`sh -c 'cd dir && ./agent'`) leaves it to goldgate, and its zombie would count as alive
/// for the whole grace period.
fn group_alive(pid: Option<u32>) -> bool {
    #[cfg(unix)]
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: waitpid(2) with no status pointer only reaps exited children in the group.
        while unsafe { libc::waitpid(-pid, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
        // SAFETY: kill(2) with signal 0 only checks that the group exists; no memory is touched.
        return unsafe { libc::kill(-pid, 0) } == 0;
    }
    let _ = pid;
    false
}

/// Makes goldgate the parent of every orphaned descendant of its agents (Linux's child
/// subreaper), so that one that left the agent's process group can still be found and ended.
pub(super) fn adopt_orphans() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(2) with integer arguments; it changes only this process's reaper flag.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// Ends the orphans goldgate adopted (see [`adopt_orphans`]): SIGTERM, SIGKILL to whatever is
/// left after [`STOP_GRACE`], each reaped. Called once every agent process has been stopped,
/// when goldgate has no child of its own left.
pub(super) async fn end_orphans() {
    #[cfg(target_os = "linux")]
    {
        let orphans = children();
        if orphans.is_empty() {
            return;
        }
        orphans.iter().for_each(|&pid| signal(pid, libc::SIGTERM));
        let deadline = tokio::time::Instant::now() + STOP_GRACE;
        while tokio::time::Instant::now() < deadline && !reap(&orphans) {
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        orphans.iter().for_each(|&pid| signal(pid, libc::SIGKILL));
        reap(&orphans);
    }
}

/// The processes whose parent is goldgate, from /proc.
#[cfg(target_os = "linux")]
fn children() -> Vec<libc::pid_t> {
    // SAFETY: getpid(2) cannot fail.
    let me = unsafe { libc::getpid() };
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| {
            entry
                .ok()?
                .file_name()
                .to_str()?
                .parse::<libc::pid_t>()
                .ok()
        })
        .filter(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                // `pid (comm) state ppid ...`: the name may hold spaces, so read after it.
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse().ok())
                    == Some(me)
            })
        })
        .collect()
}

#[cfg(target_os = "linux")]
fn signal(pid: libc::pid_t, signal: libc::c_int) {
    // SAFETY: kill(2) takes plain integers; a process already gone is ESRCH, which is fine.
    unsafe {
        libc::kill(pid, signal);
    }
}

/// Reaps whichever of `pids` have exited; whether all have.
#[cfg(target_os = "linux")]
fn reap(pids: &[libc::pid_t]) -> bool {
    pids.iter().all(|&pid| {
        let mut status = 0;
        // SAFETY: waitpid(2) on a child of ours, without blocking; it writes only `status`.
        let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        done == pid || done == -1
    })
}

/// How a bounded line read ended.
pub(super) enum Line {
    /// A line (with its newline, unless the stream ended first) is in the buffer.
    Complete,
    /// The line was longer than the limit and was skipped up to its newline: its first
    /// `limit` bytes are in the buffer, `length` is the whole line's.
    TooLong { length: u64 },
    /// The stream ended.
    End,
}

/// `read_until(b'\n')` that keeps at most `limit` bytes: the rest of a longer line is read and
/// thrown away (counted), so memory stays bounded whatever the process prints.
pub(super) async fn read_line<R: tokio::io::AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<Line> {
    let mut length: u64 = 0;
    loop {
        let available = reader.fill_buf().await?;
        let too_long = length > limit as u64;
        if available.is_empty() {
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Line::TooLong { length },
                (false, true) => Line::End,
                (false, false) => Line::Complete,
            });
        }
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(newline) => (&available[..=newline], true),
            None => (available, false),
        };
        let used = chunk.len();
        // The start of a line past the limit is kept: it may name the request it answers.
        let room = limit.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..used.min(room)]);
        length += used as u64;
        reader.consume(used);
        if done {
            return Ok(if length > limit as u64 {
                Line::TooLong { length }
            } else {
                Line::Complete
            });
        }
    }
}

#[derive(Clone, Copy)]
pub(super) enum Signal {
    Term,
    Kill,
}

/// A process group to kill when the process is dropped: the last word against orphans.
pub(super) struct Group(pub(super) Option<u32>);

impl Drop for Group {
    fn drop(&mut self) {
        kill_group(self.0, Signal::Kill);
    }
}

/// Sends `signal` to the process group led by `pid` (started with `process_group(0)`).
#[cfg(unix)]
pub(super) fn kill_group(pid: Option<u32>, signal: Signal) {
    let Some(pid) = pid.and_then(|pid| libc::pid_t::try_from(pid).ok()) else {
        return;
    };
    let signal = match signal {
        Signal::Term => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    };
    // SAFETY: kill(2) takes plain integers and touches no memory of ours; a group that is
    // already gone is ESRCH, which is fine.
    unsafe {
        libc::kill(-pid, signal);
    }
}

#[cfg(not(unix))]
pub(super) fn kill_group(_pid: Option<u32>, _signal: Signal) {}

#[cfg(test)]
mod tests {
    use super::{Line, read_line};

    #[tokio::test]
    async fn a_line_past_the_limit_is_skipped_whole_and_the_next_one_read() {
        let text = format!("{}\n{{\"id\":1}}\nend", "x".repeat(100));
        let mut reader = tokio::io::BufReader::with_capacity(8, text.as_bytes());
        let mut line = Vec::new();
        let mut read = Vec::new();
        loop {
            line.clear();
            match read_line(&mut reader, &mut line, 32).await.unwrap() {
                Line::End => break,
                Line::TooLong { length } => read.push(format!(
                    "{length} bytes from {}",
                    String::from_utf8_lossy(&line)
                )),
                Line::Complete => read.push(String::from_utf8(line.clone()).unwrap()),
            }
        }
        let first = format!("101 bytes from {}", "x".repeat(32));
        assert_eq!(read, [first.as_str(), "{\"id\":1}\n", "end"]);
    }
}
