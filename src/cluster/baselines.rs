//! The baselines of `unusualDeletions.scope: Cluster`, kept by the same store as the
//! cluster-scoped rate-limit buckets ([`LeaseBuckets`]): one `coordination.k8s.io/v1` Lease per
//! (guard, principal, kind) in warrant's namespace, the counts as JSON in one annotation. A
//! counted request reads the Lease and writes it back at the `resourceVersion` read, so two
//! replicas counting at once never lose a request (the loser of the race reads again); a judged
//! one only reads. Cost: a GET per judged request, a GET and a PUT (a POST the first time) per
//! counted one.

use super::buckets::{LeaseBuckets, MAX_ATTEMPTS, api_message, hashed_name};
use crate::authorizer::BoxFuture;
use crate::authorizer::deletion_guard::{
    Baseline, BaselineError, BaselineKey, ClusterBaselines, Judgement,
};
use crate::config::model::unusual::UnusualDeletions;
use chrono::{DateTime, Utc};
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{ObjectMeta, PostParams};
use std::collections::BTreeMap;

/// The annotation holding the baseline (JSON: `long`, `at`, `windowStart`, `current`,
/// `previous`).
pub(crate) const BASELINE_ANNOTATION: &str = "warrant.dev/deletion-baseline";
/// The annotation naming the principal and kind (for operators; not read back).
pub(crate) const SUBJECT_ANNOTATION: &str = "warrant.dev/deletion-baseline-of";

/// `warrant-ud-` and 40 hex digits of a SHA-256 over the guard, the principal and the kind.
pub(crate) fn lease_name(key: &BaselineKey) -> String {
    hashed_name(
        "warrant-ud-",
        &[&key.guard, &key.user, &key.group, &key.resource],
    )
}

impl ClusterBaselines for LeaseBuckets {
    fn observe<'a>(
        &'a self,
        key: &'a BaselineKey,
        settings: &'a UnusualDeletions,
        now: DateTime<Utc>,
        record: bool,
    ) -> BoxFuture<'a, Result<Judgement, BaselineError>> {
        Box::pin(async move {
            let name = lease_name(key);
            for _ in 0..MAX_ATTEMPTS {
                let found = self
                    .api
                    .get_opt(&name)
                    .await
                    .map_err(|e| api_error(&name, &e))?;
                let (lease, baseline) = match found {
                    Some(l) => {
                        let b = decode(&name, &l)?;
                        (l, b)
                    }
                    None => (new_lease(key, &name), Baseline::new(settings, now)),
                };
                if !record {
                    return Ok(baseline.judge(settings, now));
                }
                let (after, judgement) = baseline.record(settings, now);
                let lease = with_baseline(lease, &after);
                let written = if lease.metadata.resource_version.is_some() {
                    self.api
                        .replace(&name, &PostParams::default(), &lease)
                        .await
                } else {
                    self.api.create(&PostParams::default(), &lease).await
                };
                match written {
                    Ok(_) => return Ok(judgement),
                    Err(kube::Error::Api(s)) if s.is_conflict() || s.is_already_exists() => {}
                    Err(e) => return Err(api_error(&name, &e)),
                }
            }
            Err(BaselineError::Conflicts {
                name,
                attempts: MAX_ATTEMPTS,
            })
        })
    }
}

fn new_lease(key: &BaselineKey, name: &str) -> Lease {
    let labels = BTreeMap::from([
        (
            "app.kubernetes.io/managed-by".to_owned(),
            "warrant".to_owned(),
        ),
        (
            "warrant.dev/deletion-baseline".to_owned(),
            "principal".to_owned(),
        ),
    ]);
    let subject = if key.group.is_empty() {
        format!("{} on {}", key.user, key.resource)
    } else {
        format!("{} on {}.{}", key.user, key.resource, key.group)
    };
    let annotations = BTreeMap::from([(SUBJECT_ANNOTATION.to_owned(), subject)]);
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

fn with_baseline(mut lease: Lease, b: &Baseline) -> Lease {
    // A baseline is numbers and times: serializing it cannot fail.
    let json = serde_json::to_string(b).unwrap_or_default();
    lease
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(BASELINE_ANNOTATION.to_owned(), json);
    lease
}

/// The baseline a Lease holds; an annotation missing, unreadable or insane is an error, never
/// a fresh baseline (that would forget a burst in progress).
fn decode(name: &str, lease: &Lease) -> Result<Baseline, BaselineError> {
    let corrupt = |message: String| BaselineError::Corrupt {
        name: name.to_owned(),
        message,
    };
    let raw = lease
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(BASELINE_ANNOTATION))
        .ok_or_else(|| corrupt(format!("no {BASELINE_ANNOTATION} annotation")))?;
    let b: Baseline =
        serde_json::from_str(raw).map_err(|e| corrupt(format!("{BASELINE_ANNOTATION}: {e}")))?;
    if !b.is_sane() {
        return Err(corrupt(format!(
            "{BASELINE_ANNOTATION}: counts out of range"
        )));
    }
    Ok(b)
}

fn api_error(name: &str, e: &kube::Error) -> BaselineError {
    BaselineError::Api {
        name: name.to_owned(),
        message: api_message(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::model::unusual::UnusualAction;

    fn key(user: &str) -> BaselineKey {
        BaselineKey {
            guard: "guard".into(),
            user: user.into(),
            group: "".into(),
            resource: "configmaps".into(),
        }
    }

    #[test]
    fn names_are_valid_and_distinct_per_principal_and_kind() {
        let a = lease_name(&key("system:serviceaccount:ci:deployer"));
        assert!(a.starts_with("warrant-ud-") && a.len() == 51, "{a}");
        assert_ne!(a, lease_name(&key("alice")));
        let mut other = key("system:serviceaccount:ci:deployer");
        other.resource = "secrets".into();
        assert_ne!(a, lease_name(&other));
    }

    #[test]
    fn a_baseline_survives_its_annotation_and_damage_is_an_error() {
        let s = UnusualDeletions::with_action(UnusualAction::Deny);
        let now = Utc::now();
        let (b, _) = Baseline::new(&s, now).record(&s, now);
        let lease = with_baseline(new_lease(&key("alice"), "n"), &b);
        let back = decode("n", &lease).unwrap();
        assert!((back.long - b.long).abs() < 1e-9, "{back:?} {b:?}");
        assert_eq!(
            (back.at, back.window_start, back.current, back.previous),
            (b.at, b.window_start, b.current, b.previous)
        );
        assert!(matches!(
            decode("n", &new_lease(&key("alice"), "n")),
            Err(BaselineError::Corrupt { .. })
        ));
        let mut bad = lease.clone();
        bad.metadata.annotations.as_mut().unwrap().insert(
            BASELINE_ANNOTATION.into(),
            r#"{"long":-1,"at":"2026-12-04T10:00:00Z","windowStart":"2026-12-04T10:00:00Z","current":0,"previous":0}"#.into(),
        );
        assert!(matches!(
            decode("n", &bad),
            Err(BaselineError::Corrupt { .. })
        ));
    }
}
