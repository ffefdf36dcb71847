//! The traffic a deletion takes down, as the risk report shows it: by default the fixed estimate
//! (`riskWeights.qpsPerPod` per running pod an Ingress reaches), or, with `liveTraffic`, the
//! target's real request rate from a Prometheus server (the kind's PromQL template rendered
//! with the target's namespace, name and labels; answers cached for `cacheTTL`; each query
//! bounded by `timeout` and by half the time the admission request has left). When the server
//! cannot answer (timeout, unreachable, an error status, an answer not understood, no series, a
//! label the template names missing on the target, a client that could not be built) the
//! estimate is used and the report, a log line and `warrant_guard_traffic_fallbacks_total` say
//! why. The query itself is `traffic/prometheus.rs`, the cache `traffic/cache.rs`.

mod cache;
mod prometheus;

use super::scope::Target;
use crate::config::model::traffic::LiveTraffic;
use crate::object::Subject;
use cache::RateCache;
use prometheus::PrometheusClient;
use serde::Serialize;
use std::time::Duration;

/// The rate the risk report uses, where it comes from and, for the estimate, why no live rate.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Traffic {
    /// `prometheus` or `estimate`.
    pub source: TrafficSource,
    /// Requests per second.
    pub requests_per_second: f64,
    /// The query asked (when one was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// Why the estimate was used although `liveTraffic` covers the target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<Fallback>,
}

impl PartialEq for Traffic {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
            && self.requests_per_second.to_bits() == other.requests_per_second.to_bits()
            && self.query == other.query
            && self.fallback == other.fallback
    }
}

impl Eq for Traffic {}

/// Where the rate comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TrafficSource {
    /// The live traffic source answered.
    Prometheus,
    /// The fixed estimate.
    Estimate,
}

/// Why a live rate could not be had.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fallback {
    /// `timeout`, `unreachable`, `status`, `decode`, `empty`, `missing_label` or `client`.
    pub reason: &'static str,
    /// What happened.
    pub message: String,
}

impl Traffic {
    /// The report's traffic: the live rate when `measured` is one, else `estimate` (with the
    /// fallback when there was one).
    pub(super) fn of(measured: Option<&Measured>, estimate: u64) -> Self {
        // A u64 of requests per second is far below 2^53: the conversion is exact.
        #[allow(clippy::cast_precision_loss, reason = "exact below 2^53")]
        let estimate = estimate as f64;
        match measured {
            Some(Measured::Live { per_second, query }) => Traffic {
                source: TrafficSource::Prometheus,
                requests_per_second: *per_second,
                query: Some(query.clone()),
                fallback: None,
            },
            Some(Measured::Fallback { query, fallback }) => Traffic {
                source: TrafficSource::Estimate,
                requests_per_second: estimate,
                query: query.clone(),
                fallback: Some(fallback.clone()),
            },
            None => Traffic {
                source: TrafficSource::Estimate,
                requests_per_second: estimate,
                query: None,
                fallback: None,
            },
        }
    }
}

/// What the live traffic source said about one target.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Measured {
    /// Its rate.
    Live {
        /// Requests per second, rounded to a thousandth.
        per_second: f64,
        /// The query asked.
        query: String,
    },
    /// No rate: why.
    Fallback {
        /// The query asked, when one could be rendered.
        query: Option<String>,
        /// Why.
        fallback: Fallback,
    },
}

// A measured rate is finite (the query's answer is refused otherwise): equality is total.
impl Eq for Measured {}

/// The shortest time worth a query: below it the estimate is used at once.
const MIN_QUERY_TIME: Duration = Duration::from_millis(5);

/// A guard's live traffic source: its settings, its client and its cache.
#[derive(Debug)]
pub struct LiveTrafficSource {
    settings: LiveTraffic,
    /// The client, or why it could not be built (every query then falls back, visibly).
    client: Result<PrometheusClient, String>,
    cache: RateCache,
}

impl LiveTrafficSource {
    /// The source of `settings`; a client that cannot be built is logged here and makes every
    /// query fall back with reason `client`.
    pub(crate) fn new(settings: &LiveTraffic) -> Self {
        let client = PrometheusClient::new(&settings.prometheus).map_err(|e| {
            tracing::error!(url = %settings.prometheus.url, error = %e, "live traffic source unusable: risk uses the fixed estimate");
            e.to_string()
        });
        Self {
            settings: settings.clone(),
            client,
            cache: RateCache::new(settings.cache_ttl),
        }
    }

    /// The rate of `target` (`stored`: the object, whose labels the template may name) asked
    /// before `deadline` (the review's); `None` when no query covers its kind.
    pub(super) async fn measure(
        &self,
        target: &Target<'_>,
        stored: Option<&Subject>,
        deadline: tokio::time::Instant,
    ) -> Option<Measured> {
        let template = self.settings.query_for(target.group, target.resource)?;
        let fallback = |query: Option<String>, reason, message: String| Measured::Fallback {
            query,
            fallback: Fallback { reason, message },
        };
        let query = match template.render(target.namespace, target.name, |k| {
            stored.and_then(|s| s.label(k))
        }) {
            Ok(q) => q,
            Err(e) => return Some(fallback(None, "missing_label", e.to_string())),
        };
        let client = match &self.client {
            Ok(c) => c,
            Err(e) => return Some(fallback(Some(query), "client", e.clone())),
        };
        let now = tokio::time::Instant::now();
        if let Some(per_second) = self.cache.get(&query, now) {
            return Some(Measured::Live { per_second, query });
        }
        // Half of what is left: the rest of the admission must still fit.
        let left = deadline.saturating_duration_since(now) / 2;
        let timeout = self.settings.timeout.min(left);
        if timeout < MIN_QUERY_TIME {
            let message = format!("{left:?} left of the admission budget");
            return Some(fallback(Some(query), "timeout", message));
        }
        // Boxed: see `TicketSource::lookup`.
        match Box::pin(client.rate(&query, timeout)).await {
            Ok(rate) => {
                let per_second = (rate * 1000.0).round() / 1000.0;
                self.cache
                    .put(&query, per_second, tokio::time::Instant::now());
                Some(Measured::Live { per_second, query })
            }
            Err(e) => Some(fallback(Some(query), e.reason(), e.to_string())),
        }
    }
}
