//! [`SinkMetrics`]: the `warrant_audit_sink_*` families, one series per remote sink (label
//! `sink`), and [`SinkSeries`], one sink's resolved handles.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SinkLabels {
    sink: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DropLabels {
    sink: &'static str,
    reason: &'static str,
}

/// Why a sink dropped a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The queue was full and the sink drops (`Drop`).
    QueueFull,
    /// The queue stayed full for the whole block timeout (`Block`).
    BlockTimeout,
    /// The sink was shutting down.
    Closed,
    /// A spooled line could not be read back (torn by a crash).
    Unreadable,
    /// The spool could not be written.
    SpoolError,
}

impl DropReason {
    /// The `reason` label.
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::QueueFull => "queue-full",
            DropReason::BlockTimeout => "block-timeout",
            DropReason::Closed => "closed",
            DropReason::Unreadable => "unreadable",
            DropReason::SpoolError => "spool-error",
        }
    }
}

/// The remote sinks' metric families.
#[derive(Debug, Clone, Default)]
pub struct SinkMetrics {
    queued: Family<SinkLabels, Gauge>,
    sent: Family<SinkLabels, Counter>,
    failed: Family<SinkLabels, Counter>,
    dropped: Family<DropLabels, Counter>,
    spool_bytes: Family<SinkLabels, Gauge>,
    oldest: Family<SinkLabels, Gauge<f64, AtomicU64>>,
    up: Family<SinkLabels, Gauge>,
}

impl SinkMetrics {
    /// The families, registered on `registry`.
    pub fn register(registry: &mut Registry) -> Self {
        let m = Self::default();
        registry.register(
            "warrant_audit_sink_queued_records",
            "Audit records waiting to be sent by a remote sink (in memory and spooled)",
            m.queued.clone(),
        );
        registry.register(
            "warrant_audit_sink_sent_records",
            "Audit records a remote sink's receiver acknowledged",
            m.sent.clone(),
        );
        registry.register(
            "warrant_audit_sink_failed_batches",
            "Batches a remote sink failed to deliver (each is retried)",
            m.failed.clone(),
        );
        registry.register(
            "warrant_audit_sink_dropped_records",
            "Audit records a remote sink dropped, by reason (queue-full, block-timeout, closed, unreadable, spool-error)",
            m.dropped.clone(),
        );
        registry.register(
            "warrant_audit_sink_spool_bytes",
            "Bytes of a remote sink's spool on disk",
            m.spool_bytes.clone(),
        );
        registry.register(
            "warrant_audit_sink_oldest_unsent_age_seconds",
            "Age of the oldest audit record a remote sink has not delivered yet (0 when none waits)",
            m.oldest.clone(),
        );
        registry.register(
            "warrant_audit_sink_up",
            "1 while a remote sink delivers, 0 while its deliveries fail",
            m.up.clone(),
        );
        m
    }

    /// The series of the sink called `sink`.
    pub fn series(&self, sink: &'static str) -> SinkSeries {
        let l = SinkLabels { sink };
        let up = self.up.get_or_create(&l).clone();
        up.set(1);
        SinkSeries {
            sink,
            queued: self.queued.get_or_create(&l).clone(),
            sent: self.sent.get_or_create(&l).clone(),
            failed: self.failed.get_or_create(&l).clone(),
            dropped: self.dropped.clone(),
            spool_bytes: self.spool_bytes.get_or_create(&l).clone(),
            oldest: self.oldest.get_or_create(&l).clone(),
            up,
        }
    }
}

/// One sink's series.
#[derive(Debug, Clone)]
pub struct SinkSeries {
    sink: &'static str,
    /// Records waiting.
    pub queued: Gauge,
    /// Records acknowledged.
    pub sent: Counter,
    /// Batches that failed.
    pub failed: Counter,
    dropped: Family<DropLabels, Counter>,
    /// Spool bytes on disk.
    pub spool_bytes: Gauge,
    /// Age of the oldest unsent record, in seconds.
    pub oldest: Gauge<f64, AtomicU64>,
    /// Whether deliveries succeed.
    pub up: Gauge,
}

impl SinkSeries {
    /// Counts `n` records dropped for `reason`.
    pub fn dropped(&self, reason: DropReason, n: u64) {
        self.dropped
            .get_or_create(&DropLabels {
                sink: self.sink,
                reason: reason.as_str(),
            })
            .inc_by(n);
    }
}
