//! Reading replies within a memory bound that holds for the whole process, not per reply.
//!
//! Each reply is capped at [`MAX_BODY`]; that alone lets memory grow with concurrency (16
//! oversized replies read at once held 16 times the cap). So a reply reads its first
//! [`SMALL_REPLY`] bytes freely, and past that holds one of [`LARGE_REPLIES`] slots until it is
//! read: at most that many replies are large at once, whatever `--concurrency` is. A large
//! reply waits for a slot while others are read (its latency then counts the wait, which only
//! a reply of megabytes can meet).

use std::cell::RefCell;

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

tokio::task_local! {
    /// The large-reply slot a case keeps from its first large reply to its end.
    static CASE_SLOT: RefCell<Option<SemaphorePermit<'static>>>;
}

/// Runs `case` (one case played, graded and cut to what its report keeps) so that a large
/// reply it reads keeps its slot until the case ends, not only while it is read: a reply is
/// held whole until the case is graded. A case holding a slot needs no other for its later
/// replies, so that no case waits for a slot while holding one.
pub async fn holding_large_replies<F: Future>(case: F) -> F::Output {
    CASE_SLOT.scope(RefCell::new(None), case).await
}

/// What one reply being read holds, counted against [`MAX_BODY`] and the large-reply slots.
#[derive(Default)]
pub struct ReplyMemory {
    held: usize,
    /// This reply's slot, when it is read outside a case (see [`holding_large_replies`]).
    slot: Option<SemaphorePermit<'static>>,
    /// The reply counts against a slot: its own, or its case's.
    large: bool,
}

impl ReplyMemory {
    /// Counts `bytes` more (read, or held once parsed); waits for a large-reply slot when the
    /// reply grows past [`SMALL_REPLY`], and fails once it is past [`MAX_BODY`].
    pub async fn grow(&mut self, bytes: usize) -> Result<(), EndpointError> {
        self.held = self.held.saturating_add(bytes);
        if self.held > MAX_BODY {
            return Err(too_big());
        }
        if self.held > SMALL_REPLY && !self.large {
            let case_holds = CASE_SLOT
                .try_with(|slot| slot.borrow().is_some())
                .unwrap_or(false);
            if !case_holds {
                // The semaphore is a static that is never closed: acquiring cannot fail.
                let mut permit = LARGE.acquire().await.ok();
                let _ = CASE_SLOT.try_with(|slot| *slot.borrow_mut() = permit.take());
                self.slot = permit;
            }
            self.large = true;
        }
        Ok(())
    }
}

/// A whole (not streamed) reply, up to [`MAX_BODY`].
pub async fn read_body(response: Response) -> Result<Vec<u8>, EndpointError> {
    read_parsed(response, Ok).await
}

/// A whole reply, up to [`MAX_BODY`], handed to `parse` while it still counts against the
/// large-reply slots: the bytes and what is parsed from them are held at once, and released
/// only after parsing, a large reply's slot would not bound them both.
pub async fn read_parsed<T>(
    mut response: Response,
    parse: impl FnOnce(Vec<u8>) -> Result<T, EndpointError>,
) -> Result<T, EndpointError> {
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
        append(&mut body, &chunk);
    }
    let parsed = parse(body);
    drop(memory);
    parsed
}

/// Appends `chunk` to `buffer`, growing it by [`SMALL_REPLY`] at most past what it needs:
/// doubling would hold up to twice a reply of unannounced length, in each large-reply slot.
pub fn append(buffer: &mut Vec<u8>, chunk: &[u8]) {
    if buffer.capacity() - buffer.len() < chunk.len() {
        let step = chunk.len().max(buffer.len().min(SMALL_REPLY));
        buffer.reserve_exact(step);
    }
    buffer.extend_from_slice(chunk);
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
        // Read within a case, the case keeps the slot, and its next large reply needs none.
        drop(large);
        let kept = holding_large_replies(async {
            let mut first = ReplyMemory::default();
            first.grow(SMALL_REPLY + 1).await.unwrap();
            drop(first);
            let mut second = ReplyMemory::default();
            second.grow(SMALL_REPLY + 1).await.unwrap();
            let case_holds = CASE_SLOT.with(|slot| slot.borrow().is_some());
            (second.large, second.slot.is_none(), case_holds)
        })
        .await;
        assert_eq!(kept, (true, true, true));
        let mut large = ReplyMemory::default();
        large.grow(SMALL_REPLY + 1).await.unwrap();
        let error = large.grow(MAX_BODY).await.unwrap_err();
        assert_eq!(error.kind, EndpointErrorKind::Protocol);
        assert!(error.message.contains("larger than 16 MiB"), "{error}");
    }

    #[test]
    fn a_buffer_of_unknown_length_grows_by_steps_not_by_doubling() {
        let mut buffer = Vec::new();
        let chunk = vec![0u8; 16 * 1024];
        while buffer.len() < 6 * SMALL_REPLY {
            append(&mut buffer, &chunk);
        }
        assert!(
            buffer.capacity() <= buffer.len() + SMALL_REPLY,
            "{}",
            buffer.capacity()
        );
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
