//! The live chain and the reload loop's back half: each new validated configuration is built
//! into a [`Chain`] and swapped in atomically. A review loads one snapshot and finishes on it, so
//! in-flight reviews never see two configurations. A configuration that fails to build, like one
//! that fails to validate, leaves the last good chain serving (kube-apiserver `reload.go`), and
//! so does one a [`ReloadGate`] refuses (`warrant serve --replay-on-reload`: a replay that would
//! lock out a bootstrap identity).

use crate::authorizer::webhook::cache::CacheBytes;
use crate::authorizer::webhook::retry::Backoff;
use crate::authorizer::{BuildContext, Chain};
use crate::config::watch::{self, Change};
use crate::config::{Config, Loaded, Source};
use crate::file_watch::WatchTiming;
use crate::telemetry::metrics::{Metrics, ReloadStatus};
use arc_swap::ArcSwapOption;
use std::path::PathBuf;
use std::sync::Arc;

/// A chain being served and the configuration it was built from.
#[derive(Debug)]
pub struct Active {
    /// The chain.
    pub chain: Chain,
    /// Where its configuration came from.
    pub source: Source,
    config: Config,
}

impl Active {
    /// The configuration the chain was built from.
    pub fn config(&self) -> &Config {
        &self.config
    }
}

/// A check every reload must pass before its chain is swapped in (the first load is not
/// checked: there is no last good configuration to keep).
pub trait ReloadGate: Send + Sync + std::fmt::Debug {
    /// `Ok` to let `candidate` replace `current`; otherwise why not, and the reason label of
    /// `warrant_config_reload_refusals_total`.
    fn check(&self, candidate: &Config, current: &Config) -> Result<(), Refusal>;
}

/// Why a [`ReloadGate`] refused a reload.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    /// The metric label (`lockout`, `replay-error`).
    pub reason: &'static str,
    /// What the log says.
    pub message: String,
}

