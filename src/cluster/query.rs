//! What depends on a target: the index's answer to `ClusterView::dependents`.
//!
//! First the affected running pods, by the target's kind: a workload's pods through the owner
//! chain (Deployment -> ReplicaSet -> Pod, CronJob -> Job -> Pod, ...), a Pod itself, a
//! Service's selected pods, every pod of a Namespace, a claim's mounting pods, an Ingress's
//! backends' pods, and for any other namespaced kind what its stored object's UID owns. Then, from those pods: the Services selecting them, the Ingresses whose
//! backends are those Services, the pods such an Ingress reaches, and the bound claims they
//! mount. A Namespace also brings all its Ingresses and bound claims, an Ingress itself, a
//! bound claim itself, and a StatefulSet the claims of its `volumeClaimTemplates`.

use super::index::Index;
use super::index::{Ingress, Pod, Service};
use super::intern::Interner;
use super::labels::Labels;
use super::project;
use super::resource::{Resource, WORKLOADS};
use super::store::UidHasher;
use super::wire::{ClaimWire, IngressWire, ServiceWire, StatefulSetWire};
use crate::object::{Dependents, ObjectRef, Subject};
use serde::Deserialize;
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

impl Index {
    /// What depends on `target`; `stored` is the stored object when the caller has it (its
    /// UID, selector, backends or claim templates are preferred to the cache's copy).
    pub fn dependents(&self, target: &ObjectRef<'_>, stored: Option<&Subject>) -> Dependents {
        let resource = Resource::from_group_resource(target.group, target.resource);
        let namespace = match resource {
            Some(Resource::Namespaces) => target.name,
            _ => target.namespace,
        };
        let mut found = Found::new(self, namespace);
        match resource {
            Some(Resource::Pods) => found.pod(target.name),
            Some(Resource::Services) => found.service(target.name, stored),
            Some(Resource::Namespaces) => found.whole_namespace(),
            Some(Resource::PersistentVolumeClaims) => found.claim(target.name, stored),
            Some(Resource::Ingresses) => found.ingress(target.name, stored),
            Some(workload) if workload.workload_slot().is_some() => {
                found.owned_by(Some(workload), target.name, stored);
                if workload == Resource::StatefulSets {
                    found.claim_templates(target.name, stored);
                }
            }
            // Any other namespaced kind (an operator's custom resource owning ReplicaSets,
            // say): what its stored object's UID owns.
            _ if !target.namespace.is_empty() => found.owned_by(None, target.name, stored),
            _ => {}
        }
        found.finish()
    }
}

/// A stored object read as a wire shape (the part the index reads of it).
fn read<'a, W: Deserialize<'a>>(stored: Option<&'a Subject>) -> Option<W> {
    stored?.decode().ok()
}

/// The facts gathered for one target, all in its namespace.
struct Found<'a> {
    index: &'a Index,
    namespace: &'a str,
    /// Affected running pods (a pod found twice is counted once: see [`Found::finish`]).
    pods: Vec<&'a Pod>,
    ingresses: BTreeSet<&'a str>,
    /// Backends of the target Ingress, as its stored object names them.
    target_backends: Vec<Arc<str>>,
    bound: BTreeSet<&'a str>,
}

impl<'a> Found<'a> {
    fn new(index: &'a Index, namespace: &'a str) -> Self {
        Self {
            index,
            namespace,
            pods: Vec::new(),
            ingresses: BTreeSet::new(),
            target_backends: Vec::new(),
            bound: BTreeSet::new(),
        }
    }

    fn add_pods_where(&mut self, keep: impl Fn(&Pod) -> bool) {
        let running = self.index.pods.in_namespace(self.namespace);
        for (_, pod) in running.filter(|(_, p)| p.body.running && keep(&p.body)) {
            self.pods.push(&pod.body);
        }
    }

    fn pod(&mut self, name: &str) {
        let index = self.index;
        if let Some(pod) = index.pods.get(self.namespace, name)
            && pod.body.running
        {
            self.pods.push(&pod.body);
        }
    }

