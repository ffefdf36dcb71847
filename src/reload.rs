//! The live chain and the reload loop's back half: each new validated configuration is built
//! into a [`Chain`] and swapped in atomically. A review loads one snapshot and finishes on it, so
//! in-flight reviews never see two configurations. A configuration that fails to build, like one
//! that fails to validate, leaves the last good chain serving (kube-apiserver `reload.go`).

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

/// The swap cell holding the chain being served; empty until a valid configuration is loaded.
#[derive(Debug, Default)]
pub struct LiveChain {
    current: ArcSwapOption<Active>,
    webhook_backoff: Backoff,
}

impl LiveChain {
    /// Tests only: a swap cell whose webhook authorizers retry with a shorter first backoff
    /// delay, so retry tests do not sleep seconds. The configuration file cannot set this.
    #[doc(hidden)]
    pub fn with_webhook_backoff_base(base: std::time::Duration) -> Self {
        Self {
            current: ArcSwapOption::empty(),
            webhook_backoff: Backoff { base },
        }
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
    pub fn apply(
        &self,
        loaded: Loaded,
        metrics: &Metrics,
    ) -> Result<bool, crate::authorizer::BuildError> {
        let previous = self.current.load_full();
        if let Some(current) = previous.as_ref()
            && current.config == loaded.config
        {
            return Ok(false);
        }
        // The chain being replaced lends its webhook state (caches, pools) to the new build.
        let ctx = BuildContext {
            metrics: metrics.families(),
            webhook_backoff: self.webhook_backoff,
            previous: previous.as_ref().map(|a| &a.chain),
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
                Err(e)
            }
        }
    }

    /// Handles one change reported by the watcher.
    pub fn handle(&self, change: Change, metrics: &Metrics) {
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
