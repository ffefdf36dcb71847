//! The JSONPatch that turns the pod as created into the pod as admitted.
//!
//! Both pods are encoded through the same typed model, so a field the model does not know is
//! absent from both sides and never touched; the patch holds only what the constraint changed.

use k8s_openapi::api::core::v1::Pod;
use thiserror::Error;

/// The pod could not be encoded (never expected of a decoded pod).
#[derive(Debug, Error)]
#[error("encoding the pod for its patch: {0}")]
pub struct PatchError(#[source] serde_json::Error);

/// The JSONPatch from `before` to `after`.
pub fn patch(before: &Pod, after: &Pod) -> Result<json_patch::Patch, PatchError> {
    let before = serde_json::to_value(before).map_err(PatchError)?;
    let after = serde_json::to_value(after).map_err(PatchError)?;
    Ok(json_patch::diff(&before, &after))
}
