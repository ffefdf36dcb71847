//! The ticket webhook's answers, kept for their TTL: an Approved ticket for `approvedTTL`, any
//! other answer (not found, Pending, Rejected, Expired) for `unapprovedTTL`, a failure never
//! (the next review asks again). Keyed by the digest of the request body (ticket id, target and
//! requester), so an answer is reused only for the same question. Bounded by bytes: an entry
//! weighs the answer's body plus a fixed overhead.

use super::contract::Looked;
use crate::authorizer::webhook::cache::VerdictKey;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most bytes the answers of one ticket webhook hold.
const MAX_BYTES: u64 = 8 << 20;
/// What an entry costs besides its answer.
const ENTRY_OVERHEAD: usize = 512;

/// One kept answer.
#[derive(Debug, Clone)]
struct Kept {
    looked: Arc<Looked>,
    until: Instant,
    bytes: usize,
}

struct Lifetime;

impl moka::Expiry<VerdictKey, Kept> for Lifetime {
    fn expire_after_create(&self, _: &VerdictKey, value: &Kept, at: Instant) -> Option<Duration> {
        Some(value.until.saturating_duration_since(at))
    }
}

/// How long answers are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ttls {
    /// An Approved ticket.
    pub approved: Duration,
    /// Any other answer.
    pub unapproved: Duration,
}

/// The kept answers.
pub struct TicketCache {
    entries: moka::sync::Cache<VerdictKey, Kept>,
    ttls: Ttls,
}

impl std::fmt::Debug for TicketCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TicketCache")
            .field("entries", &self.entries.entry_count())
            .field("ttls", &self.ttls)
            .finish()
    }
}

impl TicketCache {
    /// An empty cache keeping answers for `ttls`.
    pub fn new(ttls: Ttls) -> Self {
        let entries = moka::sync::Cache::builder()
            .max_capacity(MAX_BYTES)
            .weigher(|_: &VerdictKey, v: &Kept| {
                u32::try_from(v.bytes + ENTRY_OVERHEAD).unwrap_or(u32::MAX)
            })
            .expire_after(Lifetime)
            .build();
        Self { entries, ttls }
    }

    /// The answer kept for `key`, while fresh.
    pub fn get(&self, key: &VerdictKey) -> Option<Arc<Looked>> {
        let kept = self.entries.get(key)?;
        (Instant::now() < kept.until).then_some(kept.looked)
    }

    /// Keeps `looked` (from a body of `bytes` bytes) for its TTL; a TTL of zero keeps nothing.
    pub fn store(&self, key: VerdictKey, looked: Arc<Looked>, bytes: usize) {
        let ttl = match looked.is_approved() {
            true => self.ttls.approved,
            false => self.ttls.unapproved,
        };
        if ttl.is_zero() {
            return;
        }
        let until = Instant::now() + ttl;
        self.entries.insert(
            key,
            Kept {
                looked,
                until,
                bytes,
            },
        );
    }
}
