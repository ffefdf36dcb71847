//! The `DeletionTicket` custom resource as Rust reads and writes it, field for field with
//! `charts/warrant/crds/deletiontickets.warrant.dev.yaml`: a [`TicketSpec`] (what, why, by
//! whom, until when; immutable) and a [`TicketStatus`] (approvals, rejection, phase, use).
//! Times are RFC 3339, written to the second.

use super::selector::TargetSelector;
use chrono::{DateTime, SecondsFormat, Utc};
use kube::core::{ApiResource, GroupVersionKind, Object};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The API group.
pub const GROUP: &str = "warrant.dev";
/// The served version.
pub const VERSION: &str = "v1alpha1";
/// `apiVersion` of a ticket.
pub const API_VERSION: &str = "warrant.dev/v1alpha1";
/// The kind.
pub const KIND: &str = "DeletionTicket";
/// The plural resource.
pub const PLURAL: &str = "deletiontickets";

/// One ticket: metadata, [`TicketSpec`] and an optional [`TicketStatus`].
pub type DeletionTicket = Object<TicketSpec, TicketStatus>;

/// The resource for `kube::Api::namespaced_with` and watchers.
pub fn api_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(GROUP, VERSION, KIND), PLURAL)
}

/// What is to be deleted, why, by whom and until when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TicketSpec {
    /// The creator's user name (checked against the creator at admission).
    pub requested_by: String,
    /// The objects the ticket covers.
    pub targets: Vec<TicketTarget>,
    /// Why, in words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// When the ticket stops authorizing deletions.
    #[serde(serialize_with = "seconds", deserialize_with = "rfc3339")]
    pub expires_at: DateTime<Utc>,
    /// The ticket authorizes one deletion, then is `Used`.
    #[serde(default)]
    pub single_use: bool,
}

/// One object a ticket covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TicketTarget {
    /// The API group (`""` for core).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// The plural resource.
    pub resource: String,
    /// The namespace (`""` for a cluster-scoped object).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// The object's name; empty when `selector` names the objects instead.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The objects of this kind and namespace whose labels match (instead of `name`). Only
    /// the validation ring sees an object's labels, so only it matches a selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<TargetSelector>,
}

/// A ticket's phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Phase {
    /// Waiting for approvals (also a ticket with no phase).
    Pending,
    /// Approved by at least one approver (the guard counts approvals against its level).
    Approved,
    /// Rejected by an approver, or withdrawn by its requester. Final.
    Rejected,
    /// Past `expiresAt`. Final.
    Expired,
    /// A single-use ticket whose deletion was admitted. Final.
    Used,
}

impl Phase {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Pending => "Pending",
            Phase::Approved => "Approved",
            Phase::Rejected => "Rejected",
            Phase::Expired => "Expired",
            Phase::Used => "Used",
        }
    }

    /// Whether no write may change the ticket's status any more.
    pub fn is_final(self) -> bool {
        matches!(self, Phase::Rejected | Phase::Expired | Phase::Used)
    }
}

/// An approval or a rejection: who, when, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Signoff {
    /// The user name of whoever wrote it (checked against the writer at admission).
    pub user: String,
    /// When.
    #[serde(serialize_with = "seconds", deserialize_with = "rfc3339")]
    pub time: DateTime<Utc>,
    /// Why, in words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub comment: String,
}

/// Approvals, rejection, phase and use.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TicketStatus {
    /// The phase (`None` reads as `Pending`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// The approvals, in the order they were written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<Signoff>,
    /// The rejection, when rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejection: Option<Signoff>,
    /// When warrant admitted the deletion a single-use ticket authorized.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "seconds_opt",
        deserialize_with = "rfc3339_opt"
    )]
    pub used_at: Option<DateTime<Utc>>,
    /// The object whose deletion it authorized.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_for: Option<UsedFor>,
}

/// The object whose deletion a single-use ticket authorized.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsedFor {
    /// The API group (`""` for core).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// The plural resource.
    pub resource: String,
    /// The namespace (`""` for a cluster-scoped object).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// The object's name.
    pub name: String,
    /// The object's uid: a deletion judged again (kube-apiserver runs admission again when its
    /// write lost a race) is the same deletion.
    pub uid: String,
}

impl TicketStatus {
    /// The phase, `Pending` when unset.
    pub fn phase(&self) -> Phase {
        self.phase.unwrap_or(Phase::Pending)
    }
}

/// The status of a ticket, empty when it has none.
pub fn status_of(ticket: &DeletionTicket) -> TicketStatus {
    ticket.status.clone().unwrap_or_default()
}

fn seconds<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&t.to_rfc3339_opts(SecondsFormat::Secs, true))
}

fn seconds_opt<S: Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => seconds(t, s),
        None => s.serialize_none(),
    }
}

fn rfc3339<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
    let text = String::deserialize(d)?;
    DateTime::parse_from_rfc3339(&text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| serde::de::Error::custom(format!("{text:?} is not an RFC 3339 time: {e}")))
}

fn rfc3339_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
    match Option::<String>::deserialize(d)? {
        None => Ok(None),
        Some(text) => DateTime::parse_from_rfc3339(&text)
            .map(|t| Some(t.with_timezone(&Utc)))
            .map_err(|e| {
                serde::de::Error::custom(format!("{text:?} is not an RFC 3339 time: {e}"))
            }),
    }
}
