//! [`Cache`]: the live [`ClusterView`], an [`Index`] fed by the watches. Queries take a read
//! lock for microseconds; a watch takes the write lock for one object, or for one swap when a
//! list finishes. A poisoned lock makes the view not ready (never an answer from a store a
//! panic may have left half-written).

use super::counters::Counters;
use super::crd;
use super::index::Index;
use super::intern::Interner;
use super::resource::Resource;
use super::status::{Limits, WatchHealth};
use crate::object::{
    ClusterView, Dependents, LabelValues, ObjectRef, Subject, ViewError, ViewFuture,
};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError, RwLock};
use std::time::{Duration, Instant};

/// How the cache judges its watches and bounds its live calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheOptions {
    /// When a failing watch makes the cache not ready.
    pub limits: Limits,
    /// The longest a live call (`remaining_objects`) may take.
    pub(crate) api_timeout: Duration,
}

impl Default for CacheOptions {
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            api_timeout: Duration::from_secs(2),
        }
    }
}

/// Where the cache is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    /// The chain has not needed the cluster yet: nothing is watched, and the view is not ready
    /// (a chain that gains a DeletionGuard opens the cache within a second; until then its
    /// admission requests get the guard's failure policy, with this reason).
    Idle,
    /// The chain needs the cluster; the client is being built (the last failure, if any).
    Connecting(Option<String>),
    /// The watches run.
    Watching,
}

/// What the metrics read of the cache at one scrape.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Whether the view answers.
    pub ready: bool,
    /// Objects held, by resource (empty when the index lock is poisoned).
    pub objects: Vec<(Resource, usize)>,
    /// Time since the last list or event, by resource (only those that had one).
    pub(crate) ages: Vec<(Resource, Duration)>,
}

/// The metadata cache of a cluster.
pub struct Cache {
    index: RwLock<Index>,
    interner: Mutex<Interner>,
    health: [Mutex<WatchHealth>; Resource::ALL.len()],
    phase: Mutex<Phase>,
    /// Counts changes of the health and the phase, each made while its lock is held.
    changes: AtomicU64,
    /// The `changes` seen by the last check that found the cache ready with every watch steady
    /// (an answer time cannot change); `u64::MAX` before any. While `changes` still equals
    /// it, the cache is ready without looking at each watch again.
    steady_at: AtomicU64,
    client: OnceLock<kube::Client>,
    counters: Counters,
    options: CacheOptions,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("phase", &*lock(&self.phase))
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Plain state (health, phase, interned strings): a panic cannot leave it half-written.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Cache {
    /// An idle cache: nothing is watched until `watch::start` (the view answers
    /// [`ViewError::NotReady`] until the watches have listed).
    pub fn new(options: CacheOptions) -> Self {
        Self {
            index: RwLock::new(Index::default()),
            interner: Mutex::new(Interner::default()),
            health: Default::default(),
            phase: Mutex::new(Phase::Idle),
            changes: AtomicU64::new(0),
            steady_at: AtomicU64::new(u64::MAX),
            client: OnceLock::new(),
            counters: Counters::default(),
            options,
        }
    }

    /// The chain needs the cluster and the client is being built; `error` is the last
    /// attempt's failure. The view is not ready meanwhile.
    pub(crate) fn connecting(&self, error: Option<String>) {
        if error.is_some() {
            self.counters.connect_error();
        }
        let mut phase = self.phase_mut();
        if *phase != Phase::Watching {
            *phase = Phase::Connecting(error);
        }
    }

    /// Keeps the client for live calls (the first one given stays).
    pub(crate) fn set_client(&self, client: kube::Client) {
        let _ = self.client.set(client);
    }

    /// The watches run (`watch::start`), or, in tests and benches, the cache is fed by hand
    /// through `watch::Feeder`s (it is still not ready until every resource has listed).
    pub fn mark_watching(&self) {
        *self.phase_mut() = Phase::Watching;
    }

    /// The counters the watches increment.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The options.
    pub fn options(&self) -> &CacheOptions {
        &self.options
    }

    /// Runs `f` on the index under the write lock (a poisoned lock stays poisoned, so the view
    /// keeps refusing).
    pub fn write<R>(&self, f: impl FnOnce(&mut Index) -> R) -> R {
        let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
        f(&mut index)
    }

    /// Runs `f` on the index under the read lock; a poisoned lock is
    /// [`ViewError::NotReady`].
    pub fn read<R>(&self, f: impl FnOnce(&Index) -> R) -> Result<R, ViewError> {
        let index = self.index.read().map_err(|_| {
            ViewError::NotReady(
                "the cluster cache was left inconsistent by a panic; restart warrant".into(),
            )
        })?;
        Ok(f(&index))
    }

    /// Runs `f` with the interner.
    pub(crate) fn intern<R>(&self, f: impl FnOnce(&mut Interner) -> R) -> R {
        f(&mut lock(&self.interner))
    }

    /// The health of `resource`'s watch, to change it.
    pub fn health(&self, resource: Resource) -> MutexGuard<'_, WatchHealth> {
        let health = lock(&self.health[resource.slot()]);
        // Counted once the lock is held: a check that saw the old count waits for this lock
        // and sees the change, or sees the new count.
        self.changes.fetch_add(1, Ordering::SeqCst);
        health
    }

