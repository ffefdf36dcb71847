//! [`Buffer::run`]: the buffer ring's life in `warrant serve`. It waits until the served
//! configuration has a DeletionGuard with a `buffer` block, builds the cluster client, and
//! while this replica leads (the leadership receiver is true) runs one controller per guard
//! and kind. Leadership lost: every controller is dropped at once (within a second), so nothing
//! acts; regained, or the configuration's buffer blocks changed: started again from a fresh
//! list, since every decision is re-computed from the objects.

use super::context::Context;
use super::controller;
use super::error::BufferError;
use super::kinds;
use super::metrics::BufferMetrics;
use super::notify::Notifier;
use super::retire;
use crate::cluster::Source;
use crate::config::model::buffer::BufferSettings;
use crate::config::model::guard::GuardSpec;
use crate::config::model::{AuthorizerSpec, Config};
use crate::object::ClusterView;
use crate::reload::LiveChain;
use crate::telemetry::audit::AuditSink;
use kube::runtime::events::{Recorder, Reporter};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinSet;

/// How often the configuration is looked at for changes of its buffer blocks.
const POLL: Duration = Duration::from_secs(1);
/// The longest wait between two attempts to build the client or discover a kind.
const MAX_RETRY: Duration = Duration::from_secs(30);

/// The guards with a `buffer` block: entry name and settings.
type Guards = Vec<(String, Arc<GuardSpec>)>;

/// What the buffer ring runs on.
#[derive(Debug, Clone)]
pub struct Buffer {
    /// The served configuration.
    pub live: Arc<LiveChain>,
    /// The cluster connection.
    pub source: Source,
    /// The cluster cache (dependents for the risk).
    pub view: Arc<dyn ClusterView>,
    /// The audit writer.
    pub audit: Arc<AuditSink>,
    /// The metrics.
    pub metrics: BufferMetrics,
}

/// The guards of a configuration that have a `buffer` block.
pub fn buffered_guards(config: &Config) -> Guards {
    config
        .authorizers
        .iter()
        .filter_map(|a| match &a.spec {
            AuthorizerSpec::DeletionGuard(g) if g.buffer.is_some() => {
                Some((a.name.as_str().to_owned(), Arc::new(g.as_ref().clone())))
            }
            _ => None,
        })
        .collect()
}

impl Buffer {
    fn guards(&self) -> Guards {
        self.live
            .load()
            .map(|a| buffered_guards(a.config()))
            .unwrap_or_default()
    }

    /// Runs the buffer ring until dropped; acts only while `leader` is true.
    pub async fn run(self, mut leader: watch::Receiver<bool>) {
        let mut guards = self.until_buffered().await;
        let client = self.client().await;
        let recorder = Arc::new(Recorder::new(client.clone(), reporter()));
        loop {
            if leader.wait_for(|l| *l).await.is_err() {
                tracing::info!(
                    "buffer ring: leadership channel closed while not leading; stopping"
                );
                return;
            }
            // The configuration may have changed while another replica led (or while this
            // one waited to lead): act on the one served now, retiring what it dropped.
            let now = self.guards();
            if now != guards {
                self.retire(&client, &guards, &now).await;
                guards = now;
            }
            tracing::info!(
                guards = guards.len(),
                "buffer ring: leading; starting the controllers"
            );
            let mut tasks = JoinSet::new();
            for (name, spec) in &guards {
                self.start(&mut tasks, &client, &recorder, &leader, name, spec);
            }
            tokio::select! {
                () = lost(&mut leader) => tracing::info!("buffer ring: no longer leading; controllers stopped"),
                next = self.changed(&guards) => {
                    tracing::info!("buffer ring: the buffer settings changed; restarting the controllers");
                    tasks.abort_all();
                    self.retire(&client, &guards, &next).await;
                    guards = next;
                }
            }
            tasks.abort_all();
            self.metrics.holds().clear();
        }
    }

