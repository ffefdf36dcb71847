//! How many objects of a CustomResourceDefinition's kind remain: a live `LIST` with `limit=1`
//! (metadata only) of its served storage version, counting the page and the server's
//! `remainingItemCount`.

use crate::object::{Subject, ViewError};
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::ApiResource;
use serde::Deserialize;
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
    let wire = CrdWire::deserialize(crd.json()).map_err(|e| {
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