    fn service(&mut self, name: &str, stored: Option<&Subject>) {
        let selector = match read::<ServiceWire>(stored) {
            Some(w) => project::service(&w, &mut Interner::default()).map(|(_, o)| o.body.selector),
            None => self
                .index
                .services
                .get(self.namespace, name)
                .map(|s| s.body.selector.clone()),
        };
        if let Some(selector) = selector {
            self.add_pods_where(|p| selector.selects(&p.labels));
        }
    }

    fn whole_namespace(&mut self) {
        self.add_pods_where(|_| true);
        let ns = self.namespace;
        self.ingresses
            .extend(self.index.ingresses.in_namespace(ns).map(|(n, _)| n));
        let bound = self
            .index
            .claims
            .in_namespace(ns)
            .filter(|(_, c)| c.body.bound);
        self.bound.extend(bound.map(|(n, _)| n));
    }

    fn claim(&mut self, name: &'a str, stored: Option<&Subject>) {
        self.add_pods_where(|p| p.claims.iter().any(|c| c.as_ref() == name));
        let bound = match read::<ClaimWire>(stored) {
            Some(w) => {
                project::claim(&w, &mut Interner::default()).is_some_and(|(_, o)| o.body.bound)
            }
            None => self
                .index
                .claims
                .get(self.namespace, name)
                .is_some_and(|c| c.body.bound),
        };
        if bound {
            self.bound.insert(name);
        }
    }

    fn ingress(&mut self, name: &'a str, stored: Option<&Subject>) {
        self.ingresses.insert(name);
        let backends = match read::<IngressWire>(stored) {
            Some(w) => project::ingress(&w, &mut Interner::default()).map(|(_, o)| o.body.backends),
            None => self
                .index
                .ingresses
                .get(self.namespace, name)
                .map(|g| g.body.backends.clone()),
        };
        self.target_backends = backends.map(Vec::from).unwrap_or_default();
        for backend in self.target_backends.clone() {
            if let Some(s) = self.index.services.get(self.namespace, &backend) {
                let selector = &s.body.selector;
                self.add_pods_where(|p| selector.selects(&p.labels));
            }
        }
    }

    /// The running pods `resource/name` (found by the stored object's UID, else in the
    /// cache's store of `resource`) owns, transitively (any owner reference counts, as the
    /// garbage collector follows them all).
    fn owned_by(&mut self, resource: Option<Resource>, name: &str, stored: Option<&Subject>) {
        let (ns, index) = (self.namespace, self.index);
        let uid = match stored.map(Subject::uid).filter(|u| !u.is_empty()) {
            Some(uid) => uid,
            None => resource
                .and_then(|r| index.workload_store(r))
                .and_then(|s| s.get(ns, name))
                .map_or("", |o| &*o.uid),
        };
        if uid.is_empty() {
            return;
        }
        // The children index holds each child itself: no lookup by name along the chain.
        let mut seen: HashSet<&str, UidHasher> = HashSet::default();
        seen.insert(uid);
        let mut queue = vec![uid];
        while let Some(owner) = queue.pop() {
            for store in WORKLOADS
                .iter()
                .filter_map(|&kind| index.workload_store(kind))
            {
                for child in store.children(owner).iter().filter(|c| &*c.namespace == ns) {
                    if seen.insert(&child.object.uid) {
                        queue.push(&child.object.uid);
                    }
                }
            }
            let owned = index.pods.children(owner);
            self.pods.reserve(owned.len());
            for child in owned.iter().filter(|c| &*c.namespace == ns) {
                if child.object.body.running {
                    self.pods.push(&child.object.body);
                }
            }
        }
    }

