//! The ticket webhook's wire, `tickets.warrant.dev/v1` (written out in docs/tickets.md): the
//! `TicketReview` warrant sends for one presented ticket (its id, the deletion's target, the
//! requester as Kubernetes authenticated them) and the answer it accepts, decoded into the
//! guard's [`Ticket`] or "not found". Decoding is strict, since a field the server meant but
//! warrant ignored could widen what a ticket covers: another `apiVersion` or `kind`, an unknown
//! field, a missing `phase` or `expiresAt` on a found ticket, an empty approver identity or a
//! time that is not RFC 3339 is a [`ContractError`], which the guard answers with its failure
//! policy, never with a ticket.

use crate::authorizer::deletion_guard::scope::Target;
use crate::authorizer::deletion_guard::tickets::{Scope, Status, Ticket};
use crate::review::{object_only, refuse_array};
use crate::tickets::TicketTarget;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use thiserror::Error;

/// The contract's `apiVersion`.
pub const API_VERSION: &str = "tickets.warrant.dev/v1";
/// The contract's `kind`, of the request and of the answer.
pub const KIND: &str = "TicketReview";

/// The request: one presented ticket and the deletion it is presented for.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TicketReview<'a> {
    /// [`API_VERSION`].
    pub api_version: &'static str,
    /// [`KIND`].
    pub kind: &'static str,
    /// What is asked.
    pub spec: ReviewSpec<'a>,
}

/// What a request asks about.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewSpec<'a> {
    /// The ticket id as presented.
    pub ticket: &'a str,
    /// The object the request would delete (or change).
    pub target: TargetRef<'a>,
    /// Who asks, as Kubernetes authenticated them.
    pub requester: Requester<'a>,
}

/// The deletion's target.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetRef<'a> {
    /// `delete`, `deletecollection`, `update` or `patch`.
    pub verb: &'a str,
    /// The API group (`""` for core).
    pub group: &'a str,
    /// The plural resource.
    pub resource: &'a str,
    /// The namespace (`""` when cluster-scoped).
    pub namespace: &'a str,
    /// The object's name (`""` for a collection).
    pub name: &'a str,
}

/// The requester.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Requester<'a> {
    /// The Kubernetes user name.
    pub username: &'a str,
    /// The Kubernetes groups.
    pub groups: &'a [String],
}

impl<'a> TicketReview<'a> {
    /// The request for ticket `id` presented for `target`.
    pub fn new(id: &'a str, target: &Target<'a>) -> Self {
        Self {
            api_version: API_VERSION,
            kind: KIND,
            spec: ReviewSpec {
                ticket: id,
                target: TargetRef {
                    verb: target.verb,
                    group: target.group,
                    resource: target.resource,
                    namespace: target.namespace,
                    name: target.name,
                },
                requester: Requester {
                    username: target.user,
                    groups: target.groups,
                },
            },
        }
    }

    /// The request's JSON body.
    pub fn to_body(&self) -> Vec<u8> {
        // Serializing plain strings and slices into a vector cannot fail.
        serde_json::to_vec(self).unwrap_or_default()
    }
}

/// The answer's envelope.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Answer {
    #[serde(default)]
    api_version: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    metadata: Option<serde_json::Value>,
    #[serde(default, deserialize_with = "object_only")]
    status: Option<AnswerStatus>,
}

/// The answer's `status`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct AnswerStatus {
    found: bool,
    #[serde(default)]
    phase: Option<Phase>,
    #[serde(default)]
    approvers: Vec<Approver>,
    #[serde(default)]
    expires_at: Option<String>,
    #[serde(default, deserialize_with = "object_only")]
    scope: Option<ScopeWire>,
    #[serde(default)]
    targets: Vec<TargetWire>,
}

/// A ticket's phase as the contract spells it (no `Used`: single use is a `DeletionTicket`'s).
#[derive(Debug, Clone, Copy, Deserialize)]
enum Phase {
    Approved,
    Pending,
    Rejected,
    Expired,
}

/// One approval: an identity the ticket system authenticated.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Approver {
    identity: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    approved_at: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ScopeWire {
    #[serde(default)]
    namespaces: Vec<String>,
    #[serde(default)]
    resources: Vec<String>,
    #[serde(default)]
    names: Vec<String>,
    #[serde(default)]
    requesters: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct TargetWire {
    #[serde(default)]
    group: String,
    resource: String,
    #[serde(default)]
    namespace: String,
    name: String,
}

/// What the ticket system said about a ticket.
#[derive(Debug, Clone)]
pub enum Looked {
    /// It knows no ticket by that id.
    NotFound,
    /// The ticket, as the guard checks it.
    Found(Box<Ticket>),
}

impl Looked {
    /// Whether the answer is an Approved ticket (cached for `approvedTTL`).
    pub fn is_approved(&self) -> bool {
        matches!(self, Looked::Found(t) if t.status == Status::Approved)
    }

    /// The label of the answer in `warrant_ticket_webhook_lookups_total`.
    pub fn metrics_result(&self) -> &'static str {
        match self {
            Looked::NotFound => "not_found",
            Looked::Found(t) => match t.status {
                Status::Approved => "approved",
                Status::Pending => "pending",
                Status::Rejected => "rejected",
                Status::Expired | Status::Used => "expired",
            },
        }
    }
}

