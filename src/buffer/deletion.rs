//! A Terminating object carrying the finalizer: the risk of its deletion is re-computed with
//! the guard's own model (from the object as stored now and the cluster cache), then the
//! decision ([`decide::deleting`]) releases it at once (below CRITICAL, `maxHold` passed, the
//! cool-down over and confirmed when required) or holds it and looks again when it next can go.
//! A risk that cannot be computed (the cache is not ready) is held as CRITICAL: never released
//! early, never held past `maxHold`.

use super::announce;
use super::context::{Context, annotation};
use super::decide::{self, Deleting, Observed, Release};
use super::error::BufferError;
use super::patch::{self, Patched, api_error};
use super::record::rfc3339;
use crate::authorizer::deletion_guard::rescore::{self, DeletionRisk};
use crate::object::Subject;
use chrono::{DateTime, Utc};
use kube::api::ObjectMeta;
use kube::runtime::controller::Action;
use std::sync::Arc;
use std::time::Duration;

/// Slack added to a wake-up, so the cool-down has surely passed when it fires.
const SLACK: Duration = Duration::from_millis(200);

/// Handles a Terminating object that carries the finalizer, Terminating since `at`.
pub(crate) async fn handle(
    ctx: &Context,
    meta: &ObjectMeta,
    at: DateTime<Utc>,
    seen: &Observed,
) -> Result<Action, BufferError> {
    if !decide::holds(ctx.spec.mode) {
        return release(ctx, meta, at, Release::Observing, None).await;
    }
    let now = Utc::now();
    let (risk, stored) = match decide::needs_risk(seen, now, &ctx.settings) {
        true => match assess(ctx, meta, now).await? {
            Some(found) => found,
            None => return Ok(Action::await_change()),
        },
        false => (None, None),
    };
    let level = risk.as_ref().map(|r| r.level);
    match decide::deleting(at, seen.confirmed, level, now, &ctx.settings) {
        Deleting::Release(why) => release(ctx, meta, at, why, risk.as_ref()).await,
        hold @ Deleting::Hold { next, .. } => {
            let uid = meta.uid.as_deref().unwrap_or("");
            if ctx.metrics.holds().hold(uid, at) {
                announce::hold(ctx, meta, at, hold, risk.as_ref(), stored.as_ref()).await;
            }
            let wait = (next - now).to_std().unwrap_or_default() + SLACK;
            Ok(Action::requeue(wait))
        }
    }
}

/// The object as stored now and the risk of its deletion; `None` when it is gone.
async fn assess(
    ctx: &Context,
    meta: &ObjectMeta,
    now: DateTime<Utc>,
) -> Result<Option<(Option<DeletionRisk>, Option<serde_json::Value>)>, BufferError> {
    let name = meta.name.as_deref().unwrap_or("");
    let stored = match ctx.api(meta).get_opt(name).await {
        Ok(Some(o)) => serde_json::to_value(o).map_err(|e| BufferError::Encode(Arc::new(e)))?,
        Ok(None) => return Ok(None),
        Err(e) => return Err(api_error("get", &ctx.describe(meta), e)),
    };
    let subject = Subject::new(stored.clone());
    let (group, plural) = (&ctx.resource.group, &ctx.resource.plural);
    let view = ctx.view.clone();
    let risk = match rescore::deletion_risk(&ctx.spec, group, plural, &subject, view, now).await {
        Ok(r) => Some(r),
        Err(e) => {
            tracing::warn!(object = %ctx.describe(meta), error = %e, "buffer ring: cannot re-compute the risk; holding as CRITICAL");
            ctx.metrics.failed("risk");
            None
        }
    };
    Ok(Some((risk, Some(stored))))
}

/// Removes the finalizer: the deletion finishes.
async fn release(
    ctx: &Context,
    meta: &ObjectMeta,
    at: DateTime<Utc>,
    why: Release,
    risk: Option<&DeletionRisk>,
) -> Result<Action, BufferError> {
    let patched = patch::remove(&ctx.api(meta), meta, &ctx.settings.finalizer).await?;
    ctx.metrics
        .holds()
        .release(meta.uid.as_deref().unwrap_or(""));
    if patched != Patched::Done {
        return Ok(Action::await_change());
    }
    ctx.metrics.removed(why.as_str());
    let message = release_message(ctx, why, risk);
    match why {
        Release::Expired => {
            tracing::error!(object = %ctx.describe(meta), "{message}")
        }
        _ => tracing::info!(object = %ctx.describe(meta), "{message}"),
    }
    let mut record = ctx.record(meta, why.as_str(), message.clone());
    record.deletion_timestamp = Some(rfc3339(at));
    record.requested_by = annotation(meta, &ctx.settings.requester_annotation);
    record.decision_id = ctx.decision_id(meta, at, record.requested_by);
    record.confirmed_by_ticket = annotation(meta, &ctx.settings.confirmation_annotation);
    record.risk = risk.map(announce::risk_json);
    ctx.audit.write_other(&record, record.decision_id);
    if why != Release::BelowCritical {
        announce::released(ctx, meta, why, message).await;
    }
    Ok(Action::await_change())
}

/// Why the finalizer was removed, in words.
fn release_message(ctx: &Context, why: Release, risk: Option<&DeletionRisk>) -> String {
    let s = &ctx.settings;
    match why {
        Release::BelowCritical => format!(
            "deletion risk {} (score {}) is below CRITICAL: finalizer removed, the deletion finishes now",
            risk.map_or("unknown", |r| r.level.as_str()),
            risk.map_or(0, |r| r.score)
        ),
        Release::CooldownElapsed => format!(
            "cool-down of {:?} elapsed: finalizer removed, the deletion finishes now",
            s.cooldown
        ),
        Release::Confirmed => format!(
            "cool-down of {:?} elapsed and the deletion was confirmed ({}): finalizer removed",
            s.cooldown, s.confirmation_annotation
        ),
        Release::Observing => "the guard is in Observe mode, which holds no deletion: finalizer removed, the deletion finishes now".to_owned(),
        Release::Expired => format!(
            "COOLDOWN_EXPIRED: held for maxHold {:?}{}: finalizer removed, the deletion finishes now",
            s.max_hold,
            if s.require_confirmation {
                " without a confirmation"
            } else {
                ""
            }
        ),
    }
}
