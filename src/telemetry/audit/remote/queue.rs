//! [`MemoryQueue`]: a sink's bounded queue in memory, between the reviews that write records
//! and the task that spools or sends them. Bounded in records and bytes; when full, a record
//! is dropped at once or after the review waited for room ([`WhenFull`]), never with an error
//! to the review.

use super::record::SinkRecord;
use super::settings::{QUEUE_MAX_BYTES, WhenFull};
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// What became of a record offered to the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offered {
    /// Queued.
    Queued,
    /// Dropped: the queue was full (`Drop`).
    Full,
    /// Dropped: the queue stayed full for the whole block timeout (`Block`).
    BlockTimeout,
    /// Dropped: the sink is shutting down.
    Closed,
}

#[derive(Debug, Default)]
struct State {
    records: VecDeque<SinkRecord>,
    bytes: usize,
    closed: bool,
}

/// A sink's queue in memory.
#[derive(Debug)]
pub struct MemoryQueue {
    state: Mutex<State>,
    room: Condvar,
    ready: Notify,
    capacity: usize,
}

impl MemoryQueue {
    /// A queue of at most `capacity` records (and [`QUEUE_MAX_BYTES`]).
    pub fn new(capacity: usize) -> Self {
        Self {
            state: Mutex::default(),
            room: Condvar::new(),
            ready: Notify::new(),
            capacity: capacity.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves plain records behind: keep going.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn fits(&self, state: &State, size: usize) -> bool {
        state.records.len() < self.capacity
            && (state.records.is_empty() || state.bytes + size <= QUEUE_MAX_BYTES)
    }

    /// Offers one record: queued if it fits, else dropped at once (`Drop`) or once
    /// `block_timeout` has passed without room (`Block`).
    pub fn offer(
        &self,
        record: SinkRecord,
        when_full: WhenFull,
        block_timeout: Duration,
    ) -> Offered {
        let size = record.size();
        let mut state = self.lock();
        if !self.fits(&state, size) {
            if when_full == WhenFull::Drop {
                return Offered::Full;
            }
            let deadline = Instant::now() + block_timeout;
            while !state.closed && !self.fits(&state, size) {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Offered::BlockTimeout;
                }
                state = match self.room.wait_timeout(state, left) {
                    Ok((s, _)) => s,
                    Err(e) => e.into_inner().0,
                };
            }
        }
        if state.closed {
            return Offered::Closed;
        }
        state.bytes += size;
        state.records.push_back(record);
        drop(state);
        self.ready.notify_one();
        Offered::Queued
    }

    /// Takes the oldest records, at most `max_records` of at most `max_bytes` together (at
    /// least one when any waits), and wakes reviews waiting for room.
    pub fn take(&self, max_records: usize, max_bytes: usize) -> Vec<SinkRecord> {
        let mut state = self.lock();
        let mut out = Vec::new();
        let mut bytes = 0;
        while out.len() < max_records {
            let Some(front) = state.records.front() else {
                break;
            };
            let size = front.size();
            if !out.is_empty() && bytes + size > max_bytes {
                break;
            }
            bytes += size;
            if let Some(r) = state.records.pop_front() {
                out.push(r);
            }
        }
        state.bytes -= bytes.min(state.bytes);
        drop(state);
        if !out.is_empty() {
            self.room.notify_all();
        }
        out
    }

    /// Waits until a record is queued (or the queue closes), at most `timeout`.
    pub async fn ready(&self, timeout: Duration) {
        if !self.is_empty() || self.is_closed() {
            return;
        }
        let _ = tokio::time::timeout(timeout, self.ready.notified()).await;
    }

    /// The most records it holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many records wait.
    pub fn len(&self) -> usize {
        self.lock().records.len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.lock().records.is_empty()
    }

    /// When the oldest waiting record was queued (ms since the epoch).
    pub fn oldest_ms(&self) -> Option<i64> {
        self.lock().records.front().map(|r| r.queued_ms)
    }

    /// Closes the queue: nothing more is accepted; waiting reviews return at once.
    pub fn close(&self) {
        self.lock().closed = true;
        self.room.notify_all();
        self.ready.notify_one();
    }

    /// Whether the queue is closed.
    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }
}
