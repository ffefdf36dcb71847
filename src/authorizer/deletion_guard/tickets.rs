//! Change tickets: what one ticket is and covers, the validity rules applied to it (once, in one
//! place, for a presented ticket and for the search for a pre-authorising one), and the ticket
//! gate, which asks for a ticket when the protection level or the risk requires one. Where the
//! tickets come from is [`source`]: a file, the cluster ([`feed`]) or a ticket system
//! ([`webhook`]), asked only once a ticket is needed.

pub mod feed;
mod snapshot;
pub mod source;
mod ticket;
pub mod webhook;

pub use feed::{TicketFeed, ticket_of};
pub use snapshot::Snapshot;
pub use source::TicketSource;
pub use ticket::{Rejection, Requirement, Scope, Status, Ticket, UsedFor};

use super::assessment::{GuardCode, RiskLevel};
use super::case::Case;
use super::conclusion::Finding;
use super::error::GuardError;
use super::scope::Target;
use crate::authorizer::Deadline;
use crate::config::model::guard::{GuardSpec, Level, Mode};
use crate::review::Review;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// What the ticket gate concluded.
#[derive(Debug)]
pub(super) enum Ticketed {
    /// Neither the protection level nor the risk asks for a ticket.
    NotRequired,
    /// A valid ticket covers the request.
    Covered(Covering),
    /// No valid ticket: the finding that stops the request.
    Refused(Finding),
}

/// The ticket that covers a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Covering {
    /// Its id.
    pub(super) id: String,
    /// It is single-use (a `DeletionTicket`): warrant marks it Used once the deletion is
    /// admitted.
    pub(super) single_use: bool,
}

/// When the gate asks for a ticket.
#[derive(Debug)]
pub(super) enum Demand {
    /// For the levels in `requiredFor` (of a protected target) and at HIGH or CRITICAL risk.
    IfRequired,
    /// Always; without a ticket, the request is refused with this finding.
    Always(Finding),
}

/// The ticket gate for a case whose target is guarded at `level`. A ticket is required as
/// `demand` says; an unreadable ticket source is a [`GuardError`] in Enforce mode and a
/// `TICKET_SOURCE_UNAVAILABLE` finding in Observe mode. A ticket is presented as the user
/// `extra` key or, at admission, in the object's ticket annotation.
///
/// The source is the only thing awaited; what comes before and after it is decided in place
/// (before: when the future is made), so that the future every review carries holds little
/// more than the source's.
pub(super) fn gate<'a>(
    spec: &'a GuardSpec,
    source: Option<&'a TicketSource>,
    level: Level,
    case: &'a Case<'a>,
    demand: Demand,
    deadline: Deadline,
) -> impl Future<Output = Result<Ticketed, GuardError>> + 'a {
    let settings = &spec.tickets;
    let listed = case.risk.protection.is_some() && settings.required_for.contains(&level);
    let needed =
        matches!(demand, Demand::Always(_)) || listed || case.risk.level >= RiskLevel::High;
    let id = presented(case, &settings.extra_key);
    async move {
        if !needed {
            return Ok(Ticketed::NotRequired);
        }
        let snapshot = fetch(source, id, &case.target, deadline).await;
        checked(spec, snapshot.as_deref(), level, case, id, demand)
    }
}

/// The ticket gate's answer once the source's tickets are in hand: the presented ticket checked,
/// or else a pre-authorising one looked for; without either, what `demand` says refuses (for
/// `IfRequired`, `MISSING_TICKET` saying how to present one).
fn checked(
    spec: &GuardSpec,
    snapshot: Option<&Snapshot>,
    level: Level,
    case: &Case<'_>,
    id: Option<&str>,
    demand: Demand,
) -> Result<Ticketed, GuardError> {
    let settings = &spec.tickets;
    let tickets = match loaded(spec, snapshot)? {
        Ok(tickets) => tickets,
        Err(stop) => return Ok(Ticketed::Refused(stop)),
    };
    let need = Requirement {
        level,
        approvals: settings.approvals[level as usize],
        now: case.now,
        object_uid: case.facts.as_ref().map(|f| f.uid.as_str()),
        wildcard_targets: settings.allow_wildcard_targets,
        object_labels: case.facts.as_ref().map(|f| f.labels()),
    };
    Ok(match id {
        Some(id) => match check_presented(tickets, id, &need, &case.target) {
            Ok(ticket) => Ticketed::Covered(covering(ticket)),
            Err(stop) => Ticketed::Refused(stop),
        },
        None => match pre_authorising(tickets, &need, &case.target) {
            Some(ticket) => Ticketed::Covered(covering(ticket)),
            None => Ticketed::Refused(match demand {
                Demand::Always(missing) => missing,
                Demand::IfRequired => Finding::new(GuardCode::MissingTicket, ask(spec, case)),
            }),
        },
    })
}

fn covering(ticket: &Ticket) -> Covering {
    Covering {
        id: ticket.id.clone(),
        single_use: ticket.single_use,
    }
}

/// The tickets by id, as a loaded snapshot holds them.
type Tickets<'a> = Option<&'a HashMap<String, Ticket>>;

