//! The wire shapes the watches decode: only the fields the index keeps (serde skips the rest
//! of each object as it reads), so a pod's containers are never built. Each implements
//! `kube::Resource`, so `kube::runtime::watcher` lists and watches it like a k8s-openapi type.
//! The same shapes read saved files and the stored object of an admission request.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use kube::core::NamespaceResourceScope;
use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::marker::PhantomData;

/// `metadata` with every field of `ObjectMeta`, under the same names, but `managedFields`: the
/// index never reads them, and they were the largest part of a watch event's decoding (each
/// entry's `fieldsV1` is a JSON tree).
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct MetaWire {
    annotations: Option<BTreeMap<String, String>>,
    creation_timestamp: Option<Time>,
    deletion_grace_period_seconds: Option<i64>,
    deletion_timestamp: Option<Time>,
    finalizers: Option<Vec<String>>,
    generate_name: Option<String>,
    generation: Option<i64>,
    labels: Option<BTreeMap<String, String>>,
    name: Option<String>,
    namespace: Option<String>,
    owner_references: Option<Vec<OwnerReference>>,
    resource_version: Option<String>,
    self_link: Option<String>,
    uid: Option<String>,
}

impl From<MetaWire> for ObjectMeta {
    fn from(m: MetaWire) -> Self {
        Self {
            annotations: m.annotations,
            creation_timestamp: m.creation_timestamp,
            deletion_grace_period_seconds: m.deletion_grace_period_seconds,
            deletion_timestamp: m.deletion_timestamp,
            finalizers: m.finalizers,
            generate_name: m.generate_name,
            generation: m.generation,
            labels: m.labels,
            managed_fields: None,
            name: m.name,
            namespace: m.namespace,
            owner_references: m.owner_references,
            resource_version: m.resource_version,
            self_link: m.self_link,
            uid: m.uid,
        }
    }
}

/// `deserialize_with` for a wire shape's `metadata`: an object (or `null`, read as empty) without
/// its `managedFields`.
fn metadata<'de, D: Deserializer<'de>>(d: D) -> Result<ObjectMeta, D::Error> {
    crate::review::object_only::<_, MetaWire>(d).map(|m| m.unwrap_or_default().into())
}

/// An object of kind `K` read for its metadata only (without `managedFields`): what the
/// workload and Namespace watches keep. Lists and watches like `K`.
#[derive(Deserialize)]
#[serde(bound = "")]
pub struct MetaOnly<K> {
    /// `metadata`.
    #[serde(default, deserialize_with = "metadata")]
    pub metadata: ObjectMeta,
    #[serde(skip)]
    kind: PhantomData<fn() -> K>,
}

impl<K> Clone for MetaOnly<K> {
    fn clone(&self) -> Self {
        Self {
            metadata: self.metadata.clone(),
            kind: PhantomData,
        }
    }
}

impl<K> std::fmt::Debug for MetaOnly<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetaOnly")
            .field("metadata", &self.metadata)
            .finish()
    }
}

impl<K: kube::Resource<DynamicType = ()>> kube::Resource for MetaOnly<K> {
    type DynamicType = ();
    type Scope = K::Scope;

    fn kind(dt: &()) -> Cow<'_, str> {
        K::kind(dt)
    }

    fn group(dt: &()) -> Cow<'_, str> {
        K::group(dt)
    }

    fn version(dt: &()) -> Cow<'_, str> {
        K::version(dt)
    }

    fn plural(dt: &()) -> Cow<'_, str> {
        K::plural(dt)
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// A `status` with a `phase` (Pod, PersistentVolumeClaim).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PhaseWire {
    /// `status.phase`.
    #[serde(default)]
    pub phase: Option<String>,
}

/// A `v1` Pod: metadata, volumes, phase.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PodWire {
    /// `metadata` (without `managedFields`).
    #[serde(default, deserialize_with = "metadata")]
    pub metadata: ObjectMeta,
    /// `spec`.
    #[serde(default)]
    pub spec: Option<PodSpecWire>,
    /// `status`.
    #[serde(default)]
    pub status: Option<PhaseWire>,
}

