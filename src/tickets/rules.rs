//! The rules of ticket writes, as pure functions of the stored ticket, the written one, the
//! writer and the time: what a create must say, that `spec` never changes, and what a write to
//! `/status` may do. Each admitted write is a [`Ruling`]: admitted outright, or admitted only if
//! the writer is allowed the verb `approve` (an approval, a rejection by someone other than the
//! requester), which the caller asks the cluster ([`super::judge`]).
//!
//! The status rules, modelled on a CertificateSigningRequest's approval (one condition per
//! approver, the approver's identity from the request, never from the body):
//! - a Rejected, Expired or Used ticket's status never changes (`TICKET_CLOSED`);
//! - an approval is exactly one entry appended, earlier ones untouched
//!   (`TICKET_APPROVALS_REWRITTEN`), in the writer's own name (`TICKET_APPROVER_FORGED`), by
//!   someone other than the requester (`TICKET_SELF_APPROVAL`) who has not approved yet
//!   (`TICKET_ALREADY_APPROVED`), before `expiresAt` (`TICKET_EXPIRED`); the phase stays
//!   Pending or becomes Approved;
//! - a rejection sets the phase Rejected with `rejection` in the writer's name; the requester
//!   may withdraw their own ticket this way, anyone else needs `approve`;
//! - only warrant's own identity marks a single-use ticket Used (with `usedAt` and `usedFor`);
//! - anyone may mark a ticket Expired once `expiresAt` has passed;
//! - any other phase change is `TICKET_PHASE_TRANSITION`.

use super::code::{Refusal, TicketCode};
use super::resource::{DeletionTicket, Phase, TicketStatus, TicketTarget, status_of};
use super::selector::TargetSelector;
use chrono::{DateTime, Utc};

/// Who writes.
#[derive(Debug, Clone, Copy)]
pub struct Writer<'a> {
    /// The request's `userInfo.username`.
    pub user: &'a str,
    /// Whether the writer is warrant's own service account.
    pub own: bool,
}

/// What an admitted write does to the ticket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// A ticket created.
    Created,
    /// Metadata changed (labels, annotations); spec and status as they were.
    Updated,
    /// Nothing a rule looks at changed.
    Unchanged,
    /// One approval added.
    Approved,
    /// Rejected by an approver.
    Rejected,
    /// Rejected by its requester.
    Withdrawn,
    /// Marked Used by warrant.
    Used,
    /// Marked Expired.
    Expired,
}

impl Change {
    /// The change as audit records and logs spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Created => "created",
            Change::Updated => "updated",
            Change::Unchanged => "unchanged",
            Change::Approved => "approved",
            Change::Rejected => "rejected",
            Change::Withdrawn => "withdrawn",
            Change::Used => "used",
            Change::Expired => "expired",
        }
    }
}

/// An admitted write, outright or on condition that the writer may `approve`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ruling {
    /// Admitted.
    Admit(Change),
    /// Admitted if the writer is allowed the verb `approve` on the ticket.
    IfApprover(Change),
}

/// Whether a ticket's targets may name objects with `*` (the guards' profile,
/// `tickets.allowWildcardTargets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wildcards {
    /// `*` in a target's name or namespace is refused at create (the default).
    Forbidden,
    /// `*` in a target's name or namespace is a pattern.
    Allowed,
}

/// A CREATE: the creator is the requester, the ticket is not born expired, and its targets
/// name objects (see [`targets`]).
pub fn create(
    ticket: &DeletionTicket,
    writer: Writer<'_>,
    now: DateTime<Utc>,
    wildcards: Wildcards,
) -> Result<Ruling, Refusal> {
    let spec = &ticket.spec;
    if spec.requested_by != writer.user {
        return Err(Refusal::new(
            TicketCode::TicketRequesterMismatch,
            format!(
                "spec.requestedBy is {:?} but the ticket is created by {:?}: a ticket names its creator",
                spec.requested_by, writer.user
            ),
        ));
    }
    if spec.expires_at <= now {
        return Err(Refusal::new(
            TicketCode::TicketExpiresInPast,
            format!("spec.expiresAt {} has passed", spec.expires_at.to_rfc3339()),
        ));
    }
    targets(ticket, wildcards)?;
    Ok(Ruling::Admit(Change::Created))
}

