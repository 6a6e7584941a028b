//! Reading replies within a memory bound that holds for the whole process, not per reply.
//!
//! Each reply is capped at [`MAX_BODY`]; that alone lets memory grow with concurrency (16
//! oversized replies read at once held 16 times the cap). So a reply reads its first
//! [`SMALL_REPLY`] bytes freely, and past that holds one of [`LARGE_REPLIES`] slots until it is
//! read: at most that many replies are large at once, whatever `--concurrency` is. A large
//! reply waits for a slot while others are read (its latency then counts the wait, which only
//! a reply of megabytes can meet).

use reqwest::Response;
use tokio::sync::{Semaphore, SemaphorePermit};

use super::{EndpointError, EndpointErrorKind, transport_error};

/// The largest reply read, streamed or not: a bigger one is a protocol error, so that an agent
/// sending hundreds of megabytes cannot fill goldgate's memory.
pub const MAX_BODY: usize = 16 * 1024 * 1024;
/// What any number of replies may each hold without taking a large-reply slot.
const SMALL_REPLY: usize = 1024 * 1024;
/// How many replies may be larger than [`SMALL_REPLY`] at once, process-wide: the memory
/// bound is a property of the process, so the slots are too.
const LARGE_REPLIES: usize = 4;
static LARGE: Semaphore = Semaphore::const_new(LARGE_REPLIES);

/// What one reply being read holds, counted against [`MAX_BODY`] and the large-reply slots.
#[derive(Default)]
pub struct ReplyMemory {
    held: usize,
    slot: Option<SemaphorePermit<'static>>,
}

impl ReplyMemory {
    /// Counts `bytes` more (read, or held once parsed); waits for a large-reply slot when the
    /// reply grows past [`SMALL_REPLY`], and fails once it is past [`MAX_BODY`].
    pub async fn grow(&mut self, bytes: usize) -> Result<(), EndpointError> {
        self.held = self.held.saturating_add(bytes);
        if self.held > MAX_BODY {
            return Err(too_big());
        }
        if self.held > SMALL_REPLY && self.slot.is_none() {
            // The semaphore is a static that is never closed: acquiring cannot fail.
            self.slot = LARGE.acquire().await.ok();
        }
        Ok(())
    }
}

/// A whole (not streamed) reply, up to [`MAX_BODY`].
pub async fn read_body(mut response: Response) -> Result<Vec<u8>, EndpointError> {
    let mut memory = ReplyMemory::default();
    let announced = response.content_length().unwrap_or(0);
    memory
        .grow(usize::try_from(announced).unwrap_or(usize::MAX))
        .await?;
    // Sized once when the length is announced: growing by doubling would hold up to twice it.
    let mut body = Vec::with_capacity(announced as usize);
    while let Some(chunk) = response.chunk().await.map_err(transport_error)? {
        if body.len() + chunk.len() > announced as usize {
            memory.grow(chunk.len()).await?;
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The start of a body, at least `bytes` of it when it is that long (whole chunks are kept),
/// for quoting an error answer; a body that breaks off ends there.
pub async fn read_start(response: &mut Response, bytes: usize) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < bytes {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    body
}

/// The error of a reply over [`MAX_BODY`].
pub fn too_big() -> EndpointError {
    EndpointError::new(
        EndpointErrorKind::Protocol,
        format!(
            "the reply is larger than {} MiB, so it was not read",
            MAX_BODY / (1024 * 1024)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_reply_past_the_cap_fails_and_a_large_one_holds_a_slot_until_dropped() {
        let mut small = ReplyMemory::default();
        small.grow(SMALL_REPLY).await.unwrap();
        assert!(small.slot.is_none());
        let mut large = ReplyMemory::default();
        large.grow(SMALL_REPLY + 1).await.unwrap();
        assert!(large.slot.is_some());
        let error = large.grow(MAX_BODY).await.unwrap_err();
        assert_eq!(error.kind, EndpointErrorKind::Protocol);
        assert!(error.message.contains("larger than 16 MiB"), "{error}");
    }

    #[tokio::test]
    async fn a_large_reply_past_the_slots_waits_until_one_is_given_back() {
        let mut large: Vec<ReplyMemory> = Vec::new();
        for _ in 0..LARGE_REPLIES {
            let mut memory = ReplyMemory::default();
            memory.grow(SMALL_REPLY + 1).await.unwrap();
            large.push(memory);
        }
        let mut waiting = ReplyMemory::default();
        let wait = std::time::Duration::from_millis(100);
        let blocked = tokio::time::timeout(wait, waiting.grow(SMALL_REPLY + 1)).await;
        assert!(blocked.is_err(), "a fifth large reply was read at once");
        large.pop();
        tokio::time::timeout(wait * 10, waiting.grow(SMALL_REPLY + 1))
            .await
            .expect("a slot given back lets it go on")
            .unwrap();
    }
}
