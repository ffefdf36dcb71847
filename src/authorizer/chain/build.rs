//! Building a [`Chain`] from a validated configuration: one entry per authorizer, in file
//! order, each with its authorizer, matchConditions and metric series; webhook and guard state
//! carried over from the chain being replaced where the settings are unchanged.

use super::entry::Entry;
use super::error::BuildError;
use super::union::Chain;
use crate::authorizer::conditional::{self, Catalog};
use crate::authorizer::deletion_guard::{
    self, ClusterBuckets, DeletionGuard, GuardShared, GuardStates, SharedBuckets,
};
use crate::authorizer::metrics::Families;
use crate::authorizer::webhook::cache::CacheBytes;
use crate::authorizer::webhook::retry::Backoff;
use crate::authorizer::webhook::{self, WebhookRuntime, WebhookStates};
use crate::authorizer::{AlwaysAllow, AlwaysDeny, Authorizer, MatchConditions, Policy};
use crate::config::{AuthorizerConfig, AuthorizerSpec, Config, Mode, WebhookConfig};
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
}

/// The state a build collects for the chain: its webhooks' and its guards'.
#[derive(Default)]
struct Collected {
    webhooks: WebhookStates,
    guards: GuardStates,
}

impl Chain {
    /// Builds the chain a validated configuration describes, with fresh state and unregistered
    /// metrics (offline tools, tests).
    pub fn build(config: &Config) -> Result<Self, BuildError> {
        Self::build_in(config, &BuildContext::default())
    }

    /// Builds the chain a validated configuration describes, carrying webhook state over from
    /// `ctx.previous` where it still applies.
    pub(crate) fn build_in(config: &Config, ctx: &BuildContext<'_>) -> Result<Self, BuildError> {
        let mut collected = Collected::default();
        let entries = config
            .authorizers
            .iter()
            .map(|a| entry(a, ctx, &mut collected))
            .collect::<Result<Vec<_>, _>>()?;
        let mut chain = Self::new(entries)?;
        chain.webhooks = collected.webhooks;
        chain.guards = collected.guards;
        Ok(chain)
    }
}

/// The entry of one configured authorizer.
fn entry(
    a: &AuthorizerConfig,
    ctx: &BuildContext<'_>,
    collected: &mut Collected,
) -> Result<Entry, BuildError> {
    let authorizer_type = a.spec.authorizer_type();
    let (authorizer, catalog) = authorizer(a, ctx, collected)?;
    Ok(Entry {
        name: a.name.clone(),
        authorizer_type,
        failure_policy: a.failure_policy,
        mode: entry_mode(a),
        authorizer,
        match_conditions: MatchConditions::new(a.match_conditions.clone()),
        metrics: ctx.metrics.entry(authorizer_type, &a.name),
        conditions: a.conditions,
        catalog,
    })
}

/// The authorizer of one configured entry, and the conditions it may author.
fn authorizer(
    a: &AuthorizerConfig,
    ctx: &BuildContext<'_>,
    collected: &mut Collected,
) -> Result<(Box<dyn Authorizer>, Catalog), BuildError> {
    Ok(match &a.spec {
        AuthorizerSpec::AlwaysAllow => (Box::new(AlwaysAllow), Catalog::default()),
        AuthorizerSpec::AlwaysDeny => (Box::new(AlwaysDeny), Catalog::default()),
        AuthorizerSpec::Policy(p) => (
            Box::new(Policy::new(p, &a.name, &ctx.metrics)),
            conditional::policy_catalog(p),
        ),
        AuthorizerSpec::Webhook(settings) => {
            let core = build_webhook(a, settings, ctx)?;
            collected.webhooks.insert(core.clone());
            (Box::new(webhook::Webhook::new(core)), Catalog::default())
        }
        AuthorizerSpec::DeletionGuard(g) => {
            let (guard, catalog) = guard(a, g, ctx, collected);
            (Box::new(guard), catalog)
        }
    })
}

/// A deletion guard over its state (carried over when unchanged), with its label conditions
/// when the entry has `conditions:`.
fn guard(
    a: &AuthorizerConfig,
    g: &deletion_guard::GuardSpec,
    ctx: &BuildContext<'_>,
    collected: &mut Collected,
) -> (DeletionGuard, Catalog) {
    let previous = ctx.previous.and_then(|c| c.guards.get(&a.name));
    let buckets = ctx.cluster_buckets.clone().map(|store| SharedBuckets {
        guard: a.name.to_string(),
        store,
    });
    let shared = GuardShared::reuse_or_new(previous, g, a.failure_policy, buckets);
    collected.guards.insert(a.name.clone(), shared.clone());
    let guard = DeletionGuard::new(shared, &a.name, &ctx.metrics);
    if a.conditions.is_some()
        && let Some((map, authored)) = conditional::guard_conditions(g)
    {
        return (guard.with_label_conditions(map), authored);
    }
    (guard, Catalog::default())
}

/// The mode of an entry: its own, and Observe for a guard whose settings say so (validation
/// makes the two agree; a configuration built by hand cannot make a guard in Observe deny).
fn entry_mode(a: &AuthorizerConfig) -> Mode {
    match &a.spec {
        AuthorizerSpec::DeletionGuard(g) if g.mode.is_observe() => Mode::Observe,
        _ => a.mode,
    }
}

/// Builds (or carries over) the live core of a webhook entry.
fn build_webhook(
    a: &AuthorizerConfig,
    settings: &WebhookConfig,
    ctx: &BuildContext<'_>,
) -> Result<Arc<webhook::Core>, BuildError> {
    let previous = ctx.previous.and_then(|c| c.webhooks.get(&a.name));
    let runtime = WebhookRuntime {
        metrics: ctx.metrics.clone(),
        backoff: ctx.webhook_backoff,
        cache_bytes: ctx.webhook_cache,
    };
    webhook::Core::build(&a.name, settings, a.failure_policy, &runtime, previous).map_err(
        |source| BuildError::Webhook {
            name: a.name.clone(),
            source,
        },
    )
}
