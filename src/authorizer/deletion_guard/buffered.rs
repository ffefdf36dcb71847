//! The buffer ring's guarded UPDATEs, on the kinds a guard's `buffer.resources`
//! names:
//!
//! - the requester annotation (who asked for a held deletion, which the buffer controller reads
//!   to tell a confirmation from the deleter's own) is warrant's to write: an UPDATE by anyone
//!   else that sets, changes or removes it is refused (`REQUESTER_ANNOTATION_RESERVED`), before
//!   any exclusion, break-glass or ticket;
//! - setting or changing the confirmation annotation confirms a held deletion: refused on an
//!   object that is not Terminating (`NOT_TERMINATING`), when no requester is recorded
//!   (`REQUESTER_UNKNOWN`), by the requester (`CONFIRMATION_BY_REQUESTER`), and unless its
//!   value names a ticket that passes the guard's ticket checks for the object's protection
//!   level (the `TICKET_*` codes); break-glass does not confirm (it may remove the finalizer
//!   instead);
//! - removing the finalizer from an object protected at `finalizeAt` or above is judged like a
//!   lowered protection label (the pipeline's tickets gate, `MISSING_TICKET` without one; the
//!   exclusions, break-glass and trusted principals apply as to any guarded UPDATE).

use super::assessment::GuardCode;
use super::conclusion::{self, Finding};
use super::metrics::GuardMetrics;
use super::objects::{self, ObjectFacts};
use super::risk;
use super::scope::Target;
use super::state::GuardShared;
use super::tickets;
use crate::authorizer::{AuthorizerError, Input};
use crate::config::model::buffer::BufferSettings;
use crate::config::model::guard::{GuardSpec, Level};
use crate::decision::Verdict;
use crate::object::{ObjectContext, Subject};

/// What an UPDATE of a buffer kind does to the buffer's finalizer and annotations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct BufferUpdate<'a> {
    /// It sets, changes or removes the requester annotation.
    pub(super) requester_touched: bool,
    /// The confirmation annotation's new value, when it sets or changes it.
    pub(super) confirmation: Option<&'a str>,
    /// It removes the finalizer.
    pub(super) finalizer_removed: bool,
}

/// What the buffer's rules made of an UPDATE.
#[derive(Debug)]
pub(super) enum Ruled {
    /// None of them applies.
    Nothing,
    /// A confirmation passed (its `ALLOW` verdict, naming the ticket): the rest of the
    /// pipeline still judges what else the UPDATE does.
    Confirmed(Verdict),
    /// Refused.
    Refused(Verdict),
}

/// The buffer settings of a guard, when `target` is a kind they cover.
pub(super) fn settings<'a>(spec: &'a GuardSpec, target: &Target<'_>) -> Option<&'a BufferSettings> {
    spec.buffer
        .as_ref()
        .filter(|b| b.covers(target.group, target.resource))
}

/// What an UPDATE does to the buffer's finalizer and annotations (nothing when the kind is not
/// a buffer kind or an object is missing).
pub(super) fn classify<'a>(
    spec: &GuardSpec,
    target: &Target<'_>,
    ctx: &'a ObjectContext,
) -> BufferUpdate<'a> {
    let (Some(b), Some(old), Some(new)) = (
        settings(spec, target),
        ctx.old_object.as_ref(),
        ctx.object.as_ref(),
    ) else {
        return BufferUpdate::default();
    };
    let confirmation = new.annotation(&b.confirmation_annotation);
    BufferUpdate {
        requester_touched: old.annotation(&b.requester_annotation)
            != new.annotation(&b.requester_annotation),
        confirmation: confirmation
            .filter(|v| old.annotation(&b.confirmation_annotation) != Some(v)),
        finalizer_removed: old.has_finalizer(&b.finalizer) && !new.has_finalizer(&b.finalizer),
    }
}

/// Whether the finalizer an UPDATE removes is guarded: the object's protection level (both
/// sides, as tickets are measured against) is at least `finalizeAt`.
pub(super) fn removal_guarded(
    spec: &GuardSpec,
    target: &Target<'_>,
    input: &Input,
    facts: &ObjectFacts,
) -> bool {
    let protection = risk::assess(spec, target, input.now, Some(facts)).protection;
    match (settings(spec, target), protection) {
        (Some(b), Some(level)) => level >= b.finalize_at,
        _ => false,
    }
}

/// The finding that stops a guarded finalizer removal without a ticket.
pub(super) fn removal_needs_ticket(spec: &GuardSpec, level: Level) -> Option<Finding> {
    let b = spec.buffer.as_ref()?;
    Some(Finding::new(
        GuardCode::MissingTicket,
        format!(
            "removing finalizer {} from an object protected at {} needs a change ticket for {} (or break-glass)",
            b.finalizer,
            level.as_str(),
            level.as_str()
        ),
    ))
}

