//! The JSONPatch that turns the pod as created into the pod as admitted.
//!
//! A constraint changes only the pod's annotations, its security context and each container's
//! (`provider.rs`, `assign`; the engine adds the two annotations). So only those parts are
//! encoded, each at its place in an otherwise empty document (containers keep their positions),
//! and diffed: the same operations as a diff of the whole pods, without encoding every field of
//! both. A pod whose shape a constraint could have changed otherwise (no spec, a different
//! number of containers) is diffed whole. Both sides go through the same typed model, so a
//! field the model does not know is absent from both and never touched.

use k8s_openapi::api::core::v1::{Container, Pod, PodSpec, SecurityContext};
use serde::Serialize;
use serde_json::{Map, Value};
use thiserror::Error;

/// The pod could not be encoded (never expected of a decoded pod).
#[derive(Debug, Error)]
#[error("encoding the pod for its patch: {0}")]
pub struct PatchError(#[source] serde_json::Error);

/// The JSONPatch from `before` to `after`.
pub fn patch(before: &Pod, after: &Pod) -> Result<json_patch::Patch, PatchError> {
    match (before.spec.as_ref(), after.spec.as_ref()) {
        (Some(b), Some(a)) if same_containers(b, a) => {
            let before = touched(before, b).map_err(PatchError)?;
            let after = touched(after, a).map_err(PatchError)?;
            Ok(json_patch::diff(&before, &after))
        }
        _ => whole(before, after),
    }
}

/// The JSONPatch from `before` to `after`, both encoded whole.
pub(crate) fn whole(before: &Pod, after: &Pod) -> Result<json_patch::Patch, PatchError> {
    let before = serde_json::to_value(before).map_err(PatchError)?;
    let after = serde_json::to_value(after).map_err(PatchError)?;
    Ok(json_patch::diff(&before, &after))
}

/// Whether both specs have the same container lists, of the same lengths.
fn same_containers(a: &PodSpec, b: &PodSpec) -> bool {
    let len = |v: Option<usize>| v.unwrap_or(usize::MAX);
    a.containers.len() == b.containers.len()
        && len(a.init_containers.as_ref().map(Vec::len))
            == len(b.init_containers.as_ref().map(Vec::len))
        && len(a.ephemeral_containers.as_ref().map(Vec::len))
            == len(b.ephemeral_containers.as_ref().map(Vec::len))
}

/// The parts of `pod` a constraint changes, at their places: `metadata.annotations`,
/// `spec.securityContext` and every container's `securityContext`.
fn touched(pod: &Pod, spec: &PodSpec) -> Result<Value, serde_json::Error> {
    let mut metadata = Map::new();
    put(
        &mut metadata,
        "annotations",
        pod.metadata.annotations.as_ref(),
    )?;
    let mut out = Map::new();
    put(&mut out, "securityContext", spec.security_context.as_ref())?;
    let contexts = |list: Vec<Option<&SecurityContext>>| -> Result<Value, serde_json::Error> {
        let mut items = Vec::with_capacity(list.len());
        for context in list {
            let mut item = Map::new();
            put(&mut item, "securityContext", context)?;
            items.push(Value::Object(item));
        }
        Ok(Value::Array(items))
    };
    out.insert("containers".into(), contexts(of(&spec.containers))?);
    if let Some(init) = &spec.init_containers {
        out.insert("initContainers".into(), contexts(of(init))?);
    }
    if let Some(ephemeral) = &spec.ephemeral_containers {
        let list = ephemeral
            .iter()
            .map(|c| c.security_context.as_ref())
            .collect();
        out.insert("ephemeralContainers".into(), contexts(list)?);
    }
    let mut doc = Map::new();
    doc.insert("metadata".into(), Value::Object(metadata));
    doc.insert("spec".into(), Value::Object(out));
    Ok(Value::Object(doc))
}

/// The security contexts of `containers`, in order.
fn of(containers: &[Container]) -> Vec<Option<&SecurityContext>> {
    containers
        .iter()
        .map(|c| c.security_context.as_ref())
        .collect()
}

/// Sets `key` to `value` encoded, when there is one (absent stays absent, as in the pod's JSON).
fn put<T: Serialize>(
    map: &mut Map<String, Value>,
    key: &str,
    value: Option<&T>,
) -> Result<(), serde_json::Error> {
    if let Some(v) = value {
        map.insert(key.to_owned(), serde_json::to_value(v)?);
    }
    Ok(())
}
