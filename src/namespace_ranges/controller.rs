//! The allocation loop: while this replica leads, a metadata watch of Namespaces; after each
//! listing, a repair of the Lease from the namespaces' annotations; then every namespace
//! without `openshift.io/sa.scc.uid-range` gets a block (reserved in the Lease first, then
//! written to the namespace at the `resourceVersion` it was seen at). A namespace whose
//! allocation failed is tried again every [`RETRY_EVERY`]; each failure is logged and counted.

use super::metrics::{FailureReason, RangeMetrics};
use super::settings::RangeSettings;
use super::store::{LedgerStore, StoreError};
use crate::pod_security::allocation::{Allocation, Ledger, plan::PlanError};
use crate::pod_security::namespace::{MCS, UID_RANGE};
use futures_util::StreamExt;
use k8s_openapi::api::core::v1::Namespace as NamespaceObject;
use kube::api::{Api, PartialObjectMeta, Patch, PatchParams};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event, watcher};
use std::collections::{BTreeSet, HashMap};
use std::time::Duration;
use thiserror::Error;
use tokio::sync::watch;

/// How often namespaces whose allocation failed are tried again.
pub const RETRY_EVERY: Duration = Duration::from_secs(5);
/// Attempts of one Lease compare-and-swap before conflicts make it fail.
pub const MAX_ATTEMPTS: u32 = 5;
/// The field manager of the namespace writes.
const FIELD_MANAGER: &str = "warrant-namespace-ranges";

/// Why one namespace got no block.
#[derive(Debug, Error)]
pub enum AllocateError {
    /// The range (or the MCS range) is exhausted.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The Lease could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The Lease kept changing.
    #[error("lease of taken blocks changed {0} times in a row; trying again later")]
    Conflicts(u32),
    /// The namespace could not be written.
    #[error("namespace {namespace}: {source}")]
    Namespace {
        /// The namespace.
        namespace: String,
        /// The cause.
        #[source]
        source: kube::Error,
    },
    /// This replica stopped leading between the reservation and the namespace write.
    #[error("no longer leading")]
    NotLeading,
}

impl AllocateError {
    fn reason(&self) -> FailureReason {
        match self {
            Self::Plan(_) => FailureReason::RangeFull,
            Self::Store(_) | Self::NotLeading => FailureReason::State,
            Self::Conflicts(_) => FailureReason::Conflicts,
            Self::Namespace { .. } => FailureReason::NamespaceWrite,
        }
    }
}

/// A namespace as the watch last saw it.
#[derive(Debug, Clone, Default)]
struct Seen {
    resource_version: Option<String>,
    uid_range: Option<String>,
    mcs: Option<String>,
}

impl Seen {
    fn of(object: PartialObjectMeta<NamespaceObject>) -> Option<(String, Self)> {
        let meta = object.metadata;
        let name = meta.name?;
        let annotations = meta.annotations.unwrap_or_default();
        Some((
            name,
            Self {
                resource_version: meta.resource_version,
                uid_range: annotations.get(UID_RANGE).cloned(),
                mcs: annotations.get(MCS).cloned(),
            },
        ))
    }
}

/// The allocator.
#[derive(Debug, Clone)]
pub struct Allocator {
    settings: RangeSettings,
    namespaces: Api<NamespaceObject>,
    metadata: Api<PartialObjectMeta<NamespaceObject>>,
    store: LedgerStore,
    metrics: RangeMetrics,
}

/// What happened to one namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    /// It has its ranges now.
    Allocated(Allocation),
    /// It changed or went away meanwhile; the watch decides again.
    Moved,
}

impl Allocator {
    /// The allocator of `settings` through `client`.
    pub fn new(settings: RangeSettings, client: kube::Client, metrics: RangeMetrics) -> Self {
        let store = LedgerStore::new(client.clone(), &settings.namespace);
        Self {
            settings,
            namespaces: Api::all(client.clone()),
            metadata: Api::all(client),
            store,
            metrics,
        }
    }

