//! Verdict cache memory (target: 100k cached downstream verdicts in <= 64 MiB): fills
//! one Webhook entry's [`VerdictCache`] with unique allowed answers, keyed as the Webhook keys
//! them (a SHA-256), with a typical downstream reason and body size, and reports the
//! bytes held per entry by a counting global allocator, and what 100,000 entries hold at that
//! cost.
//!
//! One cache holds at most [`MAX_ENTRIES`] (8,192) entries, upstream's fixed LRU size
//! (`webhook.go`), so 100,000 verdicts are 13 Webhook entries' worth: the bench fills 13 caches.
//! `cargo bench --bench webhook_cache_memory`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark's setup fails by panicking"
)]

#[path = "support/live_bytes.rs"]
mod live_bytes;

use live_bytes::{live, rss};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::{Duration, Instant};
use warrant::authorizer::webhook::cache::{
    CacheBytes, CachePolicy, CachedStatus, MAX_ENTRIES, VerdictCache, VerdictKey,
};
use warrant::authorizer::webhook::client::DownstreamStatus;

/// How many verdicts the target speaks of.
const VERDICTS: usize = 100_000;
/// The target.
const TARGET_BYTES: isize = 64 << 20;

fn key(i: usize) -> VerdictKey {
    VerdictKey(Sha256::digest(i.to_le_bytes()).into())
}

fn status() -> Arc<DownstreamStatus> {
    Arc::new(DownstreamStatus {
        allowed: true,
        denied: false,
        reason: "RBAC: allowed by ClusterRoleBinding \"team-a-edit\" of ClusterRole \"edit\" to Group \"team-a\"".into(),
        evaluation_error: String::new(),
        conditional_decision: None,
        body_bytes: 320,
    })
}

fn main() {
    let policy = CachePolicy {
        authorized: Some(Duration::from_secs(300)),
        unauthorized: Some(Duration::from_secs(30)),
        stale_if_error: Duration::ZERO,
    };
    let caches_needed = VERDICTS.div_ceil(MAX_ENTRIES as usize);
    let (rss0, live0) = (rss(), live());
    let now = Instant::now();
    let caches: Vec<VerdictCache> = (0..caches_needed)
        .map(|c| {
            let cache = VerdictCache::new(policy, CacheBytes::default());
            let first = c * MAX_ENTRIES as usize;
            for i in first..(first + MAX_ENTRIES as usize).min(VERDICTS) {
                // Each answer is its own allocation, as each downstream call makes one.
                cache.store(key(i), status(), now, false);
            }
            cache
        })
        .collect();
    let held: u64 = caches.iter().map(VerdictCache::len).sum();
    let (rss1, live1) = (rss(), live());
    let bytes = live1 - live0;
    let per_entry = bytes / held.max(1) as isize;
    println!(
        "verdict cache memory: {held} verdicts in {caches_needed} Webhook entries' caches (at most {MAX_ENTRIES} each)"
    );
    println!(
        "  held (allocator)      {:.1} MiB = {per_entry} bytes per verdict",
        mib(bytes)
    );
    println!("  resident size growth  {:.1} MiB", mib(rss1 - rss0));
    println!(
        "  per verdict, inline   {} bytes (DownstreamStatus), {} bytes (CachedStatus)",
        std::mem::size_of::<DownstreamStatus>(),
        std::mem::size_of::<CachedStatus>()
    );
    println!(
        "  target                {VERDICTS} verdicts <= {:.0} MiB: {}",
        mib(TARGET_BYTES),
        if bytes <= TARGET_BYTES {
            "met"
        } else {
            "MISSED"
        }
    );
    assert_eq!(
        held, VERDICTS as u64,
        "the caches did not keep every verdict"
    );
    assert!(bytes <= TARGET_BYTES, "{bytes} bytes is over the target");
    drop(caches);
}

fn mib(b: isize) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}
