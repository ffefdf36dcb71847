//! Writing one annotation on one object as warrant's own identity (the validation ring records
//! who asked for a held deletion). The client is built from the same [`Source`] as
//! the cache's, on first use; a merge patch carrying the stored object's `metadata.uid` writes
//! the annotation, so that an object deleted and created again under the same name is not
//! annotated (the API server refuses to change a uid: `ValidateObjectMetaUpdate` in
//! `k8s.io/apimachinery/pkg/api/validation/objectmeta.go`).

use super::connect::{ConnectError, Source};
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use thiserror::Error;
use tokio::sync::OnceCell;

/// The field manager warrant's patches are recorded under (`metadata.managedFields`).
pub(crate) const FIELD_MANAGER: &str = "warrant";

/// Why an annotation was not written.
#[derive(Debug, Error)]
pub enum AnnotateError {
    /// No cluster connection is configured.
    #[error("no cluster connection is configured (--kubeconfig, or in a cluster)")]
    NoCluster,
    /// The client could not be built.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// The API server refused or did not answer the patch.
    #[error("patch refused: {0}")]
    Patch(#[source] kube::Error),
}

/// One object as an admission request names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectAddress<'a> {
    /// API group (`""` for core).
    pub group: &'a str,
    /// Version.
    pub version: &'a str,
    /// Plural resource.
    pub resource: &'a str,
    /// Namespace (`""` when cluster-scoped).
    pub namespace: &'a str,
    /// Name.
    pub name: &'a str,
    /// The uid of the object the request judged.
    pub uid: &'a str,
}

/// Writes annotations through a client built on first use.
pub(crate) struct Annotator {
    source: Option<Source>,
    client: OnceCell<kube::Client>,
}

impl std::fmt::Debug for Annotator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Annotator")
            .field("source", &self.source)
            .field("connected", &self.client.initialized())
            .finish()
    }
}

impl Annotator {
    /// An annotator for the cluster `source` names (none: every write fails with
    /// [`AnnotateError::NoCluster`]).
    pub fn new(source: Option<Source>) -> Self {
        Self {
            source,
            client: OnceCell::new(),
        }
    }

    /// Sets annotation `key` to `value` on the object, as warrant's own identity.
    pub(crate) async fn annotate(
        &self,
        object: &ObjectAddress<'_>,
        key: &str,
        value: &str,
    ) -> Result<(), AnnotateError> {
        let client = self.client().await?;
        let api = api(client, object);
        let patch = serde_json::json!({
            "metadata": {"uid": object.uid, "annotations": {key: value}},
        });
        let params = PatchParams {
            field_manager: Some(FIELD_MANAGER.to_owned()),
            ..PatchParams::default()
        };
        api.patch(object.name, &params, &Patch::Merge(&patch))
            .await
            .map(drop)
            .map_err(AnnotateError::Patch)
    }

    pub(super) async fn client(&self) -> Result<kube::Client, AnnotateError> {
        let source = self.source.as_ref().ok_or(AnnotateError::NoCluster)?;
        let client = self
            .client
            .get_or_try_init(|| async { source.client().await })
            .await?;
        Ok(client.clone())
    }
}

/// The API of the object's resource, with no discovery: the request names group, version and
/// plural resource (the kind is not needed to patch).
fn api(client: kube::Client, o: &ObjectAddress<'_>) -> Api<DynamicObject> {
    let api_version = match o.group {
        "" => o.version.to_owned(),
        g => format!("{g}/{}", o.version),
    };
    let resource = ApiResource {
        group: o.group.to_owned(),
        version: o.version.to_owned(),
        api_version,
        kind: String::new(),
        plural: o.resource.to_owned(),
    };
    match o.namespace {
        "" => Api::all_with(client, &resource),
        ns => Api::namespaced_with(client, ns, &resource),
    }
}