    /// Runs until the leadership channel closes while not leading; acts only while `leader`
    /// is true.
    pub async fn run(self, mut leader: watch::Receiver<bool>) {
        loop {
            if leader.wait_for(|l| *l).await.is_err() {
                return;
            }
            tracing::info!(
                range = %self.settings.plan.uids,
                "namespace range allocator: leading; watching namespaces"
            );
            let acting = leader.clone();
            tokio::select! {
                () = lost(&mut leader) => tracing::info!("namespace range allocator: no longer leading"),
                () = self.lead(&acting) => {}
            }
        }
    }

    /// The watch and the allocations, while leading.
    async fn lead(&self, leader: &watch::Receiver<bool>) {
        let stream = watcher(self.metadata.clone(), watcher::Config::default()).default_backoff();
        let mut stream = std::pin::pin!(stream);
        let mut seen: HashMap<String, Seen> = HashMap::new();
        let mut listing: Option<HashMap<String, Seen>> = None;
        let mut pending: BTreeSet<String> = BTreeSet::new();
        let mut retry = tokio::time::interval(RETRY_EVERY);
        retry.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let event = tokio::select! {
                event = stream.next() => event,
                _ = retry.tick() => {
                    let names: Vec<String> = std::mem::take(&mut pending).into_iter().collect();
                    for name in names {
                        self.settle(&name, &mut seen, &mut pending, leader).await;
                    }
                    continue;
                }
            };
            let Some(event) = event else { return };
            match event {
                Ok(Event::Init) => listing = Some(HashMap::new()),
                Ok(Event::InitApply(object)) => {
                    if let Some((name, s)) = Seen::of(object) {
                        listing.get_or_insert_default().insert(name, s);
                    }
                }
                Ok(Event::InitDone) => {
                    seen = listing.take().unwrap_or_default();
                    self.repair(&seen).await;
                    pending = seen
                        .iter()
                        .filter(|(_, s)| s.uid_range.is_none())
                        .map(|(n, _)| n.clone())
                        .collect();
                    let names: Vec<String> = std::mem::take(&mut pending).into_iter().collect();
                    for name in names {
                        self.settle(&name, &mut seen, &mut pending, leader).await;
                    }
                }
                Ok(Event::Apply(object)) => {
                    if let Some((name, s)) = Seen::of(object) {
                        let unallocated = s.uid_range.is_none();
                        seen.insert(name.clone(), s);
                        if unallocated {
                            self.settle(&name, &mut seen, &mut pending, leader).await;
                        }
                    }
                }
                Ok(Event::Delete(object)) => {
                    if let Some(name) = object.metadata.name {
                        seen.remove(&name);
                        pending.remove(&name);
                    }
                }
                Err(error) => {
                    self.metrics.failed(FailureReason::Watch);
                    tracing::error!(error = %error, "namespace range allocator: the namespace watch failed; retrying");
                }
            }
        }
    }

    /// Allocates for `name` if it still needs it; on failure, logs, counts and keeps it
    /// pending.
    async fn settle(
        &self,
        name: &str,
        seen: &mut HashMap<String, Seen>,
        pending: &mut BTreeSet<String>,
        leader: &watch::Receiver<bool>,
    ) {
        let Some(namespace) = seen.get(name).cloned() else {
            return;
        };
        if namespace.uid_range.is_some() {
            return;
        }
        match self.allocate(name, &namespace, seen, leader).await {
            Ok(Outcome::Allocated(allocation)) => {
                self.metrics.allocated();
                tracing::info!(
                    namespace = name,
                    uid_range = %allocation.uid_range,
                    mcs = allocation.mcs.as_deref().unwrap_or("(kept)"),
                    "namespace range allocator: created SCC ranges"
                );
                if let Some(s) = seen.get_mut(name) {
                    s.uid_range = Some(allocation.uid_range);
                }
            }
            Ok(Outcome::Moved) => {}
            Err(error) => {
                self.metrics.failed(error.reason());
                tracing::error!(namespace = name, error = %error, "namespace range allocator: no ranges given; trying again");
                pending.insert(name.to_owned());
            }
        }
    }

    /// One namespace: reserve a block in the Lease, then write the namespace.
    async fn allocate(
        &self,
        name: &str,
        namespace: &Seen,
        seen: &HashMap<String, Seen>,
        leader: &watch::Receiver<bool>,
    ) -> Result<Outcome, AllocateError> {
        let plan = &self.settings.plan;
        let observed = plan.taken_by(seen.values().filter_map(|s| s.uid_range.as_deref()));
        let mut reserved = None;
        for _ in 0..MAX_ATTEMPTS {
            let stored = self.store.read(plan.uids, true).await?;
            let mut taken = stored.ledger.clone();
            taken.merge(&observed);
            let allocation = plan.next(&taken, namespace.mcs.as_deref())?;
            let mut written = stored.ledger.clone();
            written.take(allocation.offset);
            if self.store.write(&stored, &written).await? {
                self.metrics.taken(written.taken());
                reserved = Some(allocation);
                break;
            }
        }
        let allocation = reserved.ok_or(AllocateError::Conflicts(MAX_ATTEMPTS))?;
        if !*leader.borrow() {
            return Err(AllocateError::NotLeading);
        }
        match self.write_namespace(name, namespace, &allocation).await {
            Ok(()) => Ok(Outcome::Allocated(allocation)),
            Err(kube::Error::Api(s)) if s.is_conflict() || s.is_not_found() => {
                self.release(allocation.offset).await;
                Ok(Outcome::Moved)
            }
            Err(source) => {
                self.release(allocation.offset).await;
                Err(AllocateError::Namespace {
                    namespace: name.to_owned(),
                    source,
                })
            }
        }
    }

    /// The namespace's annotations, at the `resourceVersion` it was seen at.
    async fn write_namespace(
        &self,
        name: &str,
        namespace: &Seen,
        allocation: &Allocation,
    ) -> Result<(), kube::Error> {
        let patch = serde_json::json!({
            "metadata": {
                "resourceVersion": namespace.resource_version,
                "annotations": allocation.annotations(),
            }
        });
        let params = PatchParams {
            field_manager: Some(FIELD_MANAGER.to_owned()),
            ..PatchParams::default()
        };
        self.namespaces
            .patch(name, &params, &Patch::Merge(&patch))
            .await
            .map(|_| ())
    }

    /// Gives back a reserved block whose namespace was not written (best effort: the next
    /// repair releases it otherwise).
    async fn release(&self, offset: u32) {
        for _ in 0..MAX_ATTEMPTS {
            let Ok(stored) = self.store.read(self.settings.plan.uids, true).await else {
                return;
            };
            let mut ledger = stored.ledger.clone();
            ledger.release(offset);
            match self.store.write(&stored, &ledger).await {
                Ok(true) => {
                    self.metrics.taken(ledger.taken());
                    return;
                }
                Ok(false) => continue,
                Err(_) => return,
            }
        }
    }

    /// Rewrites the Lease from the namespaces' annotations (OpenShift's `Repair`).
    async fn repair(&self, seen: &HashMap<String, Seen>) {
        let plan = &self.settings.plan;
        let ledger: Ledger = plan.taken_by(seen.values().filter_map(|s| s.uid_range.as_deref()));
        for _ in 0..MAX_ATTEMPTS {
            let stored = match self.store.read(plan.uids, false).await {
                Ok(stored) => stored,
                Err(error) => {
                    self.metrics.failed(FailureReason::State);
                    tracing::error!(error = %error, "namespace range allocator: repair could not read the taken blocks");
                    return;
                }
            };
            match self.store.write(&stored, &ledger).await {
                Ok(true) => {
                    self.metrics.taken(ledger.taken());
                    tracing::info!(
                        taken = ledger.taken(),
                        "namespace range allocator: taken blocks repaired from the namespaces"
                    );
                    return;
                }
                Ok(false) => continue,
                Err(error) => {
                    self.metrics.failed(FailureReason::State);
                    tracing::error!(error = %error, "namespace range allocator: repair could not write the taken blocks");
                    return;
                }
            }
        }
        self.metrics.failed(FailureReason::Conflicts);
    }
}

/// Returns once `leader` turns false (never, when it is final and true).
async fn lost(leader: &mut watch::Receiver<bool>) {
    loop {
        if !*leader.borrow_and_update() {
            return;
        }
        if leader.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
