//! Confirming a held deletion as a person (`warrant confirm`, `kubectl warrant confirm`): the
//! buffer ring's documented confirmation, the annotation `confirmationAnnotation:
//! <ticket id>` on the Terminating object, written with the person's own credentials, so that
//! the API server authenticates them, RBAC decides whether they may patch the object, and
//! warrant's validation ring judges the confirmation (not by the requester, a valid ticket for
//! the object's level). Before it writes, it reads the object and refuses, without writing, one
//! that is not held (not Terminating, or without the buffer's finalizer).

use super::context::annotation;
use crate::config::model::buffer::BufferSettings;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use thiserror::Error;

/// Why a confirmation was not written.
#[derive(Debug, Error)]
pub enum ConfirmError {
    /// The object carries no buffer finalizer: nothing holds its deletion.
    #[error("{object} is not held: it does not carry finalizer {finalizer}")]
    NotHeld {
        /// `resource/name`.
        object: String,
        /// The buffer's finalizer.
        finalizer: String,
    },
    /// The object is not being deleted: there is nothing to confirm yet.
    #[error(
        "{object} is not being deleted: delete it first (the confirmation of a held deletion is set on the Terminating object)"
    )]
    NotTerminating {
        /// `resource/name`.
        object: String,
    },
    /// An empty ticket id.
    #[error("a confirmation names a ticket: give --ticket")]
    NoTicket,
    /// The API server refused or could not be reached (RBAC's or warrant's refusal included).
    #[error("{}", crate::cluster::api_error::describe(.0))]
    Api(#[from] kube::Error),
}

/// What a confirmation did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirmed {
    /// The annotation was written.
    Written,
    /// It already named this ticket: nothing written.
    Unchanged,
}

/// Sets the confirmation annotation of the held object `name` (through `api`, the person's
/// client for its resource and namespace) to `ticket`. `object` names it in messages.
pub async fn confirm(
    api: &Api<DynamicObject>,
    object: &str,
    name: &str,
    ticket: &str,
    settings: &BufferSettings,
) -> Result<Confirmed, ConfirmError> {
    if ticket.is_empty() {
        return Err(ConfirmError::NoTicket);
    }
    let current = api.get_metadata(name).await?;
    let meta = &current.metadata;
    if !meta
        .finalizers
        .as_deref()
        .is_some_and(|f| f.contains(&settings.finalizer))
    {
        return Err(ConfirmError::NotHeld {
            object: object.to_owned(),
            finalizer: settings.finalizer.clone(),
        });
    }
    if meta.deletion_timestamp.is_none() {
        return Err(ConfirmError::NotTerminating {
            object: object.to_owned(),
        });
    }
    if annotation(meta, settings.confirmation_annotation()) == Some(ticket) {
        return Ok(Confirmed::Unchanged);
    }
    let patch = serde_json::json!({
        "metadata": {"annotations": {settings.confirmation_annotation(): ticket}}
    });
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    Ok(Confirmed::Written)
}
