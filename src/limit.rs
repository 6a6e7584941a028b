//! Adaptive concurrency and pacing per endpoint (the agent, each judge provider), so that a
//! provider's rate limit slows a run down instead of failing it.
//!
//! Each endpoint has a [`Limiter`]: an in-flight limit that starts at `--concurrency` and moves
//! as TCP's congestion window does (AIMD). A 429 or 503 halves it (once per burst: only an
//! answer to a request sent after the last cut cuts again) and pauses every worker of that
//! endpoint until its `Retry-After` has passed (1 s without one); each success raises it by
//! `1/limit`, back towards `--concurrency`. [`Limiter::call`] waits a 429 out within
//! `--rate-limit-wait` without counting it as an attempt, so that `--retries` stays for real
//! failures. A wait that would go past the budget is not started: the answer is at once an
//! error of the run ([`EndpointErrorKind::RateLimited`]) saying what the server asked for and
//! what the budget allows, since waiting part of it can only end in the same error later.
//!
//! Optional pacing (`rate_limit: { requests_per_minute, tokens_per_minute }`) spaces request
//! starts evenly, and pushes the next start back by the tokens each answer reports, so that a
//! known quota is never hit in the first place. Every pause is counted and timed for the
//! report ([`RateLimitWaits`]); an observer hears when a pause starts (the terminal shows it).

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::net::{EndpointError, EndpointErrorKind};
use crate::results::RateLimitWaits;
use crate::secrets::Secrets;

/// How long to pause after a 429 or 503 that says nothing about when to come back.
const DEFAULT_PAUSE: Duration = Duration::from_secs(1);

/// A known quota, from `rate_limit:` in goldgate.yaml.
pub use crate::config::RateLimit as Pacing;

/// Told when an endpoint starts waiting: its name, how long, and why.
pub type OnWait = Arc<dyn Fn(&str, Duration, &str) + Send + Sync>;

/// How long a 429 is waited out by default (`--rate-limit-wait`).
pub const DEFAULT_WAIT_BUDGET: Duration = Duration::from_secs(300);

/// Every endpoint's limiter of one run, so that the report and the terminal see them all.
pub struct Limits {
    max: usize,
    budget: Duration,
    endpoints: Mutex<Vec<Arc<Limiter>>>,
    observer: Arc<Mutex<Option<OnWait>>>,
}

impl Limits {
    /// Limiters that allow up to `max` requests in flight and wait a 429 out for `budget`.
    pub fn new(max: usize, budget: Duration) -> Arc<Self> {
        Arc::new(Self {
            max: max.max(1),
            budget,
            endpoints: Mutex::new(Vec::new()),
            observer: Arc::new(Mutex::new(None)),
        })
    }

    /// The limiter of the endpoint called `name` (`agent`, `judge anthropic`), made on first
    /// use; the pacing given the first time holds.
    pub fn endpoint(&self, name: &str, pacing: Pacing) -> Arc<Limiter> {
        let mut endpoints = lock(&self.endpoints);
        if let Some(found) = endpoints.iter().find(|l| l.name == name) {
            return Arc::clone(found);
        }
        let limiter = Arc::new(Limiter {
            name: name.to_owned(),
            max: self.max,
            budget: self.budget,
            pacing,
            state: Mutex::new(State {
                limit: self.max as f64,
                in_flight: 0,
                paused_until: None,
                next_start: None,
                cut_at: None,
                waits: 0,
                waited: Duration::ZERO,
                counted_to: None,
            }),
            freed: Notify::new(),
            observer: Arc::clone(&self.observer),
        });
        endpoints.push(Arc::clone(&limiter));
        limiter
    }

    /// Who hears of each pause (the progress display), told why with `secrets` masked out:
    /// the why quotes the endpoint's answer, which may echo a credential.
    pub fn observe(&self, observer: OnWait, secrets: Secrets) {
        let masked: OnWait = Arc::new(move |endpoint: &str, wait: Duration, why: &str| {
            observer(endpoint, wait, &secrets.mask(why));
        });
        *lock(&self.observer) = Some(masked);
    }

