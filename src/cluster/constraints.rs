//! What pod security admission reads from the cluster: every `SecurityContextConstraints`
//! (a watch of `security.openshift.io/v1`, made into a [`crate::pod_security::Engine`] after
//! each change) and every namespace's pre-allocated values (a metadata watch of Namespaces,
//! keeping the three `openshift.io/sa.scc.*` annotations).
//!
//! Until both watches have listed, and while either is failing, the cache answers
//! [`ConstraintCacheError`]: the admission applies its failure policy, visibly, instead of
//! judging against a partial or stale set (OpenShift's plugin likewise waits for its informers
//! to sync, `sccadmission/admission.go`, `waitForReadyState`).

use crate::pod_security::{Engine, Namespace, SecurityContextConstraints};
use arc_swap::ArcSwap;
use futures_util::StreamExt;
use k8s_openapi::api::core::v1::Namespace as NamespaceObject;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PartialObjectMeta};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event, watcher};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use thiserror::Error;
use tokio::task::JoinHandle;

/// Why the cache cannot answer now.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConstraintCacheError {
    /// No cluster connection is configured.
    #[error("no cluster connection is configured to watch securitycontextconstraints")]
    NoCluster,
    /// A watch has not listed yet.
    #[error("the {0} watch has not listed yet")]
    NotSynced(&'static str),
    /// A watch is failing (it retries with backoff).
    #[error("the {what} watch is failing: {error}")]
    Failing {
        /// `securitycontextconstraints` or `namespaces`.
        what: &'static str,
        /// The last error.
        error: String,
    },
}

#[derive(Debug, Default)]
struct WatchState {
    listed: bool,
    error: Option<String>,
}

impl WatchState {
    fn check(&self, what: &'static str) -> Result<(), ConstraintCacheError> {
        if let Some(error) = &self.error {
            return Err(ConstraintCacheError::Failing {
                what,
                error: error.clone(),
            });
        }
        if !self.listed {
            return Err(ConstraintCacheError::NotSynced(what));
        }
        Ok(())
    }
}

#[derive(Debug, Default)]
struct State {
    constraints: BTreeMap<String, SecurityContextConstraints>,
    listing_constraints: Option<BTreeMap<String, SecurityContextConstraints>>,
    namespaces: HashMap<String, Namespace>,
    listing_namespaces: Option<HashMap<String, Namespace>>,
    constraint_watch: WatchState,
    namespace_watch: WatchState,
}

/// The constraints and namespaces, kept current by watches.
#[derive(Debug, Default)]
pub struct ConstraintCache {
    unconnected: std::sync::atomic::AtomicBool,
    state: Mutex<State>,
    engine: ArcSwap<Engine>,
}

const CONSTRAINTS: &str = "securitycontextconstraints";
const NAMESPACES: &str = "namespaces";

/// The API resource of the constraints.
pub fn api_resource() -> ApiResource {
    use crate::pod_security::constraint::{GROUP, KIND, RESOURCE, VERSION};
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(GROUP, VERSION, KIND), RESOURCE)
}

impl ConstraintCache {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A cache already listed with `constraints` and `namespaces`, as saved files give them
    /// (`warrant check --pod`, `warrant test`).
    pub fn listed(
        constraints: Vec<SecurityContextConstraints>,
        namespaces: Vec<Namespace>,
    ) -> Self {
        let listed = || WatchState {
            listed: true,
            error: None,
        };
        let state = State {
            constraints: constraints
                .into_iter()
                .map(|c| (c.name().to_owned(), c))
                .collect(),
            namespaces: namespaces
                .into_iter()
                .map(|n| (n.name.clone(), n))
                .collect(),
            constraint_watch: listed(),
            namespace_watch: listed(),
            ..State::default()
        };
        let cache = Self::default();
        cache.rebuild(&state);
        *cache.state() = state;
        cache
    }

    /// Marks the cache as having no cluster to watch: every question is an error.
    pub fn unconnected(&self) {
        self.unconnected
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// The engine of the current constraints.
    pub fn engine(&self) -> Result<Arc<Engine>, ConstraintCacheError> {
        if self.unconnected.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(ConstraintCacheError::NoCluster);
        }
        let state = self.state();
        state.constraint_watch.check(CONSTRAINTS)?;
        drop(state);
        Ok(self.engine.load_full())
    }

    /// The namespace `name` (without annotations when the cache has not seen it).
    pub fn namespace(&self, name: &str) -> Result<Namespace, ConstraintCacheError> {
        let state = self.state();
        state.namespace_watch.check(NAMESPACES)?;
        Ok(state
            .namespaces
            .get(name)
            .cloned()
            .unwrap_or_else(|| Namespace {
                name: name.to_owned(),
                ..Namespace::default()
            }))
    }

