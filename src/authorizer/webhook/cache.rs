//! The verdict cache of one downstream webhook (upstream: an LRU of 8192 entries with per-entry
//! expiry, `webhook.go`). moka holds each status under a digest of the canonical JSON of the v1
//! spec.
//!
//! An entry is *fresh* for `authorizedTTL` when `allowed` is true (also when `denied` is true as
//! well) or when it is a conditional decision the review asked for (upstream's
//! `sendSARWebhook`, v0.38.0-beta.0), and `unauthorizedTTL` otherwise; moka keeps it for that
//! TTL plus `staleIfError`, so an expired verdict can still be served when the downstream
//! fails. Keys are digests of the canonical spec and of the `authorizationOptions` sent
//! downstream (`Core::key`), so entries are small and a review that opted in to conditions and
//! one that did not never share an entry. The cache is bounded by entries and by bytes at once:
//! an entry weighs its key and its answer plus [`ENTRY_OVERHEAD`], and at least [`CacheBytes`] /
//! [`MAX_ENTRIES`], so at most [`MAX_ENTRIES`] small entries fit and entries with long answers
//! are bounded by bytes. (Memory of an evicted entry returns lazily: moka's table frees it once
//! no thread can still be reading it.) Upstream bounds entries only (its keys are bounded by the
//! request size); kube-apiserver has no flag for it, so the byte bound is warrant's own
//! `--webhook-cache-max-bytes`, per Webhook entry.

use super::client::DownstreamStatus;
use k8s_openapi::api::authorization::v1::SubjectAccessReviewSpec;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// At most this many entries (upstream's cache size).
pub const MAX_ENTRIES: u64 = 8192;
/// The default byte bound of one webhook's cache.
pub(crate) const DEFAULT_MAX_BYTES: u64 = 32 << 20;
/// What one entry costs besides its key and reason: the key's and status's allocations, and
/// moka's node, deque and timer-wheel bookkeeping (measured at about 300 bytes; rounded up).
pub(crate) const ENTRY_OVERHEAD: usize = 512;

/// A cache key: the SHA-256 of the canonical spec and options (see `Webhook::key`). Kept as
/// the 32 bytes themselves, not as text: an entry is smaller and the key is `Copy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VerdictKey(pub [u8; 32]);

impl std::fmt::Display for VerdictKey {
    /// Base64 without padding, for logs and tests.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use base64::Engine;
        f.write_str(&base64::engine::general_purpose::STANDARD_NO_PAD.encode(self.0))
    }
}

/// The most bytes one webhook's verdict cache holds (`--webhook-cache-max-bytes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheBytes(pub u64);

impl Default for CacheBytes {
    fn default() -> Self {
        Self(DEFAULT_MAX_BYTES)
    }
}
/// Requests whose requester-controlled attributes are this long or longer are not cached
/// (upstream `shouldCache`, `maxControlledAttrCacheSize`).
pub(crate) const MAX_CACHEABLE_ATTRIBUTES: usize = 10_000;

/// One cached answer.
#[derive(Debug, Clone)]
pub struct CachedStatus {
    /// The downstream's status.
    pub status: Arc<DownstreamStatus>,
    /// Served as a hit until then.
    pub(crate) fresh_until: Instant,
    /// Kept (for staleIfError) until then.
    pub(crate) keep_until: Instant,
}

impl CachedStatus {
    /// Whether the entry is still fresh at `now`.
    pub(crate) fn is_fresh(&self, now: Instant) -> bool {
        now < self.fresh_until
    }

    /// Whether the entry may still be served after a downstream failure at `now`.
    pub(crate) fn may_serve_stale(&self, now: Instant) -> bool {
        now < self.keep_until
    }
}

struct Lifetime;

impl moka::Expiry<VerdictKey, CachedStatus> for Lifetime {
    fn expire_after_create(
        &self,
        _key: &VerdictKey,
        value: &CachedStatus,
        created_at: Instant,
    ) -> Option<Duration> {
        Some(value.keep_until.saturating_duration_since(created_at))
    }

    fn expire_after_update(
        &self,
        key: &VerdictKey,
        value: &CachedStatus,
        updated_at: Instant,
        _duration_until_expiry: Option<Duration>,
    ) -> Option<Duration> {
        self.expire_after_create(key, value, updated_at)
    }
}

