//! [`Inventoried`]: the objects of the index whose deletion can hurt (Namespaces, Deployments,
//! StatefulSets, DaemonSets, bound PersistentVolumeClaims), each as a minimal object (kind,
//! name, namespace, labels) that the guard's risk model can score, and the objects of custom
//! resources ([`InventoryKind::Custom`], listed live by `super::crd::custom_objects`). `warrant
//! coverage` and `warrant recommend` read it.

use super::index::Index;
use super::labels::Labels;
use super::resource::Resource;
use crate::object::Subject;
use serde_json::{Map, Value, json};

/// The kinds inventoried, in the order they are listed.
pub const INVENTORIED: [Resource; 5] = [
    Resource::Namespaces,
    Resource::StatefulSets,
    Resource::Deployments,
    Resource::DaemonSets,
    Resource::PersistentVolumeClaims,
];

/// A custom resource's kind, as its CustomResourceDefinition names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CustomKind {
    /// API group.
    pub group: String,
    /// The version listed (served, the storage one when served).
    pub version: String,
    /// Plural resource.
    pub plural: String,
    /// Kind.
    pub kind: String,
}

/// The kind of an inventoried object.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum InventoryKind {
    /// A kind the cache holds.
    Builtin(Resource),
    /// A custom resource's kind.
    Custom(std::sync::Arc<CustomKind>),
}

impl InventoryKind {
    /// API group (`""` core).
    pub fn group(&self) -> &str {
        match self {
            InventoryKind::Builtin(r) => r.group(),
            InventoryKind::Custom(c) => &c.group,
        }
    }

    /// Plural resource.
    pub fn plural(&self) -> &str {
        match self {
            InventoryKind::Builtin(r) => r.plural(),
            InventoryKind::Custom(c) => &c.plural,
        }
    }

    /// Kind.
    pub fn kind(&self) -> &str {
        match self {
            InventoryKind::Builtin(r) => r.kind(),
            InventoryKind::Custom(c) => &c.kind,
        }
    }
}

/// One object of an inventoried kind.
#[derive(Debug, Clone)]
pub struct Inventoried {
    /// Its kind.
    pub resource: InventoryKind,
    /// The object as far as the index knows it: `apiVersion`, `kind`, `metadata.name`,
    /// `metadata.namespace` and `metadata.labels`.
    pub object: Subject,
}

fn subject(resource: Resource, namespace: &str, name: &str, labels: &Labels) -> Subject {
    let labels: Map<String, Value> = labels
        .iter()
        .map(|(k, v)| (k.to_owned(), Value::String(v.to_owned())))
        .collect();
    let api_version = match resource.group() {
        "" => "v1".to_owned(),
        g => format!("{g}/v1"),
    };
    let mut metadata = json!({"name": name, "labels": labels});
    if !namespace.is_empty() {
        metadata["namespace"] = Value::String(namespace.to_owned());
    }
    Subject::new(json!({"apiVersion": api_version, "kind": resource.kind(), "metadata": metadata}))
}

impl Index {
    /// Every object of the [`INVENTORIED`] kinds (claims only when bound), by kind, namespace
    /// and name.
    pub fn inventory(&self) -> Vec<Inventoried> {
        let mut out = Vec::new();
        for resource in INVENTORIED {
            let mut push = |ns: &str, name: &str, labels: &Labels| {
                out.push(Inventoried {
                    resource: InventoryKind::Builtin(resource),
                    object: subject(resource, ns, name, labels),
                });
            };
            match resource {
                Resource::Namespaces => {
                    for (ns, name, o) in self.namespaces.all() {
                        push(ns, name, &o.body.labels);
                    }
                }
                Resource::PersistentVolumeClaims => {
                    for (ns, name, o) in self.claims.all().filter(|(_, _, o)| o.body.bound) {
                        push(ns, name, &o.body.labels);
                    }
                }
                workload => {
                    let Some(store) = workload.workload_slot().and_then(|i| self.workloads.get(i))
                    else {
                        continue;
                    };
                    for (ns, name, o) in store.all() {
                        push(ns, name, &o.body.labels);
                    }
                }
            }
        }
        out
    }
}
