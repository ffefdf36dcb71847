//! Change tickets: what one ticket is and covers, the validity rules applied to it (once, in one
//! place, for a presented ticket and for the search for a pre-authorising one), and the ticket
//! gate, which asks for a ticket when the protection level or the risk requires one. Where the
//! tickets come from is [`source`].

pub mod source;

pub use source::{Snapshot, TicketSource};

use super::Case;
use super::assessment::{GuardCode, RiskLevel};
use super::conclusion::Finding;
use super::error::GuardError;
use super::scope::Target;
use crate::config::model::guard::{GuardSpec, Level, Mode};
use crate::config::model::pattern::{Pattern, any};
use crate::review::Review;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use std::collections::HashMap;

/// A ticket's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Status {
    /// Approved.
    Approved,
    /// Waiting for approval.
    Pending,
    /// Rejected.
    Rejected,
}

/// What a ticket covers; an empty list covers anything.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scope {
    /// Namespaces (patterns).
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// Kinds as `resource[.group]`.
    #[serde(default)]
    pub resources: Vec<String>,
    /// Object names (patterns).
    #[serde(default)]
    pub names: Vec<String>,
    /// Users who may use it; when set, the ticket pre-authorises them without presenting it.
    #[serde(default)]
    pub requesters: Vec<String>,
}

/// One change ticket.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ticket {
    /// Its id.
    pub id: String,
    /// Its status.
    pub status: Status,
    /// Who approved it.
    #[serde(default)]
    pub approvers: Vec<String>,
    /// When it stops being valid.
    pub expires: DateTime<Utc>,
    /// What it covers.
    #[serde(default)]
    pub scope: Scope,
}

/// What a ticket must carry to authorise one request.
#[derive(Debug, Clone, Copy)]
pub struct Requirement {
    /// The target's protection level.
    pub level: Level,
    /// The approvals that level needs.
    pub approvals: u32,
    /// When the request is judged.
    pub now: DateTime<Utc>,
}

/// Why a ticket does not authorise a request: the first validity rule it breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// It is not approved.
    NotApproved(Status),
    /// It has fewer approvers than the level needs.
    InsufficientApprovals {
        /// How many approved it.
        approvers: usize,
        /// The target's protection level.
        level: Level,
        /// How many that level needs.
        needed: u32,
    },
    /// It has expired.
    Expired(DateTime<Utc>),
    /// Its scope does not cover the request.
    OutOfScope,
}

impl Rejection {
    /// The guard code of the rejection.
    pub fn code(self) -> GuardCode {
        match self {
            Rejection::NotApproved(_) => GuardCode::TicketNotApproved,
            Rejection::InsufficientApprovals { .. } => GuardCode::InsufficientApprovals,
            Rejection::Expired(_) => GuardCode::TicketExpired,
            Rejection::OutOfScope => GuardCode::TicketScope,
        }
    }

    /// What the reason says about ticket `id`.
    pub fn message(self, id: &str) -> String {
        match self {
            Rejection::NotApproved(status) => format!("ticket {id} is {status:?}, not Approved"),
            Rejection::InsufficientApprovals {
                approvers,
                level,
                needed,
            } => format!(
                "ticket {id} has {approvers} approver(s), {} target needs {needed}",
                level.as_str()
            ),
            Rejection::Expired(at) => format!("ticket {id} expired at {}", at.to_rfc3339()),
            Rejection::OutOfScope => format!("ticket {id} does not cover this request"),
        }
    }
}

impl Ticket {
    /// Applies the validity rules in order: approved, enough approvers, not expired, covering
    /// the target. The ticket's id when it authorises the request.
    pub fn check(&self, need: &Requirement, target: &Target<'_>) -> Result<&str, Rejection> {
        if self.status != Status::Approved {
            return Err(Rejection::NotApproved(self.status));
        }
        if (self.approvers.len() as u32) < need.approvals {
            return Err(Rejection::InsufficientApprovals {
                approvers: self.approvers.len(),
                level: need.level,
                needed: need.approvals,
            });
        }
        if self.expires <= need.now {
            return Err(Rejection::Expired(self.expires));
        }
        if !self.covers(target) {
            return Err(Rejection::OutOfScope);
        }
        Ok(&self.id)
    }

    /// Whether the ticket names its requesters, and so authorises them without being presented.
    pub fn pre_authorises(&self) -> bool {
        !self.scope.requesters.is_empty()
    }