    /// What each endpoint that ever waited waited, in the order they were made.
    pub fn waits(&self) -> Vec<RateLimitWaits> {
        lock(&self.endpoints)
            .iter()
            .map(|l| l.waits())
            .filter(|w| w.waits > 0)
            .collect()
    }
}

impl std::fmt::Debug for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limits")
            .field("max", &self.max)
            .field("budget", &self.budget)
            .finish_non_exhaustive()
    }
}

/// One endpoint's in-flight limit, pause and pacing (see the module doc).
pub struct Limiter {
    name: String,
    max: usize,
    budget: Duration,
    pacing: Pacing,
    state: Mutex<State>,
    /// Woken when a request ends, so that a worker waiting for a free place looks again.
    freed: Notify,
    observer: Arc<Mutex<Option<OnWait>>>,
}

impl std::fmt::Debug for Limiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limiter")
            .field("name", &self.name)
            .field("limit", &self.limit())
            .finish_non_exhaustive()
    }
}

struct State {
    /// The congestion window: `floor(limit)` requests may be in flight (at least one).
    limit: f64,
    in_flight: usize,
    /// Every worker waits until then (a 429's `Retry-After`).
    paused_until: Option<Instant>,
    /// Pacing: the next request may not start before then.
    next_start: Option<Instant>,
    /// When the limit was last cut: answers to requests sent before then do not cut it again.
    cut_at: Option<Instant>,
    waits: u64,
    /// Wall time during which at least one worker slept on a pause (what was really waited,
    /// not what pauses were set for: a pause nobody waits out costs nothing).
    waited: Duration,
    /// The end of the last pause sleep counted in `waited`, so that workers sleeping together
    /// count once.
    counted_to: Option<Instant>,
}

/// A place among the requests in flight; given back when dropped.
pub struct Permit<'a> {
    limiter: &'a Limiter,
    sent: Instant,
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        lock(&self.limiter.state).in_flight -= 1;
        self.limiter.freed.notify_waiters();
    }
}

