//! Rate-limit buckets kept in the cluster (`rateLimits[].scope: Cluster`), shared by every
//! replica: the [`ClusterBuckets`] contract the guard calls, the [`BucketKey`] naming one
//! bucket, the token arithmetic both kinds of bucket share ([`BucketLevel`]), and [`BucketError`].
//! The implementation (a Lease per bucket, optimistic on `resourceVersion`) is
//! `crate::cluster::buckets`; the guard bounds each call by the review's deadline.

use crate::config::model::guard::RateLimit;
use chrono::{DateTime, Utc};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use thiserror::Error;

/// A boxed future of a bucket store (the same shape as the authorizers' `BoxFuture`, spelled
/// here so that this module depends on nothing above the guard).
pub(crate) type BucketFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The cluster's buckets as one guard uses them: the store and the guard's name, part of
/// every bucket's key.
#[derive(Debug, Clone)]
pub struct SharedBuckets {
    /// The guard's name in the chain.
    pub guard: String,
    /// The store.
    pub store: Arc<dyn ClusterBuckets>,
}

/// One bucket: the guard, the limit (its index and settings) and the user it counts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BucketKey {
    /// The guard's name in the chain.
    pub guard: String,
    /// The limit's index in `rateLimits`.
    pub index: usize,
    /// The limit.
    pub limit: RateLimit,
    /// The user it counts.
    pub user: String,
}

/// A bucket's content: `tokens` as of `at`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct BucketLevel {
    /// Tokens held at `at`.
    pub tokens: f64,
    /// When they were counted.
    pub at: DateTime<Utc>,
}

impl BucketLevel {
    /// A full bucket of `limit` at `now`.
    pub fn full(limit: &RateLimit, now: DateTime<Utc>) -> Self {
        Self {
            tokens: f64::from(limit.count),
            at: now,
        }
    }

    /// The tokens held at `now`: `count` tokens refill evenly over the period, capped at
    /// `count`; a `now` before `at` (another replica's clock ahead) refills nothing.
    pub fn at(self, limit: &RateLimit, now: DateTime<Utc>) -> f64 {
        let cap = f64::from(limit.count);
        let per_sec = cap / limit.period.as_secs_f64().max(1e-9);
        let dt = (now - self.at).num_milliseconds().max(0) as f64 / 1000.0;
        (self.tokens + dt * per_sec).min(cap)
    }

    /// The bucket after one token is taken at `now`, or `None` when it holds less than one.
    pub fn take(self, limit: &RateLimit, now: DateTime<Utc>) -> Option<Self> {
        let tokens = self.at(limit, now);
        (tokens >= 1.0).then(|| Self {
            tokens: tokens - 1.0,
            at: now.max(self.at),
        })
    }
}

/// Why a cluster bucket could not be read or written. The guard turns it into its failure
/// policy: a cluster-scoped limit is never skipped.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum BucketError {
    /// No cluster is configured, so no cluster-scoped bucket can be kept.
    #[error("cluster-scoped rate limit: no cluster connection (--kubeconfig or in-cluster)")]
    NoCluster,
    /// The API server failed or refused.
    #[error("cluster-scoped rate limit: bucket {name}: {message}")]
    Api {
        /// The bucket's object name.
        name: String,
        /// The API error.
        message: String,
    },
    /// Every attempt lost a write race (409 Conflict).
    #[error("cluster-scoped rate limit: bucket {name}: {attempts} conflicting writes, giving up")]
    Conflicts {
        /// The bucket's object name.
        name: String,
        /// The attempts made.
        attempts: u32,
    },
    /// The stored bucket does not decode.
    #[error("cluster-scoped rate limit: bucket {name}: {message}")]
    Corrupt {
        /// The bucket's object name.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// The review's time budget ran out before the API server answered.
    #[error(
        "cluster-scoped rate limit: no answer from the API server within the review's time budget"
    )]
    DeadlinePassed,
}

/// Buckets shared by every replica through the cluster.
pub trait ClusterBuckets: Send + Sync + fmt::Debug {
    /// Whether the bucket holds a token at `now`, without taking it (absent = full).
    fn has_token<'a>(
        &'a self,
        key: &'a BucketKey,
        now: DateTime<Utc>,
    ) -> BucketFuture<'a, Result<bool, BucketError>>;

    /// Takes one token: `true` when taken, `false` when the bucket is empty.
    fn take<'a>(
        &'a self,
        key: &'a BucketKey,
        now: DateTime<Utc>,
    ) -> BucketFuture<'a, Result<bool, BucketError>>;

    /// The same store keeping `unusualDeletions.scope: Cluster` baselines, when it can.
    fn baselines(&self) -> Option<&dyn super::cluster_baselines::ClusterBaselines> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::model::guard::{Kind, RateLimitScope};
    use std::time::Duration;

    #[test]
    fn a_level_refills_evenly_and_caps() {
        let limit = RateLimit {
            kind: Kind {
                group: "".into(),
                resource: "namespaces".into(),
            },
            count: 3,
            period: Duration::from_secs(60),
            scope: RateLimitScope::Cluster,
        };
        let t0 = DateTime::parse_from_rfc3339("2026-12-02T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let mut level = BucketLevel::full(&limit, t0);
        for _ in 0..3 {
            level = level.take(&limit, t0).unwrap();
        }
        assert_eq!(level.take(&limit, t0), None);
        // One token per 20s.
        let t20 = t0 + chrono::Duration::seconds(20);
        assert!((level.at(&limit, t20) - 1.0).abs() < 1e-9);
        assert!(level.take(&limit, t20).is_some());
        assert_eq!(level.at(&limit, t0 + chrono::Duration::hours(1)), 3.0);
        // A clock behind the bucket's refills nothing.
        assert_eq!(level.at(&limit, t0 - chrono::Duration::seconds(5)), 0.0);
    }
}
