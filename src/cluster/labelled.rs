//! The index's answer to `ClusterView::labelled_inside`: the objects of one namespace carrying
//! one label key, grouped by value. Workloads are read first (a Deployment before the
//! ReplicaSets it made), then Services, Ingresses, PersistentVolumeClaims and running pods, so
//! the first object named for a value is the one a person labelled.

use super::index::Index;
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
    /// Counts the objects of `store` in `namespace` whose labels (`labels` of the body) carry
    /// `key`.
    fn scan<B>(
        &mut self,
        resource: Resource,
        store: &'a Store<B>,
        namespace: &str,
        key: &str,
        labels: impl Fn(&'a B) -> &'a Labels,
    ) {
        for (name, object) in store.in_namespace(namespace) {
            if let Some(value) = labels(&object.body).get(key) {
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
    pub fn labelled_inside(&self, namespace: &str, key: &str) -> LabelValues {
        let mut found = Gathered::default();
        for resource in WORKLOAD_ORDER {
            if let Some(store) = self.workload_store(resource) {
                found.scan(resource, store, namespace, key, |w| &w.labels);
            }
        }
        found.scan(Resource::Services, &self.services, namespace, key, |s| {
            &s.labels
        });
        found.scan(Resource::Ingresses, &self.ingresses, namespace, key, |g| {
            &g.labels
        });
        let claims = Resource::PersistentVolumeClaims;
        found.scan(claims, &self.claims, namespace, key, |c| &c.labels);
        found.scan(Resource::Pods, &self.pods, namespace, key, |p| &p.labels);
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