impl Limiter {
    /// A limiter on its own, for tests and single-endpoint callers.
    pub fn standalone(name: &str, max: usize, budget: Duration, pacing: Pacing) -> Arc<Self> {
        Limits::new(max, budget).endpoint(name, pacing)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `attempt` once a place is free, waiting out 429s within the budget (each one
    /// retried without counting); `tokens_of` reads what a success cost, for pacing. Any
    /// other outcome is returned for the caller's own retries.
    pub async fn call<T, F, Fut>(
        &self,
        mut attempt: F,
        tokens_of: impl Fn(&T) -> u64,
    ) -> Result<T, EndpointError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, EndpointError>>,
    {
        let mut limited_since: Option<Instant> = None;
        loop {
            let permit = self.acquire().await;
            let result = attempt().await;
            match &result {
                Ok(value) => self.succeeded(&permit, tokens_of(value)),
                Err(error) if is_limit(error) => {
                    let first = limited_since.is_none();
                    let since = *limited_since.get_or_insert_with(Instant::now);
                    let waited = since.elapsed();
                    let left = self.budget.saturating_sub(waited);
                    let is_429 = error.kind == EndpointErrorKind::Status(429);
                    // A 429 with nothing left to wait, or any wait asked past the budget.
                    let over = match error.retry_after {
                        Some(asked) => asked > left,
                        None => is_429 && left.is_zero(),
                    };
                    if over {
                        self.limited(&permit, error, None);
                        return Err(self.over_budget(error, (!first).then_some(waited)));
                    }
                    let pause = error.retry_after.unwrap_or(DEFAULT_PAUSE.min(left));
                    self.limited(&permit, error, Some(pause));
                    if is_429 {
                        continue;
                    }
                }
                Err(_) => {}
            }
            return result;
        }
    }

    /// The error of a limit answer whose wait the budget does not allow.
    /// `waited`: since the first limit answer of this request (`None`: this is the first).
    fn over_budget(&self, error: &EndpointError, waited: Option<Duration>) -> EndpointError {
        let budget = seconds(self.budget);
        let waited = waited.unwrap_or_default();
        let message = match (error.retry_after, waited.is_zero()) {
            (Some(asked), true) => format!(
                "the server asked to wait {} (Retry-After), more than --rate-limit-wait allows \
                 ({budget}), so the request was not retried: {error}",
                seconds(asked)
            ),
            (Some(asked), false) => format!(
                "still rate limited after waiting {}: the server asks to wait {} more, past \
                 --rate-limit-wait ({budget}): {error}",
                seconds(waited),
                seconds(asked)
            ),
            (None, _) => format!(
                "still rate limited after waiting {} (--rate-limit-wait {budget}): {error}",
                seconds(waited)
            ),
        };
        EndpointError::new(EndpointErrorKind::RateLimited, message)
    }

    /// Waits for the pause to pass, for a place under the limit and for the pacing.
    pub async fn acquire(&self) -> Permit<'_> {
        enum Next {
            Paused(Duration),
            Full,
            Start(Instant),
        }
        loop {
            let freed = self.freed.notified();
            let next = {
                let mut state = lock(&self.state);
                let now = Instant::now();
                match state.paused_until.filter(|until| *until > now) {
                    Some(until) => Next::Paused(until - now),
                    None if state.in_flight >= (state.limit.floor() as usize).max(1) => Next::Full,
                    None => {
                        // A place is free: take it, and the next pacing slot.
                        let start = state.next_start.map_or(now, |next| next.max(now));
                        if let Some(rpm) = self.pacing.requests_per_minute {
                            state.next_start = Some(start + Duration::from_secs_f64(60.0 / rpm));
                        }
                        state.in_flight += 1;
                        Next::Start(start)
                    }
                }
            };
            match next {
                Next::Paused(pause) => {
                    let slept_from = Instant::now();
                    tokio::time::sleep(pause).await;
                    self.slept(slept_from);
                }
                Next::Full => freed.await,
                Next::Start(start) => {
                    let permit = Permit {
                        limiter: self,
                        sent: start,
                    };
                    // Only a later pacing slot is slept for: tokio rounds a deadline up to
                    // the next millisecond, so sleeping until `now` cost every request ~1 ms.
                    if start > Instant::now() {
                        tokio::time::sleep_until(start).await;
                    }
                    return permit;
                }
            }
        }
    }

    fn succeeded(&self, permit: &Permit<'_>, tokens: u64) {
        let mut state = lock(&self.state);
        state.limit = (state.limit + 1.0 / state.limit).min(self.max as f64);
        if let (Some(tpm), true) = (self.pacing.tokens_per_minute, tokens > 0) {
            let cost = Duration::from_secs_f64(tokens as f64 * 60.0 / tpm);
            let now = Instant::now();
            let next = state.next_start.map_or(now, |next| next.max(now));
            state.next_start = Some(next + cost);
        }
        let _ = permit;
    }

    /// A 429 or 503: cut the limit (once per burst) and pause every worker for `pause`
    /// (`None`: the answer ends the request, nobody waits for it).
    fn limited(&self, permit: &Permit<'_>, error: &EndpointError, pause: Option<Duration>) {
        let now = Instant::now();
        let started_pause = {
            let mut state = lock(&self.state);
            if state.cut_at.is_none_or(|cut| permit.sent >= cut) {
                state.limit = (state.limit / 2.0).max(1.0);
                state.cut_at = Some(now);
            }
            state.waits += 1;
            let Some(pause) = pause else {
                return;
            };
            let until = now + pause.max(Duration::from_millis(1));
            let paused_to = state.paused_until.map_or(now, |p| p.max(now));
            if until > paused_to {
                state.paused_until = Some(until);
            }
            paused_to <= now
        };
        if let (true, Some(pause)) = (started_pause, pause) {
            let observer = lock(&self.observer).clone();
            if let Some(observer) = observer {
                observer(&self.name, pause, &error.to_string());
            }
        }
    }

    /// A worker slept on the pause from `from` until now: the part no other worker's sleep
    /// has counted yet is time waited.
    fn slept(&self, from: Instant) {
        let now = Instant::now();
        let mut state = lock(&self.state);
        let counted_from = state.counted_to.map_or(from, |to| to.max(from));
        state.waited += now.saturating_duration_since(counted_from);
        state.counted_to = Some(state.counted_to.map_or(now, |to| to.max(now)));
    }

    /// How often this endpoint answered 429/503 and how long its workers were paused.
    pub fn waits(&self) -> RateLimitWaits {
        let state = lock(&self.state);
        RateLimitWaits {
            endpoint: self.name.clone(),
            waits: state.waits,
            waited: state.waited,
        }
    }

    /// The current in-flight limit (for tests).
    pub fn limit(&self) -> usize {
        (lock(&self.state).limit.floor() as usize).max(1)
    }
}

/// `3600 s`, `2.5 s`: how long, as the messages say it.
fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if duration.subsec_millis() == 0 {
        format!("{secs:.0} s")
    } else {
        format!("{secs:.1} s")
    }
}

