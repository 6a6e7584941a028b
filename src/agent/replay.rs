//! Recorded transcripts: `run --record DIR` writes them, the `replay` agent answers from them,
//! so a suite can be scored (and the scorers developed) without calling any agent.
//!
//! On disk, one pretty-printed JSON file per case, `DIR/<case id>-<hash>.json`: the id
//! percent-encoded where it holds characters unsafe in a file name, and a short hash of the
//! case's key (`file#id`) because two golden files may hold cases with the same id:
//!
//! ```json
//! {
//!   "case": "evals/goldens/orders.yaml#happy_path_order_lookup",
//!   "conversation": "happy_path_order_lookup",
//!   "turns": [
//!     { "turn": 1, "request": { "session": "…", "conversation": "…", "turn": 1, "input": {} },
//!       "reply": { "messages": [ { "text": "…" } ] }, "latency_ms": 412, "ttft_ms": null }
//!   ]
//! }
//! ```
//!
//! Files are written atomically (a temporary file renamed into place), so an interrupted run
//! never leaves half a transcript. Replay answers with the recorded latency without waiting.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Agent, TurnRequest};
use crate::net::{EndpointError, EndpointErrorKind};
use crate::results::millis;
use crate::transcript::{Exchange, Reply};

/// One case's file.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Transcript {
    case: String,
    conversation: String,
    turns: Vec<RecordedTurn>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordedTurn {
    turn: usize,
    request: TurnRequest,
    reply: Reply,
    latency_ms: u64,
    ttft_ms: Option<u64>,
}

/// Writes one case's transcript to `dir` (created if missing), replacing an earlier recording.
/// `case` is the case's key ([`crate::shard::case_key`]), `conversation` its id.
pub fn record_case(
    dir: &Path,
    case: &str,
    conversation: &str,
    turns: &[(TurnRequest, Exchange)],
) -> io::Result<()> {
    let transcript = Transcript {
        case: case.to_owned(),
        conversation: conversation.to_owned(),
        turns: turns
            .iter()
            .map(|(request, exchange)| RecordedTurn {
                turn: request.turn,
                request: request.clone(),
                reply: exchange.reply.clone(),
                latency_ms: millis::of(&exchange.latency),
                ttft_ms: exchange.ttft.as_ref().map(millis::of),
            })
            .collect(),
    };
    let mut json = serde_json::to_vec_pretty(&transcript)?;
    json.push(b'\n');
    fs::create_dir_all(dir)?;
    crate::atomic::write(&dir.join(file_name(case, conversation)), |out| {
        out.write_all(&json)
    })
}

/// The case id as a file name: unchanged when it is made of `[A-Za-z0-9_.-]` and does not
/// start with a dot, otherwise percent-encoded, then a hash of the case key, so that distinct
/// cases never share a file.
fn file_name(case: &str, conversation: &str) -> String {
    let mut name = String::with_capacity(conversation.len() + 5);
    for (index, byte) in conversation.bytes().enumerate() {
        let safe = byte.is_ascii_alphanumeric()
            || matches!(byte, b'_' | b'-')
            || (byte == b'.' && index > 0);
        if safe {
            name.push(char::from(byte));
        } else {
            name.push_str(&format!("%{byte:02X}"));
        }
    }
    name.push_str(&format!(
        "-{:08x}.json",
        crate::shard::stable_hash(case.as_bytes()) as u32
    ));
    name
}

/// Why a transcript directory could not be loaded; every variant names the file at fault.
#[derive(Debug, thiserror::Error)]
pub enum ReplayLoadError {
    #[error("cannot read the transcript directory {}: {source}", dir.display())]
    ReadDir { dir: PathBuf, source: io::Error },
    #[error("cannot read transcript {}: {source}", path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error("transcript {} is not a goldgate transcript: {source}", path.display())]
    Corrupt {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error(
        "turn {turn} of conversation \"{conversation}\" is recorded twice, in {} and {}",
        first.display(), second.display()
    )]
    Duplicate {
        conversation: String,
        turn: usize,
        first: PathBuf,
        second: PathBuf,
    },
}

/// Answers turns from recorded transcripts.
#[derive(Debug)]
pub struct ReplayAgent {
    dir: PathBuf,
    turns: HashMap<(String, usize), Recorded>,
    executes_tools: bool,
}

#[derive(Debug)]
struct Recorded {
    input: Map<String, Value>,
    reply: Reply,
    latency: Duration,
    ttft: Option<Duration>,
    file: PathBuf,
}

