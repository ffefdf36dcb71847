//! The index's answer to `ClusterView::labelled_inside`: the objects of one namespace carrying
//! one label key, grouped by value. Workloads are read first (a Deployment before the
//! ReplicaSets it made), then Services, Ingresses, PersistentVolumeClaims and running pods, so
//! the first object named for a value is the one a person labelled.

use super::index::{Index, Pod};
use super::labels::Labels;
use super::resource::Resource;
use super::store::Store;
use crate::object::{LabelValue, LabelValues, MAX_LABEL_VALUES};
use std::collections::BTreeMap;

/// The workload kinds in the order their objects are named.
const WORKLOAD_ORDER: [Resource; 6] = [
    Resource::Deployments,
    Resource::StatefulSets,
    Resource::DaemonSets,
    Resource::CronJobs,
    Resource::Jobs,
    Resource::ReplicaSets,
];

/// Values found so far: value -> (first object, count).
#[derive(Default)]
struct Gathered<'a> {
    values: BTreeMap<&'a str, (String, u32)>,
    truncated: bool,
}

impl<'a> Gathered<'a> {
    /// Counts the objects of `store` in `namespace` whose labels (`labels` of the body, `None`
    /// to pass it over) carry `key`.
    fn scan<B>(
        &mut self,
        resource: Resource,
        store: &'a Store<B>,
        namespace: &str,
        key: &str,
        labels: impl Fn(&'a B) -> Option<&'a Labels>,
    ) {
        for (name, object) in store.in_namespace(namespace) {
            if let Some(value) = labels(&object.body).and_then(|l| l.get(key)) {
                self.add(value, resource, name);
            }
        }
    }

    fn add(&mut self, value: &'a str, resource: Resource, name: &str) {
        if let Some((_, count)) = self.values.get_mut(value) {
            *count = count.saturating_add(1);
        } else if self.values.len() < MAX_LABEL_VALUES {
            self.values.insert(value, (qualified(resource, name), 1));
        } else {
            self.truncated = true;
        }
    }
}

/// `resource[.group]/name`.
fn qualified(resource: Resource, name: &str) -> String {
    match resource.group() {
        "" => format!("{}/{name}", resource.plural()),
        group => format!("{}.{group}/{name}", resource.plural()),
    }
}

impl Index {
    /// The objects of `namespace` carrying label `key`, grouped by value (see
    /// `ClusterView::labelled_inside`).
    pub fn labelled_inside<'a>(&'a self, namespace: &str, key: &str) -> LabelValues {
        let mut found = Gathered::default();
        for resource in WORKLOAD_ORDER {
            if let Some(store) = self.workload_store(resource) {
                found.scan(resource, store, namespace, key, |w| Some(&w.labels));
            }
        }
        let (ns, services, ingresses) = (namespace, Resource::Services, Resource::Ingresses);
        found.scan(services, &self.services, ns, key, |s| Some(&s.labels));
        found.scan(ingresses, &self.ingresses, ns, key, |g| Some(&g.labels));
        let claims = Resource::PersistentVolumeClaims;
        found.scan(claims, &self.claims, ns, key, |c| Some(&c.labels));
        // Running pods only, as the watches hold them (saved files may hold others).
        let running = |p: &'a Pod| p.running.then_some(&p.labels);
        found.scan(Resource::Pods, &self.pods, ns, key, running);
        LabelValues {
            values: found
                .values
                .into_iter()
                .map(|(value, (object, count))| LabelValue {
                    value: value.to_owned(),
                    object,
                    count,
                })
                .collect(),
            truncated: found.truncated,
        }
    }
}
