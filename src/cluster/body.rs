//! What the index keeps of each kind beyond metadata: compact bodies, projected at once from
//! the objects the watches (or files) deliver.

use super::labels::Labels;
use std::sync::Arc;

/// A pod: its labels, the claims its volumes name, whether it runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pod {
    /// `metadata.labels`.
    pub labels: Labels,
    /// The PersistentVolumeClaims its volumes mount (interned), ephemeral ones included.
    pub claims: Box<[Arc<str>]>,
    /// `status.phase` is `Running`.
    pub running: bool,
}

/// A workload (ReplicaSet, Deployment, StatefulSet, DaemonSet, Job, CronJob): metadata only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Workload;

/// A Service: its equality selector (empty: selects nothing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Service {
    /// `spec.selector` (empty for an `ExternalName` Service).
    pub selector: Labels,
}

/// An Ingress: the Services its default backend and rules name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ingress {
    /// Backend Service names, sorted, without duplicates (interned).
    pub backends: Box<[Arc<str>]>,
}

/// A PersistentVolumeClaim: bound or not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Claim {
    /// `status.phase` is `Bound`.
    pub bound: bool,
}

/// A Namespace: its labels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Namespace {
    /// `metadata.labels`.
    pub labels: Labels,
}