    /// Takes the finalizers `old` put on and `new` no longer does off every object (while
    /// still leading); failures are logged and counted.
    async fn retire(&self, client: &kube::Client, old: &Guards, new: &Guards) {
        let settings = |g: &Guards| -> Vec<BufferSettings> {
            g.iter().filter_map(|(_, s)| s.buffer.clone()).collect()
        };
        let (old, new) = (settings(old), settings(new));
        let new: Vec<&BufferSettings> = new.iter().collect();
        for (finalizer, kind) in retire::retired(&old, &new) {
            match retire::retire(client, &kind, &finalizer, &self.metrics).await {
                Ok(n) => tracing::info!(
                    finalizer,
                    group = kind.group,
                    resource = kind.resource,
                    removed = n,
                    "buffer ring: finalizer retired"
                ),
                Err(e) => {
                    tracing::error!(finalizer, error = %e, "buffer ring: cannot retire the finalizer; remove it by hand");
                    self.metrics.failed("retire");
                }
            }
        }
    }

    /// Waits until the configuration has a guard with a `buffer` block.
    async fn until_buffered(&self) -> Guards {
        loop {
            let g = self.guards();
            if !g.is_empty() {
                return g;
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Waits until the guards differ from `current`.
    async fn changed(&self, current: &Guards) -> Guards {
        loop {
            tokio::time::sleep(POLL).await;
            let g = self.guards();
            if g != *current {
                return g;
            }
        }
    }

    /// Builds the client, retrying with backoff.
    async fn client(&self) -> kube::Client {
        let mut delay = Duration::from_secs(1);
        loop {
            match self.source.client().await {
                Ok(c) => return c,
                Err(e) => {
                    let e = BufferError::Connect(Arc::new(e));
                    tracing::error!(error = %e, retry_in = ?delay, "buffer ring: cannot build the cluster client");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(MAX_RETRY);
                }
            }
        }
    }

    /// Starts one controller per kind of one guard (each resolves its kind first).
    fn start(
        &self,
        tasks: &mut JoinSet<()>,
        client: &kube::Client,
        recorder: &Arc<Recorder>,
        leader: &watch::Receiver<bool>,
        name: &str,
        spec: &Arc<GuardSpec>,
    ) {
        let Some(settings) = spec.buffer.clone() else {
            return;
        };
        let notifier = match Notifier::new(&settings.notify) {
            Ok(n) => n,
            Err(e) => {
                tracing::error!(guard = name, error = %e, "buffer ring: notifications disabled for this guard");
                self.metrics.failed("notify");
                Notifier::default()
            }
        };
        for kind in settings.resources.clone() {
            let this = self.clone();
            let (client, recorder, leader) = (client.clone(), recorder.clone(), leader.clone());
            let (name, spec, settings, notifier) = (
                name.to_owned(),
                spec.clone(),
                settings.clone(),
                notifier.clone(),
            );
            tasks.spawn(async move {
                let resource = this.discover(&client, &kind).await;
                let ctx = Context {
                    guard: name,
                    spec,
                    settings,
                    resource,
                    client,
                    view: this.view.clone(),
                    audit: this.audit.clone(),
                    live: this.live.clone(),
                    metrics: this.metrics.clone(),
                    recorder,
                    notifier,
                    leader,
                };
                controller::run(Arc::new(ctx)).await;
            });
        }
    }

    /// Resolves a kind, retrying with backoff (a CRD may be installed later).
    async fn discover(
        &self,
        client: &kube::Client,
        kind: &crate::config::model::guard::Kind,
    ) -> kube::discovery::ApiResource {
        let mut delay = Duration::from_secs(1);
        loop {
            match kinds::resolve(client, kind).await {
                Ok(r) => return r,
                Err(e) => {
                    tracing::error!(error = %e, retry_in = ?delay, "buffer ring: cannot resolve a kind");
                    self.metrics.failed("discovery");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(MAX_RETRY);
                }
            }
        }
    }
}

/// Resolves when `leader` turns false (or its sender is gone while false).
pub(super) async fn lost(leader: &mut watch::Receiver<bool>) {
    loop {
        if !*leader.borrow_and_update() {
            return;
        }
        if leader.changed().await.is_err() {
            // No sender: the value is final, and it is true.
            std::future::pending::<()>().await;
        }
    }
}

/// The Events' reporting controller and instance (the pod's name when set).
fn reporter() -> Reporter {
    let instance = std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .ok();
    Reporter {
        controller: "warrant".into(),
        instance,
    }
}
