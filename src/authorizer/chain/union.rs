//! [`Chain`]: the entries in file order and the loop that consults them for one review
//! (upstream's `union` authorizer), over the whole chain or the validation ring's entries.

use super::answer::Answer;
use super::build::{self, Carried};
use super::entry::Entry;
use super::error::BuildError;
use super::run::Run;
use crate::authorizer::deletion_guard::ClusterBuckets;
use crate::authorizer::deletion_guard::GuardStates;
use crate::authorizer::metrics::Families;
use crate::authorizer::webhook::WebhookStates;
use crate::authorizer::webhook::cache::CacheBytes;
use crate::authorizer::webhook::retry::Backoff;
use crate::authorizer::{Deadline, Input};
use crate::cel::Binding;
use crate::config::model::buffer::BufferSettings;
use crate::config::model::guard::Mode as GuardMode;
use crate::config::{AuthorizerType, Config};
use crate::names::AuthorizerName;
use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;

/// What a build needs beyond the validated configuration: runtime handles and the chain being
/// replaced, whose webhook state (caches, connection pools) carries over for every webhook whose
/// settings and kubeconfig are unchanged.
#[derive(Debug, Default)]
pub struct BuildContext<'a> {
    /// The families every entry resolves its metric handles from, once, at build.
    pub metrics: Families,
    /// The retry schedule of webhook authorizers (upstream's unless a test changed it).
    pub webhook_backoff: Backoff,
    /// The byte bound of each webhook's verdict cache (`--webhook-cache-max-bytes`).
    pub(crate) webhook_cache: CacheBytes,
    /// The chain being replaced, if any.
    pub(crate) previous: Option<&'a Chain>,
    /// Where `scope: Cluster` rate limits keep their buckets (none without a cluster).
    pub(crate) cluster_buckets: Option<Arc<dyn ClusterBuckets>>,
    /// The cluster's DeletionTickets, for guards whose tickets come from the cluster (none:
    /// such a guard's tickets are unavailable, and its failure policy applies).
    pub(crate) ticket_feed: Option<Arc<crate::authorizer::deletion_guard::tickets::TicketFeed>>,
}

/// An immutable, ordered list of authorizers. A review loads one `Chain` snapshot and never sees
/// two configurations.
#[derive(Debug)]
pub struct Chain {
    pub(super) entries: Box<[Entry]>,
    pub(super) webhooks: WebhookStates,
    pub(super) guards: GuardStates,
}

impl Chain {
    /// A chain of the given entries, checked as `union.New` checks them: not empty, names unique.
    pub fn new(entries: Vec<Entry>) -> Result<Self, BuildError> {
        if entries.is_empty() {
            return Err(BuildError::Empty);
        }
        let mut seen = HashSet::new();
        for e in &entries {
            if !seen.insert(e.name.clone()) {
                return Err(BuildError::DuplicateName(e.name.clone()));
            }
        }
        Ok(Self {
            entries: entries.into_boxed_slice(),
            webhooks: WebhookStates::default(),
            guards: Default::default(),
        })
    }

    /// Builds the chain a validated configuration describes, with fresh state and unregistered
    /// metrics (offline tools, tests).
    pub fn build(config: &Config) -> Result<Self, BuildError> {
        Self::build_in(config, &BuildContext::default())
    }

    /// Builds the chain a validated configuration describes, carrying webhook state over from
    /// `ctx.previous` where it still applies.
    pub(crate) fn build_in(config: &Config, ctx: &BuildContext<'_>) -> Result<Self, BuildError> {
        let carried = Carried {
            metrics: &ctx.metrics,
            webhook_backoff: ctx.webhook_backoff,
            webhook_cache: ctx.webhook_cache,
            cluster_buckets: &ctx.cluster_buckets,
            ticket_feed: &ctx.ticket_feed,
            webhooks: ctx.previous.map(|c| &c.webhooks),
            guards: ctx.previous.map(|c| &c.guards),
        };
        let collected = build::entries(config, &carried)?;
        let mut chain = Self::new(collected.entries)?;
        chain.webhooks = collected.webhooks;
        chain.guards = collected.guards;
        Ok(chain)
    }

    /// The live state of this chain's webhook authorizers.
    pub fn webhook_states(&self) -> &WebhookStates {
        &self.webhooks
    }