/// A pod's `spec`: its volumes.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PodSpecWire {
    /// `spec.volumes`.
    #[serde(default)]
    pub volumes: Option<Vec<VolumeWire>>,
}

/// One pod volume: its name, and the claim it names (a `persistentVolumeClaim` source) or
/// makes (an `ephemeral` source).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct VolumeWire {
    /// `name`.
    #[serde(default)]
    pub name: Option<String>,
    /// `persistentVolumeClaim`.
    #[serde(default, rename = "persistentVolumeClaim")]
    pub(crate) persistent_volume_claim: Option<ClaimSourceWire>,
    /// `ephemeral` (its presence is what counts).
    #[serde(default)]
    pub(crate) ephemeral: Option<IgnoredAny>,
}

/// A `persistentVolumeClaim` volume source.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ClaimSourceWire {
    /// `claimName`.
    #[serde(default, rename = "claimName")]
    pub(crate) claim_name: Option<String>,
}

/// A `v1` Service: metadata, selector, type.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ServiceWire {
    /// `metadata` (without `managedFields`).
    #[serde(default, deserialize_with = "metadata")]
    pub metadata: ObjectMeta,
    /// `spec`.
    #[serde(default)]
    pub spec: Option<ServiceSpecWire>,
}

/// A Service's `spec`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ServiceSpecWire {
    /// `spec.selector`.
    #[serde(default)]
    pub selector: Option<BTreeMap<String, String>>,
    /// `spec.type`.
    #[serde(default, rename = "type")]
    pub(crate) type_: Option<String>,
}

/// A `networking.k8s.io/v1` Ingress: metadata and backends.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct IngressWire {
    /// `metadata` (without `managedFields`).
    #[serde(default, deserialize_with = "metadata")]
    pub metadata: ObjectMeta,
    /// `spec`.
    #[serde(default)]
    pub spec: Option<IngressSpecWire>,
}

/// An Ingress's `spec`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct IngressSpecWire {
    /// `spec.defaultBackend`.
    #[serde(default, rename = "defaultBackend")]
    pub(crate) default_backend: Option<BackendWire>,
    /// `spec.rules`.
    #[serde(default)]
    pub rules: Option<Vec<RuleWire>>,
}

/// One Ingress rule.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct RuleWire {
    /// `http`.
    #[serde(default)]
    pub http: Option<HttpRuleWire>,
}

/// An Ingress rule's `http`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct HttpRuleWire {
    /// `paths`.
    #[serde(default)]
    pub paths: Option<Vec<PathWire>>,
}

/// One Ingress path.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PathWire {
    /// `backend`.
    #[serde(default)]
    pub backend: Option<BackendWire>,
}

/// An Ingress backend.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct BackendWire {
    /// `service` (a `resource` backend names no Service).
    #[serde(default)]
    pub service: Option<ServiceBackendWire>,
}

/// An Ingress backend's `service`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ServiceBackendWire {
    /// `name`.
    #[serde(default)]
    pub name: Option<String>,
}

/// A `v1` PersistentVolumeClaim: metadata and phase.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ClaimWire {
    /// `metadata` (without `managedFields`).
    #[serde(default, deserialize_with = "metadata")]
    pub metadata: ObjectMeta,
    /// `status`.
    #[serde(default)]
    pub status: Option<PhaseWire>,
}

/// The part of a StatefulSet the index reads from a stored object: its claim templates.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct StatefulSetWire {
    /// `spec`.
    #[serde(default)]
    pub spec: Option<StatefulSetSpecWire>,
}

/// A StatefulSet's `spec`.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct StatefulSetSpecWire {
    /// `spec.volumeClaimTemplates`.
    #[serde(default, rename = "volumeClaimTemplates")]
    pub(crate) volume_claim_templates: Option<Vec<TemplateWire>>,
}

/// One claim template: its metadata's name is what the claims are named after.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct TemplateWire {
    /// `metadata`.
    #[serde(default)]
    pub metadata: Option<NameWire>,
}

