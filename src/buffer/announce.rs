//! Telling people about a held deletion: the audit record with the object's snapshot, a
//! Kubernetes Event on the object (reason `DeletionHeld`; `DeletionReleased` or, at `maxHold`,
//! a Warning `DeletionHoldExpired` when it goes), and the JSON notification to each receiver.
//! Each says when the object will go and why. A failure is logged and counted; it never changes
//! the decision.

use super::context::{Context, annotation};
use super::decide::{Deleting, Release, Waiting};
use super::record::rfc3339;
use super::snapshot::snapshot;
use crate::authorizer::deletion_guard::rescore::DeletionRisk;
use chrono::{DateTime, Utc};
use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::ObjectMeta;
use kube::runtime::events::{Event, EventType};
use serde_json::{Value, json};

/// The longest Event note the API accepts (1 kB).
const MAX_NOTE: usize = 1024;

/// Announces a new hold: audit (with the snapshot), Event, notifications.
pub async fn hold(
    ctx: &Context,
    meta: &ObjectMeta,
    at: DateTime<Utc>,
    hold: Deleting,
    risk: Option<&DeletionRisk>,
    stored: Option<&Value>,
) {
    let Deleting::Hold {
        waiting,
        cooldown_ends,
        deadline,
        ..
    } = hold
    else {
        return;
    };
    let message = hold_message(ctx, waiting, cooldown_ends, deadline, risk);
    tracing::info!(object = %ctx.describe(meta), "{message}");
    let mut record = ctx.record(meta, "DELETION_HELD", message.clone());
    record.deletion_timestamp = Some(rfc3339(at));
    record.cooldown_ends = Some(rfc3339(cooldown_ends));
    record.max_hold_ends = Some(rfc3339(deadline));
    record.require_confirmation = ctx.settings.require_confirmation;
    record.requested_by = annotation(meta, &ctx.settings.requester_annotation);
    record.decision_id = ctx.decision_id(meta, at, record.requested_by);
    record.risk = risk.map(risk_json);
    record.snapshot = stored.map(snapshot);
    ctx.audit.write_other(&record, record.decision_id);
    let body = notification(&record);
    ctx.notifier.send(body, &ctx.metrics);
    publish(ctx, meta, EventType::Normal, "DeletionHeld", message).await;
}

/// Announces a release of a held deletion (an Event; the audit record is the caller's).
pub(crate) async fn released(ctx: &Context, meta: &ObjectMeta, why: Release, message: String) {
    let (kind, reason) = match why {
        Release::Expired => (EventType::Warning, "DeletionHoldExpired"),
        _ => (EventType::Normal, "DeletionReleased"),
    };
    publish(ctx, meta, kind, reason, message).await;
}

/// The risk as records show it.
pub(crate) fn risk_json(r: &DeletionRisk) -> Value {
    json!({"score": r.score, "level": r.level.as_str(), "reasons": r.reasons})
}

/// What the hold waits for and until when, and why.
fn hold_message(
    ctx: &Context,
    waiting: Waiting,
    cooldown_ends: DateTime<Utc>,
    deadline: DateTime<Utc>,
    risk: Option<&DeletionRisk>,
) -> String {
    let why = match risk {
        Some(r) => format!(
            "deletion risk CRITICAL (score {}: {})",
            r.score,
            r.reasons.join(", ")
        ),
        None => "deletion risk unknown (the cluster cache cannot answer), held as CRITICAL".into(),
    };
    let when = match (waiting, ctx.settings.require_confirmation) {
        (Waiting::Cooldown, false) => format!("it goes at {}", rfc3339(cooldown_ends)),
        _ => format!(
            "it goes once someone other than the requester sets annotation {} to an approved ticket, not before {}",
            ctx.settings.confirmation_annotation,
            rfc3339(cooldown_ends)
        ),
    };
    format!(
        "{why}; deletion held by finalizer {}: {when}, at the latest at {} (maxHold)",
        ctx.settings.finalizer,
        rfc3339(deadline)
    )
}

/// The JSON document POSTed to the receivers: the hold record without the snapshot.
fn notification(record: &super::record::BufferRecord<'_>) -> Value {
    let mut body = serde_json::to_value(record).unwrap_or_default();
    if let Some(o) = body.as_object_mut() {
        o.remove("snapshot");
        o.insert("kind".into(), json!("DeletionHeld"));
    }
    body
}

/// Publishes an Event on the object; a failure is logged and counted.
async fn publish(ctx: &Context, meta: &ObjectMeta, type_: EventType, reason: &str, note: String) {
    let event = Event {
        type_,
        reason: reason.to_owned(),
        note: Some(truncate(note)),
        action: "Hold".to_owned(),
        secondary: None,
    };
    let reference = ObjectReference {
        api_version: Some(ctx.resource.api_version.clone()),
        kind: Some(ctx.resource.kind.clone()),
        name: meta.name.clone(),
        namespace: meta.namespace.clone(),
        uid: meta.uid.clone(),
        resource_version: meta.resource_version.clone(),
        field_path: None,
    };
    if let Err(e) = ctx.recorder.publish(&event, &reference).await {
        tracing::warn!(object = %ctx.describe(meta), error = %e, "buffer ring: cannot publish the Event");
        ctx.metrics.failed("event");
    }
}

/// At most [`MAX_NOTE`] bytes, cut at a character boundary.
fn truncate(mut s: String) -> String {
    if s.len() > MAX_NOTE {
        let mut end = MAX_NOTE - 3;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push_str("...");
    }
    s
}