/// Why an answer is not one warrant accepts.
#[derive(Debug, Clone, Error)]
pub enum ContractError {
    /// The body is not the answer's JSON (or has a field the contract does not define).
    #[error("the answer is not a TicketReview: {0}")]
    Json(#[source] Arc<serde_json::Error>),
    /// Another `apiVersion`.
    #[error("the answer's apiVersion is {got:?}, not {API_VERSION:?}")]
    ApiVersion {
        /// As sent (empty when missing).
        got: String,
    },
    /// Another `kind`.
    #[error("the answer's kind is {got:?}, not {KIND:?}")]
    Kind {
        /// As sent (empty when missing).
        got: String,
    },
    /// A required field is missing.
    #[error("the answer has no {0}")]
    Missing(&'static str),
    /// A time that is not RFC 3339.
    #[error("the answer's {field} {value:?} is not an RFC 3339 time")]
    Time {
        /// The field.
        field: &'static str,
        /// The value sent.
        value: String,
    },
    /// An approver without an identity.
    #[error("the answer's status.approvers[{0}].identity is empty")]
    EmptyIdentity(usize),
}

/// Equal when the texts are (`serde_json::Error` has no equality of its own).
impl PartialEq for ContractError {
    fn eq(&self, other: &Self) -> bool {
        self.to_string() == other.to_string()
    }
}

impl Eq for ContractError {}

/// Decodes the answer to the request for ticket `id` by `requester`. A found ticket's
/// approvers are its distinct identities, the requester's own name left out (a ticket system
/// that lets someone approve their own request does not make them an approver here).
pub fn decode(id: &str, requester: &str, body: &[u8]) -> Result<Looked, ContractError> {
    let json = |e| ContractError::Json(Arc::new(e));
    refuse_array(body, "a TicketReview object").map_err(json)?;
    let answer: Answer = serde_json::from_slice(body).map_err(json)?;
    let _ = answer.metadata;
    let api_version = answer.api_version.unwrap_or_default();
    if api_version != API_VERSION {
        return Err(ContractError::ApiVersion { got: api_version });
    }
    let kind = answer.kind.unwrap_or_default();
    if kind != KIND {
        return Err(ContractError::Kind { got: kind });
    }
    let status = answer.status.ok_or(ContractError::Missing("status"))?;
    if !status.found {
        return Ok(Looked::NotFound);
    }
    let phase = status.phase.ok_or(ContractError::Missing("status.phase"))?;
    let expires = status
        .expires_at
        .ok_or(ContractError::Missing("status.expiresAt"))?;
    let expires = time("status.expiresAt", &expires)?;
    let mut approvers: Vec<String> = Vec::new();
    for (i, a) in status.approvers.iter().enumerate() {
        if a.identity.is_empty() {
            return Err(ContractError::EmptyIdentity(i));
        }
        if let Some(at) = &a.approved_at {
            time("status.approvers[].approvedAt", at)?;
        }
        let _ = &a.name;
        if a.identity != requester && !approvers.contains(&a.identity) {
            approvers.push(a.identity.clone());
        }
    }
    let scope = status.scope.unwrap_or_default();
    Ok(Looked::Found(Box::new(Ticket {
        id: id.to_owned(),
        status: match phase {
            Phase::Approved => Status::Approved,
            Phase::Pending => Status::Pending,
            Phase::Rejected => Status::Rejected,
            Phase::Expired => Status::Expired,
        },
        approvers,
        expires,
        scope: Scope {
            namespaces: scope.namespaces,
            resources: scope.resources,
            names: scope.names,
            requesters: scope.requesters,
        },
        targets: status
            .targets
            .into_iter()
            .map(|t| TicketTarget {
                group: t.group,
                resource: t.resource,
                namespace: t.namespace,
                name: t.name,
                selector: None,
            })
            .collect(),
        single_use: false,
        used_for: None,
    })))
}

fn time(field: &'static str, value: &str) -> Result<DateTime<Utc>, ContractError> {
    DateTime::parse_from_rfc3339(value)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| ContractError::Time {
            field,
            value: value.to_owned(),
        })
}
