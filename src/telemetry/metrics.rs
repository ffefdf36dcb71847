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
use prometheus_client::registry::{Metric, Registry};
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

pub use crate::authorizer::metrics::LATENCY_BUCKETS;

/// The OpenMetrics content type `/metrics` answers with.
pub(crate) const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

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
        Self::in_registry(Registry::default())
    }

    /// The chain-wide families and the per-authorizer ones, registered on `registry`, which
    /// already holds what other modules registered on it (the cluster cache's, the buffer's,
    /// leader election's, the deletion defense's): one registry, encoded by [`Metrics::encode`].
    pub fn in_registry(mut registry: Registry) -> Self {
        let r = &mut registry;
        Self {
            attempts: registered(
                r,
                "warrant_authorization_attempts",
                "Reviews answered by the chain, by result (allowed, denied, no-opinion, error)",
            ),
            duration: registered_with(
                r,
                "warrant_authorization_duration_seconds",
                "Time the chain took to answer a review, by result",
                Family::new_with_constructor(latency_histogram),
            ),
            http_requests: registered(
                r,
                "warrant_http_requests",
                "HTTP requests served, by status code",
            ),
            reloads: registered(r, "warrant_config_reloads", "Configuration reload outcomes"),
            reload_timestamp: registered(
                r,
                "warrant_config_last_reload_timestamp_seconds",
                "Unix time of the last configuration reload, by outcome",
            ),
            config_info: registered(
                r,
                "warrant_config_info",
                "The configuration being served: value 1, labelled with the sha256 of its bytes",
            ),
            config_hash: Mutex::new(None),
            reload_refusals: registered(
                r,
                "warrant_config_reload_refusals",
                "Reloads refused by --replay-on-reload, by reason (lockout: the replay would deny a bootstrap identity; replay-error: the replay could not run)",
            ),
            audit_dropped: registered(
                r,
                "warrant_audit_records_dropped",
                "Audit records dropped because the audit writer fell behind",
            ),
            admission_requests: registered(
                r,
                "warrant_admission_requests",
                "Admission requests answered, by operation, resource and whether they were admitted",
            ),
            admission_duration: registered_with(
                r,
                "warrant_admission_duration_seconds",
                "Time the validation ring took to answer an admission request, by operation, resource and outcome",
                Family::new_with_constructor(latency_histogram),
            ),
            open_connections: registered(
                r,
                "warrant_http_open_connections",
                "Connections being served on warrant's listeners (after their TLS handshake)",
            ),
            conditions_evaluations: registered(
                r,
                "warrant_conditions_evaluations",
                "AuthorizationConditionsReviews answered (conditions evaluated at admission), by result (allowed, denied, no-opinion)",
            ),
            families: Families::register(r),
            registry,
        }
    }

    /// The gauge of open connections (the server raises it when a connection is accepted and
    /// lowers it when the connection closes).
    pub(crate) fn open_connections(&self) -> &Gauge {
        &self.open_connections
    }

    /// Records one chain answer's result and latency. Each entry of the chain recorded its own
    /// step while it ran (through the handles it resolved from [`Metrics::families`]).
    pub(crate) fn record_answer(&self, answer: &Answer, elapsed: Duration) {
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
    pub(crate) fn record_conditions_evaluation(
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

/// A fresh metric of its default value, registered on `registry` under `name`.
fn registered<M>(registry: &mut Registry, name: &str, help: &str) -> M
where
    M: Metric + Clone + Default,
{
    registered_with(registry, name, help, M::default())
}

/// `metric`, registered on `registry` under `name`.
fn registered_with<M: Metric + Clone>(
    registry: &mut Registry,
    name: &str,
    help: &str,
    metric: M,
) -> M {
    registry.register(name, help, metric.clone());
    metric
}