    /// The bound claims a StatefulSet's templates made: `<template>-<set>-<ordinal>`
    /// (k8s.io/kubernetes pkg/controller/statefulset/stateful_set_utils.go,
    /// `getPersistentVolumeClaimName`).
    fn claim_templates(&mut self, set: &str, stored: Option<&Subject>) {
        let Some(w) = read::<StatefulSetWire>(stored) else {
            return;
        };
        let templates = w
            .spec
            .and_then(|s| s.volume_claim_templates)
            .unwrap_or_default();
        for template in templates
            .iter()
            .filter_map(|t| t.metadata.as_ref()?.name.as_deref())
        {
            let prefix = format!("{template}-{set}-");
            let made = self
                .index
                .claims
                .in_namespace(self.namespace)
                .filter(|(n, c)| {
                    c.body.bound
                        && n.strip_prefix(prefix.as_str())
                            .is_some_and(|o| !o.is_empty() && o.bytes().all(|b| b.is_ascii_digit()))
                });
            self.bound.extend(made.map(|(n, _)| n));
        }
    }

    fn finish(mut self) -> Dependents {
        // A pod reached twice (two owners in the chain, a Service and an Ingress backend) is
        // one pod: the index holds each once, so its address identifies it.
        self.pods
            .sort_unstable_by_key(|p| std::ptr::from_ref::<Pod>(p) as usize);
        self.pods.dedup_by(|a, b| std::ptr::eq(*a, *b));
        let ns = self.namespace;
        let index = self.index;
        // Sorted by name, as the store iterates: looked up by binary search below.
        let services: Vec<(&str, &Service)> = index
            .services
            .in_namespace(ns)
            .filter(|(_, s)| self.pods.iter().any(|p| s.body.selector.selects(&p.labels)))
            .map(|(n, s)| (n, &s.body))
            .collect();
        let selecting = |name: &str| services.binary_search_by(|(n, _)| (*n).cmp(name)).is_ok();
        let fronting = |g: &Ingress| g.backends.iter().any(|b| selecting(b));
        for (name, _) in index
            .ingresses
            .in_namespace(ns)
            .filter(|(_, g)| fronting(&g.body))
        {
            self.ingresses.insert(name);
        }
        let mut fronted: Vec<&str> = self.target_backends.iter().map(|b| b.as_ref()).collect();
        for name in &self.ingresses {
            if let Some(g) = index.ingresses.get(ns, name) {
                fronted.extend(g.body.backends.iter().map(|b| b.as_ref()));
            }
        }
        fronted.sort_unstable();
        let behind: Vec<&Labels> = services
            .iter()
            .filter(|(n, _)| fronted.binary_search(n).is_ok())
            .map(|(_, s)| &s.selector)
            .collect();
        let ingress_pods = self
            .pods
            .iter()
            .filter(|p| behind.iter().any(|sel| sel.selects(&p.labels)))
            .count();
        // Pods of one workload mount the same claims, which the index interns: each claim is
        // looked up once (a name held twice, not interned, is only looked up twice). Runs of
        // one claim go first, so what is sorted is short.
        let mut mounted: Vec<&Arc<str>> = Vec::with_capacity(self.pods.len());
        mounted.extend(self.pods.iter().flat_map(|p| p.claims.iter()));
        mounted.dedup_by(|a, b| Arc::ptr_eq(a, b));
        mounted.sort_unstable_by_key(|c| Arc::as_ptr(c).cast::<u8>() as usize);
        mounted.dedup_by(|a, b| Arc::ptr_eq(a, b));
        for claim in mounted {
            if index.claims.get(ns, claim).is_some_and(|c| c.body.bound) {
                self.bound.insert(claim);
            }
        }
        let qualify = |n: &&str| [ns, "/", n].concat();
        Dependents {
            running_pods: u32::try_from(self.pods.len()).unwrap_or(u32::MAX),
            ingress_pods: u32::try_from(ingress_pods).unwrap_or(u32::MAX),
            services: services.iter().map(|(n, _)| qualify(n)).collect(),
            ingresses: self.ingresses.iter().map(qualify).collect(),
            bound_volumes: self.bound.iter().map(qualify).collect(),
        }
    }
}
