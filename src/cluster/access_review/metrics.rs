//! The access reviewer's series: calls to the API server by result, and cache hits.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

/// What one call to the API server came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessReviewResult {
    /// The user may.
    Allowed,
    /// The user may not.
    NotAllowed,
    /// No answer: a timeout, a failed call or an evaluation error.
    Error,
}

impl AccessReviewResult {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            AccessReviewResult::Allowed => "allowed",
            AccessReviewResult::NotAllowed => "not_allowed",
            AccessReviewResult::Error => "error",
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: &'static str,
}

/// The reviewer's series (unregistered by default: tests and tools count into nothing).
#[derive(Debug, Clone, Default)]
pub struct AccessReviewMetrics {
    reviews: Family<ResultLabels, Counter>,
    cache_hits: Counter,
}

impl AccessReviewMetrics {
    /// The series, registered on `registry`.
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = Self::default();
        registry.register(
            "warrant_access_reviews",
            "SubjectAccessReviews warrant sent to the API server (who may approve a ticket, use a constraint), by result (allowed, not_allowed, error)",
            metrics.reviews.clone(),
        );
        registry.register(
            "warrant_access_review_cache_hits",
            "Access questions answered from the access reviewer's cache, without a call to the API server",
            metrics.cache_hits.clone(),
        );
        metrics
    }

    /// Counts one call by its result.
    pub fn record(&self, result: AccessReviewResult) {
        self.reviews
            .get_or_create(&ResultLabels {
                result: result.as_str(),
            })
            .inc();
    }

    /// Counts one cache hit.
    pub fn record_cache_hit(&self) {
        self.cache_hits.inc();
    }

    /// Calls counted with `result` (for tests).
    pub fn count(&self, result: AccessReviewResult) -> u64 {
        self.reviews
            .get_or_create(&ResultLabels {
                result: result.as_str(),
            })
            .get()
    }

    /// Cache hits counted (for tests).
    pub fn cache_hit_count(&self) -> u64 {
        self.cache_hits.get()
    }
}
