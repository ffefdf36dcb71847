//! [`AccessReviewer`]: [`AccessReview`] answered by the API server. Each question is POSTed as
//! an `authorization.k8s.io/v1` `SubjectAccessReview` (what `kubectl auth can-i --as` asks),
//! so RBAC and every other authorizer of the API server decide. Answers are cached briefly
//! (allowed 10 s, not allowed 5 s, at most 4096 entries: a revoked role binding takes effect
//! within seconds, as kube-rbac-proxy's and the webhook authorizer's caches behave), identical
//! concurrent questions share one call, and every call is bounded by a timeout.
//!
//! The API server answers `allowed`, `denied` and `evaluationError` (upstream
//! `pkg/registry/authorization/subjectaccessreview/rest.go` fills them from the authorizer
//! chain). `allowed` is an allow; otherwise the answer is "not allowed" with the reason, except
//! that an evaluation error without a decision is an error, so the caller applies its failure
//! policy rather than treating a broken authorizer as a plain refusal.

mod metrics;
#[cfg(test)]
mod tests;

pub use metrics::{AccessReviewMetrics, AccessReviewResult};

use crate::authorizer::webhook::cache::VerdictKey;
use crate::authorizer::webhook::flight::Flights;
use crate::object::{AccessAnswer, AccessFuture, AccessQuestion, AccessReview, AccessReviewError};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};
use sha2::{Digest, Sha256};
use std::time::{Duration, Instant};

/// How long answers are kept and how long a call may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessReviewSettings {
    /// How long an allowed answer is served from the cache.
    pub allowed_ttl: Duration,
    /// How long a not-allowed answer is served from the cache.
    pub not_allowed_ttl: Duration,
    /// At most this many answers are cached.
    pub max_entries: u64,
    /// The bound of one call to the API server.
    pub timeout: Duration,
}

impl Default for AccessReviewSettings {
    fn default() -> Self {
        Self {
            allowed_ttl: Duration::from_secs(10),
            not_allowed_ttl: Duration::from_secs(5),
            max_entries: 4096,
            timeout: Duration::from_secs(2),
        }
    }
}

/// One cached answer and when it stops being served.
#[derive(Debug, Clone)]
struct Cached {
    answer: AccessAnswer,
    until: Instant,
}

/// Keeps each entry for its own TTL.
struct Lifetime;

impl moka::Expiry<VerdictKey, Cached> for Lifetime {
    fn expire_after_create(
        &self,
        _key: &VerdictKey,
        value: &Cached,
        created_at: Instant,
    ) -> Option<Duration> {
        Some(value.until.saturating_duration_since(created_at))
    }
}

/// Asks the API server, with a cache and single-flight in front.
#[derive(Clone)]
pub struct AccessReviewer {
    api: Api<SubjectAccessReview>,
    settings: AccessReviewSettings,
    cache: moka::sync::Cache<VerdictKey, Cached>,
    flights: std::sync::Arc<Flights<Result<AccessAnswer, AccessReviewError>>>,
    metrics: AccessReviewMetrics,
}

impl std::fmt::Debug for AccessReviewer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccessReviewer")
            .field("settings", &self.settings)
            .field("cached", &self.cache.entry_count())
            .finish_non_exhaustive()
    }
}

impl AccessReviewer {
    /// A reviewer over `client`, counting into `metrics`.
    pub fn new(
        client: kube::Client,
        settings: AccessReviewSettings,
        metrics: AccessReviewMetrics,
    ) -> Self {
        let cache = moka::sync::Cache::builder()
            .max_capacity(settings.max_entries)
            .expire_after(Lifetime)
            .build();
        Self {
            api: Api::all(client),
            settings,
            cache,
            flights: Default::default(),
            metrics,
        }
    }

    /// The cached answer to `question`, else the API server's.
    async fn answer(&self, question: &AccessQuestion) -> Result<AccessAnswer, AccessReviewError> {
        let key = key(question);
        if let Some(hit) = self.cache.get(&key) {
            self.metrics.record_cache_hit();
            return Ok(hit.answer);
        }
        let (outcome, _role) = self.flights.run(key, self.ask(question)).await;
        if let Ok(answer) = &outcome {
            let ttl = if answer.is_allowed() {
                self.settings.allowed_ttl
            } else {
                self.settings.not_allowed_ttl
            };
            let until = Instant::now() + ttl;
            self.cache.insert(
                key,
                Cached {
                    answer: answer.clone(),
                    until,
                },
            );
        }
        outcome
    }

