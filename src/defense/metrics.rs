//! The deletion defense's own series, registered on the registry it is handed.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

/// What became of one requester annotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequesterOutcome {
    /// Written.
    Recorded,
    /// Already the requester's: nothing written.
    Unchanged,
    /// Not written.
    Failed,
}

impl RequesterOutcome {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            RequesterOutcome::Recorded => "recorded",
            RequesterOutcome::Unchanged => "unchanged",
            RequesterOutcome::Failed => "failed",
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

/// The defense's series (unregistered by default: tests and tools count into nothing).
#[derive(Debug, Clone, Default)]
pub struct DefenseMetrics {
    requester_annotations: Family<OutcomeLabels, Counter>,
}

impl DefenseMetrics {
    /// The series, registered on `registry`.
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = Self::default();
        registry.register(
            "warrant_buffer_requester_annotations",
            "Requester annotations written on objects held by the buffer's finalizer when their DELETE was admitted, by outcome (recorded, unchanged, failed)",
            metrics.requester_annotations.clone(),
        );
        metrics
    }

    /// Counts one requester annotation by its outcome.
    pub fn record_requester(&self, outcome: RequesterOutcome) {
        self.requester_annotations
            .get_or_create(&OutcomeLabels {
                outcome: outcome.as_str(),
            })
            .inc();
    }
}
