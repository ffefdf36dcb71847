//! A remote sink's two tasks. The spooler (with a spool) moves what the reviews queued in
//! memory onto disk; the sender takes the oldest unsent records (from the spool, or from
//! memory without one), delivers them as one batch and forgets them only once the receiver
//! has acknowledged them. A failed batch is retried, whole and first, with exponential
//! backoff (100 ms doubling up to the sink's `max_backoff`, with jitter) until it is
//! delivered: nothing behind it overtakes it, so records leave in the order they were
//! queued. The first failure of a run is logged as an error with its cause, the recovery as
//! info with how long it lasted; `/readyz?verbose` shows the failure meanwhile.
//!
//! The spooler does its file writes on the runtime's thread: appends of at most a few MiB to
//! a local file, in the page cache.

use super::deliver::Deliver;
use super::health::SinkHealth;
use super::metrics::{DropReason, SinkSeries};
use super::queue::MemoryQueue;
use super::record::{SinkRecord, now_ms};
use super::settings::SinkSettings;
use super::spool::Spool;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::Notify;

/// The first wait after a failed delivery.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// How often the gauges are brought up to date while nothing else happens.
const TICK: Duration = Duration::from_secs(1);
/// Below this much room the spooler waits for the sender to free some.
const MIN_SPOOL_ROOM: u64 = 64 << 10;
/// The most records the spooler moves at once.
const SPOOL_BATCH: usize = 4096;

/// What a sink's tasks share.
#[derive(Debug)]
pub struct Shared {
    /// The sink's settings.
    pub settings: SinkSettings,
    /// The queue in memory.
    pub queue: Arc<MemoryQueue>,
    /// The spool, if any.
    pub spool: Option<Mutex<Spool>>,
    /// Wakes the sender when records were spooled.
    pub spooled: Notify,
    /// Where records go.
    pub deliver: Arc<dyn Deliver>,
    /// Whether deliveries succeed.
    pub health: SinkHealth,
    /// The sink's series.
    pub series: SinkSeries,
    /// Records taken by the sender and not yet acknowledged (without a spool).
    pub in_flight: AtomicU64,
}

