//! Prometheus metrics, shaped like kube-apiserver's (`pkg/authorization/metrics/metrics.go`,
//! `pkg/endpoints/filters/metrics.go`, `reload.go`) under the `warrant_` prefix. Histograms start
//! at 10 microseconds, since a chain decision is usually far below upstream's 5 ms first bucket.
//! One [`Metrics`] owns its registry; nothing here is global.

use crate::authorizer::{Answer, StepOutcome};
use crate::config::FailurePolicy;
use crate::decision::Decision;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

/// Latency buckets in seconds: 10 µs to 10 s.
pub const LATENCY_BUCKETS: [f64; 19] = [
    0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
    0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The OpenMetrics content type `/metrics` answers with.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecisionLabels {
    r#type: &'static str,
    name: String,
    decision: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CodeLabels {
    code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabels {
    status: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HashLabels {
    hash: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FailureLabels {
    r#type: &'static str,
    name: String,
    policy: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WebhookLabels {
    name: String,
    result: &'static str,
}

/// The `warrant_webhook_*` families, shaped like upstream's `apiserver_authorization_webhook_*`
/// (`plugin/pkg/authorizer/webhook/metrics/metrics.go`) plus a cache family. Cloning shares the
/// families; a downstream webhook authorizer holds one clone.
#[derive(Clone, Debug)]
pub struct WebhookMetrics {
    evaluations: Family<WebhookLabels, Counter>,
    duration: Family<WebhookLabels, Histogram, fn() -> Histogram>,
    fail_open: Family<WebhookLabels, Counter>,
    cache: Family<WebhookLabels, Counter>,
}

impl Default for WebhookMetrics {
    /// Families registered nowhere (offline tools, tests).
    fn default() -> Self {
        Self {
            evaluations: Family::default(),
            duration: Family::new_with_constructor(latency_histogram),
            fail_open: Family::default(),
            cache: Family::default(),
        }
    }
}

impl WebhookMetrics {
    fn register(registry: &mut Registry) -> Self {
        let m = Self::default();
        registry.register(
            "warrant_webhook_evaluations",
            "Calls to downstream webhooks, one per attempt, by result (success, error, timeout, canceled)",
            m.evaluations.clone(),
        );
        registry.register(
            "warrant_webhook_duration_seconds",
            "Duration of each downstream webhook attempt, by result",
            m.duration.clone(),
        );
        registry.register(
            "warrant_webhook_evaluations_fail_open",
            "NoOpinion answers caused by a downstream webhook timeout or error",
            m.fail_open.clone(),
        );
        registry.register(
            "warrant_webhook_cache_requests",
            "Downstream webhook verdict lookups, by result (hit, miss, coalesced, stale)",
            m.cache.clone(),
        );
        m
    }

    fn labels(name: &str, result: &'static str) -> WebhookLabels {
        WebhookLabels {
            name: name.to_owned(),
            result,
        }
    }

    /// Records one attempt against downstream webhook `name`.
    pub fn record_attempt(&self, name: &str, result: &'static str, elapsed: Duration) {
        let labels = Self::labels(name, result);
        self.evaluations.get_or_create(&labels).inc();
        self.duration
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
    }

    /// Records that a failure of webhook `name` yielded NoOpinion.
    pub fn record_fail_open(&self, name: &str, result: &'static str) {
        self.fail_open
            .get_or_create(&Self::labels(name, result))
            .inc();
    }

    /// Records one cache lookup of webhook `name`.
    pub fn record_cache(&self, name: &str, result: &'static str) {
        self.cache.get_or_create(&Self::labels(name, result)).inc();
    }
}

/// Outcome of one configuration (or certificate) reload attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReloadStatus {
    /// A new configuration was swapped in.
    Success,
    /// The new content was refused; the old configuration keeps serving.
    Failure,
}

impl ReloadStatus {
    fn as_str(self) -> &'static str {
        match self {
            ReloadStatus::Success => "success",
            ReloadStatus::Failure => "failure",
        }
    }
}

/// Every metric warrant exports, and the registry that encodes them.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    decisions: Family<DecisionLabels, Counter>,
    failures: Family<FailureLabels, Counter>,
    attempts: Family<ResultLabels, Counter>,
    duration: Family<ResultLabels, Histogram, fn() -> Histogram>,
    http_requests: Family<CodeLabels, Counter>,
    reloads: Family<StatusLabels, Counter>,
    reload_timestamp: Family<StatusLabels, Gauge<f64, AtomicU64>>,
    config_info: Family<HashLabels, Gauge>,
    config_hash: Mutex<Option<String>>,
    audit_dropped: Counter,
    cel: super::cel_metrics::CelMetrics,
    guard: super::guard_metrics::GuardMetrics,
    webhook: WebhookMetrics,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A fresh set of metrics in its own registry.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let decisions = Family::<DecisionLabels, Counter>::default();
        registry.register(
            "warrant_authorization_decisions",
            "Final Allow or Deny decisions per configured authorizer (NoOpinion is not counted, as upstream)",
            decisions.clone(),
        );
        let failures = Family::<FailureLabels, Counter>::default();
        registry.register(
            "warrant_authorizer_failures",
            "Authorizer errors, by the failure policy that turned them into an answer",
            failures.clone(),
        );
        let attempts = Family::<ResultLabels, Counter>::default();
        registry.register(
            "warrant_authorization_attempts",
            "Reviews answered by the chain, by result (allowed, denied, no-opinion, error)",
            attempts.clone(),
        );
        let duration = Family::<ResultLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            latency_histogram,
        );
        registry.register(
            "warrant_authorization_duration_seconds",
            "Time the chain took to answer a review, by result",
            duration.clone(),
        );
        let http_requests = Family::<CodeLabels, Counter>::default();
        registry.register(
            "warrant_http_requests",
            "HTTP requests served, by status code",
            http_requests.clone(),
        );
        let reloads = Family::<StatusLabels, Counter>::default();
        registry.register(
            "warrant_config_reloads",
            "Configuration reload outcomes",
            reloads.clone(),
        );
        let reload_timestamp = Family::<StatusLabels, Gauge<f64, AtomicU64>>::default();
        registry.register(
            "warrant_config_last_reload_timestamp_seconds",
            "Unix time of the last configuration reload, by outcome",
            reload_timestamp.clone(),
        );
        let config_info = Family::<HashLabels, Gauge>::default();
        registry.register(
            "warrant_config_info",
            "The configuration being served: value 1, labelled with the sha256 of its bytes",
            config_info.clone(),
        );
        let audit_dropped = Counter::default();
        registry.register(
            "warrant_audit_records_dropped",
            "Audit records dropped because the audit writer fell behind",
            audit_dropped.clone(),
        );
        let cel = super::cel_metrics::CelMetrics::register(&mut registry);
        let guard = super::guard_metrics::GuardMetrics::register(&mut registry);
        let webhook = WebhookMetrics::register(&mut registry);
        Self {
            cel,
            guard,
            registry,
            webhook,
            decisions,
            failures,
            attempts,
            duration,
            http_requests,
            reloads,
            reload_timestamp,
            config_info,
            config_hash: Mutex::new(None),
            audit_dropped,
        }
    }

    /// Records one chain answer: per-authorizer decisions and failures, and the chain result.
    pub fn record_answer(&self, answer: &Answer, elapsed: Duration) {
        for step in &answer.trace {
            self.cel.record(step);
            self.guard.record(step);
            let decision = match step.decision() {
                Decision::Allow => Some("allowed"),
                Decision::Deny => Some("denied"),
                Decision::NoOpinion => None,
            };
            if let Some(decision) = decision {
                self.decisions
                    .get_or_create(&DecisionLabels {
                        r#type: step.authorizer_type.as_str(),
                        name: step.authorizer.to_string(),
                        decision,
                    })
                    .inc();
            }
            if let StepOutcome::Failed { policy, .. } = &step.outcome {
                self.failures
                    .get_or_create(&FailureLabels {
                        r#type: step.authorizer_type.as_str(),
                        name: step.authorizer.to_string(),
                        policy: match policy {
                            FailurePolicy::Deny => "Deny",
                            FailurePolicy::NoOpinion => "NoOpinion",
                        },
                    })
                    .inc();
            }
        }
        // As upstream's `authorization_attempts_total`: an error wins over denied/no-opinion.
        let result = match answer.decision {
            Decision::Allow => "allowed",
            _ if !answer.errors.is_empty() => "error",
            Decision::Deny => "denied",
            Decision::NoOpinion => "no-opinion",
        };
        let labels = ResultLabels { result };
        self.attempts.get_or_create(&labels).inc();
        self.duration
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
    }

    /// Counts one HTTP response.
    pub fn record_http(&self, code: u16) {
        self.http_requests
            .get_or_create(&CodeLabels {
                code: code.to_string(),
            })
            .inc();
    }

    /// Records a reload outcome at `unix_seconds`; on success also the served hash.
    pub fn record_reload(&self, status: ReloadStatus, unix_seconds: f64, hash: Option<&str>) {
        let labels = StatusLabels {
            status: status.as_str(),
        };
        self.reloads.get_or_create(&labels).inc();
        self.reload_timestamp
            .get_or_create(&labels)
            .set(unix_seconds);
        if let Some(hash) = hash {
            let mut current = self.config_hash.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(old) = current.take() {
                self.config_info.remove(&HashLabels { hash: old });
            }
            self.config_info
                .get_or_create(&HashLabels {
                    hash: hash.to_owned(),
                })
                .set(1);
            *current = Some(hash.to_owned());
        }
    }

    /// The downstream webhook families, for [`crate::authorizer::BuildContext`].
    pub fn webhook(&self) -> WebhookMetrics {
        self.webhook.clone()
    }

    /// Counts one dropped audit record.
    pub fn record_audit_dropped(&self) {
        self.audit_dropped.inc();
    }

    /// The OpenMetrics text of every metric.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
