//! The wire shapes the watches decode: only the fields the index keeps (serde skips the rest
//! of each object as it reads), so a pod's containers are never built. Each implements
//! `kube::Resource`, so `kube::runtime::watcher` lists and watches it like a k8s-openapi type.
//! The same shapes read saved files and the stored object of an admission request.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::NamespaceResourceScope;
use serde::Deserialize;
use serde::de::IgnoredAny;
use std::borrow::Cow;
use std::collections::BTreeMap;

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
    /// `metadata`.
    #[serde(default)]
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
    /// `metadata`.
    #[serde(default)]
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
    /// `metadata`.
    #[serde(default)]
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
    /// `metadata`.
    #[serde(default)]
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
    use super::{IngressWire, PodWire};
    use kube::Resource;
    use serde_json::json;

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