/// A 429 (too many requests) or 503 (unavailable): the endpoint asks for less. Its limiter
/// pauses for it, so a caller retrying one need not sleep on its own (the pause is the wait).
pub fn is_limit(error: &EndpointError) -> bool {
    matches!(error.kind, EndpointErrorKind::Status(429 | 503))
}

/// A poisoned lock only means another task panicked mid-update of plain numbers; keep going.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::{Limiter, Pacing};
    use crate::net::{EndpointError, EndpointErrorKind};

    fn too_many(retry_after: Duration) -> EndpointError {
        EndpointError {
            retry_after: Some(retry_after),
            ..EndpointError::new(EndpointErrorKind::Status(429), "slow down")
        }
    }

    /// The answer to the `calls`th call: a 429 asking to wait `wait` the first time, `then`
    /// after.
    fn throttled_once<T>(calls: u32, wait: Duration, then: T) -> Result<T, EndpointError> {
        if calls == 1 {
            Err(too_many(wait))
        } else {
            Ok(then)
        }
    }

    #[tokio::test]
    async fn a_429_halves_the_limit_pauses_and_is_waited_out() {
        let limiter = Limiter::standalone("agent", 16, Duration::from_secs(60), Pacing::default());
        let mut calls = 0;
        let started = Instant::now();
        let result = limiter
            .call(
                || {
                    calls += 1;
                    let answer = throttled_once(calls, Duration::from_millis(200), 7);
                    async move { answer }
                },
                |_| 0,
            )
            .await;
        assert_eq!(result, Ok(7));
        assert_eq!(calls, 2);
        assert!(started.elapsed() >= Duration::from_millis(200));
        assert_eq!(limiter.limit(), 8);
        let waits = limiter.waits();
        assert_eq!(waits.waits, 1);
        assert!(waits.waited >= Duration::from_millis(190), "{waits:?}");
    }

    #[tokio::test]
    async fn a_429_past_the_budget_is_an_error_saying_so() {
        let limiter =
            Limiter::standalone("agent", 4, Duration::from_millis(300), Pacing::default());
        let result: Result<(), _> = limiter
            .call(
                || async { Err(too_many(Duration::from_millis(100))) },
                |_| 0,
            )
            .await;
        let error = result.unwrap_err();
        assert_eq!(error.kind, EndpointErrorKind::RateLimited);
        assert!(error.message.contains("--rate-limit-wait"), "{error}");
        assert_eq!(limiter.limit(), 1);
    }

    #[tokio::test]
    async fn a_wait_asked_past_the_budget_is_an_error_at_once_and_nothing_is_waited() {
        let limiter = Limiter::standalone("agent", 4, Duration::from_secs(10), Pacing::default());
        let started = Instant::now();
        for status in [429, 503] {
            let result: Result<(), _> = limiter
                .call(
                    || async move {
                        Err(EndpointError {
                            retry_after: Some(Duration::from_secs(3600)),
                            ..EndpointError::new(EndpointErrorKind::Status(status), "later")
                        })
                    },
                    |_| 0,
                )
                .await;
            let error = result.unwrap_err();
            assert_eq!(error.kind, EndpointErrorKind::RateLimited);
            assert!(!error.is_retryable());
            assert!(
                error.message.contains("asked to wait 3600 s")
                    && error.message.contains("--rate-limit-wait allows (10 s)"),
                "{error}"
            );
        }
        assert!(started.elapsed() < Duration::from_secs(5));
        let waits = limiter.waits();
        assert_eq!((waits.waits, waits.waited), (2, Duration::ZERO));
    }

    #[tokio::test]
    async fn a_pause_nobody_waits_out_is_not_counted_as_waited() {
        let limiter = Limiter::standalone("agent", 4, Duration::from_secs(60), Pacing::default());
        // A 503 is handed back for the caller's retries: with none, nobody waits its pause.
        let result: Result<(), _> = limiter
            .call(
                || async {
                    Err(EndpointError {
                        retry_after: Some(Duration::from_secs(30)),
                        ..EndpointError::new(EndpointErrorKind::Status(503), "busy")
                    })
                },
                |_| 0,
            )
            .await;
        assert_eq!(result.unwrap_err().kind, EndpointErrorKind::Status(503));
        assert_eq!(limiter.waits().waited, Duration::ZERO);
    }

    #[tokio::test]
    async fn successes_raise_the_limit_back_to_the_maximum() {
        let limiter = Limiter::standalone("agent", 8, Duration::from_secs(60), Pacing::default());
        let mut calls = 0;
        for _ in 0..100 {
            let _ = limiter
                .call(
                    || {
                        calls += 1;
                        let answer = throttled_once(calls, Duration::from_millis(10), ());
                        async move { answer }
                    },
                    |_| 0,
                )
                .await;
            if calls == 2 {
                assert_eq!(limiter.limit(), 4);
            }
        }
        assert_eq!(limiter.limit(), 8);
    }

    #[tokio::test]
    async fn pacing_spaces_request_starts() {
        let pacing = Pacing {
            requests_per_minute: Some(1200.0),
            tokens_per_minute: None,
        };
        let limiter = Limiter::standalone("judge", 8, Duration::from_secs(60), pacing);
        let started = Instant::now();
        for _ in 0..5 {
            drop(limiter.acquire().await);
        }
        // Starts at 0, 50, 100, 150 and 200 ms.
        let elapsed = started.elapsed();
        assert!(elapsed >= Duration::from_millis(195), "{elapsed:?}");
        assert!(elapsed < Duration::from_millis(600), "{elapsed:?}");
    }

    #[tokio::test]
    async fn token_pacing_delays_the_next_start_by_what_an_answer_cost() {
        let pacing = Pacing {
            requests_per_minute: None,
            tokens_per_minute: Some(60_000.0),
        };
        let limiter = Limiter::standalone("agent", 8, Duration::from_secs(60), pacing);
        let started = Instant::now();
        for _ in 0..4 {
            // 100 tokens at 1,000 a second: the next request starts 100 ms later.
            let answer = limiter
                .call(|| async { Ok::<u64, EndpointError>(100) }, |t| *t)
                .await;
            assert_eq!(answer, Ok(100));
        }
        let elapsed = started.elapsed();
        assert!(elapsed >= Duration::from_millis(295), "{elapsed:?}");
        assert!(elapsed < Duration::from_millis(800), "{elapsed:?}");
    }

    #[tokio::test]
    async fn a_burst_of_429s_cuts_the_limit_once() {
        let limiter = Limiter::standalone("agent", 8, Duration::from_secs(60), Pacing::default());
        // Eight requests in flight together all answered 429: one congestion event, not eight.
        let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(8));
        let calls = (0..8).map(|_| {
            let (limiter, barrier) = (
                std::sync::Arc::clone(&limiter),
                std::sync::Arc::clone(&barrier),
            );
            tokio::spawn(async move {
                let mut first = true;
                limiter
                    .call(
                        || {
                            let limited = std::mem::take(&mut first);
                            let barrier = std::sync::Arc::clone(&barrier);
                            async move {
                                if limited {
                                    barrier.wait().await;
                                    return Err(too_many(Duration::from_millis(50)));
                                }
                                Ok(())
                            }
                        },
                        |_| 0,
                    )
                    .await
            })
        });
        for call in futures_util::future::join_all(calls).await {
            assert_eq!(call.unwrap(), Ok(()));
        }
        assert!(
            limiter.limit() >= 4,
            "cut more than once: {}",
            limiter.limit()
        );
        assert_eq!(limiter.waits().waits, 8);
    }
}
