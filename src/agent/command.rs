//! An agent run as long-lived subprocesses speaking the protocol as JSON lines.
//!
//! Each request is one line on the child's stdin: a [`TurnRequest`] with a unique `id`. Each
//! answer is one line on its stdout: a [`Reply`] echoing that `id`. Sessions are multiplexed
//! over one process, several requests in flight at once; a supervisor task per process reads
//! stdout and routes each reply to the request waiting for its id. With several processes a
//! session always goes to the same one (a stable hash of its id), since the agent keeps the
//! session's state in memory.
//!
//! Start-up is a handshake, timed apart from the turns: each process is sent a ping,
//! `{"id":N,"ping":true,"session":"goldgate-ping","conversation":"goldgate-ping","turn":0,
//! "input":{}}`, and is ready once a line with that `id` comes back (whatever else it holds, so
//! that an agent which answers every request also answers this one). No turn is sent before,
//! so building the agent (`cargo run`) never lands in a turn's latency; a process restarted
//! after a crash is pinged again before its first turn is timed.
//!
//! Each process leads a process group of its own. Shutting down sends SIGTERM to the group,
//! then SIGKILL after a grace period, so that neither an agent that ignores SIGTERM nor the
//! children of `sh -c` outlive goldgate; dropping a process kills its group at once.
//!
//! A process that exits fails every request in flight with [`EndpointErrorKind::Crashed`] (exit
//! status and last stderr lines in the message) and is started again on the next request; the
//! runner decides whether to retry. Its stderr is kept (the last 64 KiB) for
//! [`Agent::diagnostics`], together with stdout lines that could not be routed. Children are
//! killed when the agent is dropped.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, DropGuard};

mod ping;
mod process;
mod routes;

use ping::ping;
use process::{Group, Line, Signal, kill_group, read_line, terminate};
use routes::{RouteGuard, Routes, Tail};

use super::{Agent, TurnRequest};
use crate::net::{EndpointError, EndpointErrorKind};
use crate::secrets::Secrets;
use crate::transcript::{Exchange, Reply};

/// How much stderr is kept per process slot.
const STDERR_KEPT: usize = 64 * 1024;
/// How many stderr lines a crash message quotes.
const CRASH_STDERR_LINES: usize = 10;
/// How long a process that closed its stdout may take to exit, and its stderr to drain.
const EXIT_GRACE: Duration = Duration::from_secs(2);
/// How much of an unroutable stdout line is quoted in the diagnostics.
const QUOTED_LINE_CHARS: usize = 200;
/// The longest stdout line read: a longer one is not parsed, so that an agent which prints
/// without end cannot fill goldgate's memory; the request it answers fails at once saying so.
pub const MAX_LINE: usize = 16 * 1024 * 1024;
/// How long a process told to stop (SIGTERM) may take before it is killed.
pub const STOP_GRACE: Duration = Duration::from_secs(3);
/// The session a start-up ping names.
const PING_SESSION: &str = "goldgate-ping";

type Answer = Result<Reply, EndpointError>;

/// One or more agent processes started from the same command.
pub struct CommandAgent {
    command: Command,
    slots: Vec<Slot>,
    next_id: AtomicU64,
    /// How long the processes took to answer their first ping (the slowest of them).
    startup: Duration,
}

/// What is needed to start (and restart) a process.
struct Command {
    argv: Vec<String>,
    working_dir: Option<PathBuf>,
    startup_timeout: Duration,
    /// The run's secrets, masked out of the stdout lines an error quotes before they are cut.
    secrets: Secrets,
}

/// One process position: the running process, if any, and its stderr across restarts.
struct Slot {
    log: Arc<Tail>,
    process: StdMutex<Option<Process>>,
    /// Held while a process is started and pinged, so that one restart serves every waiter.
    starting: tokio::sync::Mutex<()>,
}

struct Process {
    /// Request lines for the writer task. A line is never cut by a caller's timeout, which
    /// would corrupt the stream for every later request.
    lines: mpsc::UnboundedSender<Vec<u8>>,
    routes: Arc<Routes>,
    /// Cancelled to stop the process gracefully; the supervisor then answers on `stopped`.
    stop: CancellationToken,
    stopped: Option<oneshot::Receiver<()>>,
    /// Dropping the process stops its supervisor and kills its process group.
    _group: Group,
    _supervisor: DropGuard,
}

