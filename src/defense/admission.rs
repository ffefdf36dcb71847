//! The validation ring's decision: [`decide`] runs the chain's guards on an admission request
//! ([`crate::authorizer::Chain::admit`]) and lists the [`FollowUp`]s the answer owes. It decides
//! and writes nothing; [`super::FollowUps`] performs what it lists.
//!
//! Recording who asked for a held deletion: when the ring admits a DELETE (not a dry run) of an
//! object whose stored version carries a guard's buffer finalizer, warrant writes
//! `<requesterAnnotation>: <userInfo.username>` on it before it answers. How kube-apiserver
//! runs such a DELETE (`k8s.io/apiserver/pkg/registry/generic/registry/store.go` v0.35.4,
//! `Delete` and `updateForGracefulDeletionAndFinalizers`): an object with finalizers is not
//! deleted but updated (deletionTimestamp set) through `GuaranteedUpdate`, whose update function
//! first runs `deleteValidation`, the validating admission webhooks, on the object as just read
//! from etcd. The annotation patch changes the object (new resourceVersion), so the write that
//! marks it Terminating loses its compare-and-swap on the old revision; `GuaranteedUpdate`
//! (`pkg/storage/etcd3/store.go`) then reads the object again and runs the update function
//! again, sending warrant a second DELETE review whose oldObject now carries the annotation.
//! This time the value is already the requester's: warrant writes nothing ("unchanged"), the
//! compare-and-swap succeeds, and the object turns Terminating. So one admitted DELETE costs two
//! reviews and one patch, and cannot loop: a patch is sent only when the stored value differs.
//! It also means that the object committed as Terminating always carries the annotation of the
//! user whose DELETE committed it (a concurrent deleter's patch makes the other's swap fail and
//! its review run again on the new value).
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

use super::follow_up::{FollowUp, MarkTicketUsed, OnFailure, RecordRequester};
use crate::authorizer::StepOutcome;
use crate::authorizer::{Answer, Chain, Deadline, Input};
use crate::cluster::ObjectAddress;
use crate::config::model::buffer::BufferSettings;
use crate::decision::Decision;
use crate::object::{ObjectContext, Operation, Subject};

/// The validation ring's decision on one admission request: the chain's answer and what the
/// defense owes before it goes out.
#[derive(Debug, Clone, PartialEq)]
pub struct Admission<'a> {
    /// The chain's answer.
    pub answer: Answer,
    /// The follow-ups, in chain order.
    pub follow_ups: Vec<FollowUp<'a>>,
}

impl Admission<'_> {
    /// An answer that owes nothing (an operation the ring does not judge).
    pub fn answered(answer: Answer) -> Self {
        Self {
            answer,
            follow_ups: Vec::new(),
        }
    }
}

/// Runs the chain's guards on an admission request (`input.object` set) within `deadline`, and
/// lists the follow-ups its answer owes.
pub async fn decide<'a>(chain: &'a Chain, input: &'a Input, deadline: Deadline) -> Admission<'a> {
    let answer = chain.admit(input, deadline).await;
    let follow_ups = follow_ups(chain, input, &answer);
    Admission { answer, follow_ups }
}

/// What an answer owes: the requester of an admitted DELETE recorded on every buffer
/// finalizer its stored object carries (once per annotation key), then every single-use ticket
/// a guard admitted it on marked Used (last: a refusal by an earlier follow-up spends no
/// ticket).
pub fn follow_ups<'a>(chain: &'a Chain, input: &'a Input, answer: &Answer) -> Vec<FollowUp<'a>> {
    let mut owed = Vec::new();
    if answer.decision == Decision::Deny {
        return owed;
    }
    let Some(ctx) = input.object.as_deref().filter(|c| deletes(c)) else {
        return owed;
    };
    let (Some(stored), Some(object)) = (ctx.old_object.as_ref(), address(input, ctx)) else {
        return owed;
    };
    let user = input.review.user();
    let mut tickets: Vec<FollowUp<'a>> = Vec::new();
    for step in &answer.trace {
        let StepOutcome::Verdict(verdict) = &step.outcome else {
            continue;
        };
        let ticket = verdict.detail.as_ref().and_then(|d| d.single_use_ticket());
        let guard = chain.entries().iter().find(|e| e.name == step.authorizer);
        if let (Some(ticket), Some(entry)) = (ticket, guard)
            && !tickets.iter().any(|f| marks(f, ticket))
        {
            tickets.push(FollowUp::MarkTicketUsed(MarkTicketUsed {
                guard: &entry.name,
                ticket: ticket.to_owned(),
                object,
                at: input.now,
            }));
        }
    }
    for (guard, buffer, enforced) in chain.buffers() {
        let annotation = buffer.requester_annotation.as_str();
        if !holds(buffer, &object, stored) || owed.iter().any(|f| records(f, annotation)) {
            continue;
        }
        owed.push(FollowUp::RecordRequester(RecordRequester {
            guard,
            annotation,
            object,
            user,
            recorded: stored.annotation(annotation),
            on_failure: if enforced && buffer.require_confirmation {
                OnFailure::Refuse
            } else {
                OnFailure::Admit
            },
        }));
    }
    owed.extend(tickets);
    owed
}

/// Whether the request is a DELETE that persists (not a dry run).
fn deletes(ctx: &ObjectContext) -> bool {
    ctx.operation == Operation::Delete && !ctx.dry_run
}

/// The object the request names, with the stored object's namespace, name and uid.
fn address<'a>(input: &'a Input, ctx: &'a ObjectContext) -> Option<ObjectAddress<'a>> {
    let stored = ctx.old_object.as_ref()?;
    let ra = input.review.spec().resource_attributes.as_ref()?;
    Some(ObjectAddress {
        group: ra.group.as_deref().unwrap_or(""),
        version: ra.version.as_deref().unwrap_or(""),
        resource: ra.resource.as_deref().unwrap_or(""),
        namespace: stored.namespace(),
        name: stored.name(),
        uid: stored.uid(),
    })
}

/// Whether a follow-up already records the requester under `annotation`.
fn records(follow_up: &FollowUp<'_>, annotation: &str) -> bool {
    match follow_up {
        FollowUp::RecordRequester(r) => r.annotation == annotation,
        FollowUp::MarkTicketUsed(_) => false,
    }
}

/// Whether a follow-up already marks `ticket` Used.
fn marks(follow_up: &FollowUp<'_>, ticket: &str) -> bool {
    matches!(follow_up, FollowUp::MarkTicketUsed(m) if m.ticket == ticket)
}

/// Whether the request deletes an object the buffer holds: a kind it covers, carrying its
/// finalizer, not yet Terminating (the first deletion's requester stands).
fn holds(buffer: &BufferSettings, address: &ObjectAddress<'_>, stored: &Subject) -> bool {
    buffer.covers(address.group, address.resource)
        && stored.has_finalizer(&buffer.finalizer)
        && stored.deletion_timestamp().is_none()
}
