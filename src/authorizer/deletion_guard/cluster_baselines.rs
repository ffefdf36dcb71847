//! Unusual-deletion baselines kept in the cluster (`unusualDeletions.scope: Cluster`), shared by
//! every replica and surviving restarts: the [`ClusterBaselines`] contract the guard calls, the
//! [`BaselineKey`] naming one baseline, and [`BaselineError`]. The store is the one that keeps
//! the `scope: Cluster` rate-limit buckets (`crate::cluster::buckets`, a Lease per baseline,
//! optimistic on `resourceVersion`); the guard bounds each call by the review's deadline.

use super::baseline::Judgement;
use crate::config::model::unusual::UnusualDeletions;
use chrono::{DateTime, Utc};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use thiserror::Error;

/// A boxed future of a baseline store (the shape of the authorizers' `BoxFuture`, spelled here
/// so that this module depends on nothing above the guard, nor on the rate-limit buckets whose
/// store also keeps baselines).
pub(crate) type BaselineFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One baseline: the guard, the principal and the kind it counts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BaselineKey {
    /// The guard's name in the chain.
    pub guard: String,
    /// The principal (user name).
    pub user: String,
    /// API group.
    pub group: String,
    /// Plural resource.
    pub resource: String,
}

/// Why a cluster baseline could not be read or written. The guard turns it into its failure
/// policy, unless the gate only observes (then it is logged and the request judged without it).
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum BaselineError {
    /// No cluster is configured, so no cluster-scoped baseline can be kept.
    #[error("cluster-scoped deletion baseline: no cluster connection (--kubeconfig or in-cluster)")]
    NoCluster,
    /// The API server failed or refused.
    #[error("cluster-scoped deletion baseline {name}: {message}")]
    Api {
        /// The baseline's object name.
        name: String,
        /// The API error.
        message: String,
    },
    /// Every attempt lost a write race (409 Conflict).
    #[error("cluster-scoped deletion baseline {name}: {attempts} conflicting writes, giving up")]
    Conflicts {
        /// The baseline's object name.
        name: String,
        /// The attempts made.
        attempts: u32,
    },
    /// The stored baseline does not decode.
    #[error("cluster-scoped deletion baseline {name}: {message}")]
    Corrupt {
        /// The baseline's object name.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// The review's time budget ran out before the API server answered.
    #[error(
        "cluster-scoped deletion baseline: no answer from the API server within the review's time budget"
    )]
    DeadlinePassed,
}

/// Baselines shared by every replica through the cluster.
pub trait ClusterBaselines: Send + Sync + fmt::Debug {
    /// Judges one more request of `key` at `now` against the stored baseline (a principal
    /// never seen starts from the prior); with `record`, counts it too, atomically with the
    /// judgement.
    fn observe<'a>(
        &'a self,
        key: &'a BaselineKey,
        settings: &'a UnusualDeletions,
        now: DateTime<Utc>,
        record: bool,
    ) -> BaselineFuture<'a, Result<Judgement, BaselineError>>;
}