/// Why a configuration was not swapped in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    /// Its chain could not be built.
    #[error(transparent)]
    Build(#[from] crate::authorizer::BuildError),
    /// The reload gate refused it.
    #[error("reload refused: {0}")]
    Refused(#[from] Refusal),
}

/// The swap cell holding the chain being served; empty until a valid configuration is loaded.
#[derive(Debug, Default)]
pub struct LiveChain {
    current: ArcSwapOption<Active>,
    webhook_backoff: Backoff,
    webhook_cache: CacheBytes,
    gate: Option<Box<dyn ReloadGate>>,
    cluster_buckets: Option<Arc<dyn crate::authorizer::deletion_guard::ClusterBuckets>>,
    ticket_feed: Option<Arc<crate::authorizer::deletion_guard::tickets::TicketFeed>>,
}

impl LiveChain {
    /// Tests only: a swap cell whose webhook authorizers retry with a shorter first backoff
    /// delay, so retry tests do not sleep seconds. The configuration file cannot set this.
    #[doc(hidden)]
    pub fn with_webhook_backoff_base(base: std::time::Duration) -> Self {
        Self {
            current: ArcSwapOption::empty(),
            webhook_backoff: Backoff { base },
            webhook_cache: CacheBytes::default(),
            gate: None,
            cluster_buckets: None,
            ticket_feed: None,
        }
    }

    /// The same cell bounding each webhook's verdict cache to `bytes`
    /// (`--webhook-cache-max-bytes`).
    pub(crate) fn with_webhook_cache_bytes(mut self, bytes: u64) -> Self {
        self.webhook_cache = CacheBytes(bytes);
        self
    }

    /// The same cell keeping the buckets of `scope: Cluster` rate limits in `store`.
    pub(crate) fn with_cluster_buckets(
        mut self,
        store: Arc<dyn crate::authorizer::deletion_guard::ClusterBuckets>,
    ) -> Self {
        self.cluster_buckets = Some(store);
        self
    }

    /// The same cell giving guards whose tickets come from the cluster the `feed` a watch of
    /// DeletionTickets fills.
    pub(crate) fn with_ticket_feed(
        mut self,
        feed: Arc<crate::authorizer::deletion_guard::tickets::TicketFeed>,
    ) -> Self {
        self.ticket_feed = Some(feed);
        self
    }

    /// The same cell checking every reload with `gate` first.
    pub fn with_gate(mut self, gate: Box<dyn ReloadGate>) -> Self {
        self.gate = Some(gate);
        self
    }

    /// The chain being served, if any.
    pub fn load(&self) -> Option<Arc<Active>> {
        self.current.load_full()
    }

    /// Whether a valid configuration is loaded (what `/readyz` reports).
    pub fn is_ready(&self) -> bool {
        self.current.load().is_some()
    }

    /// Builds a loaded configuration and swaps it in. A configuration equal to the one being
    /// served changes nothing and records nothing, as upstream. Records the outcome.
    pub fn apply(&self, loaded: Loaded, metrics: &Metrics) -> Result<bool, ApplyError> {
        let previous = self.current.load_full();
        if let Some(current) = previous.as_ref()
            && current.config == loaded.config
        {
            return Ok(false);
        }
        if let (Some(gate), Some(current)) = (&self.gate, previous.as_ref())
            && let Err(refusal) = gate.check(&loaded.config, &current.config)
        {
            tracing::error!(config = %loaded.source.name, reason = refusal.reason, error = %refusal, "configuration refused by --replay-on-reload; keeping the last good chain");
            metrics.record_reload_refusal(refusal.reason);
            metrics.record_reload(ReloadStatus::Failure, unix_now(), None);
            return Err(refusal.into());
        }
        // The chain being replaced lends its webhook state (caches, pools) to the new build.
        let ctx = BuildContext {
            metrics: metrics.families(),
            webhook_backoff: self.webhook_backoff,
            webhook_cache: self.webhook_cache,
            previous: previous.as_ref().map(|a| &a.chain),
            cluster_buckets: self.cluster_buckets.clone(),
            ticket_feed: self.ticket_feed.clone(),
        };
        match Chain::build_in(&loaded.config, &ctx) {
            Ok(chain) => {
                let hash = loaded.source.hash.clone();
                tracing::info!(
                    config = %loaded.source.name,
                    hash = %hash,
                    authorizers = chain.entries().len(),
                    "configuration loaded"
                );
                for w in &loaded.config.warnings {
                    tracing::warn!(config = %loaded.source.name, "{w}");
                }
                self.current.store(Some(Arc::new(Active {
                    chain,
                    source: loaded.source,
                    config: loaded.config,
                })));
                metrics.record_reload(ReloadStatus::Success, unix_now(), Some(&hash));
                Ok(true)
            }
            Err(e) => {
                tracing::error!(config = %loaded.source.name, error = %e, "configuration cannot be built; keeping the last good chain");
                metrics.record_reload(ReloadStatus::Failure, unix_now(), None);
                Err(e.into())
            }
        }
    }

    /// Handles one change reported by the watcher.
    pub(crate) fn handle(&self, change: Change, metrics: &Metrics) {
        match change {
            Change::Loaded(loaded) => {
                let _ = self.apply(loaded, metrics);
            }
            Change::Invalid(errors) | Change::Unreadable(errors) => {
                let serving = if self.is_ready() {
                    "keeping the last good chain"
                } else {
                    "no chain is loaded yet; not ready"
                };
                for e in errors.iter() {
                    tracing::error!(error = %e, "invalid configuration; {serving}");
                }
                metrics.record_reload(ReloadStatus::Failure, unix_now(), None);
            }
        }
    }

    /// Watches `path` and applies every change until the task is dropped.
    pub async fn watch(self: Arc<Self>, path: PathBuf, timing: WatchTiming, metrics: Arc<Metrics>) {
        let mut changes = watch::spawn(path, timing);
        while let Some(change) = changes.recv().await {
            self.handle(change, &metrics);
        }
    }
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}
