//! Projection: a decoded object becomes an index entry at once (managedFields, annotations
//! and everything else the index does not read are dropped with the decoded object).

use super::index::{Claim, Ingress, Namespace, Pod, Service, Workload};
use super::intern::Interner;
use super::labels::Labels;
use super::store::{Key, Object};
use super::wire::{BackendWire, ClaimWire, IngressWire, PodWire, ServiceWire};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::sync::Arc;

/// An object ready for the index: where it lives and what is kept of it.
pub(crate) type Projected<B> = (Key, Object<B>);

/// Key, UID and owner UIDs of `meta`; `None` without a name. A unique UID (a pod's) is not
/// interned; one that children name (a workload's) is.
fn identity<B>(
    meta: &ObjectMeta,
    i: &mut Interner,
    shared_uid: bool,
    body: B,
) -> Option<Projected<B>> {
    let name = meta.name.as_deref().filter(|n| !n.is_empty())?;
    let uid = meta.uid.as_deref().unwrap_or("");
    let uid = if shared_uid {
        i.intern(uid)
    } else {
        Arc::from(uid)
    };
    let owners = meta
        .owner_references
        .iter()
        .flatten()
        .filter(|o| !o.uid.is_empty())
        .map(|o| i.intern(&o.uid))
        .collect();
    let key = Key {
        namespace: i.intern(meta.namespace.as_deref().unwrap_or("")),
        name: Arc::from(name),
    };
    Some((key, Object { uid, owners, body }))
}

fn labels(meta: &ObjectMeta, i: &mut Interner) -> Labels {
    Labels::new(
        meta.labels
            .iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v.as_str())),
        i,
    )
}

fn phase_is(status: Option<&super::wire::PhaseWire>, phase: &str) -> bool {
    status.and_then(|s| s.phase.as_deref()) == Some(phase)
}

/// A pod: labels, claims (a `persistentVolumeClaim` source's `claimName`, an `ephemeral`
/// source's `<pod>-<volume>`, as k8s.io/component-helpers storage/ephemeral `VolumeClaimName`
/// names it), running or not.
pub fn pod(w: &PodWire, i: &mut Interner) -> Option<Projected<Pod>> {
    let pod_name = w.metadata.name.as_deref().unwrap_or("");
    let mut claims: Vec<Arc<str>> = Vec::new();
    for v in w.spec.iter().flat_map(|s| s.volumes.iter().flatten()) {
        if let Some(c) = v.persistent_volume_claim.as_ref() {
            if let Some(n) = c.claim_name.as_deref().filter(|n| !n.is_empty()) {
                claims.push(i.intern(n));
            }
        } else if let (Some(_), Some(vol)) = (&v.ephemeral, v.name.as_deref()) {
            claims.push(i.intern(&format!("{pod_name}-{vol}")));
        }
    }
    claims.sort();
    claims.dedup();
    let body = Pod {
        labels: labels(&w.metadata, i),
        claims: claims.into_boxed_slice(),
        running: phase_is(w.status.as_ref(), "Running"),
    };
    identity(&w.metadata, i, false, body)
}

/// A workload, from its metadata: its labels.
pub fn workload(meta: &ObjectMeta, i: &mut Interner) -> Option<Projected<Workload>> {
    let labels = labels(meta, i);
    identity(meta, i, true, Workload { labels })
}

/// A Service: its labels and selector (none for an `ExternalName` Service, which gets no
/// endpoints).
pub fn service(w: &ServiceWire, i: &mut Interner) -> Option<Projected<Service>> {
    let spec = w.spec.as_ref();
    let external = spec.and_then(|s| s.type_.as_deref()) == Some("ExternalName");
    let selector = match spec.and_then(|s| s.selector.as_ref()) {
        Some(sel) if !external => Labels::new(sel.iter().map(|(k, v)| (k.as_str(), v.as_str())), i),
        _ => Labels::default(),
    };
    let labels = labels(&w.metadata, i);
    identity(&w.metadata, i, false, Service { labels, selector })
}

