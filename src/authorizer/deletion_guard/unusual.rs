//! The unusual-deletion gate: each principal's destructive requests per kind are judged against
//! its own baseline (`baseline`), and a burst far above it is recorded, refused
//! (`UNUSUAL_DELETION_RATE`) or made to present a change ticket, as `unusualDeletions.action`
//! says. A `scope: Replica` baseline lives in this process ([`Baselines`], kept across reloads);
//! a `scope: Cluster` one in the cluster ([`super::cluster_baselines`]).
//!
//! What counts is a destructive act, once: `delete` and `deletecollection` (the authorization
//! ring under `rateLimitStage: Authorization`, the validation ring's admitted DELETEs under
//! `Admission`), and at admission an UPDATE that lowers or removes the protection label. Dry
//! runs and the ring that only looks judge without counting.

use super::assessment::{GuardCode, UnusualReport};
use super::baseline::{Baseline, Judgement};
use super::case::Case;
use super::cluster_baselines::{BaselineError, BaselineKey};
use super::conclusion::Finding;
use super::error::GuardError;
use super::rate::Meter;
use crate::config::model::guard::{GuardSpec, RateLimitScope, RateLimitStage};
use crate::config::model::unusual::{UnusualAction, UnusualDeletions};
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// The most baselines a replica keeps; past it, the least recently seen tenth is forgotten.
const MAX_BASELINES: usize = 65_536;

/// The baselines of one guard kept in this replica (`scope: Replica`).
#[derive(Debug, Default)]
pub struct Baselines {
    inner: Mutex<HashMap<(String, String, String), Baseline>>,
}

impl Baselines {
    /// Judges one more request of `user` on `group`/`resource` at `now`; with `record`, counts
    /// it. A poisoned lock keeps judging on the baselines as they were left.
    pub(super) fn observe(
        &self,
        s: &UnusualDeletions,
        (user, group, resource): (&str, &str, &str),
        now: DateTime<Utc>,
        record: bool,
    ) -> Judgement {
        let mut map = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (user.to_owned(), group.to_owned(), resource.to_owned());
        let Some(b) = map.get(&key).copied() else {
            let fresh = Baseline::new(s, now);
            if !record {
                return fresh.judge(s, now);
            }
            if map.len() >= MAX_BASELINES {
                forget_oldest(&mut map);
            }
            let (after, judgement) = fresh.record(s, now);
            map.insert(key, after);
            return judgement;
        };
        if !record {
            return b.judge(s, now);
        }
        let (after, judgement) = b.record(s, now);
        map.insert(key, after);
        judgement
    }

