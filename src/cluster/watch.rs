//! The watches: one `kube::runtime::watcher` per kind, each feeding the [`Cache`]'s index
//! through a [`Feeder`]. Pods, Services, Ingresses and PersistentVolumeClaims are watched as
//! the slim wire shapes of `wire.rs` (pods with `status.phase=Running` only); workloads and
//! Namespaces as metadata (`MetaOnly`; no shape decodes `managedFields`). A list is gathered
//! into a fresh store and swapped in whole when it finishes, so a lost watch re-lists while the
//! old store keeps answering. Errors are logged, counted and noted in the watch's health; the
//! watcher retries with its default backoff (0.8 s doubling to 30 s).

use super::cache::Cache;
use super::index::Body;
use super::index::Workload;
use super::intern::Interner;
use super::project::{self, Projected};
use super::resource::Resource;
use super::store::Store;
use super::wire::{ClaimWire, IngressWire, MetaOnly, PodWire, ServiceWire};
use futures_util::{Stream, StreamExt};
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event, watcher};
use std::sync::Arc;
use std::time::Instant;
use tokio::task::JoinHandle;

/// Sweep the interner after this many changes (strings of deleted objects go).
const SWEEP_EVERY: usize = 4096;

/// The running watch tasks; dropping this stops them.
#[derive(Debug, Default)]
pub struct Watches(Vec<JoinHandle<()>>);

impl Drop for Watches {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// A projection from a decoded object to an index entry.
type Project<W, B> = fn(&W, &mut Interner) -> Option<Projected<B>>;

/// Applies one watch's events to the cache.
#[derive(Debug)]
pub struct Feeder<W, B> {
    cache: Arc<Cache>,
    resource: Resource,
    project: Project<W, B>,
    /// The list being gathered (between `Init` and `InitDone`).
    listing: Option<Store<B>>,
    changes: usize,
}

impl<W, B: Body> Feeder<W, B> {
    /// A feeder of `resource` into `cache`.
    pub fn new(cache: Arc<Cache>, resource: Resource, project: Project<W, B>) -> Self {
        Self {
            cache,
            resource,
            project,
            listing: None,
            changes: 0,
        }
    }

    fn project(&self, object: &W) -> Option<Projected<B>> {
        self.cache.intern(|i| (self.project)(object, i))
    }

    /// Applies one event.
    pub fn event(&mut self, event: Event<W>) {
        let now = Instant::now();
        match event {
            Event::Init => self.listing = Some(Store::default()),
            Event::InitApply(object) => {
                if let Some((key, obj)) = self.project(&object) {
                    self.listing.get_or_insert_default().apply(key, obj);
                }
            }
            Event::InitDone => {
                let fresh = self.listing.take().unwrap_or_default();
                let count = fresh.len();
                let old = self.cache.write(|i| i.install(self.resource, fresh));
                drop(old);
                self.sweep();
                self.cache.health(self.resource).listed(now);
                tracing::debug!(
                    resource = self.resource.plural(),
                    objects = count,
                    "cluster cache listed"
                );
                return;
            }
            Event::Apply(object) => {
                if let Some((key, obj)) = self.project(&object) {
                    self.cache.write(|i| i.apply(self.resource, key, obj));
                }
                self.changed();
            }
            Event::Delete(object) => {
                if let Some((key, obj)) = self.project(&object) {
                    self.cache
                        .write(|i| i.delete::<B>(self.resource, &key, &obj.uid));
                }
                self.changed();
            }
        }
        self.cache.health(self.resource).ok(now);
    }

    /// Notes one error.
    pub fn error(&mut self, error: &watcher::Error) {
        let limits = self.cache.options().limits;
        self.cache.counters().watch_error(self.resource);
        tracing::warn!(resource = self.resource.plural(), error = %error, "cluster watch error; retrying");
        self.cache
            .health(self.resource)
            .error(Instant::now(), error.to_string(), &limits);
    }

    fn changed(&mut self) {
        self.changes += 1;
        if self.changes >= SWEEP_EVERY {
            self.sweep();
        }
    }

    fn sweep(&mut self) {
        self.changes = 0;
        self.cache.intern(Interner::sweep);
    }
}

/// Runs one watch until its task is aborted.
async fn feed<W, B, S>(mut feeder: Feeder<W, B>, stream: S)
where
    B: Body,
    S: Stream<Item = Result<Event<W>, watcher::Error>> + Send,
{
    let stream = stream.default_backoff();
    let mut stream = std::pin::pin!(stream);
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => feeder.event(event),
            Err(e) => feeder.error(&e),
        }
    }
    tracing::error!(resource = feeder.resource.plural(), "cluster watch ended");
}

fn meta<K>(w: &MetaOnly<K>, i: &mut Interner) -> Option<Projected<Workload>> {
    project::workload(&w.metadata, i)
}

/// The metadata watch of a workload kind.
fn workloads<K>(cache: &Arc<Cache>, client: &kube::Client, resource: Resource) -> JoinHandle<()>
where
    K: kube::Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    K: Send + Sync + 'static,
{
    let feeder = Feeder::new(cache.clone(), resource, meta::<K>);
    let api = Api::<MetaOnly<K>>::all(client.clone());
    tokio::spawn(feed(feeder, watcher(api, watcher::Config::default())))
}

fn namespace(
    w: &MetaOnly<Namespace>,
    i: &mut Interner,
) -> Option<Projected<super::index::Namespace>> {
    project::namespace(&w.metadata, i)
}

/// Starts every watch of `cache` with `client` (on the current tokio runtime); they run,
/// retrying with backoff, until the returned [`Watches`] is dropped.
pub fn start(cache: &Arc<Cache>, client: kube::Client) -> Watches {
    cache.set_client(client.clone());
    cache.mark_watching();
    spawn_all(cache, &client)
}

/// Spawns every watch of `cache` with `client`.
fn spawn_all(cache: &Arc<Cache>, client: &kube::Client) -> Watches {
    let config = watcher::Config::default();
    let c = || client.clone();
    let running = config.clone().fields("status.phase=Running");
    Watches(vec![
        tokio::spawn(feed(
            Feeder::new(cache.clone(), Resource::Pods, project::pod),
            watcher(Api::<PodWire>::all(c()), running),
        )),
        workloads::<ReplicaSet>(cache, client, Resource::ReplicaSets),
        workloads::<Deployment>(cache, client, Resource::Deployments),
        workloads::<StatefulSet>(cache, client, Resource::StatefulSets),
        workloads::<DaemonSet>(cache, client, Resource::DaemonSets),
        workloads::<Job>(cache, client, Resource::Jobs),
        workloads::<CronJob>(cache, client, Resource::CronJobs),
        tokio::spawn(feed(
            Feeder::new(cache.clone(), Resource::Services, project::service),
            watcher(Api::<ServiceWire>::all(c()), config.clone()),
        )),
        tokio::spawn(feed(
            Feeder::new(cache.clone(), Resource::Ingresses, project::ingress),
            watcher(Api::<IngressWire>::all(c()), config.clone()),
        )),
        tokio::spawn(feed(
            Feeder::new(
                cache.clone(),
                Resource::PersistentVolumeClaims,
                project::claim,
            ),
            watcher(Api::<ClaimWire>::all(c()), config.clone()),
        )),
        tokio::spawn(feed(
            Feeder::new(cache.clone(), Resource::Namespaces, namespace),
            watcher(Api::<MetaOnly<Namespace>>::all(c()), config),
        )),
    ])
}