    /// One call to the API server, bounded by the timeout and counted by its result.
    async fn ask(&self, question: &AccessQuestion) -> Result<AccessAnswer, AccessReviewError> {
        let review = request(question);
        let params = PostParams::default();
        let call = self.api.create(&params, &review);
        let outcome = match tokio::time::timeout(self.settings.timeout, call).await {
            Err(_) => Err(AccessReviewError::Timeout(self.settings.timeout)),
            Ok(Err(e)) => Err(AccessReviewError::Api(e.to_string())),
            Ok(Ok(answered)) => interpret(&answered),
        };
        self.metrics.record(match &outcome {
            Ok(AccessAnswer::Allowed) => AccessReviewResult::Allowed,
            Ok(AccessAnswer::NotAllowed { .. }) => AccessReviewResult::NotAllowed,
            Err(_) => AccessReviewResult::Error,
        });
        if let Err(e) = &outcome {
            tracing::warn!(user = %question.user, verb = %question.verb, resource = %question.resource, "{e}");
        }
        outcome
    }
}

impl AccessReview for AccessReviewer {
    fn review<'a>(&'a self, question: &'a AccessQuestion) -> AccessFuture<'a> {
        Box::pin(self.answer(question))
    }
}

/// The `SubjectAccessReview` that asks `question`.
pub(crate) fn request(question: &AccessQuestion) -> SubjectAccessReview {
    let set = |s: &str| (!s.is_empty()).then(|| s.to_string());
    SubjectAccessReview {
        metadata: Default::default(),
        spec: SubjectAccessReviewSpec {
            user: Some(question.user.clone()),
            uid: question.uid.clone(),
            groups: Some(question.groups.clone()),
            extra: (!question.extra.is_empty()).then(|| question.extra.clone()),
            resource_attributes: Some(ResourceAttributes {
                verb: set(&question.verb),
                group: Some(question.group.clone()),
                resource: set(&question.resource),
                subresource: set(&question.subresource),
                namespace: set(&question.namespace),
                name: set(&question.name),
                ..Default::default()
            }),
            non_resource_attributes: None,
        },
        status: None,
    }
}

/// The answer a returned review carries.
pub(crate) fn interpret(review: &SubjectAccessReview) -> Result<AccessAnswer, AccessReviewError> {
    let Some(status) = &review.status else {
        return Err(AccessReviewError::Api(
            "the API server returned the access review without a status".into(),
        ));
    };
    if status.allowed {
        return Ok(AccessAnswer::Allowed);
    }
    let error = status.evaluation_error.clone().unwrap_or_default();
    let reason = status.reason.clone().unwrap_or_default();
    if !error.is_empty() && status.denied != Some(true) && reason.is_empty() {
        return Err(AccessReviewError::Evaluation(error));
    }
    Ok(AccessAnswer::NotAllowed { reason })
}

/// The cache key: a digest of every attribute, each length-prefixed so that no two questions
/// share a key by concatenation.
pub(crate) fn key(question: &AccessQuestion) -> VerdictKey {
    let mut hash = Sha256::new();
    let mut field = |s: &str| {
        hash.update((s.len() as u64).to_be_bytes());
        hash.update(s.as_bytes());
    };
    field(&question.user);
    field(question.uid.as_deref().unwrap_or("\u{0}"));
    field(&question.groups.len().to_string());
    for group in &question.groups {
        field(group);
    }
    field(&question.extra.len().to_string());
    for (k, values) in &question.extra {
        field(k);
        field(&values.len().to_string());
        for v in values {
            field(v);
        }
    }
    for s in [
        &question.verb,
        &question.group,
        &question.resource,
        &question.subresource,
        &question.namespace,
        &question.name,
    ] {
        field(s);
    }
    VerdictKey(hash.finalize().into())
}
