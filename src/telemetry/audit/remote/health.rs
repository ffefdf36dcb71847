//! [`SinkHealth`]: whether a remote sink delivers, for `/readyz?verbose` and the logs. A sink
//! that fails never makes warrant unready (reviews do not depend on it); it is reported.

use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
struct State {
    failing_since: Option<Instant>,
    last_error: Option<String>,
    failures: u64,
}

/// A sink's health, written by its sender.
#[derive(Debug, Default)]
pub struct SinkHealth {
    state: Mutex<State>,
}

/// What `/readyz?verbose` says of a sink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkStatus {
    /// The sink's name.
    pub name: &'static str,
    /// `None` while it delivers; else why not.
    pub problem: Option<String>,
}

impl SinkHealth {
    /// A delivery failed with `error`; `true` when it is the first of a run of failures
    /// (the caller logs it then).
    pub fn failed(&self, error: String) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let first = s.failing_since.is_none();
        if first {
            s.failing_since = Some(Instant::now());
        }
        s.last_error = Some(error);
        s.failures += 1;
        first
    }

    /// A delivery succeeded; after a run of failures, how long it lasted and how many
    /// attempts failed (the caller logs the recovery).
    pub fn delivered(&self) -> Option<(Duration, u64)> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let since = s.failing_since.take()?;
        s.last_error = None;
        Some((since.elapsed(), std::mem::take(&mut s.failures)))
    }

    /// The status of the sink called `name`, with `waiting` records unsent, the oldest
    /// `oldest` old.
    pub fn status(&self, name: &'static str, waiting: u64, oldest: Duration) -> SinkStatus {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let problem = s.failing_since.map(|since| {
            format!(
                "failing for {}s ({} attempts): {}; {waiting} records waiting, the oldest {}s old",
                since.elapsed().as_secs(),
                s.failures,
                s.last_error.as_deref().unwrap_or("unknown error"),
                oldest.as_secs()
            )
        });
        SinkStatus { name, problem }
    }
}