    /// Whether the ticket's scope covers the target.
    pub fn covers(&self, t: &Target<'_>) -> bool {
        let pats = |v: &[String]| v.iter().map(|s| Pattern::new(s)).collect::<Vec<_>>();
        let s = &self.scope;
        let kind_ok = s.resources.is_empty()
            || s.resources.iter().any(|r| {
                let (res, group) = r.split_once('.').unwrap_or((r.as_str(), ""));
                res == t.resource && group == t.group
            });
        (s.namespaces.is_empty() || any(&pats(&s.namespaces), t.namespace))
            && kind_ok
            && (s.names.is_empty() || any(&pats(&s.names), t.name))
            && (s.requesters.is_empty() || s.requesters.iter().any(|r| r == t.user))
    }
}

/// What the ticket gate concluded.
#[derive(Debug)]
pub(super) enum Ticketed {
    /// Neither the protection level nor the risk asks for a ticket.
    NotRequired,
    /// A valid ticket (its id) covers the request.
    Covered(String),
    /// No valid ticket: the finding that stops the request.
    Refused(Finding),
}

/// The ticket gate for a case whose target is protected at `level`. A ticket is required for
/// the levels in `requiredFor` and at HIGH or CRITICAL risk; an unreadable ticket source is a
/// [`GuardError`] in Enforce mode and a `TICKET_SOURCE_UNAVAILABLE` finding in Observe mode.
pub(super) fn gate(
    spec: &GuardSpec,
    source: Option<&TicketSource>,
    level: Level,
    case: &Case<'_>,
) -> Result<Ticketed, GuardError> {
    let settings = &spec.tickets;
    if !settings.required_for.contains(&level) && case.risk.level < RiskLevel::High {
        return Ok(Ticketed::NotRequired);
    }
    let snapshot = source.map(TicketSource::snapshot);
    let tickets = match snapshot.as_deref() {
        None => None,
        Some(Snapshot::Loaded(tickets)) => Some(tickets),
        Some(Snapshot::Unreadable(e)) if spec.mode == Mode::Enforce => return Err(e.clone()),
        Some(Snapshot::Unreadable(e)) => {
            return Ok(Ticketed::Refused(Finding::new(
                GuardCode::TicketSourceUnavailable,
                e.to_string(),
            )));
        }
    };
    let need = Requirement {
        level,
        approvals: settings.approvals[level as usize],
        now: case.now,
    };
    Ok(match presented(case.review, &settings.extra_key) {
        Some(id) => check_presented(tickets, id, &need, &case.target),
        None => match pre_authorising(tickets, &need, &case.target) {
            Some(id) => Ticketed::Covered(id.to_owned()),
            None => Ticketed::Refused(Finding::new(
                GuardCode::MissingTicket,
                format!(
                    "a change ticket is required (present it as user extra {})",
                    settings.extra_key
                ),
            )),
        },
    })
}

/// The ticket id the review presents under the user `extra` key (its first value).
fn presented<'a>(review: &'a Review, extra_key: &str) -> Option<&'a String> {
    review
        .spec()
        .extra
        .as_ref()
        .and_then(|x| x.get(extra_key))
        .and_then(|v| v.first())
}

/// The presented ticket `id`, looked up and checked; every finding names it.
fn check_presented(
    tickets: Option<&HashMap<String, Ticket>>,
    id: &str,
    need: &Requirement,
    target: &Target<'_>,
) -> Ticketed {
    let refused = |code, message| {
        Ticketed::Refused(Finding::new(code, message).with_ticket(Some(id.to_owned())))
    };
    match tickets.and_then(|t| t.get(id)) {
        None => refused(GuardCode::TicketNotFound, format!("ticket {id} not found")),
        Some(ticket) => match ticket.check(need, target) {
            Ok(_) => Ticketed::Covered(id.to_owned()),
            Err(r) => refused(r.code(), r.message(id)),
        },
    }
}

/// A valid ticket that names the requester, when none is presented.
fn pre_authorising<'a>(
    tickets: Option<&'a HashMap<String, Ticket>>,
    need: &Requirement,
    target: &Target<'_>,
) -> Option<&'a str> {
    tickets?
        .values()
        .filter(|t| t.pre_authorises())
        .find_map(|t| t.check(need, target).ok())
}
