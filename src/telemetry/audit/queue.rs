//! The queue between reviews and the audit writer: encoded lines appended to one shared buffer,
//! bounded in records and bytes. A review never waits for the writer and never wakes it for one
//! record: the writer takes the whole buffer every [`FLUSH_INTERVAL`], or as soon as
//! [`WAKE_AT`] records wait, so a record costs an append under a short lock, not a wake-up of
//! another thread and a write of its own.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// The longest a record waits before the writer takes it.
pub(crate) const FLUSH_INTERVAL: Duration = Duration::from_millis(20);
/// How many waiting records wake the writer before its interval is up.
pub(crate) const WAKE_AT: usize = 1024;
/// The most bytes that may wait for the writer.
pub(crate) const MAX_BYTES: usize = 64 << 20;

#[derive(Debug, Default)]
struct State {
    lines: Vec<u8>,
    records: u64,
    closed: bool,
    reopen: bool,
}

/// The shared buffer and the writer's wake-up.
#[derive(Debug)]
pub(crate) struct Queue {
    state: Mutex<State>,
    wake: Condvar,
    capacity: usize,
}

/// What the writer took.
pub(crate) struct Taken {
    /// How many records `lines` holds.
    pub records: u64,
    /// Whether the queue is closed (and now empty).
    pub closed: bool,
    /// Whether the output should be reopened first (SIGHUP).
    pub(crate) reopen: bool,
}

impl Queue {
    /// A queue of at most `capacity` records.
    pub fn new(capacity: usize) -> Self {
        Self {
            state: Mutex::default(),
            wake: Condvar::new(),
            capacity,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves plain bytes behind: keep going.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends one encoded line; `false` when it does not fit (or the queue is closed): the
    /// caller counts it as dropped.
    pub fn push(&self, line: &[u8]) -> bool {
        let mut state = self.lock();
        if state.closed
            || state.records as usize >= self.capacity
            || state.lines.len() + line.len() > MAX_BYTES
        {
            return false;
        }
        state.lines.extend_from_slice(line);
        state.records += 1;
        if state.records as usize == WAKE_AT {
            self.wake.notify_one();
        }
        true
    }

    /// Closes the queue: nothing more is accepted, and the writer takes what is left and ends.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.wake.notify_one();
    }

    /// Asks the writer to reopen its output before it writes again, and wakes it.
    pub(crate) fn request_reopen(&self) {
        self.lock().reopen = true;
        self.wake.notify_one();
    }

    /// Waits up to [`FLUSH_INTERVAL`] unless records are waiting (or the queue is closed), then
    /// swaps the waiting lines into `into` (cleared first).
    pub fn take(&self, into: &mut Vec<u8>) -> Taken {
        let mut state = self.lock();
        if (state.records as usize) < WAKE_AT && !state.closed && !state.reopen {
            state = match self.wake.wait_timeout(state, FLUSH_INTERVAL) {
                Ok((s, _)) => s,
                Err(e) => e.into_inner().0,
            };
        }
        into.clear();
        std::mem::swap(into, &mut state.lines);
        let records = std::mem::take(&mut state.records);
        Taken {
            records,
            closed: state.closed,
            reopen: std::mem::take(&mut state.reopen),
        }
    }
}