/// An Ingress: its labels and the Services named by its default backend and its rules' paths.
pub fn ingress(w: &IngressWire, i: &mut Interner) -> Option<Projected<Ingress>> {
    let spec = w.spec.as_ref();
    let paths = spec
        .into_iter()
        .flat_map(|s| s.rules.iter().flatten())
        .flat_map(|r| r.http.iter())
        .flat_map(|h| h.paths.iter().flatten())
        .filter_map(|p| p.backend.as_ref());
    let mut backends: Vec<Arc<str>> = spec
        .and_then(|s| s.default_backend.as_ref())
        .into_iter()
        .chain(paths)
        .filter_map(service_name)
        .map(|n| i.intern(n))
        .collect();
    backends.sort();
    backends.dedup();
    let body = Ingress {
        labels: labels(&w.metadata, i),
        backends: backends.into_boxed_slice(),
    };
    identity(&w.metadata, i, false, body)
}

fn service_name(b: &BackendWire) -> Option<&str> {
    b.service
        .as_ref()?
        .name
        .as_deref()
        .filter(|n| !n.is_empty())
}

/// A PersistentVolumeClaim: its labels, bound or not.
pub fn claim(w: &ClaimWire, i: &mut Interner) -> Option<Projected<Claim>> {
    let bound = phase_is(w.status.as_ref(), "Bound");
    let labels = labels(&w.metadata, i);
    identity(&w.metadata, i, false, Claim { labels, bound })
}

/// A Namespace: its labels.
pub fn namespace(meta: &ObjectMeta, i: &mut Interner) -> Option<Projected<Namespace>> {
    let labels = labels(meta, i);
    identity(meta, i, false, Namespace { labels })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn projects_pods_services_ingresses_claims() {
        let mut i = Interner::default();
        let w: PodWire = serde_json::from_value(json!({
            "metadata": {"name": "web-1", "namespace": "shop", "uid": "p1", "labels": {"app": "web"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-x", "uid": "rs1"}]},
            "spec": {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}},
                                 {"name": "d2", "persistentVolumeClaim": {"claimName": "data"}},
                                 {"name": "tmp", "ephemeral": {}}]},
            "status": {"phase": "Running"}}))
        .unwrap();
        let (key, obj) = pod(&w, &mut i).unwrap();
        assert_eq!(
            (&*key.namespace, &*key.name, &*obj.uid),
            ("shop", "web-1", "p1")
        );
        assert_eq!(&*obj.owners[0], "rs1");
        let claims: Vec<&str> = obj.body.claims.iter().map(|c| &**c).collect();
        assert_eq!(claims, ["data", "web-1-tmp"]);
        assert!(obj.body.running);
        assert_eq!(obj.body.labels.get("app"), Some("web"));

        let s: ServiceWire =
            serde_json::from_value(json!({"metadata": {"name": "s", "namespace": "shop"},
            "spec": {"type": "ExternalName", "selector": {"app": "web"}}}))
            .unwrap();
        assert!(service(&s, &mut i).unwrap().1.body.selector.is_empty());

        let g: IngressWire = serde_json::from_value(json!({"metadata": {"name": "g", "namespace": "shop"},
            "spec": {"defaultBackend": {"service": {"name": "b"}},
                     "rules": [{"http": {"paths": [{"backend": {"service": {"name": "a"}}},
                                                   {"backend": {"resource": {"kind": "X", "name": "y"}}},
                                                   {"backend": {"service": {"name": "b"}}}]}}, {"host": "x"}]}}))
        .unwrap();
        let backends: Vec<String> = ingress(&g, &mut i)
            .unwrap()
            .1
            .body
            .backends
            .iter()
            .map(|b| b.to_string())
            .collect();
        assert_eq!(backends, ["a", "b"]);

        let c: ClaimWire =
            serde_json::from_value(json!({"metadata": {"name": "data", "namespace": "shop"},
            "status": {"phase": "Bound"}}))
            .unwrap();
        assert!(claim(&c, &mut i).unwrap().1.body.bound);
        assert!(
            claim(&ClaimWire::default(), &mut i).is_none(),
            "no name, no entry"
        );
    }
}