    /// How many baselines are kept.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// Forgets the least recently seen tenth of the baselines.
fn forget_oldest(map: &mut HashMap<(String, String, String), Baseline>) {
    let mut seen: Vec<DateTime<Utc>> = map.values().map(|b| b.at).collect();
    seen.sort_unstable();
    if let Some(cut) = seen.get(seen.len() / 10).copied() {
        map.retain(|_, b| b.at > cut);
    }
}

/// Whether this ring judges the case, and whether it counts it: `None` when it is no
/// destructive act of a counted kind for this ring.
fn stage(s: &UnusualDeletions, stage: RateLimitStage, case: &Case<'_>) -> Option<bool> {
    let t = &case.target;
    if !s.covers(t.group, t.resource) {
        return None;
    }
    let deletes = matches!(t.verb, "delete" | "deletecollection");
    match (&case.facts, stage) {
        (None, RateLimitStage::Authorization) => deletes.then_some(true),
        (None, RateLimitStage::Admission) => deletes.then_some(false),
        // Under `Authorization` the other ring counted the delete; a label lowered is seen here
        // only.
        (Some(f), RateLimitStage::Authorization) => f.tampering.is_some().then_some(!f.dry_run),
        (Some(f), RateLimitStage::Admission) => {
            (t.verb == "delete" || f.tampering.is_some()).then_some(!f.dry_run)
        }
    }
}

/// A burst: what the audit record shows, and the finding that stops the request when the
/// action refuses.
#[derive(Debug)]
pub(super) struct Burst {
    /// For the assessment.
    pub(super) report: UnusualReport,
    /// `UNUSUAL_DELETION_RATE`, with the numbers.
    pub(super) finding: Finding,
}

/// Judges (and, in the counting ring, counts) the case against the requester's baseline;
/// `Some` for a burst. A cluster baseline that cannot be read is the guard's error (its failure
/// policy), unless the action only observes: then it is logged and the case goes on unjudged.
pub(super) async fn gate(
    m: &Meter<'_>,
    spec: &GuardSpec,
    replica: &Baselines,
    case: &Case<'_>,
) -> Result<Option<Burst>, GuardError> {
    let Some(s) = &spec.unusual_deletions else {
        return Ok(None);
    };
    let Some(record) = stage(s, spec.rate_limit_stage, case) else {
        return Ok(None);
    };
    let t = &case.target;
    let judgement = match s.scope {
        RateLimitScope::Replica => {
            replica.observe(s, (t.user, t.group, t.resource), case.now, record)
        }
        // Boxed: a replica's baseline answers at once, and every review's future would
        // otherwise carry this call's (see `DeletionGuard::conclude`).
        RateLimitScope::Cluster => match Box::pin(in_cluster(m, s, case, record)).await {
            Ok(Some(j)) => j,
            Ok(None) => return Ok(None),
            Err(e) if s.action == UnusualAction::Observe => {
                tracing::warn!(error = %e, "unusual-deletion baseline unavailable: the request is not judged (action Observe)");
                return Ok(None);
            }
            Err(e) => {
                tracing::warn!(error = %e, "unusual-deletion baseline unavailable: the guard's failure policy applies");
                return Err(GuardError::Baseline(e));
            }
        },
    };
    if !judgement.burst {
        return Ok(None);
    }
    let report = UnusualReport::new(s, &judgement);
    tracing::info!(
        user = t.user,
        resource = t.resource,
        group = t.group,
        in_window = report.in_window,
        baseline_per_hour = report.baseline_per_hour,
        action = s.action.as_str(),
        "unusual deletion rate"
    );
    Ok(Some(Burst {
        finding: finding(spec, s, &judgement, case),
        report,
    }))
}

/// Asks the cluster's baseline of the case, within the review's deadline; `None` when the ring
/// only looks and has no cluster connection (the validation ring counts and judges).
async fn in_cluster(
    m: &Meter<'_>,
    s: &UnusualDeletions,
    case: &Case<'_>,
    record: bool,
) -> Result<Option<Judgement>, BaselineError> {
    let store = m.cluster.and_then(|c| c.store.baselines().map(|b| (c, b)));
    let Some((shared, store)) = store else {
        if m.advisory && !record {
            return Ok(None);
        }
        return Err(BaselineError::NoCluster);
    };
    let t = &case.target;
    let key = BaselineKey {
        guard: shared.guard.clone(),
        user: t.user.to_owned(),
        group: t.group.to_owned(),
        resource: t.resource.to_owned(),
    };
    // Boxed: see `TicketSource::lookup`.
    let observe = Box::pin(store.observe(&key, s, case.now, record));
    match tokio::time::timeout_at(m.deadline.0, observe).await {
        Ok(answer) => answer.map(Some),
        Err(_) => Err(BaselineError::DeadlinePassed),
    }
}

/// `UNUSUAL_DELETION_RATE`, with the numbers, and what to do when a ticket would let it through.
fn finding(spec: &GuardSpec, s: &UnusualDeletions, j: &Judgement, case: &Case<'_>) -> Finding {
    let t = &case.target;
    let kind = if t.group.is_empty() {
        t.resource.to_owned()
    } else {
        format!("{}.{}", t.resource, t.group)
    };
    let mut message = format!(
        "unusual deletion rate: {:.0} {kind} deletions by {} in {:?}, above {}x its usual {:.1}/h (at most {:.1} per window)",
        j.in_window,
        t.user,
        s.window,
        s.factor,
        j.baseline_per_hour.max(f64::from(s.floor_per_hour)),
        j.threshold
    );
    if s.action == UnusualAction::RequireTicket {
        message = format!("{message}: {}", super::tickets::ask(spec, case));
    }
    Finding::new(GuardCode::UnusualDeletionRate, message)
}