    fn rebuild(&self, state: &State) {
        let engine = Engine::new(state.constraints.values().cloned());
        self.engine.store(Arc::new(engine));
    }

    /// Applies one event of the constraints' watch.
    pub fn constraint_event(&self, event: Event<DynamicObject>) {
        let mut state = self.state();
        match event {
            Event::Init => state.listing_constraints = Some(BTreeMap::new()),
            Event::InitApply(object) => {
                if let Some((name, constraint)) = decode(object) {
                    state
                        .listing_constraints
                        .get_or_insert_default()
                        .insert(name, constraint);
                }
            }
            Event::InitDone => {
                state.constraints = state.listing_constraints.take().unwrap_or_default();
                state.constraint_watch = WatchState {
                    listed: true,
                    error: None,
                };
                self.rebuild(&state);
            }
            Event::Apply(object) => {
                if let Some((name, constraint)) = decode(object) {
                    state.constraints.insert(name, constraint);
                    state.constraint_watch.error = None;
                    self.rebuild(&state);
                }
            }
            Event::Delete(object) => {
                if let Some(name) = object.metadata.name {
                    state.constraints.remove(&name);
                    self.rebuild(&state);
                }
            }
        }
    }

    /// Applies one event of the namespaces' watch.
    pub fn namespace_event(&self, event: Event<PartialObjectMeta<NamespaceObject>>) {
        let mut state = self.state();
        let project = |object: PartialObjectMeta<NamespaceObject>| {
            let name = object.metadata.name?;
            let annotations = object.metadata.annotations.unwrap_or_default();
            Some((
                name.clone(),
                Namespace::from_annotations(name, &annotations),
            ))
        };
        match event {
            Event::Init => state.listing_namespaces = Some(HashMap::new()),
            Event::InitApply(object) => {
                if let Some((name, namespace)) = project(object) {
                    state
                        .listing_namespaces
                        .get_or_insert_default()
                        .insert(name, namespace);
                }
            }
            Event::InitDone => {
                state.namespaces = state.listing_namespaces.take().unwrap_or_default();
                state.namespace_watch = WatchState {
                    listed: true,
                    error: None,
                };
            }
            Event::Apply(object) => {
                if let Some((name, namespace)) = project(object) {
                    state.namespaces.insert(name, namespace);
                    state.namespace_watch.error = None;
                }
            }
            Event::Delete(object) => {
                if let Some(name) = object.metadata.name {
                    state.namespaces.remove(&name);
                }
            }
        }
    }

    /// Records a watch error: the cache refuses to answer until the watch recovers.
    fn failed(&self, constraints: bool, error: &watcher::Error) {
        let mut state = self.state();
        let (watch, what) = if constraints {
            (&mut state.constraint_watch, CONSTRAINTS)
        } else {
            (&mut state.namespace_watch, NAMESPACES)
        };
        tracing::error!(watch = what, error = %error, "pod security watch failed; retrying");
        watch.error = Some(error.to_string());
    }

    /// Starts both watches with `client`; they run, retrying with backoff, until the handles
    /// are aborted.
    pub fn start(self: &Arc<Self>, client: &kube::Client) -> Vec<JoinHandle<()>> {
        let resource = api_resource();
        let constraints = Api::<DynamicObject>::all_with(client.clone(), &resource);
        let namespaces = Api::<PartialObjectMeta<NamespaceObject>>::all(client.clone());
        let config = watcher::Config::default();
        let cache = Arc::clone(self);
        let first = tokio::spawn(async move {
            let stream = watcher(constraints, config).default_backoff();
            let mut stream = std::pin::pin!(stream);
            while let Some(item) = stream.next().await {
                match item {
                    Ok(event) => cache.constraint_event(event),
                    Err(e) => cache.failed(true, &e),
                }
            }
        });
        let cache = Arc::clone(self);
        let second = tokio::spawn(async move {
            let stream = watcher(namespaces, watcher::Config::default()).default_backoff();
            let mut stream = std::pin::pin!(stream);
            while let Some(item) = stream.next().await {
                match item {
                    Ok(event) => cache.namespace_event(event),
                    Err(e) => cache.failed(false, &e),
                }
            }
        });
        vec![first, second]
    }
}

/// A watched object as a constraint; a malformed one is logged and skipped.
fn decode(object: DynamicObject) -> Option<(String, SecurityContextConstraints)> {
    let name = object.metadata.name.clone()?;
    let mut value = object.data;
    if let Some(map) = value.as_object_mut() {
        map.insert(
            "metadata".to_owned(),
            serde_json::to_value(&object.metadata).unwrap_or_default(),
        );
    }
    match serde_json::from_value(value) {
        Ok(constraint) => Some((name, constraint)),
        Err(error) => {
            tracing::error!(constraint = %name, error = %error, "skipping a malformed SecurityContextConstraints");
            None
        }
    }
}