/// Which answers are stored and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CachePolicy {
    /// TTL of allowed answers; `None` when `cacheAuthorizedRequests: false`.
    pub authorized: Option<Duration>,
    /// TTL of denied and no-opinion answers; `None` when `cacheUnauthorizedRequests: false`.
    pub unauthorized: Option<Duration>,
    /// How long past its TTL an entry is kept for `staleIfError`.
    pub stale_if_error: Duration,
}

impl CachePolicy {
    /// Whether any answer is ever stored.
    pub(crate) fn is_enabled(&self) -> bool {
        self.authorized.is_some() || self.unauthorized.is_some()
    }
}

/// The verdict cache.
pub struct VerdictCache {
    entries: moka::sync::Cache<VerdictKey, CachedStatus>,
    policy: CachePolicy,
}

impl std::fmt::Debug for VerdictCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerdictCache")
            .field("entries", &self.entries.entry_count())
            .field("policy", &self.policy)
            .finish()
    }
}

/// An entry's weight under `bound`: its bytes, and at least a [`MAX_ENTRIES`]th of the bound.
fn weight(bound: CacheBytes, key: &VerdictKey, value: &CachedStatus) -> u32 {
    let answer = value.status.reason.len().max(value.status.body_bytes);
    let bytes = key.0.len() + answer + ENTRY_OVERHEAD;
    let floor = usize::try_from(bound.0 / MAX_ENTRIES).unwrap_or(usize::MAX);
    u32::try_from(bytes.max(floor)).unwrap_or(u32::MAX)
}

impl VerdictCache {
    /// An empty cache with `policy`, holding at most `bound` bytes.
    pub fn new(policy: CachePolicy, bound: CacheBytes) -> Self {
        Self {
            entries: moka::sync::Cache::builder()
                .max_capacity(bound.0)
                .weigher(move |k: &VerdictKey, v: &CachedStatus| weight(bound, k, v))
                // Upstream's cache is an LRU (`cache.NewLRUExpireCache(8192)` in webhook.go): a new answer is
                // always kept and the least recently used one goes. moka's default TinyLFU
                // could refuse a new answer in a flood of unique reviews.
                .eviction_policy(moka::policy::EvictionPolicy::lru())
                .expire_after(Lifetime)
                .build(),
            policy,
        }
    }

    /// Whether lookups are worth making.
    pub(crate) fn is_enabled(&self) -> bool {
        self.policy.is_enabled()
    }

    /// The entry under `key`, fresh or (within staleIfError) expired.
    pub fn get(&self, key: &VerdictKey) -> Option<CachedStatus> {
        self.entries.get(key)
    }

    /// Stores an answer if the policy keeps answers of its kind; `asked_conditions`: the review
    /// sent downstream opted in to conditions (then a conditional answer counts as authorized).
    pub fn store(
        &self,
        key: VerdictKey,
        status: Arc<DownstreamStatus>,
        now: Instant,
        asked_conditions: bool,
    ) {
        let authorized =
            status.allowed || (asked_conditions && status.conditional_decision.is_some());
        let ttl = if authorized {
            self.policy.authorized
        } else {
            self.policy.unauthorized
        };
        let Some(ttl) = ttl else { return };
        let fresh_until = now + ttl;
        self.entries.insert(
            key,
            CachedStatus {
                status,
                fresh_until,
                keep_until: fresh_until + self.policy.stale_if_error,
            },
        );
    }

    /// How many entries are held (approximate, as moka counts).
    pub fn len(&self) -> u64 {
        self.entries.run_pending_tasks();
        self.entries.entry_count()
    }