/// The targets of a ticket name what they cover: at least one target (an empty list would
/// cover everything the requester deletes), each naming its objects one way (a name, or a
/// label selector Kubernetes would accept), never `*` in a group or resource, and `*` in a
/// name or namespace, or a selector without requirements, only where the profile allows it.
pub fn targets(ticket: &DeletionTicket, wildcards: Wildcards) -> Result<(), Refusal> {
    let refused = |message: String| Err(Refusal::new(TicketCode::TicketWildcardTarget, message));
    if ticket.spec.targets.is_empty() {
        return refused(
            "spec.targets is empty: a ticket names the objects it covers, one target each".into(),
        );
    }
    for (i, t) in ticket.spec.targets.iter().enumerate() {
        named_one_way(i, t)?;
        for (field, value) in [("group", &t.group), ("resource", &t.resource)] {
            if value.contains('*') {
                return refused(format!(
                    "spec.targets[{i}].{field} is {value:?}: a ticket covers one kind per target, never a wildcard"
                ));
            }
        }
        if wildcards == Wildcards::Allowed {
            continue;
        }
        if t.selector.as_ref().is_some_and(TargetSelector::is_empty) {
            return refused(format!(
                "spec.targets[{i}].selector is empty and would cover every {} in its namespace (tickets.allowWildcardTargets is false); give it labels to match",
                t.resource
            ));
        }
        let name = (t.selector.is_none()).then_some(("name", &t.name));
        for (field, value) in [("namespace", &t.namespace)].into_iter().chain(name) {
            if value.contains('*') || (field == "name" && value.is_empty()) {
                return refused(format!(
                    "spec.targets[{i}].{field} is {value:?}: this cluster's tickets name each object exactly (tickets.allowWildcardTargets is false); list the objects one by one"
                ));
            }
        }
    }
    Ok(())
}

/// Target `i` names its objects by name or by a valid selector, not both and not neither.
fn named_one_way(i: usize, t: &TicketTarget) -> Result<(), Refusal> {
    let malformed = |message: String| Err(Refusal::new(TicketCode::TicketMalformed, message));
    match (&t.selector, t.name.is_empty()) {
        (Some(_), false) => malformed(format!(
            "spec.targets[{i}] has both name and selector: a target names one object or selects objects by label, not both"
        )),
        (None, true) => malformed(format!("spec.targets[{i}] has neither name nor selector")),
        (Some(s), true) => match s.invalid() {
            Some((j, why)) => malformed(format!(
                "spec.targets[{i}].selector.matchExpressions[{j}]: {why}"
            )),
            None => Ok(()),
        },
        (None, false) => Ok(()),
    }
}

/// An UPDATE of the ticket itself: `spec` is as it was.
pub fn update(old: &DeletionTicket, new: &DeletionTicket) -> Result<Ruling, Refusal> {
    if old.spec != new.spec {
        return Err(Refusal::new(
            TicketCode::TicketSpecImmutable,
            "spec of a ticket never changes: create a new ticket",
        ));
    }
    Ok(Ruling::Admit(Change::Updated))
}

/// An UPDATE of `/status` (see the module documentation for the rules).
pub fn status(
    old: &DeletionTicket,
    new: &DeletionTicket,
    writer: Writer<'_>,
    now: DateTime<Utc>,
) -> Result<Ruling, Refusal> {
    let before = normalized(status_of(old));
    let after = normalized(status_of(new));
    if before == after {
        return Ok(Ruling::Admit(Change::Unchanged));
    }
    if before.phase().is_final() {
        return Err(Refusal::new(
            TicketCode::TicketClosed,
            format!(
                "the ticket is {}: its status no longer changes",
                before.phase().as_str()
            ),
        ));
    }
    if after.approvals != before.approvals {
        return approval(old, &before, &after, writer, now);
    }
    match after.phase() {
        Phase::Rejected => rejection(old, &before, &after, writer),
        Phase::Used => used(old, &before, &after, writer),
        Phase::Expired => expired(old, &before, &after, now),
        Phase::Pending | Phase::Approved => Err(transition(
            &before,
            &after,
            "a ticket becomes Approved by an approval, and rejection and use set their own phase",
        )),
    }
}