/// A `metadata` read for its name only.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct NameWire {
    /// `name`.
    #[serde(default)]
    pub name: Option<String>,
}

macro_rules! namespaced_resource {
    ($ty:ty, $kind:literal, $group:literal, $version:literal, $plural:literal) => {
        impl kube::Resource for $ty {
            type DynamicType = ();
            type Scope = NamespaceResourceScope;

            fn kind(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($kind)
            }

            fn group(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($group)
            }

            fn version(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($version)
            }

            fn plural(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($plural)
            }

            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }

            fn meta_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

namespaced_resource!(PodWire, "Pod", "", "v1", "pods");
namespaced_resource!(ServiceWire, "Service", "", "v1", "services");
namespaced_resource!(
    IngressWire,
    "Ingress",
    "networking.k8s.io",
    "v1",
    "ingresses"
);
namespaced_resource!(
    ClaimWire,
    "PersistentVolumeClaim",
    "",
    "v1",
    "persistentvolumeclaims"
);

#[cfg(test)]
mod tests {
    use super::{IngressWire, MetaOnly, PodWire};
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use kube::Resource;
    use serde_json::json;

    #[test]
    fn metadata_is_read_as_k8s_openapi_reads_it_without_managed_fields() {
        let metadata = json!({
            "name": "web", "namespace": "shop", "uid": "u-1", "resourceVersion": "42",
            "generation": 3, "generateName": "web-", "selfLink": "/x",
            "creationTimestamp": "2026-01-02T03:04:05Z",
            "deletionTimestamp": "2026-01-02T03:05:05Z",
            "deletionGracePeriodSeconds": 30, "finalizers": ["warrant.dev/cool-down"],
            "labels": {"app": "web"}, "annotations": {"a": "b"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1",
                                 "uid": "u-0", "controller": true}],
            "managedFields": [{"manager": "kubectl", "operation": "Update",
                               "fieldsType": "FieldsV1",
                               "fieldsV1": {"f:spec": {"f:replicas": {}}}}],
            "unknownField": {"ignored": [1, 2]}
        });
        let mut expected: ObjectMeta = serde_json::from_value(metadata.clone()).unwrap();
        assert!(expected.managed_fields.is_some());
        expected.managed_fields = None;
        let read: MetaOnly<Deployment> =
            serde_json::from_value(json!({"metadata": metadata, "spec": {"replicas": 2}})).unwrap();
        assert_eq!(read.metadata, expected);
        let pod: PodWire = serde_json::from_value(json!({"metadata": expected})).unwrap();
        assert_eq!(pod.metadata, read.metadata);

        let empty: MetaOnly<Deployment> =
            serde_json::from_value(json!({"metadata": null})).unwrap();
        assert_eq!(empty.metadata, ObjectMeta::default());
        let array = serde_json::from_value::<MetaOnly<Deployment>>(json!({"metadata": ["web"]}));
        assert!(
            array.is_err(),
            "a metadata array is refused, as Go refuses it"
        );
        assert_eq!(
            MetaOnly::<Deployment>::url_path(&(), Some("shop")),
            "/apis/apps/v1/namespaces/shop/deployments"
        );
    }

    #[test]
    fn reads_only_what_it_needs_and_names_its_resource() {
        let pod: PodWire = serde_json::from_value(json!({
            "metadata": {"name": "p", "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:x": {}}}]},
            "spec": {"containers": [{"name": "c", "image": "i"}],
                     "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "pvc"}},
                                 {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}},
                                 {"name": "cfg", "configMap": {"name": "c"}}]},
            "status": {"phase": "Running"}
        }))
        .unwrap();
        let volumes = pod.spec.unwrap().volumes.unwrap();
        assert_eq!(volumes.len(), 3);
        assert!(volumes[1].ephemeral.is_some());
        assert_eq!(
            PodWire::url_path(&(), Some("ns")),
            "/api/v1/namespaces/ns/pods"
        );
        assert_eq!(
            IngressWire::url_path(&(), None),
            "/apis/networking.k8s.io/v1/ingresses"
        );
    }
}
