//! [`RateLimitScope`]: where the counters of a rate limit or an unusual-deletion baseline live.

use serde::Serialize;

/// Where a rate limit's counters live.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub enum RateLimitScope {
    /// In each replica's memory: N replicas admit up to N times the limit.
    #[default]
    Replica,
    /// In the cluster (one Lease per bucket in warrant's namespace, updated with optimistic
    /// concurrency): every replica together admits at most the limit.
    Cluster,
}
