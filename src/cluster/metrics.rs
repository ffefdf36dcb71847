//! The cache's metric families, registered in the shared registry: counters the watches
//! increment, and gauges read from the cache at each scrape (object counts, age, readiness).
//!
//! | metric | labels |
//! |---|---|
//! | `warrant_cluster_cache_ready` | (1 once every watch has listed and none is failing) |
//! | `warrant_cluster_cache_objects` | `resource` |
//! | `warrant_cluster_cache_age_seconds` | `resource`: seconds since the last list or event |
//! | `warrant_cluster_watch_errors_total` | `resource` |
//! | `warrant_cluster_connect_errors_total` | (the client could not be built) |

use super::cache::Cache;
use super::counters::ResourceLabels;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;
use std::sync::Arc;
use std::time::Instant;

/// Registers the cache's families in `registry`.
pub fn register(cache: &Arc<Cache>, registry: &mut Registry) {
    let counters = cache.counters();
    registry.register(
        "warrant_cluster_watch_errors",
        "Errors of the cluster cache's watches (list, watch, decode), by resource",
        counters.watch_errors(),
    );
    registry.register(
        "warrant_cluster_connect_errors",
        "Failed attempts to build the cluster client (kubeconfig or service account)",
        counters.connect_errors(),
    );
    registry.register_collector(Box::new(Gauges(cache.clone())));
}

/// The gauges, read from the cache at scrape time.
#[derive(Debug)]
struct Gauges(Arc<Cache>);

impl Collector for Gauges {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(snapshot) = self.0.snapshot(Instant::now()) else {
            // The chain needs no cluster: no series.
            return Ok(());
        };
        let ready = ConstGauge::new(i64::from(snapshot.ready));
        let e = encoder.encode_descriptor(
            "warrant_cluster_cache_ready",
            "1 once every cluster watch has listed and none keeps failing, else 0",
            None,
            MetricType::Gauge,
        )?;
        ready.encode(e)?;
        let mut objects = encoder.encode_descriptor(
            "warrant_cluster_cache_objects",
            "Objects held by the cluster cache, by resource",
            None,
            MetricType::Gauge,
        )?;
        for (resource, count) in &snapshot.objects {
            let labels = ResourceLabels::of(*resource);
            let count = i64::try_from(*count).unwrap_or(i64::MAX);
            ConstGauge::new(count).encode(objects.encode_family(&labels)?)?;
        }
        let mut ages = encoder.encode_descriptor(
            "warrant_cluster_cache_age_seconds",
            "Seconds since the cluster cache's last successful list or event, by resource",
            None,
            MetricType::Gauge,
        )?;
        for (resource, age) in &snapshot.ages {
            let labels = ResourceLabels::of(*resource);
            ConstGauge::new(age.as_secs_f64()).encode(ages.encode_family(&labels)?)?;
        }
        Ok(())
    }
}
