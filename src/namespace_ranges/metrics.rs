//! The allocator's metrics:
//!
//! | metric | meaning |
//! |---|---|
//! | `warrant_pod_security_namespace_allocations_total` | namespaces given a uid block (and MCS label) |
//! | `warrant_pod_security_namespace_allocation_failures_total{reason}` | allocations or repairs that failed, by reason |
//! | `warrant_pod_security_uid_blocks_taken` | blocks of the uid range taken, as last written by this replica |

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// Why an allocation (or a repair) failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureReason {
    /// Every block is taken, or the MCS range has no label left.
    RangeFull,
    /// The Lease could not be read or written, or holds another range.
    State,
    /// The Lease kept changing under this replica (conflicts past the attempts).
    Conflicts,
    /// The namespace could not be written.
    NamespaceWrite,
    /// The namespace watch failed (it retries with backoff).
    Watch,
}

impl FailureReason {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RangeFull => "range_full",
            Self::State => "state",
            Self::Conflicts => "conflicts",
            Self::NamespaceWrite => "namespace_write",
            Self::Watch => "watch",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ReasonLabel {
    reason: &'static str,
}

/// The allocator's series.
#[derive(Debug, Clone, Default)]
pub struct RangeMetrics {
    allocations: Counter,
    failures: Family<ReasonLabel, Counter>,
    taken: Gauge,
}

impl RangeMetrics {
    /// Registers the series in `registry` (counters get their `_total` there).
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "warrant_pod_security_namespace_allocations",
            "Namespaces given a uid block, supplemental groups and an MCS label",
            self.allocations.clone(),
        );
        registry.register(
            "warrant_pod_security_namespace_allocation_failures",
            "Namespace range allocations or repairs that failed, by reason",
            self.failures.clone(),
        );
        registry.register(
            "warrant_pod_security_uid_blocks_taken",
            "Blocks of the uid range taken, as last written by this replica",
            self.taken.clone(),
        );
    }

    /// Counts one namespace allocated.
    pub fn allocated(&self) {
        self.allocations.inc();
    }

    /// Counts one failure.
    pub fn failed(&self, reason: FailureReason) {
        self.failures
            .get_or_create(&ReasonLabel {
                reason: reason.as_str(),
            })
            .inc();
    }

    /// Records how many blocks are taken.
    pub fn taken(&self, blocks: u32) {
        self.taken.set(i64::from(blocks));
    }

    /// The allocations counted (for tests).
    pub fn allocations(&self) -> u64 {
        self.allocations.get()
    }

    /// The failures counted for `reason` (for tests).
    pub fn failures(&self, reason: FailureReason) -> u64 {
        self.failures
            .get_or_create(&ReasonLabel {
                reason: reason.as_str(),
            })
            .get()
    }
}
