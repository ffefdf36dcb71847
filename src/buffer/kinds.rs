//! The kinds the finalizer goes on, resolved by discovery: `resources` names a group and a
//! plural resource; watching and patching need its version and kind as the API server serves
//! them (the preferred version of the group).

use super::error::BufferError;
use crate::config::model::guard::Kind;
use kube::discovery::{self, ApiResource};

/// Resolves one configured kind to the resource the API server serves.
pub(crate) async fn resolve(
    client: &kube::Client,
    kind: &Kind,
) -> Result<ApiResource, BufferError> {
    let fail = |why: String| BufferError::Discovery {
        group: kind.group.clone(),
        resource: kind.resource.clone(),
        why,
    };
    let group = discovery::group(client, &kind.group)
        .await
        .map_err(|e| fail(e.to_string()))?;
    group
        .recommended_resources()
        .into_iter()
        .map(|(ar, _)| ar)
        .find(|ar| ar.plural == kind.resource)
        .ok_or_else(|| fail("not served by the API server".into()))
}
