//! A flood of unique reviews through a caching Webhook entry: the process's memory stays under
//! the cache's byte bound (`--webhook-cache-max-bytes`) plus the memory it had before caching
//! anything. Keys are digests, so a requester's 32 KiB user name is not what the cache holds;
//! when it was (the canonical JSON itself), this flood grew the process by 22 MiB under a 2 MiB
//! bound, evicted entries being freed lazily.

use super::load::{Answer, ask};
use super::served::Served;
use crate::webhook::fault::FaultServer;
use crate::webhook::{Kube, webhook_config, write_kubeconfig};
use std::sync::Arc;
use std::time::Instant;

/// The cache bound given to warrant: about 470 entries.
const BOUND: u64 = 256 << 10;
/// Bytes of user name per review: the cache key is about this long.
const KEY_BYTES: usize = 32 << 10;
/// Reviews in the flood: three times what the bound holds, 47 MiB of keys.
const FLOOD: usize = 1500;
/// Reviews run at once.
const CONCURRENCY: usize = 8;
/// Headroom over the pre-flood RSS besides the bound: allocator arenas and fragmentation, the
/// flood's own in-flight requests (8 of about 100 KiB each with their copies), and the
/// growth of connection buffers.
const SLACK: u64 = 8 << 20;

/// A review by a user named `i` padded to [`KEY_BYTES`]; `cacheable: false` gives it a
/// resource name long enough (10,000 characters) that upstream's rule keeps it out of the cache.
fn review(i: usize, cacheable: bool) -> String {
    let name = if cacheable {
        "web"
    } else {
        &"n".repeat(10_000)
    };
    serde_json::json!({
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": format!("{i:08}-{}", "u".repeat(KEY_BYTES)),
            "resourceAttributes": {"namespace": "team-a", "verb": "get", "resource": "pods", "name": name}
        }
    })
    .to_string()
}

/// Sends reviews `range` with `CONCURRENCY` at once; every one must be allowed.
async fn send(s: &Served, range: std::ops::Range<usize>, cacheable: bool) {
    let c = s.client();
    let url = Arc::new(s.url("/authorize"));
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(range.start));
    let end = range.end;
    let workers: Vec<_> = (0..CONCURRENCY)
        .map(|_| {
            let (c, url, next) = (c.clone(), url.clone(), next.clone());
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= end {
                        return;
                    }
                    let a = ask(&c, &url, &review(i, cacheable)).await;
                    assert_eq!(a, Answer::Allowed, "review {i}");
                }
            })
        })
        .collect();
    for w in workers {
        w.await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_cache_flood_stays_under_its_byte_bound() {
    let fault = FaultServer::start(None).await;
    let dir = tempfile::tempdir().unwrap();
    let kc = write_kubeconfig(
        dir.path(),
        "kc.yaml",
        &Kube::new(fault.url("/"), &fault.ca.cert_pem),
    );
    let s = Served::start(
        &webhook_config(&kc, "", ""),
        &["--webhook-cache-max-bytes", &BOUND.to_string()],
    );
    let started = Instant::now();
    // Warm up every path but the cache's store with reviews it may not keep.
    send(&s, 0..300, false).await;
    let baseline = s.memory("VmRSS");
    send(&s, 1_000..1_000 + FLOOD, true).await;
    let peak = s.memory("VmHWM");
    let after = s.memory("VmRSS");
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    eprintln!(
        "cache flood: {FLOOD} unique keys of {} KiB ({:.0} MiB offered) in {:?}; RSS before {:.1} MiB, after {:.1} MiB, peak {:.1} MiB; bound {} KiB + slack {:.0} MiB",
        KEY_BYTES >> 10,
        mib((FLOOD * KEY_BYTES) as u64),
        started.elapsed(),
        mib(baseline),
        mib(after),
        mib(peak),
        BOUND >> 10,
        mib(SLACK)
    );
    assert_eq!(fault.calls(), 300 + FLOOD, "every review was a miss");
    fault.take_calls();
    // Caching was on: the last review is a hit; the first was evicted.
    let c = s.client();
    assert_eq!(
        ask(&c, &s.url("/authorize"), &review(999 + FLOOD, true)).await,
        Answer::Allowed
    );
    assert_eq!(fault.calls(), 0, "the last review should be cached");
    assert_eq!(
        ask(&c, &s.url("/authorize"), &review(1_000, true)).await,
        Answer::Allowed
    );
    assert_eq!(
        fault.calls(),
        1,
        "the first review should have been evicted"
    );
    assert!(
        peak <= baseline + BOUND + SLACK,
        "peak RSS {:.1} MiB is over {:.1} MiB before + {} KiB bound + {:.0} MiB slack",
        mib(peak),
        mib(baseline),
        BOUND >> 10,
        mib(SLACK)
    );
}
