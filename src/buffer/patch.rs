//! Putting the finalizer on and taking it off: a JSON merge patch of `metadata.finalizers`
//! carrying the `resourceVersion` the list was read at, so the API server refuses it (409
//! Conflict) if anyone changed the object since, and no other writer's finalizer is lost.
//! A removal that conflicts re-reads the object and tries again; an attachment that conflicts
//! is left to the next reconcile (the object changed: the decision may have too).

use super::error::BufferError;
use kube::api::{Api, DynamicObject, ObjectMeta, Patch, PatchParams};
use serde_json::{Value, json};
use std::sync::Arc;

/// How many times a removal is tried against conflicting writers.
const ATTEMPTS: u32 = 5;

/// What a patch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Patched {
    /// The list changed.
    Done,
    /// Nothing to do (already as wanted).
    Unchanged,
    /// The object is gone.
    Gone,
}

/// The merge patch setting `finalizers` on an object read at `resource_version`.
pub fn body(resource_version: &str, finalizers: &[String]) -> Value {
    json!({"metadata": {"resourceVersion": resource_version, "finalizers": finalizers}})
}

/// `list` with `finalizer` present (`want`) or absent, or `None` when it already is.
pub fn changed(list: &[String], finalizer: &str, want: bool) -> Option<Vec<String>> {
    let has = list.iter().any(|f| f == finalizer);
    match (has, want) {
        (false, true) => Some(list.iter().cloned().chain([finalizer.to_owned()]).collect()),
        (true, false) => Some(list.iter().filter(|f| *f != finalizer).cloned().collect()),
        _ => None,
    }
}

/// Patches the finalizer on (`want`) or off the object whose metadata is `meta`; once, a
/// conflict is an error.
pub async fn set(
    api: &Api<DynamicObject>,
    meta: &ObjectMeta,
    finalizer: &str,
    want: bool,
) -> Result<Patched, BufferError> {
    let name = meta.name.as_deref().unwrap_or("");
    let list = meta.finalizers.as_deref().unwrap_or(&[]);
    let Some(next) = changed(list, finalizer, want) else {
        return Ok(Patched::Unchanged);
    };
    let rv = meta.resource_version.as_deref().unwrap_or("");
    let patch = Patch::Merge(body(rv, &next));
    match api
        .patch_metadata(name, &PatchParams::default(), &patch)
        .await
    {
        Ok(_) => Ok(Patched::Done),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(Patched::Gone),
        Err(e) if is_conflict(&e) => Err(BufferError::Conflict {
            object: name.to_owned(),
            attempts: 1,
        }),
        Err(e) => Err(api_error("patch", name, e)),
    }
}

/// Removes the finalizer, re-reading the object after each conflict (up to [`ATTEMPTS`]).
pub async fn remove(
    api: &Api<DynamicObject>,
    meta: &ObjectMeta,
    finalizer: &str,
) -> Result<Patched, BufferError> {
    let name = meta.name.as_deref().unwrap_or("").to_owned();
    let mut current = meta.clone();
    for _ in 0..ATTEMPTS {
        match set(api, &current, finalizer, false).await {
            Err(BufferError::Conflict { .. }) => {}
            other => return other,
        }
        current = match api.get_metadata_opt(&name).await {
            Ok(Some(m)) => m.metadata,
            Ok(None) => return Ok(Patched::Gone),
            Err(e) => return Err(api_error("get", &name, e)),
        };
    }
    Err(BufferError::Conflict {
        object: name,
        attempts: ATTEMPTS,
    })
}

fn is_conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

/// An API error about `name`.
pub(crate) fn api_error(operation: &'static str, name: &str, e: kube::Error) -> BufferError {
    BufferError::Api {
        operation,
        object: name.to_owned(),
        source: Arc::new(e),
    }
}