impl CommandAgent {
    /// Starts `processes` copies (at least one) of `argv`, in `working_dir` when given, and
    /// waits until each has answered its start-up ping, for at most `startup_timeout`. What
    /// its errors quote of the process's output is masked of `secrets` first.
    pub async fn spawn(
        argv: Vec<String>,
        processes: usize,
        working_dir: Option<PathBuf>,
        startup_timeout: Duration,
        secrets: Secrets,
    ) -> Result<Self, EndpointError> {
        if argv.is_empty() {
            return Err(EndpointError::new(
                EndpointErrorKind::Connect,
                "the agent command is empty",
            ));
        }
        let command = Command {
            argv,
            working_dir,
            startup_timeout,
            secrets,
        };
        // A process the agent starts in a session of its own (`setsid`) leaves its group, and
        // so escapes stopping it: orphaned, it comes back to goldgate, which ends it in `stop`.
        process::adopt_orphans();
        let next_id = AtomicU64::new(1);
        let started = Instant::now();
        let mut slots = Vec::new();
        let mut pings = Vec::new();
        for _ in 0..processes.max(1) {
            let log = Arc::new(Tail::default());
            let process = command.start(&log)?;
            pings.push(process.ping(next_id.fetch_add(1, Ordering::Relaxed), &command));
            slots.push(Slot {
                log,
                process: StdMutex::new(Some(process)),
                starting: tokio::sync::Mutex::new(()),
            });
        }
        // All at once: with several processes the start-up is the slowest one's, not the sum.
        for ready in futures_util::future::join_all(pings).await {
            ready?;
        }
        Ok(Self {
            command,
            slots,
            next_id,
            startup: started.elapsed(),
        })
    }

    /// Stops every process: SIGTERM to its group, SIGKILL after [`STOP_GRACE`].
    pub async fn stop(&self) {
        let stopping = self.slots.iter().filter_map(|slot| {
            let mut process = lock(&slot.process).take()?;
            process.stop.cancel();
            let stopped = process.stopped.take()?;
            Some(async move {
                // The supervisor answers within the grace period plus the kill.
                let _ = tokio::time::timeout(STOP_GRACE * 2, stopped).await;
                drop(process);
            })
        });
        futures_util::future::join_all(stopping).await;
        process::end_orphans().await;
    }
}

#[async_trait]
impl Agent for CommandAgent {
    async fn send(&self, request: &TurnRequest) -> Result<Exchange, EndpointError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let tagged = TurnRequest {
            id: Some(id),
            ..request.clone()
        };
        let mut line = serde_json::to_vec(&tagged)
            .map_err(|e| EndpointError::new(EndpointErrorKind::Protocol, e.to_string()))?;
        line.push(b'\n');
        let slot = &self.slots[slot_index(&request.session, self.slots.len())];
        // A restart's start-up is not the turn's latency.
        slot.ensure_running(&self.command, || {
            self.next_id.fetch_add(1, Ordering::Relaxed)
        })
        .await?;
        let start = Instant::now();
        let (answer, _route) = slot.dispatch(id, line)?;
        let reply = answer.await.unwrap_or_else(|_| {
            Err(EndpointError::new(
                EndpointErrorKind::Crashed,
                "the agent process's supervisor stopped",
            ))
        })?;
        Ok(Exchange {
            reply,
            latency: start.elapsed(),
            ttft: None,
        })
    }

    async fn shutdown(&self) {
        self.stop().await;
    }

    fn startup(&self) -> Option<Duration> {
        Some(self.startup)
    }

    fn describe(&self) -> String {
        let command = self.command.argv.join(" ");
        match self.slots.len() {
            1 => command,
            n => format!("{command} ({n} processes)"),
        }
    }

    fn diagnostics(&self) -> Option<String> {
        let tails: Vec<String> = self.slots.iter().map(|slot| slot.log.text()).collect();
        let text = if tails.len() == 1 {
            tails.into_iter().next().unwrap_or_default()
        } else {
            tails
                .iter()
                .enumerate()
                .filter(|(_, tail)| !tail.is_empty())
                .map(|(index, tail)| format!("== process {} ==\n{tail}", index + 1))
                .collect::<Vec<_>>()
                .join("\n")
        };
        (!text.is_empty()).then_some(text)
    }
}

impl Slot {
    fn is_running(&self) -> bool {
        lock(&self.process)
            .as_ref()
            .is_some_and(|process| process.routes.is_open())
    }

    /// Starts the process again if it exited, and waits for its ping answer.
    async fn ensure_running(
        &self,
        command: &Command,
        next_id: impl FnOnce() -> u64,
    ) -> Result<(), EndpointError> {
        if self.is_running() {
            return Ok(());
        }
        let _one = self.starting.lock().await;
        if self.is_running() {
            return Ok(());
        }
        let process = command.start(&self.log)?;
        // A process that did not get ready is dropped (killed); the next request starts another.
        process.ping(next_id(), command).await?;
        *lock(&self.process) = Some(process);
        Ok(())
    }

