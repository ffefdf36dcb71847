//! [`BufferRecord`]: the buffer ring's audit record (`"stage": "buffer"`, contract 5), written
//! through the shared audit writer: a hold (`DELETION_HELD`, with the snapshot), a release
//! (`BELOW_CRITICAL`, `COOLDOWN_ELAPSED`, `CONFIRMED`), an expiry (`COOLDOWN_EXPIRED`), a
//! finalizer put on or taken off.

use crate::telemetry::audit::DecisionId;
use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use serde_json::Value;

/// One record of the buffer ring.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BufferRecord<'a> {
    /// This record's own id (a random UUID), for de-duplication downstream.
    pub id: String,
    /// The id the authorization and validation rings' records of the deletion share: derived
    /// from the object, the requester annotation and `deletionTimestamp`; absent for records
    /// not about a deletion, or when the requester is not known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) decision_id: Option<DecisionId>,
    /// When (RFC 3339, UTC).
    pub time: String,
    /// Always `buffer`.
    pub stage: &'static str,
    /// What happened: `DELETION_HELD`, `BELOW_CRITICAL`, `COOLDOWN_ELAPSED`, `CONFIRMED`,
    /// `COOLDOWN_EXPIRED`, `FINALIZER_ADDED`, `FINALIZER_REMOVED`.
    pub code: &'static str,
    /// The DeletionGuard entry whose `buffer` settings applied.
    pub guard: &'a str,
    /// The object: `apiVersion`, `kind`, `namespace`, `name`, `uid`.
    pub object: ObjectId<'a>,
    /// The finalizer.
    pub finalizer: &'a str,
    /// The message (what happens next and why).
    pub message: String,
    /// `metadata.deletionTimestamp`, when Terminating.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) deletion_timestamp: Option<String>,
    /// The earliest the held object goes (`deletionTimestamp + cooldown`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cooldown_ends: Option<String>,
    /// The latest it goes (`deletionTimestamp + maxHold`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_hold_ends: Option<String>,
    /// Whether a confirmation is required.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) require_confirmation: bool,
    /// Who asked for the deletion (the requester annotation), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) requested_by: Option<&'a str>,
    /// The confirmation annotation's value (a ticket id), when confirmed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) confirmed_by_ticket: Option<&'a str>,
    /// The re-computed risk: `{score, level, reasons}`, when it was computed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub risk: Option<Value>,
    /// A hold's snapshot of the object: metadata (no managedFields) and spec, never data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<Value>,
    /// The revision of the configuration served when the record was written (`sha256:<hex>`
    /// of the chain file), whose guard settings the ring applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) config_hash: Option<String>,
}

/// The object a record is about.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ObjectId<'a> {
    /// `apiVersion`.
    pub api_version: &'a str,
    /// `kind`.
    pub kind: &'a str,
    /// Namespace (absent when cluster-scoped).
    #[serde(skip_serializing_if = "str::is_empty")]
    pub namespace: &'a str,
    /// Name.
    pub name: &'a str,
    /// UID.
    pub uid: &'a str,
}

/// RFC 3339 in UTC, as the other audit records write times.
pub(crate) fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}
