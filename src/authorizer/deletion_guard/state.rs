//! Guard state that outlives one chain: rate-limit buckets and the ticket source (a ticket
//! webhook's kept answers included) carry over a configuration reload when the guard's settings
//! and failure policy are unchanged. The chain
//! keeps the [`GuardStates`] of the guards it built, so that the next build can find them.

use super::cluster_buckets::SharedBuckets;
use super::rate::Buckets;
use super::tickets::webhook::WebhookTickets;
use super::tickets::webhook::metrics::TicketLookupMetrics;
use super::tickets::{TicketFeed, TicketSource};
use super::traffic::LiveTrafficSource;
use super::unusual::Baselines;
use crate::config::FailurePolicy;
use crate::config::model::guard::GuardSpec;
use crate::names::AuthorizerName;
use std::collections::HashMap;
use std::sync::Arc;

/// What a guard's state is linked to besides its settings.
#[derive(Debug, Default)]
pub struct Links {
    /// The cluster's buckets, for `scope: Cluster` limits.
    pub cluster: Option<SharedBuckets>,
    /// The cluster's tickets, for `source: {cluster: {}}` (without one, such tickets are
    /// unavailable: the failure policy applies).
    pub feed: Option<Arc<TicketFeed>>,
    /// The series of a ticket webhook, for `source: {webhook: ...}`.
    pub lookups: TicketLookupMetrics,
}

/// One guard's settings and live state.
#[derive(Debug)]
pub struct GuardShared {
    /// The settings.
    pub spec: GuardSpec,
    /// Its failure policy (part of the identity for carrying state over).
    pub failure_policy: FailurePolicy,
    /// Rate-limit buckets.
    pub buckets: Buckets,
    /// The unusual-deletion baselines of `scope: Replica` (carried over every reload: a
    /// changed setting does not forget what was learnt).
    pub baselines: Arc<Baselines>,
    /// The tickets, when a file or the cluster is configured.
    pub tickets: Option<Arc<TicketSource>>,
    /// The cluster's buckets (`scope: Cluster` limits), when warrant has a cluster.
    pub cluster: Option<SharedBuckets>,
    /// The live traffic source, when `liveTraffic` is configured.
    pub traffic: Option<LiveTrafficSource>,
}

impl GuardShared {
    /// Fresh state for a spec (opens and watches the tickets file).
    pub fn new(spec: &GuardSpec, failure_policy: FailurePolicy) -> Arc<Self> {
        Self::new_in(spec, failure_policy, None, None)
    }

    /// Fresh state for a spec, with the cluster's buckets for its `scope: Cluster` limits and
    /// the cluster's tickets (`feed`) when its tickets come from the cluster (without a feed,
    /// such tickets are unavailable: the failure policy applies).
    pub(crate) fn new_in(
        spec: &GuardSpec,
        failure_policy: FailurePolicy,
        cluster: Option<SharedBuckets>,
        feed: Option<Arc<TicketFeed>>,
    ) -> Arc<Self> {
        let links = Links {
            cluster,
            feed,
            ..Links::default()
        };
        Self::learnt(spec, failure_policy, links, Arc::default())
    }

    /// Fresh state for a spec, keeping the baselines learnt so far.
    fn learnt(
        spec: &GuardSpec,
        failure_policy: FailurePolicy,
        links: Links,
        baselines: Arc<Baselines>,
    ) -> Arc<Self> {
        let Links {
            cluster,
            feed,
            lookups,
        } = links;
        let t = &spec.tickets;
        let tickets = match (&t.file, &t.cluster, &t.webhook) {
            (Some(file), _, _) => Some(TicketSource::open(file)),
            (None, Some(_), _) => Some(TicketSource::cluster(
                feed.unwrap_or_else(|| Arc::new(TicketFeed::unconnected())),
            )),
            (None, None, Some(w)) => Some(TicketSource::webhook(WebhookTickets::new(w, lookups))),
            (None, None, None) => None,
        };
        Arc::new(Self {
            tickets,
            spec: spec.clone(),
            failure_policy,
            buckets: Buckets::default(),
            baselines,
            cluster,
            traffic: spec.live_traffic.as_ref().map(LiveTrafficSource::new),
        })
    }

    /// The previous state if it still applies, else fresh state.
    pub(crate) fn reuse_or_new(
        previous: Option<&Arc<Self>>,
        spec: &GuardSpec,
        failure_policy: FailurePolicy,
        links: Links,
    ) -> Arc<Self> {
        match previous {
            Some(p) if p.spec == *spec && p.failure_policy == failure_policy => {
                // A reload may mean the tickets file changed too: read it again now.
                if let Some(t) = &p.tickets {
                    t.reload();
                }
                p.clone()
            }
            Some(p) => Self::learnt(spec, failure_policy, links, p.baselines.clone()),
            None => Self::learnt(spec, failure_policy, links, Arc::default()),
        }
    }
}

/// The guards of one chain, by name.
#[derive(Debug, Default)]
pub struct GuardStates(HashMap<AuthorizerName, Arc<GuardShared>>);

impl GuardStates {
    /// The state of a guard.
    pub fn get(&self, name: &AuthorizerName) -> Option<&Arc<GuardShared>> {
        self.0.get(name)
    }

    /// Adds a guard's state.
    pub fn insert(&mut self, name: AuthorizerName, state: Arc<GuardShared>) {
        self.0.insert(name, state);
    }
}