    /// Registers the request and queues its line. The route guard withdraws the request if
    /// the caller stops waiting (a timeout).
    fn dispatch(
        &self,
        id: u64,
        line: Vec<u8>,
    ) -> Result<(oneshot::Receiver<Answer>, RouteGuard), EndpointError> {
        let running = lock(&self.process);
        let Some(process) = running.as_ref() else {
            return Err(EndpointError::new(
                EndpointErrorKind::Crashed,
                "the agent process was stopped",
            ));
        };
        let answer = process.routes.register(id)?;
        let route = RouteGuard {
            routes: Arc::clone(&process.routes),
            id,
        };
        // Fails only when the writer has given up on a broken pipe: the process is exiting and
        // its supervisor will fail this request with the exit status.
        let _ = process.lines.send(line);
        Ok((answer, route))
    }
}

impl Process {
    /// The start-up ping of this process, as a future that owns what it needs.
    fn ping(
        &self,
        id: u64,
        command: &Command,
    ) -> impl Future<Output = Result<(), EndpointError>> + use<> {
        let (routes, lines) = (Arc::clone(&self.routes), self.lines.clone());
        let (timeout, name) = (command.startup_timeout, command.argv.join(" "));
        async move { ping(id, &routes, &lines, timeout, &name).await }
    }
}

impl Command {
    fn start(&self, log: &Arc<Tail>) -> Result<Process, EndpointError> {
        let program = &self.argv[0];
        let mut command = tokio::process::Command::new(program);
        command
            .args(&self.argv[1..])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        // Its own process group, so that stopping it reaches the processes it started too.
        #[cfg(unix)]
        command.process_group(0);
        // goldgate's own GitHub token is for the PR comment, not for the agent under test.
        for secret in ["GITHUB_TOKEN", "GH_TOKEN"] {
            command.env_remove(secret);
        }
        if let Some(dir) = &self.working_dir {
            command.current_dir(dir);
        }
        let cannot_start = |reason: String| {
            EndpointError::new(
                EndpointErrorKind::Connect,
                format!("could not start `{program}`: {reason}"),
            )
        };
        let mut child = command.spawn().map_err(|e| cannot_start(e.to_string()))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(cannot_start(
                "its standard streams are not available".into(),
            ));
        };
        let group = Group(child.id());
        let stderr_copy = tokio::spawn(keep_stderr(stderr, Arc::clone(log)));
        let (lines, queued) = mpsc::unbounded_channel();
        tokio::spawn(write_lines(stdin, queued, Arc::clone(log)));
        let routes = Arc::new(Routes::new(self.secrets.clone()));
        let stop = CancellationToken::new();
        let (routes_for_supervisor, log_for_supervisor, stop_for_supervisor) =
            (Arc::clone(&routes), Arc::clone(log), stop.clone());
        let (stopped_tx, stopped) = oneshot::channel();
        tokio::spawn(async move {
            supervise(
                child,
                group.0,
                stdout,
                stderr_copy,
                Arc::clone(&routes_for_supervisor),
                log_for_supervisor,
                stop_for_supervisor,
            )
            .await;
            let _ = stopped_tx.send(());
        });
        Ok(Process {
            lines,
            routes,
            stop: stop.clone(),
            stopped: Some(stopped),
            _group: group,
            _supervisor: stop.drop_guard(),
        })
    }
}

/// Routes stdout replies until the process goes away, then fails whatever is still waiting.
/// When told to stop, it stops the process group gracefully (see [`terminate`]).
async fn supervise(
    mut child: Child,
    pid: Option<u32>,
    stdout: ChildStdout,
    stderr_copy: JoinHandle<()>,
    routes: Arc<Routes>,
    log: Arc<Tail>,
    stop: CancellationToken,
) {
    let mut stdout = BufReader::new(stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        tokio::select! {
            () = stop.cancelled() => {
                routes.close(EndpointError::new(EndpointErrorKind::Crashed, "the agent was shut down"));
                terminate(&mut child, pid).await;
                return;
            }
            read = read_line(&mut stdout, &mut line, MAX_LINE) => match read {
                Ok(Line::End) => break,
                Ok(Line::Complete) => route(&line, &routes, &log),
                Ok(Line::TooLong { length }) => too_long(&line, length, &routes, &log),
                Err(error) => {
                    log.note(&format!("could not read stdout: {error}"));
                    break;
                }
            },
        }
    }
    // Without stdout the process can answer nothing more; give it a moment to exit.
    let status = match tokio::time::timeout(EXIT_GRACE, child.wait()).await {
        Ok(Ok(status)) => status.to_string(),
        Ok(Err(error)) => format!("exit status unknown ({error})"),
        Err(_) => {
            kill_group(pid, Signal::Kill);
            let _ = child.kill().await;
            "closed its stdout, so it was killed".to_owned()
        }
    };
    // Its last words on stderr are what explains a crash. Grandchildren may hold the pipe
    // open, hence the bound.
    let _ = tokio::time::timeout(EXIT_GRACE, stderr_copy).await;
    let last_lines = log.last_lines(CRASH_STDERR_LINES);
    log.note(&format!("agent process exited ({status})"));
    let message = if last_lines.is_empty() {
        status
    } else {
        format!("{status}; stderr ends with:\n{last_lines}")
    };
    routes.close(EndpointError::new(EndpointErrorKind::Crashed, message));
}

