//! One reconcile of one object: read what it says, decide ([`super::decide`]), act. An object
//! that is not Terminating gets the finalizer put on or taken off; a Terminating one that
//! carries it is the business of [`super::deletion`]. Nothing acts while this replica does not
//! lead.

use super::context::Context;
use super::decide::{self, Live};
use super::deletion;
use super::error::BufferError;
use super::patch::{self, Patched};
use kube::api::{DynamicObject, ObjectMeta};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::Action;
use std::sync::Arc;
use std::time::Duration;

/// How soon a failed reconcile is tried again.
pub(crate) const RETRY: Duration = Duration::from_secs(5);

/// Reconciles one object.
pub(crate) async fn reconcile(
    object: Arc<PartialObjectMeta<DynamicObject>>,
    ctx: Arc<Context>,
) -> Result<Action, BufferError> {
    if !ctx.leading() {
        return Ok(Action::await_change());
    }
    let meta = &object.metadata;
    let seen = ctx.observe(meta);
    match seen.deletion {
        None => live(&ctx, meta, decide::live(&seen)).await,
        Some(_) if !seen.has_finalizer => {
            ctx.metrics
                .holds()
                .release(meta.uid.as_deref().unwrap_or(""));
            Ok(Action::await_change())
        }
        Some(at) => deletion::handle(&ctx, meta, at, &seen).await,
    }
}

/// What a failed reconcile does: logged, counted, tried again soon.
pub(crate) fn error_policy(
    object: Arc<PartialObjectMeta<DynamicObject>>,
    error: &BufferError,
    ctx: Arc<Context>,
) -> Action {
    tracing::warn!(object = %ctx.describe(&object.metadata), error = %error, "buffer ring: reconcile failed; retrying");
    ctx.metrics.failed(match error {
        BufferError::Api { operation, .. } => operation,
        BufferError::Conflict { .. } => "patch",
        _ => "reconcile",
    });
    Action::requeue(RETRY)
}

/// The object is not Terminating: put the finalizer on or take it off.
async fn live(ctx: &Context, meta: &ObjectMeta, what: Live) -> Result<Action, BufferError> {
    let (want, code) = match what {
        Live::Nothing => return Ok(Action::await_change()),
        Live::Attach => (true, "FINALIZER_ADDED"),
        Live::Detach => (false, "FINALIZER_REMOVED"),
    };
    let f = &ctx.settings.finalizer;
    if patch::set(&ctx.api(meta), meta, f, want).await? != Patched::Done {
        return Ok(Action::await_change());
    }
    if want {
        ctx.metrics.attached();
    } else {
        ctx.metrics.removed("UNPROTECTED");
    }
    let message = match want {
        true => format!(
            "protected at {} or above: finalizer added",
            ctx.settings.finalize_at.as_str()
        ),
        false => "no longer protected: finalizer removed".to_owned(),
    };
    tracing::info!(object = %ctx.describe(meta), "{message}");
    ctx.audit
        .write_other(&ctx.record(meta, code, message), None);
    Ok(Action::await_change())
}
