//! The judge cache: a judge's answers on disk, so that a run over unchanged transcripts asks
//! the provider nothing.
//!
//! An entry is keyed by the SHA-256 of the provider, the model, the full request body, the
//! judge-prompt version, the repeat index (so that
//! `--repeat` runs stay independent samples) and the vote index (so that `votes: N` asks N
//! times). The body holds the prompts and the transcript but never the key, which travels in
//! a header: nothing secret reaches the cache.
//!
//! Layout: `DIR/ab/abcdef….json` (the first two hex digits fan the files out), each holding
//! the parsed answer and its token usage. Files are written to a temporary name and renamed
//! into place, so a reader never sees half an entry and concurrent writers of one key (cases
//! of one run, or two runs sharing the directory) each leave a whole one. An entry that does
//! not read is a miss, never an error.
//!
//! Cases of one run that ask the same question at once (goldens that share an expected reply
//! and get the same answer) ask it once: the first holds the question's slot until its answer
//! is stored, and the others then read it from the cache, as the next run would.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use ring::digest::{SHA256, digest};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::client::LlmClient;
use crate::secrets::Secrets;
use crate::transcript::Usage;

/// The directory used when `--cache-dir` is not given, relative to the working directory.
pub const DEFAULT_DIR: &str = ".goldgate/cache";

/// What identifies one judgement.
#[derive(Clone, Copy, Debug)]
pub struct CacheKey<'a> {
    /// The version of the judge's prompts: a new wording is a new judgement.
    pub prompt_version: u32,
    pub provider: &'a str,
    pub model: &'a str,
    /// The URL requests go to (see [`super::client::LlmClient::endpoint`]).
    pub endpoint: &'a str,
    /// The request body as sent.
    pub request: &'a Value,
    /// 0-based index of the `--repeat` run.
    pub repeat: u32,
    /// 0-based index of the vote.
    pub vote: u32,
}

impl<'a> CacheKey<'a> {
    /// The key of `request`, a body for `client` sent to `endpoint`, asked with prompts of
    /// `prompt_version` for run `repeat` and vote `vote`.
    pub fn of(
        client: &'a LlmClient,
        endpoint: &'a str,
        request: &'a Value,
        prompt_version: u32,
        (repeat, vote): (u32, u32),
    ) -> Self {
        Self {
            prompt_version,
            provider: client.provider().name(),
            model: client.model(),
            endpoint,
            request,
            repeat,
            vote,
        }
    }

    /// The SHA-256 of everything that identifies the judgement, as 64 hex digits.
    pub fn digest(&self) -> String {
        let identity = json!({
            "prompt_version": self.prompt_version,
            "provider": self.provider,
            "model": self.model,
            "endpoint": self.endpoint,
            "request": self.request,
            "repeat": self.repeat,
            "vote": self.vote,
        });
        let hash = digest(&SHA256, identity.to_string().as_bytes());
        hash.as_ref()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }
}

/// One cached answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub provider: String,
    pub model: String,
    /// The structured answer (the forced tool call's arguments), as the provider gave it.
    pub answer: Value,
    pub usage: Usage,
}

impl Entry {
    /// `answer`, given for `key` at the cost of `usage`.
    pub fn of(key: &CacheKey<'_>, answer: Value, usage: Usage) -> Self {
        Self {
            provider: key.provider.to_owned(),
            model: key.model.to_owned(),
            answer,
            usage,
        }
    }
}

/// A cache directory.
#[derive(Clone, Debug)]
pub struct JudgeCache {
    dir: PathBuf,
    /// Masked out of the answers stored: a judge or a simulated user may quote a credential
    /// the agent echoed, and the cache is kept between runs (and, under `--record`, is the
    /// recording of the simulated user).
    secrets: Secrets,
    /// The questions being asked now, by digest (see the module doc).
    asking: Arc<Mutex<HashMap<String, Weak<tokio::sync::Mutex<()>>>>>,
}