/// Hands one stdout line to the request it answers. A line without a readable `id` cannot be
/// routed, so it fails nothing and is kept in the diagnostics instead.
fn route(line: &[u8], routes: &Routes, log: &Tail) {
    if line.trim_ascii().is_empty() {
        return;
    }
    let parsed = serde_json::from_slice::<Value>(line)
        .ok()
        .and_then(|value| Some((value.get("id")?.as_u64()?, value)));
    let Some((id, value)) = parsed else {
        // Masked once, before either quote of it is cut.
        let masked = routes.ignore(&String::from_utf8_lossy(line));
        let quoted: String = masked.chars().take(QUOTED_LINE_CHARS).collect();
        log.note(&format!("unparseable stdout line: {quoted}"));
        return;
    };
    let answer = serde_json::from_value::<Reply>(value).map_err(|e| {
        EndpointError::new(
            EndpointErrorKind::Protocol,
            format!("reply {id} is not protocol JSON: {e}"),
        )
    });
    if !routes.answer(id, answer) {
        log.note(&format!("reply {id} came after its request was given up"));
    }
}

/// A stdout line past [`MAX_LINE`]: the request it answers fails at once saying so, instead of
/// waiting out its timeout. Its id is looked for in the start kept (`prefix`); without one,
/// every request waiting fails, since the line may answer any of them.
fn too_long(prefix: &[u8], length: u64, routes: &Routes, log: &Tail) {
    let reason = format!(
        "the agent wrote a stdout line of {length} bytes ({:.1} MiB), over the {} MiB a line \
         may hold, so it was not read",
        length as f64 / (1024.0 * 1024.0),
        MAX_LINE / (1024 * 1024)
    );
    log.note(&format!("line dropped: {reason}"));
    match id_in_prefix(prefix) {
        Some(id) => {
            let error =
                EndpointError::new(EndpointErrorKind::Protocol, format!("reply {id}: {reason}"));
            routes.answer(id, Err(error));
        }
        None => {
            let error = EndpointError::new(
                EndpointErrorKind::Protocol,
                format!("{reason}; its id could not be read, so it may answer this request"),
            );
            routes.fail_waiting(&error);
        }
    }
}

/// The `id` of a reply line cut short, when it comes before the cut: read key by key, stopping
/// at `id`, so that the cut (an unfinished value further on) does not matter.
fn id_in_prefix(prefix: &[u8]) -> Option<u64> {
    use serde::de::{Deserializer as _, IgnoredAny, MapAccess, Visitor};
    struct Find<'a>(&'a std::cell::Cell<Option<u64>>);
    impl<'de> Visitor<'de> for Find<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a reply object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<String>()? {
                if key == "id" {
                    self.0.set(map.next_value::<u64>().ok());
                    return Ok(());
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let found = std::cell::Cell::new(None);
    // Fails at the cut, or at the end of the map after an early return: the id is kept.
    let _ = serde_json::Deserializer::from_slice(prefix).deserialize_map(Find(&found));
    found.get()
}

/// Writes request lines in order, flushing each: the agent answers as soon as it has one.
async fn write_lines(
    mut stdin: ChildStdin,
    mut queued: mpsc::UnboundedReceiver<Vec<u8>>,
    log: Arc<Tail>,
) {
    while let Some(line) = queued.recv().await {
        let written = async {
            stdin.write_all(&line).await?;
            stdin.flush().await
        };
        if let Err(error) = written.await {
            // Usually a broken pipe: the process is exiting.
            log.note(&format!("could not write to the agent process: {error}"));
            return;
        }
    }
}

async fn keep_stderr(mut stderr: ChildStderr, log: Arc<Tail>) {
    let mut buffer = vec![0; 8192];
    while let Ok(read @ 1..) = stderr.read(&mut buffer).await {
        log.push(&buffer[..read]);
    }
}

/// A poisoned lock only means another task panicked mid-update of plain data; keep going.
pub(super) fn lock<T>(mutex: &StdMutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A session always goes to the same process; the hash is stable, unlike `DefaultHasher`.
fn slot_index(session: &str, slots: usize) -> usize {
    (crate::shard::stable_hash(session.as_bytes()) % slots as u64) as usize
}
