//! [`LeaseBuckets`]: the buckets of `scope: Cluster` rate limits, one
//! `coordination.k8s.io/v1` Lease per (guard, limit, user) in warrant's namespace. The bucket's
//! content (tokens and when they were counted) is kept in two annotations; a take reads the
//! Lease and writes it back at the `resourceVersion` read, so of two replicas racing for the
//! last token one gets a 409 Conflict, reads again and finds the bucket empty. Conflicts are
//! retried a bounded number of times. Cost: a check is one GET; a take is a GET and a PUT (or a
//! POST for a bucket's first token), more under contention.

use crate::authorizer::BoxFuture;
use crate::authorizer::deletion_guard::{
    BucketError, BucketKey, BucketLevel, ClusterBaselines, ClusterBuckets,
};
use chrono::{DateTime, Utc};
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, ObjectMeta, PostParams};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// The annotation holding the bucket's tokens (a decimal number).
pub(crate) const TOKENS_ANNOTATION: &str = "warrant.dev/rate-limit-tokens";
/// The annotation holding when the tokens were counted (RFC 3339).
pub(crate) const AT_ANNOTATION: &str = "warrant.dev/rate-limit-at";
/// The annotation naming the user the bucket counts (for operators; not read back).
pub(crate) const USER_ANNOTATION: &str = "warrant.dev/rate-limit-user";
/// Attempts of one take before conflicts make it fail.
pub(crate) const MAX_ATTEMPTS: u32 = 5;

/// Buckets kept as Leases in one namespace.
#[derive(Debug, Clone)]
pub(crate) struct LeaseBuckets {
    pub(super) api: Api<Lease>,
}

impl LeaseBuckets {
    /// Buckets in `namespace` through `client`.
    pub fn new(client: kube::Client, namespace: &str) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
        }
    }

    async fn read(&self, name: &str) -> Result<Option<(Lease, BucketLevel)>, BucketError> {
        let lease = self
            .api
            .get_opt(name)
            .await
            .map_err(|e| api_error(name, &e))?;
        lease
            .map(|l| decode(name, &l).map(|level| (l, level)))
            .transpose()
    }

    /// One attempt of a take: `Ok(Some(taken))`, or `Ok(None)` after a lost race.
    async fn try_take(
        &self,
        key: &BucketKey,
        name: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<bool>, BucketError> {
        let (lease, level) = match self.read(name).await? {
            Some(found) => found,
            None => (new_lease(key, name), BucketLevel::full(&key.limit, now)),
        };
        let Some(after) = level.take(&key.limit, now) else {
            return Ok(Some(false));
        };
        let lease = with_level(lease, after);
        let written = if lease.metadata.resource_version.is_some() {
            self.api.replace(name, &PostParams::default(), &lease).await
        } else {
            self.api.create(&PostParams::default(), &lease).await
        };
        match written {
            Ok(_) => Ok(Some(true)),
            Err(kube::Error::Api(s)) if s.is_conflict() || s.is_already_exists() => Ok(None),
            Err(e) => Err(api_error(name, &e)),
        }
    }
}

impl ClusterBuckets for LeaseBuckets {
    fn has_token<'a>(
        &'a self,
        key: &'a BucketKey,
        now: DateTime<Utc>,
    ) -> BoxFuture<'a, Result<bool, BucketError>> {
        Box::pin(async move {
            let name = lease_name(key);
            Ok(match self.read(&name).await? {
                Some((_, level)) => level.at(&key.limit, now) >= 1.0,
                None => key.limit.count >= 1,
            })
        })
    }

    fn baselines(&self) -> Option<&dyn ClusterBaselines> {
        Some(self)
    }

    fn take<'a>(
        &'a self,
        key: &'a BucketKey,
        now: DateTime<Utc>,
    ) -> BoxFuture<'a, Result<bool, BucketError>> {
        Box::pin(async move {
            let name = lease_name(key);
            for _ in 0..MAX_ATTEMPTS {
                if let Some(taken) = self.try_take(key, &name, now).await? {
                    return Ok(taken);
                }
            }
            Err(BucketError::Conflicts {
                name,
                attempts: MAX_ATTEMPTS,
            })
        })
    }
}

/// `warrant-rl-` and 40 hex digits of a SHA-256 over the guard, the limit (index and settings,
/// so that a changed limit starts a fresh bucket) and the user: a valid object name whatever
/// the user name is.
pub(crate) fn lease_name(key: &BucketKey) -> String {
    let l = &key.limit;
    hashed_name(
        "warrant-rl-",
        &[
            key.guard.as_str(),
            &key.index.to_string(),
            &l.kind.group,
            &l.kind.resource,
            &l.count.to_string(),
            &l.period.as_millis().to_string(),
            &key.user,
        ],
    )
}

