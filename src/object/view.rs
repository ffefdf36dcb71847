//! [`ClusterView`]: what the validation ring asks the cluster about a target (its namespace's
//! labels, what depends on it), answered by the metadata cache or by saved files.

use super::labelled::LabelValues;
use super::subject::Subject;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use thiserror::Error;

/// A boxed future, as [`ClusterView::remaining_objects`] returns.
pub type ViewFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The object a request targets, as the view is asked about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectRef<'a> {
    /// API group (`""` for core).
    pub group: &'a str,
    /// Plural resource.
    pub resource: &'a str,
    /// Namespace (`""` for a cluster-scoped object).
    pub namespace: &'a str,
    /// Name.
    pub name: &'a str,
}

/// What depends on a target: what deleting it takes down with it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dependents {
    /// Running pods the target owns (transitively), selects or, for a Namespace, holds.
    pub running_pods: u32,
    /// Of those, the pods an Ingress reaches (through a Service), for the traffic estimate.
    pub ingress_pods: u32,
    /// Services selecting the affected pods, `namespace/name`, sorted.
    pub services: Vec<String>,
    /// Ingresses reaching the affected pods or the target, `namespace/name`, sorted.
    pub ingresses: Vec<String>,
    /// Bound PersistentVolumeClaims the affected pods mount or the target claims, sorted.
    pub bound_volumes: Vec<String>,
}

/// Why the view cannot answer.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ViewError {
    /// A watch has not listed once yet (or lost its list and has not listed again).
    #[error("cluster cache not ready: {0}")]
    NotReady(String),
    /// A live call to the API server failed.
    #[error("cluster API call failed: {0}")]
    Api(String),
    /// No cluster connection is configured, and the answer needs one.
    #[error("no cluster connection is configured (serve with --kubeconfig or in a cluster)")]
    NoCluster,
}

/// What the validation ring may ask of the cluster.
pub trait ClusterView: Send + Sync + fmt::Debug {
    /// `Ok` once every watch has listed; else why not.
    fn ready(&self) -> Result<(), ViewError>;

    /// The value of label `key` on namespace `namespace` (`None` when the namespace or the
    /// label is absent).
    fn namespace_label(&self, namespace: &str, key: &str) -> Result<Option<String>, ViewError>;

    /// The objects in namespace `namespace` carrying label `key` (workloads, Services,
    /// Ingresses, PersistentVolumeClaims, running pods), grouped by the label's value: what a
    /// Namespace deletion takes with it that is labelled on its own. Reading the values (as
    /// protection levels, say) is the caller's business.
    fn labelled_inside(&self, namespace: &str, key: &str) -> Result<LabelValues, ViewError>;

    /// What depends on `target` (`object` is the stored object, when the caller has it).
    fn dependents(
        &self,
        target: &ObjectRef<'_>,
        object: Option<&Subject>,
    ) -> Result<Dependents, ViewError>;

    /// How many objects of the kind a CustomResourceDefinition defines still exist (at most
    /// the first one is looked for: `> 0` is all the cascade gate needs).
    fn remaining_objects<'a>(&'a self, crd: &'a Subject) -> ViewFuture<'a, Result<u64, ViewError>>;
}

/// The view of a warrant with no cluster connection: every question is a [`ViewError::NoCluster`].
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCluster;

impl ClusterView for NoCluster {
    fn ready(&self) -> Result<(), ViewError> {
        Err(ViewError::NoCluster)
    }

    fn namespace_label(&self, _: &str, _: &str) -> Result<Option<String>, ViewError> {
        Err(ViewError::NoCluster)
    }

    fn labelled_inside(&self, _: &str, _: &str) -> Result<LabelValues, ViewError> {
        Err(ViewError::NoCluster)
    }

    fn dependents(&self, _: &ObjectRef<'_>, _: Option<&Subject>) -> Result<Dependents, ViewError> {
        Err(ViewError::NoCluster)
    }

    fn remaining_objects<'a>(&'a self, _: &'a Subject) -> ViewFuture<'a, Result<u64, ViewError>> {
        Box::pin(std::future::ready(Err(ViewError::NoCluster)))
    }
}

/// A cluster with nothing in it: ready, no namespace labels, no labelled objects, no
/// dependents, no remaining objects. What `warrant check --object` judges against without
/// `--cluster-state`.
#[derive(Debug, Clone, Copy, Default)]
pub struct EmptyCluster;

impl ClusterView for EmptyCluster {
    fn ready(&self) -> Result<(), ViewError> {
        Ok(())
    }

    fn namespace_label(&self, _: &str, _: &str) -> Result<Option<String>, ViewError> {
        Ok(None)
    }

    fn labelled_inside(&self, _: &str, _: &str) -> Result<LabelValues, ViewError> {
        Ok(LabelValues::default())
    }

    fn dependents(&self, _: &ObjectRef<'_>, _: Option<&Subject>) -> Result<Dependents, ViewError> {
        Ok(Dependents::default())
    }

    fn remaining_objects<'a>(&'a self, _: &'a Subject) -> ViewFuture<'a, Result<u64, ViewError>> {
        Box::pin(std::future::ready(Ok(0)))
    }
}
