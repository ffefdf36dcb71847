//! One object read live by its API coordinates (group, version, plural resource), whatever
//! its kind: what `warrant recommend` asks of objects the metadata cache does not hold.

use crate::object::{Subject, ViewError};
use kube::api::{Api, DynamicObject};
use kube::core::ApiResource;
use std::time::Duration;

/// An object's API coordinates.
#[derive(Debug, Clone, Copy)]
pub struct Coordinates<'a> {
    /// API group (`""` core).
    pub group: &'a str,
    /// API version.
    pub version: &'a str,
    /// Plural resource.
    pub resource: &'a str,
    /// Namespace (`""` when cluster-scoped).
    pub namespace: &'a str,
    /// Name.
    pub name: &'a str,
}

/// The object, `None` when it does not exist, within `timeout`.
pub async fn get(
    client: &kube::Client,
    at: Coordinates<'_>,
    timeout: Duration,
) -> Result<Option<Subject>, ViewError> {
    let api_version = if at.group.is_empty() {
        at.version.to_owned()
    } else {
        format!("{}/{}", at.group, at.version)
    };
    let resource = ApiResource {
        group: at.group.to_owned(),
        version: at.version.to_owned(),
        api_version,
        kind: String::new(),
        plural: at.resource.to_owned(),
    };
    let api: Api<DynamicObject> = if at.namespace.is_empty() {
        Api::all_with(client.clone(), &resource)
    } else {
        Api::namespaced_with(client.clone(), at.namespace, &resource)
    };
    let what = || format!("{}.{} {}/{}", at.resource, at.group, at.namespace, at.name);
    let object = tokio::time::timeout(timeout, api.get_opt(at.name))
        .await
        .map_err(|_| ViewError::Api(format!("reading {} took longer than {timeout:?}", what())))?
        .map_err(|e| ViewError::Api(format!("reading {}: {e}", what())))?;
    object
        .map(|o| {
            serde_json::to_value(&o)
                .map(Subject::new)
                .map_err(|e| ViewError::Api(format!("reading {}: {e}", what())))
        })
        .transpose()
}