    /// The phase, to change it (counted as [`Cache::health`] counts).
    fn phase_mut(&self) -> MutexGuard<'_, Phase> {
        let phase = lock(&self.phase);
        self.changes.fetch_add(1, Ordering::SeqCst);
        phase
    }

    /// `Ok` when the view answers; else why not. A decision asks several times; while nothing
    /// changed since a check found every watch steady, the answer is that one's.
    fn check(&self, now: Instant) -> Result<(), ViewError> {
        let seen = self.changes.load(Ordering::SeqCst);
        if self.steady_at.load(Ordering::SeqCst) == seen {
            return self.read(|_| ());
        }
        let mut steady = true;
        match &*lock(&self.phase) {
            Phase::Idle => {
                return Err(ViewError::NotReady(
                    "the cluster cache is not open yet (it opens once the chain has a DeletionGuard)"
                        .into(),
                ));
            }
            Phase::Connecting(None) => {
                return Err(ViewError::NotReady("connecting to the API server".into()));
            }
            Phase::Connecting(Some(e)) => {
                return Err(ViewError::NotReady(format!(
                    "cannot connect to the API server: {e}"
                )));
            }
            Phase::Watching => {}
        }
        let problems: Vec<String> = Resource::ALL
            .into_iter()
            .filter_map(|r| {
                let health = lock(&self.health[r.slot()]);
                steady &= health.is_steady();
                let why = health.check(now, &self.options.limits).err()?;
                Some(format!("{}: {why}", r.plural()))
            })
            .collect();
        if !problems.is_empty() {
            return Err(ViewError::NotReady(problems.join("; ")));
        }
        self.read(|_| ())?;
        if steady {
            self.steady_at.store(seen, Ordering::SeqCst);
        }
        Ok(())
    }

    /// What the metrics show at `now`; `None` while idle.
    pub fn snapshot(&self, now: Instant) -> Option<Snapshot> {
        if *lock(&self.phase) == Phase::Idle {
            return None;
        }
        let ready = self.check(now).is_ok();
        let objects = self
            .read(|i| Resource::ALL.into_iter().map(|r| (r, i.len(r))).collect())
            .unwrap_or_default();
        let ages = Resource::ALL
            .into_iter()
            .filter_map(|r| Some((r, lock(&self.health[r.slot()]).age(now)?)))
            .collect();
        Some(Snapshot {
            ready,
            objects,
            ages,
        })
    }
}

impl ClusterView for Cache {
    fn ready(&self) -> Result<(), ViewError> {
        self.check(Instant::now())
    }

    fn namespace_label(&self, namespace: &str, key: &str) -> Result<Option<String>, ViewError> {
        self.ready()?;
        self.read(|i| i.namespace_label(namespace, key))
    }

    fn labelled_inside(&self, namespace: &str, key: &str) -> Result<LabelValues, ViewError> {
        self.ready()?;
        self.read(|i| i.labelled_inside(namespace, key))
    }

    fn dependents(
        &self,
        target: &ObjectRef<'_>,
        object: Option<&Subject>,
    ) -> Result<Dependents, ViewError> {
        self.ready()?;
        self.read(|i| i.dependents(target, object))
    }

    fn remaining_objects<'a>(&'a self, crd: &'a Subject) -> ViewFuture<'a, Result<u64, ViewError>> {
        Box::pin(async move {
            // A live call: it needs the client, not the watches.
            let client = self.client.get().ok_or_else(|| match self.ready() {
                Err(e) => e,
                Ok(()) => ViewError::NotReady("no cluster client yet".into()),
            })?;
            crd::remaining_objects(client, crd, self.options.api_timeout).await
        })
    }
}