    /// Whether the cache holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Upstream's `shouldCache`: the requester-controlled attributes (namespace, verb, group,
/// version, resource, subresource, name, path) must total under 10,000 characters; user,
/// groups, extra and selectors do not count.
pub(crate) fn is_cacheable(spec: &SubjectAccessReviewSpec) -> bool {
    let len = |s: &Option<String>| s.as_deref().map_or(0, str::len);
    let total = match (&spec.resource_attributes, &spec.non_resource_attributes) {
        (Some(r), _) => {
            len(&r.namespace)
                + len(&r.verb)
                + len(&r.group)
                + len(&r.version)
                + len(&r.resource)
                + len(&r.subresource)
                + len(&r.name)
        }
        (None, Some(n)) => len(&n.path) + len(&n.verb),
        (None, None) => 0,
    };
    total < MAX_CACHEABLE_ATTRIBUTES
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::authorization::v1::ResourceAttributes;

    /// A key for a test name, as `Webhook::key` makes them (a SHA-256).
    fn k(name: &str) -> VerdictKey {
        use sha2::{Digest, Sha256};
        VerdictKey(Sha256::digest(name.as_bytes()).into())
    }

    fn status(allowed: bool) -> Arc<DownstreamStatus> {
        Arc::new(DownstreamStatus {
            allowed,
            ..Default::default()
        })
    }

    #[test]
    fn split_ttl_switches_and_stale_window() {
        let policy = CachePolicy {
            authorized: Some(Duration::from_secs(300)),
            unauthorized: None,
            stale_if_error: Duration::from_secs(60),
        };
        let c = VerdictCache::new(policy, CacheBytes::default());
        let now = Instant::now();
        c.store(k("a"), status(true), now, false);
        c.store(k("d"), status(false), now, false);
        assert!(c.get(&k("d")).is_none(), "unauthorized caching is off");
        let e = c.get(&k("a")).unwrap();
        assert!(e.is_fresh(now));
        assert!(!e.is_fresh(now + Duration::from_secs(301)));
        assert!(e.may_serve_stale(now + Duration::from_secs(301)));
        assert!(!e.may_serve_stale(now + Duration::from_secs(361)));
    }

    #[test]
    fn entries_are_bounded() {
        let c = VerdictCache::new(always(), CacheBytes::default());
        let now = Instant::now();
        for i in 0..(MAX_ENTRIES + 2000) {
            c.store(k(&format!("key-{i}")), status(true), now, false);
        }
        assert!(c.len() <= MAX_ENTRIES, "{}", c.len());
    }

    fn always() -> CachePolicy {
        CachePolicy {
            authorized: Some(Duration::from_secs(300)),
            unauthorized: Some(Duration::from_secs(300)),
            stale_if_error: Duration::ZERO,
        }
    }

    /// Large answers are bounded by bytes, not by the entry count: 1 MiB holds at most 64
    /// entries of 16 KiB.
    #[test]
    fn large_entries_are_bounded_by_weight() {
        let c = VerdictCache::new(always(), CacheBytes(1 << 20));
        let now = Instant::now();
        let big = Arc::new(DownstreamStatus {
            allowed: true,
            body_bytes: 16 << 10,
            ..Default::default()
        });
        for i in 0..1000 {
            c.store(k(&i.to_string()), big.clone(), now, false);
        }
        assert!(c.len() <= 64, "{}", c.len());
        assert!(c.len() >= 32, "{}", c.len());
    }

    /// A conditional answer is kept for authorizedTTL only when the review asked for it.
    #[test]
    fn conditional_answers_take_the_authorized_ttl_when_asked_for() {
        let c = VerdictCache::new(
            CachePolicy {
                authorized: Some(Duration::from_secs(300)),
                unauthorized: None,
                stale_if_error: Duration::ZERO,
            },
            CacheBytes::default(),
        );
        let conditional = Arc::new(DownstreamStatus {
            conditional_decision: Some(Box::new(
                crate::review::ConditionsAwareDecision::conditions(Default::default()),
            )),
            ..Default::default()
        });
        let now = Instant::now();
        c.store(k("asked"), conditional.clone(), now, true);
        c.store(k("unasked"), conditional, now, false);
        assert!(c.get(&k("asked")).is_some());
        assert!(
            c.get(&k("unasked")).is_none(),
            "unrequested: unauthorizedTTL (off)"
        );
    }

    /// Spec vector 8's rule, at the 10,000 boundary.
    #[test]
    fn large_attributes_are_not_cacheable() {
        let mut spec = SubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                verb: Some("get".into()),
                name: Some("x".repeat(9_996)),
                ..Default::default()
            }),
            user: Some("u".repeat(50_000)),
            ..Default::default()
        };
        assert!(is_cacheable(&spec));
        spec.resource_attributes.as_mut().unwrap().name = Some("x".repeat(9_997));
        assert!(!is_cacheable(&spec));
    }
}
