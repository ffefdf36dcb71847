//! Coverage, exported continuously: while this replica leads, every interval the objects that
//! [`super::coverage::gaps`] lists (with the default criteria of `warrant coverage`: MEDIUM risk
//! or above, or named like production) are counted from the cluster cache the validation ring
//! already keeps, by kind and namespace, into `warrant_coverage_unprotected_objects{kind,namespace}`
//! (a Namespace counts under its own name), with the time of the last count in
//! `warrant_coverage_last_computed_timestamp_seconds`. The guard is the first `DeletionGuard` of
//! the configuration served. Only the leader exports: a replica that stops leading drops the
//! series, so a dashboard summing them counts each gap once. A cache not ready, or an object it
//! cannot score, leaves the last count (and its timestamp) in place, logged.

use super::coverage::{self, Criteria, DEFAULT_CRITICAL_NAMES};
use crate::authorizer::deletion_guard::{GuardError, RiskLevel};
use crate::cluster::Cache;
use crate::config::AuthorizerSpec;
use crate::config::model::guard::GuardSpec;
use crate::config::model::pattern::Pattern;
use crate::object::{ClusterView, ViewError};
use crate::reload::LiveChain;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;
use tokio::sync::watch;

/// The interval unless `--coverage-interval` says otherwise.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(300);

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CoverageLabels {
    kind: String,
    namespace: String,
}

/// The coverage series (unregistered by default: tests and tools count into nothing).
#[derive(Debug, Clone, Default)]
pub struct CoverageExport {
    unprotected: Family<CoverageLabels, Gauge>,
    computed: Gauge<f64, AtomicU64>,
}

/// Why a count could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CountError {
    /// The cache has not listed everything yet, or cannot answer.
    #[error("the cluster cache cannot answer: {0}")]
    Cache(#[source] ViewError),
    /// An object could not be scored.
    #[error("an object cannot be scored: {0}")]
    Score(#[source] GuardError),
}

impl CoverageExport {
    /// The series, registered on `registry`.
    pub fn register(registry: &mut Registry) -> Self {
        let export = Self::default();
        registry.register(
            "warrant_coverage_unprotected_objects",
            "Objects that look critical (MEDIUM deletion risk or above, or named like production) and that no rule or protection label of the first DeletionGuard protects, by kind and namespace (exported by the leader)",
            export.unprotected.clone(),
        );
        registry.register(
            "warrant_coverage_last_computed_timestamp_seconds",
            "When the leader last counted the unprotected objects (Unix time)",
            export.computed.clone(),
        );
        export
    }

    /// Counts the gaps of `spec` in `cache` now and replaces the series with the counts; a
    /// cache not ready (not everything listed, or a watch failing) is an error.
    pub async fn refresh(
        &self,
        spec: &GuardSpec,
        cache: &Arc<Cache>,
    ) -> Result<BTreeMap<(String, String), i64>, CountError> {
        // A cache that has not listed everything would count gaps as covered.
        cache.ready().map_err(CountError::Cache)?;
        let inventory = cache.read(|i| i.inventory()).map_err(CountError::Cache)?;
        let now = chrono::Utc::now();
        let gaps = coverage::gaps(spec, inventory, cache.clone(), now, &criteria())
            .await
            .map_err(CountError::Score)?;
        let mut counts = BTreeMap::new();
        for g in gaps {
            let namespace = if g.kind == "Namespace" {
                g.name
            } else {
                g.namespace
            };
            *counts.entry((g.kind, namespace)).or_insert(0) += 1;
        }
        self.unprotected.clear();
        for ((kind, namespace), n) in &counts {
            self.unprotected
                .get_or_create(&CoverageLabels {
                    kind: kind.clone(),
                    namespace: namespace.clone(),
                })
                .set(*n);
        }
        // Milliseconds since 1970 are far below 2^53: exact as an f64.
        #[allow(clippy::cast_precision_loss, reason = "exact below 2^53")]
        self.computed.set(now.timestamp_millis() as f64 / 1000.0);
        Ok(counts)
    }

    /// Counts every `interval` while `leading` is true, with the first `DeletionGuard` of the
    /// configuration `live` serves; drops the series when leadership is lost or no guard is
    /// configured. Returns when the leadership channel closes.
    pub async fn run(
        self,
        live: Arc<LiveChain>,
        cache: Arc<Cache>,
        mut leading: watch::Receiver<bool>,
        interval: Duration,
    ) {
        loop {
            if leading.wait_for(|l| *l).await.is_err() {
                return;
            }
            let mut tick = tokio::time::interval(interval);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    lost = leading.wait_for(|l| !*l) => {
                        self.unprotected.clear();
                        if lost.is_err() {
                            return;
                        }
                        break;
                    }
                }
                let Some(spec) = first_guard(&live) else {
                    self.unprotected.clear();
                    continue;
                };
                match self.refresh(&spec, &cache).await {
                    Ok(counts) => tracing::debug!(
                        unprotected = counts.values().sum::<i64>(),
                        "coverage counted"
                    ),
                    Err(e) => {
                        tracing::warn!(error = %e, "coverage not counted; the last count stays")
                    }
                }
            }
        }
    }
}

/// `warrant coverage`'s default criteria.
fn criteria() -> Criteria {
    Criteria {
        min_level: RiskLevel::Medium,
        critical_names: DEFAULT_CRITICAL_NAMES
            .iter()
            .map(|p| Pattern::new(p))
            .collect(),
    }
}

/// The first `DeletionGuard` of the configuration served.
fn first_guard(live: &LiveChain) -> Option<GuardSpec> {
    let active = live.load()?;
    active
        .config()
        .authorizers
        .iter()
        .find_map(|a| match &a.spec {
            AuthorizerSpec::DeletionGuard(g) => Some(GuardSpec::clone(g)),
            _ => None,
        })
}

#[cfg(test)]
mod tests;
