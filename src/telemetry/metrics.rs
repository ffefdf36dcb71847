//! Prometheus metrics, shaped like kube-apiserver's (`pkg/authorization/metrics/metrics.go`,
//! `pkg/endpoints/filters/metrics.go`, `reload.go`) under the `warrant_` prefix. Histograms start
//! at 10 microseconds, since a chain decision is usually far below upstream's 5 ms first bucket.
//! One [`Metrics`] owns its registry; nothing here is global.
//!
//! This module owns the registry and the chain-wide families (attempts, duration, admission
//! requests and their duration, HTTP, reloads, audit drops). The per-authorizer families live with the code that records them
//! ([`crate::authorizer::metrics`]); they are registered here and handed to every chain build.

use crate::authorizer::Answer;
use crate::authorizer::metrics::{Families, latency_histogram};
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

pub use crate::authorizer::metrics::LATENCY_BUCKETS;

/// The OpenMetrics content type `/metrics` answers with.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
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
struct ReasonLabels {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AdmissionLabels {
    operation: &'static str,
    /// `<resource>` or `<resource>.<group>` (`deployments.apps`): the kinds the webhook
    /// configuration sends, so the set stays small.
    resource: String,
    allowed: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HashLabels {
    hash: String,
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
    attempts: Family<ResultLabels, Counter>,
    duration: Family<ResultLabels, Histogram, fn() -> Histogram>,
    http_requests: Family<CodeLabels, Counter>,
    reloads: Family<StatusLabels, Counter>,
    reload_timestamp: Family<StatusLabels, Gauge<f64, AtomicU64>>,
    config_info: Family<HashLabels, Gauge>,
    config_hash: Mutex<Option<String>>,
    reload_refusals: Family<ReasonLabels, Counter>,
    audit_dropped: Counter,
    admission_requests: Family<AdmissionLabels, Counter>,
    admission_duration: Family<AdmissionLabels, Histogram, fn() -> Histogram>,
    open_connections: Gauge,
    conditions_evaluations: Family<ResultLabels, Counter>,
    requester_annotations: Family<OutcomeLabels, Counter>,
    families: Families,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A fresh set of metrics in its own registry.
    pub fn new() -> Self {
        Self::with_extra(|_| {})
    }

    /// A fresh set of metrics, plus the families `extra` registers (a running module this one
    /// may not import registers its own: the cluster cache's).
    pub fn with_extra(extra: impl FnOnce(&mut Registry)) -> Self {
        let mut registry = Registry::default();
        extra(&mut registry);
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
        let reload_refusals = Family::<ReasonLabels, Counter>::default();
        registry.register(
            "warrant_config_reload_refusals",
            "Reloads refused by --replay-on-reload, by reason (lockout: the replay would deny a bootstrap identity; replay-error: the replay could not run)",
            reload_refusals.clone(),
        );
        let audit_dropped = Counter::default();
        registry.register(
            "warrant_audit_records_dropped",
            "Audit records dropped because the audit writer fell behind",
            audit_dropped.clone(),
        );
        let admission_requests = Family::<AdmissionLabels, Counter>::default();
        registry.register(
            "warrant_admission_requests",
            "Admission requests answered, by operation, resource and whether they were admitted",
            admission_requests.clone(),
        );
        let admission_duration =
            Family::<AdmissionLabels, Histogram, fn() -> Histogram>::new_with_constructor(
                latency_histogram,
            );
        registry.register(
            "warrant_admission_duration_seconds",
            "Time the validation ring took to answer an admission request, by operation, resource and outcome",
            admission_duration.clone(),
        );
        let open_connections = Gauge::default();
        registry.register(
            "warrant_http_open_connections",
            "Connections being served on warrant's listeners (after their TLS handshake)",
            open_connections.clone(),
        );
        let conditions_evaluations = Family::<ResultLabels, Counter>::default();
        registry.register(
            "warrant_conditions_evaluations",
            "AuthorizationConditionsReviews answered (conditions evaluated at admission), by result (allowed, denied, no-opinion)",
            conditions_evaluations.clone(),
        );
        let requester_annotations = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "warrant_buffer_requester_annotations",
            "Requester annotations written on objects held by the buffer's finalizer when their DELETE was admitted, by outcome (recorded, unchanged, failed)",
            requester_annotations.clone(),
        );
        let families = Families::register(&mut registry);
        Self {
            requester_annotations,
            conditions_evaluations,
            registry,
            families,
            attempts,
            duration,
            http_requests,
            reloads,
            reload_timestamp,
            config_info,
            config_hash: Mutex::new(None),
            reload_refusals,
            audit_dropped,
            admission_requests,
            admission_duration,
            open_connections,
        }
    }

    /// The gauge of open connections (the server raises it when a connection is accepted and
    /// lowers it when the connection closes).
    pub fn open_connections(&self) -> &Gauge {
        &self.open_connections
    }

    /// Records one chain answer's result and latency. Each entry of the chain recorded its own
    /// step while it ran (through the handles it resolved from [`Metrics::families`]).
    pub fn record_answer(&self, answer: &Answer, elapsed: Duration) {
        // As upstream's `authorization_attempts_total`: an error wins over denied/no-opinion.
        let result = match answer.decision {
            // As the API server's own filter labels a conditionally authorized request.
            _ if answer.conditional.is_some() => "conditional",
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

    /// Records one answered AuthorizationConditionsReview by its (unconditional) result.
    pub fn record_conditions_evaluation(
        &self,
        decision: crate::review::DecisionType,
        _elapsed: Duration,
    ) {
        use crate::review::DecisionType as T;
        let result = match decision {
            T::Allow => "allowed",
            T::Deny => "denied",
            _ => "no-opinion",
        };
        self.conditions_evaluations
            .get_or_create(&ResultLabels { result })
            .inc();
    }

    /// Records one answered admission request: its operation (`DELETE`, ...), its resource
    /// (`deployments.apps`, `namespaces`), whether it was admitted, and how long the validation
    /// ring took.
    pub fn record_admission(
        &self,
        operation: &'static str,
        resource: &str,
        allowed: bool,
        elapsed: Duration,
    ) {
        let labels = AdmissionLabels {
            operation,
            resource: resource.to_owned(),
            allowed: if allowed { "true" } else { "false" },
        };
        self.admission_requests.get_or_create(&labels).inc();
        self.admission_duration
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
    }

    /// Counts one attempt to record who asked for a held deletion: `recorded`, `unchanged` (the
    /// annotation already said so) or `failed`.
    pub fn record_requester_annotation(&self, outcome: &'static str) {
        self.requester_annotations
            .get_or_create(&OutcomeLabels { outcome })
            .inc();
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

    /// Counts a reload a gate refused, by reason.
    pub fn record_reload_refusal(&self, reason: &'static str) {
        self.reload_refusals
            .get_or_create(&ReasonLabels { reason })
            .inc();
    }

    /// The per-authorizer families, for [`crate::authorizer::BuildContext`].
    pub fn families(&self) -> Families {
        self.families.clone()
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
