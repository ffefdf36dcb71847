//! The answers of the live traffic source, by rendered query, each reused for the configured
//! lifetime: a deletion burst asks Prometheus once per target, not once per request. Only
//! answers are kept; a failure is asked again next time. Bounded: when full, expired entries go,
//! and if none has expired the cache starts over.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;
use tokio::time::Instant;

/// The most queries remembered.
const MAX_ENTRIES: usize = 4096;

/// Rates by query, each with the instant it was measured.
#[derive(Debug)]
pub(crate) struct RateCache {
    ttl: Duration,
    entries: Mutex<HashMap<String, (Instant, f64)>>,
}

impl RateCache {
    /// An empty cache keeping answers for `ttl`.
    pub(crate) fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            entries: Mutex::default(),
        }
    }

    /// The rate of `query` if measured less than the lifetime before `now`.
    pub(crate) fn get(&self, query: &str, now: Instant) -> Option<f64> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries
            .get(query)
            .filter(|(at, _)| now.saturating_duration_since(*at) < self.ttl)
            .map(|(_, rate)| *rate)
    }

    /// Remembers the rate of `query` measured at `now`.
    pub(crate) fn put(&self, query: &str, rate: f64, now: Instant) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() >= MAX_ENTRIES && !entries.contains_key(query) {
            entries.retain(|_, (at, _)| now.saturating_duration_since(*at) < self.ttl);
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
        }
        entries.insert(query.to_owned(), (now, rate));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_reused_for_its_lifetime_only() {
        let cache = RateCache::new(Duration::from_secs(30));
        let t0 = Instant::now();
        assert_eq!(cache.get("q", t0), None);
        cache.put("q", 12.5, t0);
        assert_eq!(cache.get("q", t0 + Duration::from_secs(29)), Some(12.5));
        assert_eq!(cache.get("q", t0 + Duration::from_secs(30)), None);
        assert_eq!(cache.get("other", t0), None);
    }

    #[test]
    fn a_full_cache_stays_bounded() {
        let cache = RateCache::new(Duration::from_secs(30));
        let t0 = Instant::now();
        for i in 0..MAX_ENTRIES + 10 {
            cache.put(&i.to_string(), 1.0, t0);
        }
        let len = cache.entries.lock().unwrap().len();
        assert!(len <= MAX_ENTRIES, "{len}");
        let last = (MAX_ENTRIES + 9).to_string();
        assert_eq!(cache.get(&last, t0), Some(1.0));
    }
}
