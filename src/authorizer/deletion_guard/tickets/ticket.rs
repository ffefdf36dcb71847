//! One change ticket as the tickets file states it (or as a `DeletionTicket` reads, see
//! `feed.rs`), what it covers, and the validity rules a ticket must meet (applied once, in one
//! place, for a presented ticket and for the search for a pre-authorising one).

use crate::authorizer::deletion_guard::assessment::GuardCode;
use crate::authorizer::deletion_guard::scope::Target;
use crate::config::model::guard::Level;
use crate::config::model::pattern::{Pattern, any};
use crate::tickets::TargetSelector;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use std::collections::BTreeMap;

/// A ticket's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Status {
    /// Approved.
    Approved,
    /// Waiting for approval.
    Pending,
    /// Rejected.
    Rejected,
    /// Past its expiry (a `DeletionTicket` marked Expired).
    Expired,
    /// A single-use ticket whose deletion was admitted (a `DeletionTicket` marked Used).
    Used,
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
    pub(crate) requesters: Vec<String>,
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
    /// The objects it covers by name (a `DeletionTicket`'s `spec.targets`); when set, the
    /// request's object must be one of them, besides `scope`.
    #[serde(skip)]
    pub targets: Vec<crate::tickets::TicketTarget>,
    /// It authorizes one deletion (a `DeletionTicket`'s `spec.singleUse`).
    #[serde(skip)]
    pub single_use: bool,
    /// The object whose deletion a Used ticket authorized: the same deletion judged again is
    /// still covered.
    #[serde(skip)]
    pub used_for: Option<UsedFor>,
}

/// The uid of the object whose deletion a single-use ticket authorized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsedFor(pub crate::tickets::UsedFor);

/// What a ticket must carry to authorise one request.
#[derive(Debug, Clone, Copy)]
pub struct Requirement<'a> {
    /// The target's protection level.
    pub level: Level,
    /// The approvals that level needs.
    pub approvals: u32,
    /// When the request is judged.
    pub now: DateTime<Utc>,
    /// At admission, the uid of the stored object (a Used ticket still covers the deletion of
    /// the object it was used for, judged again).
    pub object_uid: Option<&'a str>,
    /// Whether a `DeletionTicket` target's name and namespace are patterns
    /// (`tickets.allowWildcardTargets`); otherwise they match exactly, so a `*` written while
    /// the webhook was not called covers nothing.
    pub wildcard_targets: bool,
    /// At admission, the stored object's labels, which a `DeletionTicket` target's selector
    /// is matched against; `None` in the authorization ring, where no selector covers anything.
    pub object_labels: Option<&'a BTreeMap<String, String>>,
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
    /// A single-use ticket already used for another deletion.
    Used,
}

impl Rejection {
    /// The guard code of the rejection.
    pub fn code(self) -> GuardCode {
        match self {
            Rejection::NotApproved(_) => GuardCode::TicketNotApproved,
            Rejection::InsufficientApprovals { .. } => GuardCode::InsufficientApprovals,
            Rejection::Expired(_) => GuardCode::TicketExpired,
            Rejection::OutOfScope => GuardCode::TicketScope,
            Rejection::Used => GuardCode::TicketUsed,
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
            Rejection::Used => format!(
                "ticket {id} is single-use and was used for another deletion: request a new one"
            ),
        }
    }
}

impl Ticket {
    /// Applies the validity rules in order: approved, enough approvers, not expired, covering
    /// the target. The ticket's id when it authorises the request.
    pub fn check(&self, need: &Requirement<'_>, target: &Target<'_>) -> Result<&str, Rejection> {
        match self.status {
            Status::Approved => {}
            Status::Used if self.used_on(need.object_uid) => {}
            Status::Used => return Err(Rejection::Used),
            Status::Expired => return Err(Rejection::Expired(self.expires)),
            Status::Pending | Status::Rejected => return Err(Rejection::NotApproved(self.status)),
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
        if !self.covers(target, need.wildcard_targets, need.object_labels) {
            return Err(Rejection::OutOfScope);
        }
        Ok(&self.id)
    }

    /// Whether a Used ticket was used for the deletion of the object with this uid.
    fn used_on(&self, uid: Option<&str>) -> bool {
        match (&self.used_for, uid) {
            (Some(UsedFor(u)), Some(uid)) => !uid.is_empty() && u.uid == uid,
            _ => false,
        }
    }

    /// Whether the ticket names its requesters, and so authorises them without being presented.
    pub fn pre_authorises(&self) -> bool {
        !self.scope.requesters.is_empty()
    }

    /// Whether the ticket's scope covers the target (`wildcards`: its targets' names and
    /// namespaces are patterns, and a selector without requirements selects everything;
    /// `labels`: the object's, which a selector needs).
    pub(crate) fn covers(
        &self,
        t: &Target<'_>,
        wildcards: bool,
        labels: Option<&BTreeMap<String, String>>,
    ) -> bool {
        let named = |written: &str, actual: &str| match wildcards {
            true => Pattern::new(written).matches(actual),
            false => written == actual,
        };
        let selected = |selector: &TargetSelector| match labels {
            Some(labels) => {
                (wildcards || !selector.is_empty())
                    && selector.matches(|k| labels.get(k).map(String::as_str))
            }
            None => false,
        };
        let pats = |v: &[String]| v.iter().map(|s| Pattern::new(s)).collect::<Vec<_>>();
        let s = &self.scope;
        let kind_ok = s.resources.is_empty()
            || s.resources.iter().any(|r| {
                let (res, group) = r.split_once('.').unwrap_or((r.as_str(), ""));
                res == t.resource && group == t.group
            });
        let target_ok = self.targets.is_empty()
            || self.targets.iter().any(|o| {
                o.group == t.group
                    && o.resource == t.resource
                    && named(&o.namespace, t.namespace)
                    && match &o.selector {
                        Some(selector) => selected(selector),
                        None => named(&o.name, t.name),
                    }
            });
        (s.namespaces.is_empty() || any(&pats(&s.namespaces), t.namespace))
            && kind_ok
            && target_ok
            && (s.names.is_empty() || any(&pats(&s.names), t.name))
            && (s.requesters.is_empty() || s.requesters.iter().any(|r| r == t.user))
    }
}