impl JudgeCache {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            secrets: Secrets::new(),
            asking: Arc::default(),
        }
    }

    /// Waits until no other case of this run is asking `key`'s question, then holds it until
    /// the guard drops: a case that waited finds the answer in the cache.
    pub async fn ask_alone(&self, key: &CacheKey<'_>) -> tokio::sync::OwnedMutexGuard<()> {
        let digest = key.digest();
        let slot = {
            let mut asking = self.asking.lock().unwrap_or_else(|e| e.into_inner());
            // Questions nobody asks any more leave no slot behind.
            asking.retain(|_, slot| slot.strong_count() > 0);
            let slot = asking.get(&digest).and_then(Weak::upgrade);
            slot.unwrap_or_else(|| {
                let slot = Arc::default();
                asking.insert(digest, Arc::downgrade(&slot));
                slot
            })
        };
        slot.lock_owned().await
    }

    /// Masks `secrets` out of every answer stored.
    pub fn masking(mut self, secrets: Secrets) -> Self {
        self.secrets = secrets;
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, digest: &str) -> PathBuf {
        self.dir.join(&digest[..2]).join(format!("{digest}.json"))
    }

    /// The entry stored under `digest`, if one was stored and still reads.
    fn read(&self, digest: &str) -> Option<Entry> {
        let text = fs::read(self.path(digest)).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// The entry for `key`, if one was stored and still reads; read on a blocking thread, off
    /// the async workers that play the cases.
    pub async fn fetch(&self, key: &CacheKey<'_>) -> Option<Entry> {
        let (cache, digest) = (self.clone(), key.digest());
        tokio::task::spawn_blocking(move || cache.read(&digest))
            .await
            .ok()
            .flatten()
    }

    /// Stores `entry` under `key`, replacing any earlier one, on a blocking thread (the write
    /// is synced to disk).
    pub async fn store(&self, key: &CacheKey<'_>, entry: Entry) -> io::Result<()> {
        let (cache, digest) = (self.clone(), key.digest());
        tokio::task::spawn_blocking(move || cache.write(&digest, &entry))
            .await
            .unwrap_or_else(|e| Err(io::Error::other(e)))
    }

    fn write(&self, digest: &str, entry: &Entry) -> io::Result<()> {
        let path = self.path(digest);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        let mut entry = entry.clone();
        self.secrets.mask_json(&mut entry.answer);
        let mut json = serde_json::to_vec_pretty(&entry)?;
        json.push(b'\n');
        crate::atomic::write(&path, |out| out.write_all(&json))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key<'a>(request: &'a Value, repeat: u32, vote: u32) -> CacheKey<'a> {
        CacheKey {
            prompt_version: 1,
            provider: "anthropic",
            model: "claude-x",
            endpoint: "https://api.anthropic.com/v1/messages",
            request,
            repeat,
            vote,
        }
    }

    #[test]
    fn every_part_of_the_key_changes_the_digest() {
        let request = json!({ "messages": ["hi"] });
        let other = json!({ "messages": ["hello"] });
        let base = key(&request, 0, 0).digest();
        assert_eq!(base.len(), 64);
        assert_eq!(base, key(&request, 0, 0).digest());
        assert_ne!(base, key(&other, 0, 0).digest());
        assert_ne!(base, key(&request, 1, 0).digest());
        assert_ne!(base, key(&request, 0, 1).digest());
        let model = CacheKey {
            model: "claude-y",
            ..key(&request, 0, 0)
        };
        assert_ne!(base, model.digest());
        let gateway = CacheKey {
            endpoint: "http://127.0.0.1:4000/v1/messages",
            ..key(&request, 0, 0)
        };
        assert_ne!(base, gateway.digest());
    }

    #[tokio::test]
    async fn entries_round_trip_and_garbage_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = JudgeCache::new(dir.path());
        let request = json!({ "q": 1 });
        let entry = Entry {
            provider: "anthropic".into(),
            model: "claude-x".into(),
            answer: json!({ "passed": true }),
            usage: Usage {
                input_tokens: 3,
                output_tokens: 1,
                ..Usage::default()
            },
        };
        assert_eq!(cache.fetch(&key(&request, 0, 0)).await, None);
        cache
            .store(&key(&request, 0, 0), entry.clone())
            .await
            .unwrap();
        assert_eq!(cache.fetch(&key(&request, 0, 0)).await, Some(entry));
        assert_eq!(cache.fetch(&key(&request, 1, 0)).await, None);
        let digest = key(&request, 0, 0).digest();
        fs::write(cache.path(&digest), "{ not json").unwrap();
        assert_eq!(cache.fetch(&key(&request, 0, 0)).await, None);
    }

    #[tokio::test]
    async fn a_credential_quoted_in_an_answer_is_not_stored() {
        let dir = tempfile::tempdir().unwrap();
        let secrets = Secrets::new();
        secrets.add("echoed-token-99");
        let cache = JudgeCache::new(dir.path()).masking(secrets);
        let request = json!({ "q": 2 });
        let entry = Entry {
            provider: "anthropic".into(),
            model: "claude-x".into(),
            answer: json!({ "reason": "the reply leaks echoed-token-99" }),
            usage: Usage::default(),
        };
        cache.store(&key(&request, 0, 0), entry).await.unwrap();
        let stored = cache.fetch(&key(&request, 0, 0)).await.unwrap();
        assert_eq!(stored.answer, json!({ "reason": "the reply leaks ***" }));
    }
}