fn new_lease(key: &BucketKey, name: &str) -> Lease {
    let labels = BTreeMap::from([
        (
            "app.kubernetes.io/managed-by".to_owned(),
            "warrant".to_owned(),
        ),
        ("warrant.dev/rate-limit".to_owned(), "bucket".to_owned()),
    ]);
    let annotations = BTreeMap::from([(USER_ANNOTATION.to_owned(), key.user.clone())]);
    Lease {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some(labels),
            annotations: Some(annotations),
            ..ObjectMeta::default()
        },
        spec: None,
    }
}

fn with_level(mut lease: Lease, level: BucketLevel) -> Lease {
    let annotations = lease.metadata.annotations.get_or_insert_with(BTreeMap::new);
    annotations.insert(TOKENS_ANNOTATION.to_owned(), format!("{:.6}", level.tokens));
    annotations.insert(
        AT_ANNOTATION.to_owned(),
        level
            .at
            .to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
    );
    lease
}

/// The bucket a Lease holds; an annotation missing or unreadable is an error, never a full
/// bucket.
fn decode(name: &str, lease: &Lease) -> Result<BucketLevel, BucketError> {
    let corrupt = |message: String| BucketError::Corrupt {
        name: name.to_owned(),
        message,
    };
    let annotations = lease.metadata.annotations.as_ref();
    let get = |key: &str| annotations.and_then(|a| a.get(key));
    let tokens = get(TOKENS_ANNOTATION)
        .ok_or_else(|| corrupt(format!("no {TOKENS_ANNOTATION} annotation")))?;
    let at = get(AT_ANNOTATION).ok_or_else(|| corrupt(format!("no {AT_ANNOTATION} annotation")))?;
    let tokens: f64 = tokens
        .parse()
        .ok()
        .filter(|t: &f64| t.is_finite() && *t >= 0.0)
        .ok_or_else(|| {
            corrupt(format!(
                "{TOKENS_ANNOTATION}: {tokens:?} is not a token count"
            ))
        })?;
    let at = DateTime::parse_from_rfc3339(at)
        .map_err(|e| corrupt(format!("{AT_ANNOTATION}: {at:?}: {e}")))?
        .with_timezone(&Utc);
    Ok(BucketLevel { tokens, at })
}

/// The API server's own message when it answered (not the whole Status), else the error.
fn api_error(name: &str, e: &kube::Error) -> BucketError {
    BucketError::Api {
        name: name.to_owned(),
        message: api_message(e),
    }
}

/// The API server's own message and code when it answered, else the error.
pub(super) fn api_message(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => format!("{} ({})", s.message, s.code),
        other => other.to_string(),
    }
}

/// `prefix` and 40 hex digits of a SHA-256 over `parts` (each ended by a NUL): a valid object
/// name whatever the parts hold.
pub(super) fn hashed_name(prefix: &str, parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for part in parts {
        h.update(part.as_bytes());
        h.update([0]);
    }
    let hex: String = h.finalize()[..20]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("{prefix}{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::model::guard::{Kind, RateLimit, RateLimitScope};
    use std::time::Duration;

    fn key(user: &str, count: u32) -> BucketKey {
        BucketKey {
            guard: "guard".into(),
            index: 0,
            limit: RateLimit {
                kind: Kind {
                    group: "".into(),
                    resource: "namespaces".into(),
                },
                count,
                period: Duration::from_secs(3600),
                scope: RateLimitScope::Cluster,
            },
            user: user.into(),
        }
    }

    #[test]
    fn names_are_valid_and_distinct() {
        let a = lease_name(&key("system:serviceaccount:x:y", 3));
        assert!(a.starts_with("warrant-rl-") && a.len() == 51);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        );
        assert_ne!(a, lease_name(&key("alice", 3)));
        assert_ne!(a, lease_name(&key("system:serviceaccount:x:y", 4)));
    }

    #[test]
    fn a_level_survives_its_annotations_and_damage_is_an_error() {
        let now = Utc::now();
        let level = BucketLevel {
            tokens: 1.5,
            at: now,
        };
        let lease = with_level(new_lease(&key("alice", 3), "n"), level);
        let back = decode("n", &lease).unwrap();
        assert!((back.tokens - 1.5).abs() < 1e-6);
        assert!((back.at - now).num_microseconds().unwrap().abs() <= 1);
        assert!(matches!(
            decode("n", &new_lease(&key("alice", 3), "n")),
            Err(BucketError::Corrupt { .. })
        ));
        let mut bad = lease.clone();
        bad.metadata
            .annotations
            .as_mut()
            .unwrap()
            .insert(TOKENS_ANNOTATION.into(), "NaN".into());
        assert!(matches!(
            decode("n", &bad),
            Err(BucketError::Corrupt { .. })
        ));
    }
}
