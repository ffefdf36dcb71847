//! One downstream webhook's series of the `warrant_webhook_*` families, resolved when its core is
//! built: an attempt, a cache lookup or a fail-open records without building labels.

use crate::authorizer::metrics::{ByResult, Families, WebhookLabels};
use crate::names::AuthorizerName;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::histogram::Histogram;
use std::time::Duration;

/// Attempt results, as upstream's webhook metrics spell them.
const ATTEMPT_RESULTS: [&str; 4] = ["success", "error", "timeout", "canceled"];

/// Cache lookup results.
const CACHE_RESULTS: [&str; 4] = ["hit", "miss", "coalesced", "stale"];

/// The series of one downstream webhook.
#[derive(Debug)]
pub(crate) struct WebhookMetrics {
    evaluations: ByResult<WebhookLabels, Counter>,
    duration: ByResult<WebhookLabels, Histogram>,
    fail_open: ByResult<WebhookLabels, Counter>,
    cache: ByResult<WebhookLabels, Counter>,
}

impl WebhookMetrics {
    /// The series of webhook `name` in `families`.
    pub fn new(families: &Families, name: &AuthorizerName) -> Self {
        let labels = |name: &AuthorizerName| {
            let name = name.to_string();
            move |result| WebhookLabels {
                name: name.clone(),
                result,
            }
        };
        Self {
            evaluations: ByResult::new(
                &families.webhook_evaluations,
                &ATTEMPT_RESULTS,
                labels(name),
            ),
            duration: ByResult::new(&families.webhook_duration, &ATTEMPT_RESULTS, labels(name)),
            fail_open: ByResult::new(&families.webhook_fail_open, &ATTEMPT_RESULTS, labels(name)),
            cache: ByResult::new(&families.webhook_cache, &CACHE_RESULTS, labels(name)),
        }
    }

    /// Records one attempt.
    pub(crate) fn record_attempt(&self, result: &'static str, elapsed: Duration) {
        self.evaluations.with(result, |c| {
            c.inc();
        });
        self.duration
            .with(result, |h| h.observe(elapsed.as_secs_f64()));
    }

    /// Records that a failure yielded NoOpinion.
    pub(crate) fn record_fail_open(&self, result: &'static str) {
        self.fail_open.with(result, |c| {
            c.inc();
        });
    }

    /// Records one cache lookup.
    pub(crate) fn record_cache(&self, result: &'static str) {
        self.cache.with(result, |c| {
            c.inc();
        });
    }
}