    /// The entries, in order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Runs the chain for one review. Each authorizer is bounded by `deadline`; one that misses
    /// it has failed, and its failure policy applies.
    pub fn authorize<'a>(
        &'a self,
        input: &'a Input,
        deadline: Deadline,
    ) -> impl Future<Output = Answer> + Send + 'a {
        self.run(input, deadline, |_| true)
    }

    /// Runs the validation ring for one admission request (`input.object` set): the chain's
    /// DeletionGuard entries, in order, with their matchConditions over the request mapped onto
    /// a review. The other types judge SubjectAccessReviews only and are not consulted. The first
    /// Deny wins, as in [`Chain::authorize`]; no Deny means the request is admitted.
    pub fn admit<'a>(
        &'a self,
        input: &'a Input,
        deadline: Deadline,
    ) -> impl Future<Output = Answer> + Send + 'a {
        self.run(input, deadline, |e| {
            e.authorizer_type == AuthorizerType::DeletionGuard
        })
    }

    /// The buffer settings of the chain's DeletionGuard entries that have a `buffer:` block, in
    /// chain order, with the entry's name and whether it enforces (the validation ring records
    /// who asks for the deletion of an object carrying one of their finalizers).
    pub fn buffers(&self) -> impl Iterator<Item = (&AuthorizerName, &BufferSettings, bool)> {
        self.entries
            .iter()
            .filter(|e| e.authorizer_type == AuthorizerType::DeletionGuard)
            .filter_map(|e| {
                let shared = self.guards.get(&e.name)?;
                let buffer = shared.spec.buffer.as_ref()?;
                Some((&e.name, buffer, shared.spec.mode == GuardMode::Enforce))
            })
    }

    /// warrant's own user names, as its guards name them (`warrantServiceAccount`, else the
    /// default `system:serviceaccount:warrant-system:warrant`): the identities that mark a
    /// single-use ticket Used.
    pub fn own_identities(&self) -> Vec<String> {
        let mut own: Vec<String> = self
            .entries
            .iter()
            .filter_map(|e| self.guards.get(&e.name))
            .map(|g| g.spec.warrant_service_account.clone())
            .collect();
        if own.is_empty() {
            own.push(crate::config::model::guard::DEFAULT_WARRANT_SERVICE_ACCOUNT.to_owned());
        }
        own.dedup();
        own
    }

    /// Whether `DeletionTicket` targets may name objects with `*`: only when the chain has
    /// guards and every one of them allows it (`tickets.allowWildcardTargets`).
    pub fn ticket_wildcards(&self) -> crate::tickets::Wildcards {
        let mut guards = self
            .entries
            .iter()
            .filter_map(|e| self.guards.get(&e.name))
            .peekable();
        match guards.peek().is_some() && guards.all(|g| g.spec.tickets.allow_wildcard_targets) {
            true => crate::tickets::Wildcards::Allowed,
            false => crate::tickets::Wildcards::Forbidden,
        }
    }

    /// Whether any entry judges admission requests (the validation ring needs a cluster view).
    pub(crate) fn admits(&self) -> bool {
        self.entries
            .iter()
            .any(|e| e.authorizer_type == AuthorizerType::DeletionGuard)
    }

    /// The chain's run over the entries `consulted` admits. Its state is made before its
    /// future, which then holds each value once (an `async fn` keeps its arguments and the
    /// locals made from them apart); the binding is boxed, and the answer made after the last
    /// await, so the future holds neither. Every review's future is boxed and moved, and stays
    /// within the allocator's per-thread cache this way (see `routes::serve`): 1,056 bytes
    /// with the binding held, 528 with it boxed.
    fn run<'a>(
        &'a self,
        input: &'a Input,
        deadline: Deadline,
        consulted: fn(&Entry) -> bool,
    ) -> impl Future<Output = Answer> + Send + 'a {
        let budget_ms = deadline
            .0
            .saturating_duration_since(tokio::time::Instant::now())
            .as_millis() as u64;
        let mut run = Run::with_capacity(self.entries.len());
        run.conditional = input.review.supports_conditions();
        async move {
            // Bound once, for the matchConditions and rules of every entry.
            let binding = Box::new(Binding::new(input.review.spec(), input.now));
            let answer = 'decided: {
                for entry in self.entries.iter().filter(|e| consulted(e)) {
                    let step = entry.run(input, &binding, deadline, budget_ms).await;
                    entry.record(&step, run.conditional);
                    if let Some(decided) = run.push(entry, step) {
                        break 'decided decided;
                    }
                }
                run.no_opinion()
            };
            self.record_shadows(consulted, &answer);
            answer
        }
    }

    /// Records each consulted entry's shadow verdicts against the answer's decision.
    fn record_shadows(&self, consulted: fn(&Entry) -> bool, answer: &Answer) {
        // The trace holds one step per consulted entry, in order, up to the one that decided.
        for (entry, step) in self
            .entries
            .iter()
            .filter(|e| consulted(e))
            .zip(&answer.trace)
        {
            entry.record_shadows(step, answer.decision);
        }
    }
}