/// The tickets of a snapshot: an unreadable source is a [`GuardError`] in Enforce mode and a
/// `TICKET_SOURCE_UNAVAILABLE` finding in Observe mode; no source means no tickets.
fn loaded<'a>(
    spec: &GuardSpec,
    snapshot: Option<&'a Snapshot>,
) -> Result<Result<Tickets<'a>, Finding>, GuardError> {
    match snapshot {
        None => Ok(Ok(None)),
        Some(Snapshot::Loaded(tickets)) => Ok(Ok(Some(tickets))),
        Some(Snapshot::Unreadable(e)) if spec.mode == Mode::Enforce => Err(e.clone()),
        Some(Snapshot::Unreadable(e)) => Ok(Err(Finding::new(
            GuardCode::TicketSourceUnavailable,
            e.to_string(),
        ))),
    }
}

/// The tickets of `source` (none without one) to judge a request presenting `id` for
/// `target`: a ticket system is asked here, within `deadline`.
pub(super) async fn fetch(
    source: Option<&TicketSource>,
    id: Option<&str>,
    target: &Target<'_>,
    deadline: Deadline,
) -> Option<Arc<Snapshot>> {
    match source {
        Some(s) => Some(s.lookup(id, target, deadline).await),
        None => None,
    }
}

/// Ticket `id`, named outright (a confirmation's value, a presented ticket lifting conditions),
/// checked as a presented one for `target` guarded at `level` in `snapshot` (what [`fetch`]
/// gave for `id`), against the object's `labels` where they are known: its id when valid,
/// else the finding that refuses it.
pub(super) fn named(
    spec: &GuardSpec,
    snapshot: Option<&Snapshot>,
    (level, now): (Level, chrono::DateTime<chrono::Utc>),
    target: &Target<'_>,
    labels: Option<&BTreeMap<String, String>>,
    id: &str,
) -> Result<Result<String, Finding>, GuardError> {
    let tickets = match loaded(spec, snapshot)? {
        Ok(tickets) => tickets,
        Err(stop) => return Ok(Err(stop)),
    };
    let need = Requirement {
        level,
        approvals: spec.tickets.approvals[level as usize],
        now,
        object_uid: None,
        wildcard_targets: spec.tickets.allow_wildcard_targets,
        object_labels: labels,
    };
    Ok(check_presented(tickets, id, &need, target).map(|t| t.id.clone()))
}

/// How to present a ticket, as a missing-ticket message says it: only what the deciding ring
/// reads. The validation ring (at admission, `case.facts` set) reads the user `extra` key and
/// the object's annotation; the authorization ring sees no object, so it names the `extra` key
/// and says that the annotation is read only at admission.
pub(super) fn ask(spec: &GuardSpec, case: &Case<'_>) -> String {
    let extra = &spec.tickets.extra_key;
    match (&spec.objects.ticket_annotation, case.facts.is_some()) {
        (Some(a), true) => format!(
            "a change ticket is required (present it as user extra {extra} or annotation {a} on the object)"
        ),
        (Some(a), false) => format!(
            "a change ticket is required (present it as user extra {extra}; the annotation {a} on the object is read only at admission, by the validation ring, which a request refused here never reaches)"
        ),
        (None, _) => format!("a change ticket is required (present it as user extra {extra})"),
    }
}

/// The ticket id presented: the first value of the user `extra` key, else (at admission) the
/// object's ticket annotation.
fn presented<'a>(case: &'a Case<'_>, extra_key: &str) -> Option<&'a str> {
    extra_ticket(case.review, extra_key)
        .or_else(|| case.facts.as_ref()?.annotated_ticket.as_deref())
}

fn extra_ticket<'a>(review: &'a Review, extra_key: &str) -> Option<&'a str> {
    review
        .spec()
        .extra
        .as_ref()
        .and_then(|x| x.get(extra_key))
        .and_then(|v| v.first())
        .map(String::as_str)
}

/// The presented ticket `id`, looked up and checked: the ticket when it covers the request,
/// else the finding that refuses it (every finding names it). A `DeletionTicket` is found by
/// `<namespace>/<name>`, or by its name alone in the target's namespace.
fn check_presented<'a>(
    tickets: Option<&'a HashMap<String, Ticket>>,
    id: &str,
    need: &Requirement<'_>,
    target: &Target<'_>,
) -> Result<&'a Ticket, Finding> {
    let refused = |code, message| Finding::new(code, message).with_ticket(Some(id.to_owned()));
    let found = tickets.and_then(|t| {
        t.get(id).or_else(|| match id.contains('/') {
            true => None,
            false => t.get(&format!("{}/{id}", target.namespace)),
        })
    });
    match found {
        None => Err(refused(
            GuardCode::TicketNotFound,
            format!("ticket {id} not found"),
        )),
        Some(ticket) => match ticket.check(need, target) {
            Ok(_) => Ok(ticket),
            Err(r) => Err(refused(r.code(), r.message(id))),
        },
    }
}

/// A valid ticket that names the requester, when none is presented.
fn pre_authorising<'a>(
    tickets: Option<&'a HashMap<String, Ticket>>,
    need: &Requirement<'_>,
    target: &Target<'_>,
) -> Option<&'a Ticket> {
    tickets?
        .values()
        .filter(|t| t.pre_authorises())
        .find(|t| t.check(need, target).is_ok())
}
