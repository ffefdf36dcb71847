//! Custom resources read live: how many objects of a CustomResourceDefinition's kind remain (a
//! `LIST` with `limit=1`, metadata only, of its served storage version, counting the page and
//! the server's `remainingItemCount`), and every object of every custom resource as an
//! [`Inventoried`] (`warrant coverage`), metadata only, page by page, within bounds.

use super::inventory::{CustomKind, Inventoried, InventoryKind};
use crate::object::{Subject, ViewError};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::ApiResource;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Deserialize)]
struct CrdWire {
    spec: CrdSpecWire,
}

#[derive(Debug, Deserialize)]
struct CrdSpecWire {
    group: String,
    names: NamesWire,
    #[serde(default)]
    versions: Vec<VersionWire>,
}

#[derive(Debug, Deserialize)]
struct NamesWire {
    kind: String,
    plural: String,
}

#[derive(Debug, Deserialize)]
struct VersionWire {
    name: String,
    #[serde(default)]
    served: bool,
    #[serde(default)]
    storage: bool,
}

/// The resource a CRD defines, at its storage version when served, else its first served one.
pub(crate) fn api_resource(crd: &Subject) -> Result<ApiResource, ViewError> {
    let name = crd.name();
    let wire = crd.decode::<CrdWire>().map_err(|e| {
        ViewError::Api(format!(
            "custom resource definition {name} cannot be read: {e}"
        ))
    })?;
    let spec = wire.spec;
    let version = spec
        .versions
        .iter()
        .find(|v| v.served && v.storage)
        .or_else(|| spec.versions.iter().find(|v| v.served))
        .ok_or_else(|| {
            ViewError::Api(format!(
                "custom resource definition {name} serves no version"
            ))
        })?;
    Ok(ApiResource {
        api_version: format!("{}/{}", spec.group, version.name),
        group: spec.group,
        version: version.name.clone(),
        kind: spec.names.kind,
        plural: spec.names.plural,
    })
}

/// Lists at most one object of `crd`'s kind across all namespaces, within `timeout`.
pub async fn remaining_objects(
    client: &kube::Client,
    crd: &Subject,
    timeout: Duration,
) -> Result<u64, ViewError> {
    let resource = api_resource(crd)?;
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let list = tokio::time::timeout(timeout, api.list_metadata(&ListParams::default().limit(1)))
        .await
        .map_err(|_| {
            ViewError::Api(format!(
                "listing {}.{} took longer than {timeout:?}",
                resource.plural, resource.group
            ))
        })?
        .map_err(|e| {
            ViewError::Api(format!(
                "listing {}.{}: {e}",
                resource.plural, resource.group
            ))
        })?;
    let remaining = list
        .metadata
        .remaining_item_count
        .and_then(|n| u64::try_from(n).ok())
        .unwrap_or(0);
    Ok(list.items.len() as u64 + remaining)
}

/// The most custom objects [`custom_objects`] reads in all: past it the listing is an error
/// (a partial inventory would read as coverage).
pub const MAX_CUSTOM_OBJECTS: usize = 100_000;

/// Objects asked for per page.
const PAGE: u32 = 500;

/// Every object of every custom resource the cluster serves, as the inventory holds objects
/// (`apiVersion`, `kind`, `metadata` `name`, `namespace`, `labels` and `uid`: the uid is what
/// the risk model follows to the workloads and pods the object owns), each list within
/// `timeout`.
pub async fn custom_objects(
    client: &kube::Client,
    timeout: Duration,
) -> Result<Vec<Inventoried>, ViewError> {
    let within = |what: String| {
        move |_| ViewError::Api(format!("listing {what} took longer than {timeout:?}"))
    };
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crds = tokio::time::timeout(timeout, crds.list(&ListParams::default()))
        .await
        .map_err(within("customresourcedefinitions".into()))?
        .map_err(|e| ViewError::Api(format!("listing customresourcedefinitions: {e}")))?;
    let mut out = Vec::new();
    for crd in crds.items {
        let value = serde_json::to_value(&crd)
            .map_err(|e| ViewError::Api(format!("custom resource definition: {e}")))?;
        let resource = api_resource(&Subject::new(value))?;
        let kind = Arc::new(CustomKind {
            group: resource.group.clone(),
            version: resource.version.clone(),
            plural: resource.plural.clone(),
            kind: resource.kind.clone(),
        });
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        let what = format!("{}.{}", resource.plural, resource.group);
        let mut params = ListParams::default().limit(PAGE);
        loop {
            let page = tokio::time::timeout(timeout, api.list_metadata(&params))
                .await
                .map_err(within(what.clone()))?
                .map_err(|e| ViewError::Api(format!("listing {what}: {e}")))?;
            for o in page.items {
                let m = &o.metadata;
                let mut metadata = json!({
                    "name": m.name.clone().unwrap_or_default(),
                    "labels": m.labels.clone().unwrap_or_default(),
                    "uid": m.uid.clone().unwrap_or_default(),
                });
                if let Some(ns) = m.namespace.clone().filter(|n| !n.is_empty()) {
                    metadata["namespace"] = serde_json::Value::String(ns);
                }
                out.push(Inventoried {
                    resource: InventoryKind::Custom(kind.clone()),
                    object: Subject::new(json!({
                        "apiVersion": resource.api_version,
                        "kind": resource.kind,
                        "metadata": metadata,
                    })),
                });
                if out.len() > MAX_CUSTOM_OBJECTS {
                    return Err(ViewError::Api(format!(
                        "more than {MAX_CUSTOM_OBJECTS} custom objects"
                    )));
                }
            }
            match page.metadata.continue_.filter(|c| !c.is_empty()) {
                Some(next) => params = params.continue_token(&next),
                None => break,
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::api_resource;
    use crate::object::{Subject, ViewError};
    use serde_json::json;

    fn crd(versions: serde_json::Value) -> Subject {
        Subject::new(
            json!({"kind": "CustomResourceDefinition", "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"kind": "Widget", "plural": "widgets"}, "versions": versions}}),
        )
    }

    #[test]
    fn picks_the_served_storage_version() {
        let r = api_resource(&crd(json!([
            {"name": "v1alpha1", "served": true, "storage": false},
            {"name": "v1", "served": true, "storage": true}])))
        .unwrap();
        assert_eq!(
            (r.api_version.as_str(), r.plural.as_str(), r.kind.as_str()),
            ("example.com/v1", "widgets", "Widget")
        );
        let r = api_resource(&crd(json!([
            {"name": "v1beta1", "served": true, "storage": false},
            {"name": "v1", "served": false, "storage": true}])))
        .unwrap();
        assert_eq!(r.version, "v1beta1");
        let e = api_resource(&crd(
            json!([{"name": "v1", "served": false, "storage": true}]),
        ))
        .unwrap_err();
        assert!(matches!(e, ViewError::Api(m) if m.contains("serves no version")));
        let e = api_resource(&Subject::new(json!({"spec": {}}))).unwrap_err();
        assert!(matches!(e, ViewError::Api(m) if m.contains("cannot be read")));
    }
}
