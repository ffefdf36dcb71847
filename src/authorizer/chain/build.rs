//! Building a chain's entries from a validated configuration: one entry per authorizer, in file
//! order, each with its authorizer, matchConditions and metric series; webhook and guard state
//! carried over from the chain being replaced where the settings are unchanged.

use super::entry::Entry;
use super::error::BuildError;
use crate::authorizer::conditional::{self, Catalog};
use crate::authorizer::deletion_guard::tickets::webhook::metrics::TicketLookupMetrics;
use crate::authorizer::deletion_guard::{
    self, ClusterBuckets, DeletionGuard, GuardShared, GuardStates, Links, SharedBuckets,
};
use crate::authorizer::metrics::Families;
use crate::authorizer::webhook::cache::CacheBytes;
use crate::authorizer::webhook::retry::Backoff;
use crate::authorizer::webhook::{self, WebhookRuntime, WebhookStates};
use crate::authorizer::{AlwaysAllow, AlwaysDeny, Authorizer, MatchConditions, Policy};
use crate::config::{AuthorizerConfig, AuthorizerSpec, Config, Mode, WebhookConfig};
use std::sync::Arc;

/// What building the entries needs: runtime handles, and the state of the chain being
/// replaced, which carries over where the settings are unchanged.
pub(super) struct Carried<'a> {
    /// The families every entry resolves its metric handles from.
    pub(super) metrics: &'a Families,
    /// The retry schedule of webhook authorizers.
    pub(super) webhook_backoff: Backoff,
    /// The byte bound of each webhook's verdict cache.
    pub(super) webhook_cache: CacheBytes,
    /// Where `scope: Cluster` rate limits keep their buckets.
    pub(super) cluster_buckets: &'a Option<Arc<dyn ClusterBuckets>>,
    /// The cluster's DeletionTickets.
    pub(super) ticket_feed: &'a Option<Arc<deletion_guard::tickets::TicketFeed>>,
    /// The replaced chain's webhooks.
    pub(super) webhooks: Option<&'a WebhookStates>,
    /// The replaced chain's guards.
    pub(super) guards: Option<&'a GuardStates>,
}

/// The entries of a configuration, with the state they collected.
#[derive(Default)]
pub(super) struct Collected {
    /// The entries, in file order.
    pub(super) entries: Vec<Entry>,
    /// Their webhooks' state.
    pub(super) webhooks: WebhookStates,
    /// Their guards' state.
    pub(super) guards: GuardStates,
}

/// One entry per configured authorizer, in file order.
pub(super) fn entries(config: &Config, ctx: &Carried<'_>) -> Result<Collected, BuildError> {
    let mut collected = Collected::default();
    for a in &config.authorizers {
        let entry = entry(a, ctx, &mut collected)?;
        collected.entries.push(entry);
    }
    Ok(collected)
}

/// The entry of one configured authorizer.
fn entry(
    a: &AuthorizerConfig,
    ctx: &Carried<'_>,
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
    ctx: &Carried<'_>,
    collected: &mut Collected,
) -> Result<(Box<dyn Authorizer>, Catalog), BuildError> {
    Ok(match &a.spec {
        AuthorizerSpec::AlwaysAllow => (Box::new(AlwaysAllow), Catalog::default()),
        AuthorizerSpec::AlwaysDeny => (Box::new(AlwaysDeny), Catalog::default()),
        AuthorizerSpec::Policy(p) => (
            Box::new(Policy::new(p, &a.name, ctx.metrics)),
            conditional::policy_catalog(p),
        ),
        AuthorizerSpec::Webhook(settings) => {
            let core = build_webhook(a, settings, ctx)?;
            collected.webhooks.insert(core.clone());
            (Box::new(webhook::Webhook::new(core)), Catalog::default())
        }
        AuthorizerSpec::DeletionGuard(g) => {
            let (guard, catalog) = guard(a, g, ctx, collected)?;
            (Box::new(guard), catalog)
        }
    })
}

/// A deletion guard over its state (carried over when unchanged), with its label conditions
/// when the entry has `conditions:`.
fn guard(
    a: &AuthorizerConfig,
    g: &deletion_guard::GuardSpec,
    ctx: &Carried<'_>,
    collected: &mut Collected,
) -> Result<(DeletionGuard, Catalog), BuildError> {
    let previous = ctx.guards.and_then(|g| g.get(&a.name));
    let buckets = ctx.cluster_buckets.clone().map(|store| SharedBuckets {
        guard: a.name.to_string(),
        store,
    });
    let links = Links {
        cluster: buckets,
        feed: ctx.ticket_feed.clone(),
        lookups: TicketLookupMetrics::new(ctx.metrics, a.name.as_str()),
    };
    let shared = GuardShared::reuse_or_new(previous, g, a.failure_policy, links);
    if let Some(source) = shared.tickets.as_ref().and_then(|t| t.build_error()) {
        return Err(BuildError::TicketWebhook {
            name: a.name.clone(),
            source: source.clone(),
        });
    }
    collected.guards.insert(a.name.clone(), shared.clone());
    let guard = DeletionGuard::new(shared, &a.name, ctx.metrics);
    if a.conditions.is_some()
        && let Some((map, authored)) = conditional::guard_conditions(g)
    {
        return Ok((guard.with_label_conditions(map), authored));
    }
    Ok((guard, Catalog::default()))
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
    ctx: &Carried<'_>,
) -> Result<Arc<webhook::Core>, BuildError> {
    let previous = ctx.webhooks.and_then(|w| w.get(&a.name));
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
