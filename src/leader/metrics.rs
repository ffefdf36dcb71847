//! The election's metrics:
//!
//! | metric | meaning |
//! |---|---|
//! | `warrant_leader_is_leader` | 1 while this replica leads, else 0 |
//! | `warrant_leader_transitions_total` | changes of this replica's leadership (gained or lost) |

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// The election's series.
#[derive(Debug, Clone, Default)]
pub struct LeaderMetrics {
    is_leader: Gauge,
    transitions: Counter,
}

impl LeaderMetrics {
    /// Registers the series in `registry` (the counter gets its `_total` there).
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "warrant_leader_is_leader",
            "1 while this replica holds the leader-election Lease, else 0",
            self.is_leader.clone(),
        );
        registry.register(
            "warrant_leader_transitions",
            "Changes of this replica's leadership (gained or lost)",
            self.transitions.clone(),
        );
    }

    /// Records a change of leadership to `leading`.
    pub fn changed(&self, leading: bool) {
        self.is_leader.set(i64::from(leading));
        self.transitions.inc();
    }
}
