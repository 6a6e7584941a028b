//! What a command agent's process shares with the tasks that use it: the requests waiting
//! for a reply, the stdout lines that answered none, and the tail of its stderr.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex as StdMutex};

use tokio::sync::oneshot;

use super::{Answer, STDERR_KEPT, lock};
use crate::net::EndpointError;
use crate::secrets::Secrets;

/// How many of the stdout lines a process printed that were no reply a start-up error quotes
/// (the last ones), and how much of each.
const IGNORED_QUOTED: usize = 3;
const IGNORED_LINE_CHARS: usize = 120;

/// Requests waiting for a reply on one process, and the stdout lines that answered none.
pub(super) struct Routes {
    state: StdMutex<RouteState>,
    ignored: StdMutex<Ignored>,
    /// Masked out of an ignored line before it is cut: cut first, a secret across the cut
    /// would keep its start.
    secrets: Secrets,
}

/// Stdout lines without a readable `id`: how many, and the last few, cut and escaped.
#[derive(Default)]
struct Ignored {
    count: u64,
    last: VecDeque<String>,
}

enum RouteState {
    Open(HashMap<u64, oneshot::Sender<Answer>>),
    /// The process is gone; the error says how.
    Closed(EndpointError),
}

impl Routes {
    pub(super) fn new(secrets: Secrets) -> Self {
        Self {
            state: StdMutex::new(RouteState::Open(HashMap::new())),
            ignored: StdMutex::new(Ignored::default()),
            secrets,
        }
    }

    /// Notes a stdout line that answers no request, for [`Routes::ignored`]; returns it
    /// trimmed, with the run's secrets masked out, for any other quote of it.
    pub(super) fn ignore(&self, line: &str) -> String {
        let masked = self.secrets.mask(line.trim_end()).into_owned();
        let mut quoted: String = masked.chars().take(IGNORED_LINE_CHARS).collect();
        if quoted.len() < masked.len() {
            quoted.push_str("...");
        }
        // Control characters escaped, so that what the agent printed cannot break the error's
        // line nor colour the terminal.
        let quoted: String = quoted
            .chars()
            .map(|c| match c.is_control() {
                true => c.escape_debug().to_string(),
                false => c.to_string(),
            })
            .collect();
        let mut ignored = lock(&self.ignored);
        ignored.count += 1;
        if ignored.last.len() == IGNORED_QUOTED {
            ignored.last.pop_front();
        }
        ignored.last.push_back(quoted);
        masked
    }

    /// What the process printed on stdout that answered nothing, when it printed anything:
    /// the likeliest reason a ping went unanswered (a log line on stdout, a reply without the
    /// request's `id`).
    pub(super) fn ignored(&self) -> Option<String> {
        let ignored = lock(&self.ignored);
        let last = ignored.last.back()?;
        Some(match ignored.count {
            1 => format!(
                "it printed 1 stdout line that is not a reply (JSON with an `id`), ignored: \
                 `{last}`"
            ),
            count => {
                let lines: Vec<String> = ignored.last.iter().map(|l| format!("`{l}`")).collect();
                format!(
                    "it printed {count} stdout lines that are not replies (JSON with an `id`), \
                     ignored; the last {}: {}",
                    lines.len(),
                    lines.join(", ")
                )
            }
        })
    }

    pub(super) fn is_open(&self) -> bool {
        matches!(*lock(&self.state), RouteState::Open(_))
    }

    pub(super) fn register(&self, id: u64) -> Result<oneshot::Receiver<Answer>, EndpointError> {
        match &mut *lock(&self.state) {
            RouteState::Open(waiting) => {
                let (sender, receiver) = oneshot::channel();
                waiting.insert(id, sender);
                Ok(receiver)
            }
            RouteState::Closed(error) => Err(error.clone()),
        }
    }

    /// Delivers an answer; false when nobody waits for `id` any more.
    pub(super) fn answer(&self, id: u64, answer: Answer) -> bool {
        let sender = match &mut *lock(&self.state) {
            RouteState::Open(waiting) => waiting.remove(&id),
            RouteState::Closed(_) => None,
        };
        // The receiver may have been dropped by a timeout a moment ago: same as not waiting.
        sender.is_some_and(|sender| sender.send(answer).is_ok())
    }

    /// Fails every request waiting (the process stays open); how many there were.
    pub(super) fn fail_waiting(&self, error: &EndpointError) -> usize {
        let waiting = match &mut *lock(&self.state) {
            RouteState::Open(waiting) => std::mem::take(waiting),
            RouteState::Closed(_) => HashMap::new(),
        };
        let count = waiting.len();
        for sender in waiting.into_values() {
            let _ = sender.send(Err(error.clone()));
        }
        count
    }

    fn withdraw(&self, id: u64) {
        if let RouteState::Open(waiting) = &mut *lock(&self.state) {
            waiting.remove(&id);
        }
    }

    pub(super) fn close(&self, error: EndpointError) {
        let previous =
            std::mem::replace(&mut *lock(&self.state), RouteState::Closed(error.clone()));
        if let RouteState::Open(waiting) = previous {
            for sender in waiting.into_values() {
                let _ = sender.send(Err(error.clone()));
            }
        }
    }
}

/// Withdraws a request when its caller stops waiting, so abandoned ids do not pile up.
pub(super) struct RouteGuard {
    pub(super) routes: Arc<Routes>,
    pub(super) id: u64,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.routes.withdraw(self.id);
    }
}

/// The last [`STDERR_KEPT`] bytes a process wrote to stderr, plus goldgate's notes about it.
#[derive(Default)]
pub(super) struct Tail(StdMutex<Vec<u8>>);

impl Tail {
    pub(super) fn push(&self, bytes: &[u8]) {
        let mut kept = lock(&self.0);
        kept.extend_from_slice(bytes);
        if kept.len() > STDERR_KEPT {
            let mut cut = kept.len() - STDERR_KEPT;
            // Start on a line boundary when there is one, rather than mid-line.
            if let Some(newline) = kept[cut..].iter().position(|&b| b == b'\n') {
                cut += newline + 1;
            }
            kept.drain(..cut);
        }
    }

    pub(super) fn note(&self, text: &str) {
        self.push(format!("[goldgate] {text}\n").as_bytes());
    }

    pub(super) fn text(&self) -> String {
        String::from_utf8_lossy(&lock(&self.0)).into_owned()
    }

    pub(super) fn last_lines(&self, count: usize) -> String {
        let text = self.text();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(count)..].join("\n")
    }
}