impl Shared {
    /// The spool, locked (a panic elsewhere leaves a usable spool: its state is on disk).
    pub fn spool(&self) -> Option<MutexGuard<'_, Spool>> {
        self.spool
            .as_ref()
            .map(|s| s.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Records not yet acknowledged: in memory, in flight and spooled.
    pub fn waiting(&self) -> u64 {
        self.waiting_beside(self.spool().as_deref())
    }

    /// [`Shared::waiting`] with the spool already locked.
    fn waiting_beside(&self, spool: Option<&Spool>) -> u64 {
        let spooled = spool.map_or(0, Spool::records);
        self.queue.len() as u64 + self.in_flight.load(Ordering::Relaxed) + spooled
    }

    /// When the oldest unacknowledged record was queued (ms since the epoch), with the
    /// spool already locked.
    fn oldest_ms_beside(&self, spool: Option<&Spool>, in_flight: Option<i64>) -> Option<i64> {
        let spooled = spool.and_then(Spool::oldest_ms);
        [in_flight, spooled, self.queue.oldest_ms()]
            .into_iter()
            .flatten()
            .min()
    }

    /// The age of the oldest unacknowledged record.
    pub fn oldest_age(&self) -> Duration {
        let oldest = self.oldest_ms_beside(self.spool().as_deref(), None);
        oldest.map_or(Duration::ZERO, |t| {
            Duration::from_millis(u64::try_from(now_ms() - t).unwrap_or(0))
        })
    }

    /// Brings the gauges up to date (`in_flight`: the oldest record the sender holds).
    ///
    /// The spooler and the sender both call this; the spool stays locked while the gauges
    /// are set, so they are set from one state at a time and a scrape never shows a record
    /// count newer than the spool's bytes beside it.
    fn gauges(&self, in_flight: Option<i64>) {
        let spool = self.spool();
        if let Some(s) = spool.as_deref() {
            self.series
                .spool_bytes
                .set(i64::try_from(s.disk_bytes()).unwrap_or(i64::MAX));
        }
        let waiting = self.waiting_beside(spool.as_deref());
        self.series
            .queued
            .set(i64::try_from(waiting).unwrap_or(i64::MAX));
        let age = self
            .oldest_ms_beside(spool.as_deref(), in_flight)
            .map_or(0.0, |t| (now_ms() - t).max(0) as f64 / 1000.0);
        self.series.oldest.set(age);
    }
}

/// Moves queued records onto the spool until the queue is closed and empty.
pub async fn spooler(shared: Arc<Shared>) {
    let mut failing = false;
    loop {
        shared.queue.ready(TICK).await;
        let room = shared.spool().map_or(0, |s| s.room());
        if room < MIN_SPOOL_ROOM {
            // Full: the queue in memory takes the records meanwhile, then `WhenFull` applies.
            shared.gauges(None);
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        let max = usize::try_from(room).unwrap_or(usize::MAX);
        let batch = shared.queue.take(SPOOL_BATCH, max);
        if !batch.is_empty() {
            let written = shared.spool().map(|mut s| s.append(&batch));
            match written {
                Some(Err(e)) => {
                    shared
                        .series
                        .dropped(DropReason::SpoolError, batch.len() as u64);
                    if !failing {
                        failing = true;
                        tracing::error!(sink = shared.settings.name, error = %e, lost = batch.len(), "audit records cannot be spooled; they are dropped and counted");
                    }
                }
                _ => {
                    if failing {
                        failing = false;
                        tracing::info!(
                            sink = shared.settings.name,
                            "audit records are spooled again"
                        );
                    }
                    shared.spooled.notify_one();
                }
            }
        }
        shared.gauges(None);
        if shared.queue.is_closed() && shared.queue.is_empty() {
            return;
        }
    }
}

/// Delivers what waits, oldest first, until the queue is closed and nothing waits.
pub async fn sender(shared: Arc<Shared>) {
    let s = &shared.settings;
    let mut backoff = FIRST_BACKOFF;
    loop {
        linger(&shared).await;
        let (batch, commit) = match next_batch(&shared) {
            Some(b) => b,
            None => {
                shared.gauges(None);
                if shared.queue.is_closed() && shared.waiting() == 0 {
                    return;
                }
                match &shared.spool {
                    Some(_) => {
                        let _ = tokio::time::timeout(TICK, shared.spooled.notified()).await;
                    }
                    None => shared.queue.ready(TICK).await,
                }
                continue;
            }
        };
        // The batch is retried, whole and first, until the receiver takes it.
        loop {
            let oldest = batch.first().map(|r| r.queued_ms);
            shared.gauges(oldest);
            // The gauges keep moving while a delivery hangs (up to its timeout).
            let delivery = tokio::time::timeout(s.timeout, shared.deliver.deliver(&batch));
            tokio::pin!(delivery);
            let result = loop {
                tokio::select! {
                    r = &mut delivery => break match r {
                        Ok(r) => r,
                        Err(_) => Err(super::deliver::DeliverError::Timeout(s.timeout)),
                    },
                    () = tokio::time::sleep(TICK) => shared.gauges(oldest),
                }
            };
            match result {
                Ok(()) => {
                    shared.series.sent.inc_by(batch.len() as u64);
                    shared.series.up.set(1);
                    if let Some((lasted, failures)) = shared.health.delivered() {
                        tracing::info!(
                            sink = s.name,
                            to = shared.deliver.describe(),
                            after_seconds = lasted.as_secs(),
                            failures,
                            "audit sink delivers again"
                        );
                    }
                    backoff = FIRST_BACKOFF;
                    break;
                }
                Err(e) => {
                    shared.series.failed.inc();
                    shared.series.up.set(0);
                    if shared.health.failed(e.to_string()) {
                        tracing::error!(
                            sink = s.name,
                            to = shared.deliver.describe(),
                            error = %e,
                            waiting = shared.waiting(),
                            "audit sink cannot deliver; records wait (queued, and spooled when a spool is set) and are retried"
                        );
                    }
                    let jitter = backoff.mul_f64(fastrand::f64() * 0.2);
                    wait(&shared, backoff + jitter, oldest).await;
                    backoff = (backoff * 2).min(s.max_backoff);
                }
            }
        }
        commit.done(&shared, batch.len());
    }
}

/// Lets a partial batch in memory fill for `linger` before it is taken (never with a spool,
/// whose records are already on disk, nor once the queue is closed).
async fn linger(shared: &Shared) {
    let s = &shared.settings;
    let waiting = shared.queue.len();
    if shared.spool.is_none()
        && !s.linger.is_zero()
        && waiting > 0
        && waiting < s.batch_records
        && !shared.queue.is_closed()
    {
        tokio::time::sleep(s.linger).await;
    }
}

/// Waits `d`, keeping the gauges up to date every second.
async fn wait(shared: &Shared, d: Duration, oldest: Option<i64>) {
    let mut left = d;
    while !left.is_zero() {
        let step = left.min(TICK);
        tokio::time::sleep(step).await;
        left -= step;
        shared.gauges(oldest);
    }
}

/// How a delivered batch is forgotten.
enum Commit {
    /// Taken from memory: nothing to do but stop counting it in flight.
    Memory,
    /// Read from the spool: move its cursor.
    Spool {
        next: super::spool::Cursor,
        skipped: u64,
    },
}

impl Commit {
    fn done(self, shared: &Shared, delivered: usize) {
        match self {
            Commit::Memory => {
                shared
                    .in_flight
                    .fetch_sub(delivered as u64, Ordering::Relaxed);
            }
            Commit::Spool { next, skipped } => {
                let committed = shared
                    .spool()
                    .map(|mut sp| sp.commit(next, delivered as u64, skipped));
                if let Some(Err(e)) = committed {
                    // The cursor stays: the batch will be sent again (at least once).
                    tracing::error!(sink = shared.settings.name, error = %e, "audit spool cursor cannot be saved; the last batch may be sent again");
                }
            }
        }
        shared.gauges(None);
    }
}

/// The next batch: read from the spool (skipping unreadable lines), or taken from memory.
fn next_batch(shared: &Shared) -> Option<(Vec<SinkRecord>, Commit)> {
    let s = &shared.settings;
    match shared.spool() {
        Some(mut spool) => {
            let unsent = match spool.read(s.batch_records, s.batch_bytes) {
                Ok(u) => u,
                Err(e) => {
                    tracing::error!(sink = s.name, error = %e, "audit spool cannot be read");
                    return None;
                }
            };
            if unsent.skipped > 0 {
                shared
                    .series
                    .dropped(DropReason::Unreadable, unsent.skipped);
                tracing::warn!(
                    sink = s.name,
                    skipped = unsent.skipped,
                    "unreadable lines in the audit spool (torn by a crash) are skipped"
                );
            }
            if unsent.records.is_empty() {
                if unsent.skipped > 0
                    && let Err(e) = spool.commit(unsent.next, 0, unsent.skipped)
                {
                    tracing::error!(sink = s.name, error = %e, "audit spool cursor cannot be saved");
                }
                return None;
            }
            let commit = Commit::Spool {
                next: unsent.next,
                skipped: unsent.skipped,
            };
            Some((unsent.records, commit))
        }
        None => {
            let batch = shared.queue.take(s.batch_records, s.batch_bytes);
            if batch.is_empty() {
                return None;
            }
            shared
                .in_flight
                .fetch_add(batch.len() as u64, Ordering::Relaxed);
            Some((batch, Commit::Memory))
        }
    }
}