/// One approval added.
fn approval(
    old: &DeletionTicket,
    before: &TicketStatus,
    after: &TicketStatus,
    writer: Writer<'_>,
    now: DateTime<Utc>,
) -> Result<Ruling, Refusal> {
    let kept = after.approvals.len() == before.approvals.len() + 1
        && after.approvals.starts_with(&before.approvals);
    let Some(added) = after.approvals.last().filter(|_| kept) else {
        return Err(Refusal::new(
            TicketCode::TicketApprovalsRewritten,
            format!(
                "status.approvals had {} entries and now has {}: an approval adds exactly one entry and leaves the others as they were",
                before.approvals.len(),
                after.approvals.len()
            ),
        ));
    };
    let phase_kept = matches!(
        (before.phase(), after.phase()),
        (Phase::Pending, Phase::Pending | Phase::Approved) | (Phase::Approved, Phase::Approved)
    );
    if !phase_kept || !same_outcome(before, after) {
        return Err(transition(
            before,
            after,
            "an approval leaves the phase Pending or makes it Approved, and changes nothing else",
        ));
    }
    if added.user != writer.user {
        return Err(Refusal::new(
            TicketCode::TicketApproverForged,
            format!(
                "the approval names {:?} but is written by {:?}: approve in your own name",
                added.user, writer.user
            ),
        ));
    }
    if writer.user == old.spec.requested_by {
        return Err(Refusal::new(
            TicketCode::TicketSelfApproval,
            format!(
                "{:?} requested this ticket and cannot approve it",
                writer.user
            ),
        ));
    }
    if before.approvals.iter().any(|a| a.user == writer.user) {
        return Err(Refusal::new(
            TicketCode::TicketAlreadyApproved,
            format!("{:?} has already approved this ticket", writer.user),
        ));
    }
    if old.spec.expires_at <= now {
        return Err(Refusal::new(
            TicketCode::TicketExpired,
            format!("the ticket expired at {}", old.spec.expires_at.to_rfc3339()),
        ));
    }
    Ok(Ruling::IfApprover(Change::Approved))
}

/// The phase set Rejected, with the rejection in the writer's name.
fn rejection(
    old: &DeletionTicket,
    before: &TicketStatus,
    after: &TicketStatus,
    writer: Writer<'_>,
) -> Result<Ruling, Refusal> {
    let Some(signoff) = after
        .rejection
        .as_ref()
        .filter(|_| before.rejection.is_none())
    else {
        return Err(transition(
            before,
            after,
            "a rejection sets status.rejection (who, when, why) once",
        ));
    };
    if before.used_at != after.used_at || before.used_for != after.used_for {
        return Err(transition(
            before,
            after,
            "a rejection changes nothing else",
        ));
    }
    if signoff.user != writer.user {
        return Err(Refusal::new(
            TicketCode::TicketApproverForged,
            format!(
                "the rejection names {:?} but is written by {:?}: reject in your own name",
                signoff.user, writer.user
            ),
        ));
    }
    Ok(if writer.user == old.spec.requested_by {
        Ruling::Admit(Change::Withdrawn)
    } else {
        Ruling::IfApprover(Change::Rejected)
    })
}

/// The phase set Used, by warrant.
fn used(
    old: &DeletionTicket,
    before: &TicketStatus,
    after: &TicketStatus,
    writer: Writer<'_>,
) -> Result<Ruling, Refusal> {
    if !writer.own {
        return Err(transition(
            before,
            after,
            "only warrant marks a ticket Used, when it admits the deletion the ticket authorized",
        ));
    }
    if !old.spec.single_use
        || after.used_at.is_none()
        || after.used_for.is_none()
        || before.rejection != after.rejection
    {
        return Err(transition(
            before,
            after,
            "a single-use ticket is marked Used with status.usedAt and status.usedFor, and nothing else changes",
        ));
    }
    Ok(Ruling::Admit(Change::Used))
}

/// The phase set Expired, once `expiresAt` has passed.
fn expired(
    old: &DeletionTicket,
    before: &TicketStatus,
    after: &TicketStatus,
    now: DateTime<Utc>,
) -> Result<Ruling, Refusal> {
    if old.spec.expires_at > now {
        return Err(transition(
            before,
            after,
            &format!(
                "the ticket expires at {}, not before",
                old.spec.expires_at.to_rfc3339()
            ),
        ));
    }
    if !same_outcome(before, after) {
        return Err(transition(
            before,
            after,
            "marking a ticket Expired changes nothing else",
        ));
    }
    Ok(Ruling::Admit(Change::Expired))
}

/// Whether rejection and use are as they were.
fn same_outcome(before: &TicketStatus, after: &TicketStatus) -> bool {
    before.rejection == after.rejection
        && before.used_at == after.used_at
        && before.used_for == after.used_for
}

fn transition(before: &TicketStatus, after: &TicketStatus, rule: &str) -> Refusal {
    Refusal::new(
        TicketCode::TicketPhaseTransition,
        format!(
            "status from {} to {} is not allowed: {rule}",
            before.phase().as_str(),
            after.phase().as_str()
        ),
    )
}

/// The status with its phase spelled out (no phase is Pending).
fn normalized(mut status: TicketStatus) -> TicketStatus {
    status.phase = Some(status.phase());
    status
}
