//! Upstream's outer retry layer (`pkg/util/webhook/webhook.go` `WithExponentialBackoff` over
//! apimachinery's `wait.ExponentialBackoffWithContext`, `DefaultAuthWebhookRetryBackoff`):
//! at most 5 attempts, sleeps of 500 ms x1.5 each with up to 20% jitter, only for errors
//! [`CallError::is_retried`] accepts; when attempts run out the last real error is returned.
//!
//! Bounded by the review: an attempt is never started, and a sleep never begun, when the review
//! deadline would pass first. Upstream sleeps until its context ends and then returns the same
//! last error; we return it at once.

use super::error::{CallError, WebhookError};
use std::future::Future;
use std::time::Duration;
use tokio::time::Instant;

/// Upstream's initial backoff delay.
pub(crate) const DEFAULT_BACKOFF_BASE: Duration = Duration::from_millis(500);
/// Each sleep is this many times the last.
pub(crate) const BACKOFF_FACTOR: f64 = 1.5;
/// Each sleep is lengthened by a random 0..this fraction of itself.
pub(crate) const BACKOFF_JITTER: f64 = 0.2;
/// At most this many attempts.
pub(crate) const BACKOFF_STEPS: u32 = 5;

/// The retry schedule. Only the first delay can change, and only from tests
/// (`LiveChain::with_webhook_backoff_base`): the configuration file cannot set it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Backoff {
    /// The first sleep, before jitter.
    pub base: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            base: DEFAULT_BACKOFF_BASE,
        }
    }
}

impl Backoff {
    /// The longest total sleep of one review: the sum of the 4 sleeps at full jitter
    /// (4.875 s with upstream's base).
    pub fn max_total_sleep(self) -> Duration {
        let mut total = Duration::ZERO;
        let mut d = self.base;
        for _ in 1..BACKOFF_STEPS {
            total += d.mul_f64(1.0 + BACKOFF_JITTER);
            d = d.mul_f64(BACKOFF_FACTOR);
        }
        total
    }
}

fn jittered(d: Duration) -> Duration {
    d + d.mul_f64(fastrand::f64() * BACKOFF_JITTER)
}

/// Runs `attempt` (given the 1-based attempt number) until it succeeds, fails in a way that is
/// not retried, attempts run out, or the review `deadline` leaves no room.
pub(crate) async fn with_backoff<T, F, Fut>(
    backoff: Backoff,
    deadline: Instant,
    mut attempt: F,
) -> Result<T, WebhookError>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, CallError>>,
{
    let mut delay = backoff.base;
    let mut last: Option<(u32, CallError)> = None;
    let mut cut = false;
    for n in 1..=BACKOFF_STEPS {
        if Instant::now() >= deadline {
            cut = true;
            break;
        }
        match attempt(n).await {
            Ok(v) => return Ok(v),
            Err(e) if !e.is_retried() => {
                return Err(WebhookError::Call {
                    attempts: n,
                    last: e,
                });
            }
            Err(e) => last = Some((n, e)),
        }
        if n == BACKOFF_STEPS {
            break;
        }
        let sleep = jittered(delay);
        delay = delay.mul_f64(BACKOFF_FACTOR);
        if Instant::now() + sleep >= deadline {
            cut = true;
            break;
        }
        tokio::time::sleep(sleep).await;
    }
    Err(match last {
        Some((attempts, last)) if cut => WebhookError::CutShort { attempts, last },
        Some((attempts, last)) => WebhookError::Call { attempts, last },
        None => WebhookError::NoTime,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authorizer::webhook::error::StatusReason;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn status(code: u16) -> CallError {
        CallError::Status {
            code,
            reason: StatusReason::from_code(code),
            message: "x".into(),
            retry_after: None,
        }
    }

    async fn run(code: u16, base_ms: u64, budget: Duration) -> (Result<(), WebhookError>, u32) {
        let calls = AtomicU32::new(0);
        let r = with_backoff(
            Backoff {
                base: Duration::from_millis(base_ms),
            },
            Instant::now() + budget,
            |_| {
                calls.fetch_add(1, Ordering::SeqCst);
                std::future::ready(Err::<(), _>(status(code)))
            },
        )
        .await;
        (r, calls.load(Ordering::SeqCst))
    }

    #[tokio::test(start_paused = true)]
    async fn upstream_schedule_makes_five_attempts_with_growing_sleeps() {
        let started = Instant::now();
        let (r, calls) = run(500, 500, Duration::from_secs(60)).await;
        assert_eq!(calls, 5);
        assert!(matches!(r, Err(WebhookError::Call { attempts: 5, .. })));
        let slept = started.elapsed();
        // 0.5 + 0.75 + 1.125 + 1.6875 = 4.0625 s before jitter, at most 4.875 s with it.
        assert!(slept >= Duration::from_millis(4062), "{slept:?}");
        assert!(slept <= Backoff::default().max_total_sleep(), "{slept:?}");
        assert_eq!(
            Backoff::default().max_total_sleep(),
            Duration::from_millis(4875)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn not_retried_errors_stop_at_once_and_deadline_bounds_sleeps() {
        assert_eq!(run(404, 500, Duration::from_secs(60)).await.1, 1);
        assert_eq!(run(503, 500, Duration::from_secs(60)).await.1, 1);
        // A 2 s budget fits attempts at 0, ~0.5 and ~1.25 s, not the sleep before the 4th.
        let started = Instant::now();
        let (r, calls) = run(500, 500, Duration::from_secs(2)).await;
        assert_eq!(calls, 3);
        assert!(started.elapsed() < Duration::from_secs(2));
        assert!(matches!(r, Err(WebhookError::CutShort { attempts: 3, .. })));
        assert!(
            r.as_ref().is_err_and(|e| e.is_canceled()),
            "cut short by the deadline: no fail-open"
        );
        let (r, calls) = run(500, 500, Duration::ZERO).await;
        assert_eq!((r, calls), (Err(WebhookError::NoTime), 0));
    }
}