/// A guard's state and series, as the buffer's rules use them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Guard<'a> {
    /// The settings and the ticket source.
    pub(super) shared: &'a GuardShared,
    /// The series the findings are counted in.
    pub(super) metrics: &'a GuardMetrics,
    /// When the review must be answered (a ticket system is asked within it).
    pub(super) deadline: crate::authorizer::Deadline,
}

impl Guard<'_> {
    /// The requester and confirmation rules for an UPDATE of a buffer kind (see the module
    /// documentation); `target` is the request's, before exclusions.
    pub(super) async fn rules(
        &self,
        input: &Input,
        target: Target<'_>,
        ctx: &ObjectContext,
        update: BufferUpdate<'_>,
    ) -> Result<Ruled, AuthorizerError> {
        let spec = &self.shared.spec;
        if update.requester_touched && target.user != spec.warrant_service_account {
            let message = format!(
                "annotation {} is written by warrant only ({}): it records who asked for a held deletion",
                settings(spec, &target).map_or("", |b| b.requester_annotation.as_str()),
                spec.warrant_service_account
            );
            let finding = Finding::new(GuardCode::RequesterAnnotationReserved, message);
            return Ok(Ruled::Refused(self.rule_verdict(input, &target, finding)));
        }
        let Some(value) = update.confirmation else {
            return Ok(Ruled::Nothing);
        };
        let finding = match confirmation_stop(spec, &target, ctx, value) {
            Some(stop) => stop,
            None => self.confirmation_ticket(input, &target, ctx, value).await?,
        };
        let verdict = self.rule_verdict(input, &target, finding.clone());
        Ok(match finding.code.denies() {
            true => Ruled::Refused(verdict),
            false => Ruled::Confirmed(verdict),
        })
    }

    /// The verdict of a buffer rule's finding, scored without the object's facts, counted.
    fn rule_verdict(&self, input: &Input, target: &Target<'_>, finding: Finding) -> Verdict {
        let spec = &self.shared.spec;
        self.metrics.record(finding.code);
        let risk = risk::assess(spec, target, input.now, None);
        conclusion::verdict(spec.mode, finding, risk)
    }

    /// The ticket a confirmation names, checked for the object's protection level.
    async fn confirmation_ticket(
        &self,
        input: &Input,
        target: &Target<'_>,
        ctx: &ObjectContext,
        id: &str,
    ) -> Result<Finding, AuthorizerError> {
        let spec = &self.shared.spec;
        let facts = objects::gather(spec, ctx, target).await?;
        let risk = risk::assess(spec, target, input.now, Some(&facts));
        let level = risk.protection.unwrap_or(Level::Standard);
        let source = self.shared.tickets.as_deref();
        let snapshot = tickets::fetch(source, Some(id), target, self.deadline).await;
        Ok(
            match tickets::named(
                spec,
                snapshot.as_deref(),
                (level, input.now),
                target,
                Some(facts.labels()),
                id,
            )? {
                Err(stop) => stop,
                Ok(id) => Finding::new(
                    GuardCode::Allow,
                    "deletion confirmed by a second person with a valid ticket",
                )
                .with_ticket(Some(id)),
            },
        )
    }
}

/// What stops a confirmation before its ticket is looked at: an object not Terminating, no
/// requester recorded, the requester confirming, an empty value.
fn confirmation_stop(
    spec: &GuardSpec,
    target: &Target<'_>,
    ctx: &ObjectContext,
    value: &str,
) -> Option<Finding> {
    let b = settings(spec, target)?;
    let stored = ctx.old_object.as_ref().map(Subject::deletion_timestamp);
    if stored.flatten().is_none() {
        return Some(Finding::new(
            GuardCode::NotTerminating,
            format!(
                "annotation {} confirms a held deletion: the object is not being deleted",
                b.confirmation_annotation
            ),
        ));
    }
    let requester = ctx
        .old_object
        .as_ref()
        .and_then(|o| o.annotation(&b.requester_annotation))
        .filter(|r| !r.is_empty());
    let Some(requester) = requester else {
        return Some(Finding::new(
            GuardCode::RequesterUnknown,
            format!(
                "who asked for the deletion is not recorded (annotation {}): a confirmation cannot be told apart from the deleter's; remove finalizer {} with a change ticket or break-glass instead",
                b.requester_annotation, b.finalizer
            ),
        ));
    };
    if requester == target.user {
        return Some(Finding::new(
            GuardCode::ConfirmationByRequester,
            format!(
                "{requester} asked for this deletion and cannot confirm it: a second person must"
            ),
        ));
    }
    value.is_empty().then(|| {
        Finding::new(
            GuardCode::MissingTicket,
            format!(
                "annotation {} must name a change ticket",
                b.confirmation_annotation
            ),
        )
    })
}
