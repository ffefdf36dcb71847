//! Rate limits: token buckets per user and limit (`count` tokens, refilled evenly over
//! `period`, measured on the review's `now`), and the gate that answers `RATE_LIMITED` when a
//! bucket is empty. A `scope: Replica` bucket lives in this process ([`Buckets`], owned by the
//! guard's [`super::GuardShared`]); a `scope: Cluster` bucket in the cluster
//! ([`super::cluster_buckets`]), one or two API round trips per destructive request it counts.

use super::assessment::GuardCode;
use super::case::Case;
use super::cluster_buckets::{BucketError, BucketKey, SharedBuckets};
use super::conclusion::Finding;
use super::error::GuardError;
use crate::authorizer::Deadline;
use crate::config::model::guard::{RateLimit, RateLimitScope, RateLimitStage};
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// The most buckets kept; past it, full buckets are forgotten.
const MAX_BUCKETS: usize = 65_536;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: DateTime<Utc>,
}

/// Every bucket of one guard.
#[derive(Debug, Default)]
pub struct Buckets {
    inner: Mutex<HashMap<(usize, String), Bucket>>,
}

impl Buckets {
    /// Takes one token from the bucket of limit `index` for `user`; `false` when it is empty.
    ///
    /// A poisoned lock (a panic while it was held) does not switch limiting off: the buckets are
    /// recovered as they were left, each update being a few field writes.
    pub fn take(&self, index: usize, limit: &RateLimit, user: &str, now: DateTime<Utc>) -> bool {
        let mut map = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let rate = Refill::of(limit);
        if map.len() >= MAX_BUCKETS {
            map.retain(|_, b| rate.level(b, now) < rate.cap);
        }
        let b = map.entry((index, user.to_owned())).or_insert(Bucket {
            tokens: rate.cap,
            at: now,
        });
        b.tokens = rate.level(b, now);
        if now > b.at {
            b.at = now;
        }
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Whether the bucket of limit `index` for `user` holds a token at `now`, without taking it
    /// (and without creating the bucket: an absent one is full).
    pub(crate) fn has_token(
        &self,
        index: usize,
        limit: &RateLimit,
        user: &str,
        now: DateTime<Utc>,
    ) -> bool {
        let map = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let rate = Refill::of(limit);
        map.get(&(index, user.to_owned()))
            .is_none_or(|b| rate.level(b, now) >= 1.0)
    }
}

/// How a limit's bucket fills: `cap` tokens, refilled evenly over the period.
#[derive(Debug, Clone, Copy)]
struct Refill {
    cap: f64,
    per_sec: f64,
}

impl Refill {
    fn of(limit: &RateLimit) -> Self {
        let cap = f64::from(limit.count);
        Self {
            cap,
            per_sec: cap / limit.period.as_secs_f64().max(1e-9),
        }
    }

    /// The tokens a bucket holds at `now`.
    fn level(self, b: &Bucket, now: DateTime<Utc>) -> f64 {
        let dt = (now - b.at).num_milliseconds().max(0) as f64 / 1000.0;
        (b.tokens + dt * self.per_sec).min(self.cap)
    }
}

/// Whether this ring checks the buckets, and whether it spends a token for a request it lets
/// through. With `rateLimitStage: Authorization` the authorization ring checks and spends and
/// the validation ring leaves the buckets alone; with `Admission` the authorization ring only
/// checks (a `can-i` or a denied request costs nothing) and the validation ring checks and
/// spends for the deletes it admits, never for a dry run or a label update.
pub(super) fn stage(stage: RateLimitStage, case: &Case<'_>) -> (bool, bool) {
    match (&case.facts, stage) {
        (None, RateLimitStage::Authorization) => (true, true),
        (None, RateLimitStage::Admission) => (true, false),
        (Some(_), RateLimitStage::Authorization) => (false, false),
        // A label change is no delete: it neither waits on nor spends a delete budget.
        (Some(f), RateLimitStage::Admission) if f.tampering.is_some() => (false, false),
        (Some(f), RateLimitStage::Admission) => (true, !f.dry_run),
    }
}

/// What the gates count with: this replica's buckets, the cluster's (for `scope: Cluster`
/// limits; `None` without a cluster) and the review's deadline, which bounds every call to the
/// API server.
pub(super) struct Meter<'a> {
    /// This replica's buckets (`scope: Replica`).
    pub buckets: &'a Buckets,
    /// The cluster's buckets (`scope: Cluster`).
    pub cluster: Option<&'a SharedBuckets>,
    /// When the review must be answered.
    pub deadline: Deadline,
    /// This ring only looks and the other one spends and enforces (the authorization ring
    /// under `rateLimitStage: Admission`): without a cluster connection configured here (the
    /// authorization ring beside kube-apiserver usually has none), a `scope: Cluster` bucket is
    /// left to the validation ring instead of failing every covered request.
    pub(crate) advisory: bool,
}