impl ReplayAgent {
    /// Reads every `*.json` file in `dir`.
    pub fn load(dir: &Path) -> Result<Self, ReplayLoadError> {
        let read_dir_error = |source| ReplayLoadError::ReadDir {
            dir: dir.to_owned(),
            source,
        };
        let mut paths = Vec::new();
        for entry in fs::read_dir(dir).map_err(read_dir_error)? {
            let path = entry.map_err(read_dir_error)?.path();
            if path.extension().is_some_and(|ext| ext == "json") && path.is_file() {
                paths.push(path);
            }
        }
        // Sorted, so that which file a duplicate error names first does not depend on the OS.
        paths.sort();
        let mut turns = HashMap::new();
        for path in paths {
            let text = fs::read(&path).map_err(|source| ReplayLoadError::Read {
                path: path.clone(),
                source,
            })?;
            let transcript: Transcript =
                serde_json::from_slice(&text).map_err(|source| ReplayLoadError::Corrupt {
                    path: path.clone(),
                    source,
                })?;
            for recorded in transcript.turns {
                let key = (transcript.case.clone(), recorded.turn);
                match turns.entry(key) {
                    Entry::Occupied(first) => {
                        let first: &Recorded = first.get();
                        return Err(ReplayLoadError::Duplicate {
                            conversation: transcript.conversation,
                            turn: recorded.turn,
                            first: first.file.clone(),
                            second: path,
                        });
                    }
                    Entry::Vacant(slot) => {
                        slot.insert(Recorded {
                            input: recorded.request.input,
                            reply: recorded.reply,
                            latency: Duration::from_millis(recorded.latency_ms),
                            ttft: recorded.ttft_ms.map(Duration::from_millis),
                            file: path.clone(),
                        });
                    }
                }
            }
        }
        // Recorded from an agent that runs tools directly: its tool tests can be replayed.
        let executes_tools = turns
            .values()
            .any(|t| t.input.contains_key(super::protocol::EXECUTE_TOOL));
        Ok(Self {
            dir: dir.to_owned(),
            turns,
            executes_tools,
        })
    }
}

#[async_trait]
impl Agent for ReplayAgent {
    fn executes_tools(&self) -> bool {
        self.executes_tools
    }

    async fn send(&self, request: &TurnRequest) -> Result<Exchange, EndpointError> {
        let key = (request.case.clone(), request.turn);
        let Some(recorded) = self.turns.get(&key) else {
            return Err(EndpointError::new(
                EndpointErrorKind::NotRecorded,
                format!(
                    "no recording of turn {} of conversation \"{}\" in {}",
                    request.turn,
                    request.conversation,
                    self.dir.display()
                ),
            ));
        };
        // A golden edited since the recording would be scored against a stale answer.
        if recorded.input != request.input {
            return Err(EndpointError::new(
                EndpointErrorKind::NotRecorded,
                format!(
                    "turn {} of conversation \"{}\" was recorded with a different input ({}); \
                     record it again",
                    request.turn,
                    request.conversation,
                    recorded.file.display()
                ),
            ));
        }
        Ok(Exchange {
            reply: recorded.reply.clone(),
            latency: recorded.latency,
            ttft: recorded.ttft,
        })
    }

    fn describe(&self) -> String {
        format!("replay {}", self.dir.display())
    }
}

#[cfg(test)]
mod tests {
    use super::file_name;

    #[test]
    fn file_names_keep_plain_ids_and_encode_the_rest() {
        let stem = |id: &str| {
            let name = file_name("goldens/a.yaml#x", id);
            name[..name.len() - "-01234567.json".len()].to_owned()
        };
        for (id, want) in [
            ("happy_path-1.v2", "happy_path-1.v2"),
            ("a/b", "a%2Fb"),
            ("a%2Fb", "a%252Fb"),
            ("..", "%2E."),
            ("é", "%C3%A9"),
        ] {
            assert_eq!(stem(id), want, "{id:?}");
        }
    }

    #[test]
    fn cases_sharing_an_id_in_different_files_get_different_files() {
        let csv = file_name(
            "suite/goldens/invoices.golden.csv#invoice-lookup",
            "invoice-lookup",
        );
        let scenario = file_name(
            "suite/invoice-lookup.scenario.yaml#invoice-lookup",
            "invoice-lookup",
        );
        assert_ne!(csv, scenario);
        assert!(
            csv.starts_with("invoice-lookup-") && csv.ends_with(".json"),
            "{csv}"
        );
    }
}
