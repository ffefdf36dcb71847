//! Remote sinks: the audit records leave the node. [`RemoteSink`] is one receiver (Kafka, an
//! HTTPS endpoint) behind the same machinery: a bounded queue in memory ([`queue`]), an
//! optional spool on disk bounded in bytes that survives restarts ([`spool`]), at-least-once
//! delivery in batches with retries ([`run`]), a choice when full ([`WhenFull`]: drop and
//! count, or hold the review up to a deadline, then drop and count, never fail it), the
//! `warrant_audit_sink_*` series ([`metrics`]) and a health that `/readyz?verbose` and the
//! logs show ([`health`]). A receiver implements [`Deliver`].

pub mod deliver;
pub mod health;
pub mod metrics;
pub mod queue;
pub mod record;
mod run;
pub mod settings;
pub mod spool;

pub use deliver::{Deliver, DeliverError};
pub use health::SinkStatus;
pub use metrics::{DropReason, SinkMetrics};
pub use record::SinkRecord;
pub use settings::{SinkSettings, SpoolSettings, WhenFull};
pub use spool::SpoolError;

use queue::{MemoryQueue, Offered};
use run::Shared;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// One remote sink: its queue and the tasks that deliver what it holds.
#[derive(Debug)]
pub struct RemoteSink {
    shared: Arc<Shared>,
    tasks: std::sync::Mutex<Vec<JoinHandle<()>>>,
    /// Whether drops are being logged already (one line per run of drops).
    dropping: AtomicBool,
}

impl RemoteSink {
    /// Opens the spool (when set) and starts the sink's tasks on the current Tokio runtime.
    pub fn start(
        settings: SinkSettings,
        deliver: Arc<dyn Deliver>,
        metrics: &SinkMetrics,
    ) -> Result<Self, SpoolError> {
        let spool = match &settings.spool {
            Some(s) => Some(std::sync::Mutex::new(spool::Spool::open(
                &s.dir,
                s.max_bytes,
            )?)),
            None => None,
        };
        let shared = Arc::new(Shared {
            queue: Arc::new(MemoryQueue::new(settings.queue_records)),
            series: metrics.series(settings.name),
            settings,
            spool,
            spooled: tokio::sync::Notify::new(),
            deliver,
            health: health::SinkHealth::default(),
            in_flight: Default::default(),
        });
        let unsent = shared.spool().map_or(0, |s| s.records());
        if unsent > 0 {
            tracing::info!(
                sink = shared.settings.name,
                records = unsent,
                "audit spool holds records of an earlier run; sending them first"
            );
        }
        // The spooler first: closing waits for it before the sender, so what memory holds
        // reaches the disk even while the receiver is down.
        let mut tasks = Vec::new();
        if shared.spool.is_some() {
            tasks.push(tokio::spawn(run::spooler(shared.clone())));
        }
        tasks.push(tokio::spawn(run::sender(shared.clone())));
        Ok(Self {
            shared,
            tasks: std::sync::Mutex::new(tasks),
            dropping: AtomicBool::new(false),
        })
    }

    /// The sink's name.
    pub fn name(&self) -> &'static str {
        self.shared.settings.name
    }

    /// Queues one record; when the queue is full, drops it at once or after the block
    /// timeout (counted, and logged once per run of drops, which ends when the queue has
    /// drained to half). Never fails.
    pub fn offer(&self, record: SinkRecord) {
        let s = &self.shared.settings;
        let reason = match self
            .shared
            .queue
            .offer(record, s.when_full, s.block_timeout)
        {
            Offered::Queued => {
                // A run of drops ends once the queue has drained to half: ended at the first
                // room, a sustained overload logged a pair of lines for every batch sent.
                let queue = &self.shared.queue;
                if self.dropping.load(Ordering::Relaxed)
                    && queue.len() <= queue.capacity() / 2
                    && self.dropping.swap(false, Ordering::Relaxed)
                {
                    tracing::info!(sink = s.name, "audit sink queues records again");
                }
                return;
            }
            Offered::Full => DropReason::QueueFull,
            Offered::BlockTimeout => DropReason::BlockTimeout,
            Offered::Closed => DropReason::Closed,
        };
        self.shared.series.dropped(reason, 1);
        if !self.dropping.swap(true, Ordering::Relaxed) {
            tracing::error!(
                sink = s.name,
                reason = reason.as_str(),
                when_full = s.when_full.as_str(),
                "audit sink queue is full; records are dropped and counted in warrant_audit_sink_dropped_records_total until there is room"
            );
        }
    }

    /// What `/readyz?verbose` says of the sink.
    pub fn status(&self) -> SinkStatus {
        self.shared
            .health
            .status(self.name(), self.shared.waiting(), self.shared.oldest_age())
    }

    /// Stops taking records and waits up to `within` for the tasks to deliver (or spool)
    /// what waits; then stops them. Without a spool, what is still unsent is lost, and
    /// counted (reason `closed`).
    pub async fn close(&self, within: Duration) {
        self.shared.queue.close();
        let deadline = Instant::now() + within;
        let tasks: Vec<JoinHandle<()>> = {
            let mut t = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
            std::mem::take(&mut *t)
        };
        for mut task in tasks {
            let left = deadline.saturating_duration_since(Instant::now());
            if tokio::time::timeout(left, &mut task).await.is_err() {
                task.abort();
            }
        }
        if self.shared.spool.is_none() {
            let lost = self.shared.waiting();
            if lost > 0 {
                self.shared.series.dropped(DropReason::Closed, lost);
                tracing::error!(
                    sink = self.name(),
                    lost,
                    "audit sink stopped with records unsent (no spool): they are lost"
                );
            }
        } else {
            let lost = self.shared.queue.len() as u64;
            if lost > 0 {
                self.shared.series.dropped(DropReason::Closed, lost);
                tracing::error!(
                    sink = self.name(),
                    lost,
                    "audit sink stopped before it could spool every record: they are lost"
                );
            }
            let spooled = self.shared.spool().map_or(0, |s| s.records());
            if spooled > 0 {
                tracing::info!(
                    sink = self.name(),
                    records = spooled,
                    "audit sink stopped; unsent records stay in the spool for the next start"
                );
            }
        }
    }
}

impl Drop for RemoteSink {
    fn drop(&mut self) {
        self.shared.queue.close();
        for task in self
            .tasks
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests;