/// `RATE_LIMITED` at the first limit covering the target whose bucket for the requester is
/// empty. The gate only looks: a token is spent by [`spend`], once the whole pipeline has let the
/// request through, so a denied (or, in Observe mode, would-be-denied) request never spends one.
/// A cluster bucket that cannot be read is an error (the guard's failure policy), never a pass.
pub(super) async fn gate(
    m: &Meter<'_>,
    limits: &[RateLimit],
    case: &Case<'_>,
) -> Result<Option<Finding>, GuardError> {
    let t = &case.target;
    for (i, limit) in covering(limits, t.group, t.resource) {
        let has = match limit.scope {
            RateLimitScope::Replica => m.buckets.has_token(i, limit, t.user, case.now),
            RateLimitScope::Cluster => Box::pin(in_cluster(m, i, limit, case, false)).await?,
        };
        if !has {
            return Ok(Some(limited(limit, t.user)));
        }
    }
    Ok(None)
}

/// Spends one token of every limit covering a request the guard let through. A bucket emptied
/// meanwhile by a concurrent request (of this replica, or of another one for a cluster bucket)
/// makes this one `RATE_LIMITED` after all (the tokens of the limits before it stay spent: the
/// race costs at most one token per limit).
pub(super) async fn spend(
    m: &Meter<'_>,
    limits: &[RateLimit],
    case: &Case<'_>,
) -> Result<Option<Finding>, GuardError> {
    let t = &case.target;
    for (i, limit) in covering(limits, t.group, t.resource) {
        let taken = match limit.scope {
            RateLimitScope::Replica => m.buckets.take(i, limit, t.user, case.now),
            RateLimitScope::Cluster => Box::pin(in_cluster(m, i, limit, case, true)).await?,
        };
        if !taken {
            return Ok(Some(limited(limit, t.user)));
        }
    }
    Ok(None)
}

/// Asks (or, with `take`, spends from) the cluster bucket of limit `i` for the requester,
/// within the review's deadline. A failure is logged and returned. Its callers box it: a
/// replica's buckets answer at once, and every review's future would otherwise carry this one
/// (see `DeletionGuard::conclude`).
async fn in_cluster(
    m: &Meter<'_>,
    i: usize,
    limit: &RateLimit,
    case: &Case<'_>,
    take: bool,
) -> Result<bool, GuardError> {
    let Some(shared) = m.cluster else {
        if m.advisory && !take {
            tracing::debug!(
                "cluster-scoped rate limit left to the validation ring: no cluster connection here"
            );
            return Ok(true);
        }
        return Err(failed(BucketError::NoCluster));
    };
    let key = BucketKey {
        guard: shared.guard.clone(),
        index: i,
        limit: limit.clone(),
        user: case.target.user.to_owned(),
    };
    let call = if take {
        shared.store.take(&key, case.now)
    } else {
        shared.store.has_token(&key, case.now)
    };
    // Boxed: see `TicketSource::lookup`.
    match tokio::time::timeout_at(m.deadline.0, Box::pin(call)).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(e)) => Err(failed(e)),
        Err(_) => Err(failed(BucketError::DeadlinePassed)),
    }
}

fn failed(e: BucketError) -> GuardError {
    tracing::warn!(error = %e, "cluster-scoped rate limit unavailable: the guard's failure policy applies");
    GuardError::RateLimit(e)
}

/// The limits (with their index) that count a `group`/`resource`.
fn covering<'a>(
    limits: &'a [RateLimit],
    group: &'a str,
    resource: &'a str,
) -> impl Iterator<Item = (usize, &'a RateLimit)> + 'a {
    limits
        .iter()
        .enumerate()
        .filter(move |(_, limit)| limit.kind.covers(group, resource))
}

fn limited(limit: &RateLimit, user: &str) -> Finding {
    let kind = if limit.kind.resource == "*" {
        "destructive requests".to_owned()
    } else {
        format!("{} deletions", limit.kind.resource)
    };
    Finding::new(
        GuardCode::RateLimited,
        format!(
            "rate limit of {} {kind} per {:?} for {user} exceeded",
            limit.count, limit.period
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::Buckets;
    use crate::config::model::guard::{Kind, RateLimit};
    use chrono::{DateTime, Utc};
    use std::time::Duration;

    #[track_caller]
    fn takes(buckets: &Buckets, limit: &RateLimit, now: DateTime<Utc>) -> Vec<bool> {
        (0..3)
            .map(|_| buckets.take(0, limit, "alice", now))
            .collect()
    }

    #[test]
    fn a_poisoned_lock_keeps_limiting() {
        let limit = RateLimit {
            kind: Kind {
                group: "*".into(),
                resource: "*".into(),
            },
            count: 2,
            period: Duration::from_secs(3600),
            scope: Default::default(),
        };
        let now = DateTime::parse_from_rfc3339("2026-12-02T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let buckets = Buckets::default();
        assert_eq!(takes(&buckets, &limit, now), [true, true, false]);

        let poisoned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _held = buckets.inner.lock().unwrap();
            panic!("poisoning the rate-limit lock on purpose");
        }));
        assert!(poisoned.is_err());
        assert!(buckets.inner.is_poisoned());

        // The emptied bucket stays empty, and a fresh one still runs dry.
        assert_eq!(takes(&buckets, &limit, now), [false, false, false]);
        let fresh = Buckets::default();
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _held = fresh.inner.lock().unwrap();
            panic!("poisoning the rate-limit lock on purpose");
        }));
        assert!(fresh.inner.is_poisoned());
        assert_eq!(takes(&fresh, &limit, now), [true, true, false]);
    }
}
