//! The buffer ring's metric families, registered in the shared registry (contract 6 of the
//! issue):
//!
//! | metric | labels |
//! |---|---|
//! | `warrant_buffer_objects_held` | (objects whose deletion the finalizer holds now) |
//! | `warrant_buffer_oldest_hold_seconds` | (age of the oldest hold, 0 with none) |
//! | `warrant_buffer_finalizer_removals_total` | `outcome`: `BELOW_CRITICAL`, `COOLDOWN_ELAPSED`, `CONFIRMED`, `COOLDOWN_EXPIRED` (alert on this one), `UNPROTECTED`, `RETIRED` |
//! | `warrant_buffer_finalizer_attachments_total` | (finalizers put on protected objects) |
//! | `warrant_buffer_errors_total` | `operation`: `get`, `patch`, `risk`, `event`, `notify`, `watch`, `discovery`, `retire` |
//!
//! The gauges are read at scrape time from the holds the controller keeps ([`Holds`]).

use super::holds::Holds;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;
use std::sync::Arc;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OperationLabels {
    operation: &'static str,
}

/// The controller's counters and the holds its gauges read.
#[derive(Debug, Clone, Default)]
pub struct BufferMetrics {
    removals: Family<OutcomeLabels, Counter>,
    attachments: Counter,
    errors: Family<OperationLabels, Counter>,
    holds: Arc<Holds>,
}

impl BufferMetrics {
    /// Registers the families in `registry` (once, when the server builds its registry).
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "warrant_buffer_finalizer_removals",
            "Finalizers the buffer ring removed, by outcome (COOLDOWN_EXPIRED: a hold reached maxHold)",
            self.removals.clone(),
        );
        registry.register(
            "warrant_buffer_finalizer_attachments",
            "Finalizers the buffer ring put on protected objects",
            self.attachments.clone(),
        );
        registry.register(
            "warrant_buffer_errors",
            "Buffer ring operations that failed, by operation",
            self.errors.clone(),
        );
        registry.register_collector(Box::new(HoldGauges(self.holds.clone())));
    }

    /// The holds the gauges read.
    pub fn holds(&self) -> &Arc<Holds> {
        &self.holds
    }

    /// Counts one finalizer removal.
    pub fn removed(&self, outcome: &'static str) {
        self.removals
            .get_or_create(&OutcomeLabels { outcome })
            .inc();
    }

    /// Counts one finalizer attachment.
    pub(crate) fn attached(&self) {
        self.attachments.inc();
    }

    /// Counts one failed operation.
    pub fn failed(&self, operation: &'static str) {
        self.errors
            .get_or_create(&OperationLabels { operation })
            .inc();
    }
}

/// The hold gauges, read at scrape time.
#[derive(Debug)]
struct HoldGauges(Arc<Holds>);

impl Collector for HoldGauges {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let (count, oldest) = self.0.summary(chrono::Utc::now());
        let e = encoder.encode_descriptor(
            "warrant_buffer_objects_held",
            "Objects whose deletion the buffer ring's finalizer holds now",
            None,
            MetricType::Gauge,
        )?;
        ConstGauge::new(i64::try_from(count).unwrap_or(i64::MAX)).encode(e)?;
        let e = encoder.encode_descriptor(
            "warrant_buffer_oldest_hold_seconds",
            "Seconds since the deletionTimestamp of the oldest held object (0 with none)",
            None,
            MetricType::Gauge,
        )?;
        ConstGauge::new(oldest).encode(e)
    }
}
