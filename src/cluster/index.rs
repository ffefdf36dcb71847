//! [`Index`]: every kind's [`Store`], answering the view's questions, and the compact bodies
//! it keeps of each kind beyond metadata. A pure data structure: fed projected objects (by
//! the watches or the file loader), it knows no client and no wire type, so it is tested
//! without a cluster.

use super::labels::Labels;
use super::resource::{Resource, WORKLOADS};
use super::store::{Key, Object, Store};
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

/// A workload (ReplicaSet, Deployment, StatefulSet, DaemonSet, Job, CronJob): its labels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Workload {
    /// `metadata.labels`.
    pub labels: Labels,
}

/// A Service: its labels and equality selector (empty: selects nothing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Service {
    /// `metadata.labels`.
    pub labels: Labels,
    /// `spec.selector` (empty for an `ExternalName` Service).
    pub selector: Labels,
}

/// An Ingress: its labels and the Services its default backend and rules name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ingress {
    /// `metadata.labels`.
    pub labels: Labels,
    /// Backend Service names, sorted, without duplicates (interned).
    pub(crate) backends: Box<[Arc<str>]>,
}

/// A PersistentVolumeClaim: its labels, bound or not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Claim {
    /// `metadata.labels`.
    pub labels: Labels,
    /// `status.phase` is `Bound`.
    pub bound: bool,
}

/// A Namespace: its labels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Namespace {
    /// `metadata.labels`.
    pub labels: Labels,
}

/// The cluster as the cache holds it.
#[derive(Debug, Default)]
pub struct Index {
    pub(super) pods: Store<Pod>,
    pub(super) workloads: [Store<Workload>; WORKLOADS.len()],
    pub(super) services: Store<Service>,
    pub(super) ingresses: Store<Ingress>,
    pub(super) claims: Store<Claim>,
    pub(super) namespaces: Store<Namespace>,
}

/// A body type and the store(s) of the index holding it.
pub trait Body: Sized + Send + Sync + 'static {
    /// The store of `resource` in `index`, when `resource` holds this body type.
    fn store_mut(index: &mut Index, resource: Resource) -> Option<&mut Store<Self>>;
}

macro_rules! single_store {
    ($body:ty, $field:ident, $resource:path) => {
        impl Body for $body {
            fn store_mut(index: &mut Index, resource: Resource) -> Option<&mut Store<Self>> {
                (resource == $resource).then_some(&mut index.$field)
            }
        }
    };
}

single_store!(Pod, pods, Resource::Pods);
single_store!(Service, services, Resource::Services);
single_store!(Ingress, ingresses, Resource::Ingresses);
single_store!(Claim, claims, Resource::PersistentVolumeClaims);
single_store!(Namespace, namespaces, Resource::Namespaces);

impl Body for Workload {
    fn store_mut(index: &mut Index, resource: Resource) -> Option<&mut Store<Self>> {
        resource
            .workload_slot()
            .and_then(|i| index.workloads.get_mut(i))
    }
}

impl Index {
    /// Adds or replaces an object of `resource`. An object whose body is not the kind's is
    /// ignored (a programming error, never a panic).
    pub fn apply<B: Body>(&mut self, resource: Resource, key: Key, object: Object<B>) {
        if let Some(store) = B::store_mut(self, resource) {
            store.apply(key, object);
        }
    }

    /// Removes an object of `resource` if its UID is `uid` (see [`Store::delete`]).
    pub fn delete<B: Body>(&mut self, resource: Resource, key: &Key, uid: &str) -> bool {
        B::store_mut(self, resource).is_some_and(|s| s.delete(key, uid))
    }

    /// Replaces the whole store of `resource` (a finished list) and returns the old one, to be
    /// dropped outside any lock.
    pub(crate) fn install<B: Body>(&mut self, resource: Resource, store: Store<B>) -> Store<B> {
        match B::store_mut(self, resource) {
            Some(slot) => std::mem::replace(slot, store),
            None => store,
        }
    }

    /// How many objects of `resource` are held.
    pub fn len(&self, resource: Resource) -> usize {
        match resource {
            Resource::Pods => self.pods.len(),
            Resource::Services => self.services.len(),
            Resource::Ingresses => self.ingresses.len(),
            Resource::PersistentVolumeClaims => self.claims.len(),
            Resource::Namespaces => self.namespaces.len(),
            workload => workload
                .workload_slot()
                .and_then(|i| self.workloads.get(i))
                .map_or(0, Store::len),
        }
    }

    /// The value of label `key` on namespace `namespace`.
    pub fn namespace_label(&self, namespace: &str, key: &str) -> Option<String> {
        self.namespaces
            .get("", namespace)?
            .body
            .labels
            .get(key)
            .map(str::to_owned)
    }

    /// The store of a workload kind.
    pub(super) fn workload_store(&self, resource: Resource) -> Option<&Store<Workload>> {
        self.workloads.get(resource.workload_slot()?)
    }
}
