//! Who asked for a held deletion (issue 12, contract 1): when the validation ring admits a DELETE
//! (not a dry run) of an object whose stored version carries a guard's buffer finalizer, warrant
//! writes `<requesterAnnotation>: <userInfo.username>` on it, as its own service account, before
//! it answers. The buffer controller reads it to refuse a confirmation by the deleter.
//!
//! How kube-apiserver runs such a DELETE (`k8s.io/apiserver/pkg/registry/generic/registry/
//! store.go` v0.35.4, `Delete` and `updateForGracefulDeletionAndFinalizers`): an object with
//! finalizers is not deleted but updated (deletionTimestamp set) through `GuaranteedUpdate`,
//! whose update function first runs `deleteValidation`, the validating admission webhooks, on
//! the object as just read from etcd. The annotation patch changes the object (new
//! resourceVersion), so the write that marks it Terminating loses its compare-and-swap on the
//! old revision; `GuaranteedUpdate` (`pkg/storage/etcd3/store.go`) then reads the object again
//! and runs the update function again, sending warrant a second DELETE review whose oldObject
//! now carries the annotation. This time the value is already the requester's: warrant writes
//! nothing ("unchanged"), the compare-and-swap succeeds, and the object turns Terminating. So
//! one admitted DELETE costs two reviews and one patch, and cannot loop: a patch is sent only
//! when the stored value differs. It also means that the object committed as Terminating always
//! carries the annotation of the user whose DELETE committed it (a concurrent deleter's patch
//! makes the other's swap fail and its review run again on the new value).
//!
//! Consequences, by design:
//! - an object already Terminating keeps its first requester: a second DELETE is not recorded
//!   (else the deleter could have a colleague delete again and then confirm);
//! - a DELETE with a `resourceVersion` precondition fails with a conflict on its first try
//!   (the patch moved the version); re-reading and retrying succeeds;
//! - a failed patch refuses the DELETE (`REQUESTER_NOT_RECORDED`) when the guard enforces and
//!   `requireConfirmation` is set (nobody could confirm a deletion of unknown origin), else it
//!   is logged, counted (`warrant_buffer_requester_annotations_total{outcome="failed"}`) and
//!   the DELETE admitted.

use crate::admission::AdmissionOperation;
use crate::authorizer::deletion_guard::GuardCode;
use crate::authorizer::{Answer, Chain, Input, Step, StepOutcome};
use crate::cluster::Annotator;
use crate::cluster::ObjectAddress;
use crate::config::model::buffer::BufferSettings;
use crate::config::{AuthorizerType, Mode};
use crate::decision::{AttributedReason, Decision, Reason, Verdict};
use crate::names::{AuthorizerName, Code};
use crate::object::Subject;
use crate::telemetry::metrics::Metrics;
use std::time::{Duration, Instant};

/// What writing the annotation needs: warrant's client (none without a cluster connection) and
/// the metrics that count the outcomes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Writer<'a> {
    /// warrant's client.
    pub(super) annotator: Option<&'a Annotator>,
    /// The metrics.
    pub(super) metrics: &'a Metrics,
}

/// Records the requester of an admitted DELETE on every buffer finalizer its stored object
/// carries, before `deadline`; a failure that must refuse the DELETE turns `answer` into that
/// refusal.
pub(super) async fn record(
    state: Writer<'_>,
    chain: &Chain,
    input: &Input,
    operation: AdmissionOperation,
    answer: &mut Answer,
    deadline: Instant,
) {
    if operation != AdmissionOperation::Delete || answer.decision == Decision::Deny {
        return;
    }
    let Some(ctx) = input.object.as_deref().filter(|c| !c.dry_run) else {
        return;
    };
    let Some(stored) = ctx.old_object.as_ref() else {
        return;
    };
    let Some(ra) = input.review.spec().resource_attributes.as_ref() else {
        return;
    };
    let address = ObjectAddress {
        group: ra.group.as_deref().unwrap_or(""),
        version: ra.version.as_deref().unwrap_or(""),
        resource: ra.resource.as_deref().unwrap_or(""),
        namespace: stored.namespace(),
        name: stored.name(),
        uid: stored.uid(),
    };
    let user = input.review.user();
    let mut written: Vec<&str> = Vec::new();
    for (name, buffer, enforced) in chain.buffers() {
        if !holds(buffer, &address, stored)
            || written.contains(&buffer.requester_annotation.as_str())
        {
            continue;
        }
        written.push(&buffer.requester_annotation);
        let left = deadline.saturating_duration_since(Instant::now());
        let failure = write(state, buffer, &address, stored, user, left).await;
        if let Some(error) = failure
            && enforced
            && buffer.require_confirmation
        {
            refuse(answer, name, buffer, &error);
            return;
        }
    }
}

/// Whether the request deletes an object the buffer holds: a kind it covers, carrying its
/// finalizer, not yet Terminating (the first deletion's requester stands).
fn holds(buffer: &BufferSettings, address: &ObjectAddress<'_>, stored: &Subject) -> bool {
    buffer.covers(address.group, address.resource)
        && stored.has_finalizer(&buffer.finalizer)
        && stored.deletion_timestamp().is_none()
}

/// Writes the annotation unless it already names `user`; the error text when it failed.
async fn write(
    state: Writer<'_>,
    buffer: &BufferSettings,
    address: &ObjectAddress<'_>,
    stored: &Subject,
    user: &str,
    left: Duration,
) -> Option<String> {
    let key = buffer.requester_annotation.as_str();
    if stored.annotation(key) == Some(user) {
        state.metrics.record_requester_annotation("unchanged");
        return None;
    }
    let result = match state.annotator {
        None => Err("no cluster connection is configured".to_owned()),
        Some(a) => match tokio::time::timeout(left, a.annotate(address, key, user)).await {
            Ok(r) => r.map_err(|e| e.to_string()),
            Err(_) => Err(format!(
                "no answer within the request's time budget ({left:?})"
            )),
        },
    };
    match result {
        Ok(()) => {
            state.metrics.record_requester_annotation("recorded");
            None
        }
        Err(error) => {
            state.metrics.record_requester_annotation("failed");
            tracing::warn!(
                namespace = address.namespace,
                name = address.name,
                resource = address.resource,
                annotation = key,
                user,
                error = %error,
                "could not record who asked for a held deletion"
            );
            Some(error)
        }
    }
}

/// Turns the answer into the refusal of a deletion whose requester could not be recorded,
/// with a step of the guard that holds the object saying why.
fn refuse(answer: &mut Answer, name: &AuthorizerName, buffer: &BufferSettings, error: &str) {
    let code = GuardCode::RequesterNotRecorded.as_str();
    let reason = Reason {
        rule: None,
        message: format!(
            "this deletion must be confirmed by a second person, and who asked for it could not be recorded (annotation {}: {error}); retry the deletion",
            buffer.requester_annotation
        ),
        code: Code::new(code).ok(),
    };
    answer.reason = AttributedReason {
        authorizer: name,
        reason: &reason,
    }
    .to_string();
    answer.decision = Decision::Deny;
    answer.decided_by = Some(name.clone());
    answer.code = reason.code.clone();
    answer.trace.push(Step {
        authorizer: name.clone(),
        authorizer_type: AuthorizerType::DeletionGuard,
        outcome: StepOutcome::Verdict(Verdict::new(Decision::Deny, reason)),
        elapsed: Duration::ZERO,
        conditions: None,
        mode: Mode::Enforce,
    });
}
