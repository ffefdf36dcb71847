//! Opening the cluster when the chain needs it: `warrant serve` starts and answers
//! `/authorize` at once; the client is built, and the watches started, only once the loaded
//! chain judges admission requests (a reload may add a DeletionGuard later). The API server
//! need not be reachable: the watches retry with backoff, and the view is not ready until
//! they have listed.

use super::cache::Cache;
use super::connect::Source;
use super::watch;
use std::sync::Arc;
use std::time::Duration;

/// How often the chain is asked whether it needs the cluster.
const POLL: Duration = Duration::from_secs(1);
/// The longest wait between two attempts to build the client.
const MAX_RETRY: Duration = Duration::from_secs(30);

async fn until(needed: &(impl Fn() -> bool + Send)) {
    let mut tick = tokio::time::interval(POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if needed() {
            return;
        }
    }
}

/// Waits until `needed()`, builds the client from `source` (retrying with backoff; each
/// failure logged and counted, and shown by the view as not ready), starts the watches, and
/// keeps them until this future is dropped.
pub async fn open_when_needed(cache: Arc<Cache>, source: Source, needed: impl Fn() -> bool + Send) {
    until(&needed).await;
    tracing::info!(source = ?source, "the chain judges admission requests: opening the cluster cache");
    cache.connecting(None);
    let mut delay = Duration::from_secs(1);
    let client = loop {
        match source.client().await {
            Ok(client) => break client,
            Err(e) => {
                tracing::error!(error = %e, retry_in = ?delay, "cannot build the cluster client");
                cache.connecting(Some(e.to_string()));
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(MAX_RETRY);
            }
        }
    };
    let _watches = watch::start(&cache, client);
    std::future::pending::<()>().await;
}

/// Waits until `needed()` and warns once that no cluster connection is configured (the
/// validation ring then answers by its failure policy).
pub async fn warn_unconnected(needed: impl Fn() -> bool + Send) {
    until(&needed).await;
    tracing::warn!(
        "the chain judges admission requests but no cluster connection is configured (--kubeconfig, or in a cluster): every object question fails and the guard applies its failure policy"
    );
}
