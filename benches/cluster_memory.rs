//! Cache memory (target: <= 2 KiB held per pod): lists 10,000 synthetic running pods
//! (1,000 ReplicaSets of ten, owned by 500 Deployments, 500 Services, 20 Namespaces) into the
//! cluster cache through the watch path (decode, project, index, swap), counting the bytes
//! allocated and freed by a counting global allocator, and reports the bytes held per pod and
//! the process's resident-size growth. `cargo bench --bench cluster_memory`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark's setup fails by panicking"
)]

#[path = "support/cluster.rs"]
mod support;

#[path = "support/live_bytes.rs"]
mod live_bytes;

use live_bytes::{live, rss};

fn kib(b: isize) -> String {
    format!("{:.1} KiB", b as f64 / 1024.0)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing: run either way.
    let (rss0, live0) = (rss(), live());
    let cache = support::cache_without_pods();
    let (rss1, live1) = (rss(), live());
    support::list_pods(&cache, support::pods());
    let (rss2, live2) = (rss(), live());
    let pods = (support::REPLICA_SETS * support::PODS_PER_SET + 25) as isize;
    let per_pod = (live2 - live1) / pods;
    // A re-list builds a fresh store, swaps it in and drops the old one.
    support::list_pods(&cache, support::pods());
    let live3 = live();
    println!(
        "cluster cache memory, {pods} running pods, {} ReplicaSets, {} Services:",
        support::REPLICA_SETS,
        support::SERVICES + 1
    );
    println!("  held for everything but pods   {}", kib(live1 - live0));
    println!(
        "  held for the pods              {} = {per_pod} bytes per pod (target <= 2048)",
        kib(live2 - live1)
    );
    println!("  held in total                  {}", kib(live2 - live0));
    println!(
        "  held after a re-list of pods   {} (the old store is dropped)",
        kib(live3 - live0)
    );
    println!(
        "  resident size growth (RSS)     {} (total), {} (pods)",
        kib(rss2 - rss0),
        kib(rss2 - rss1)
    );
    assert!(
        per_pod <= 2048,
        "{per_pod} bytes per pod is over the 2 KiB target"
    );
    assert!(
        (live3 - live2).abs() < (live2 - live1) / 10,
        "a re-list leaked: {live2} -> {live3}"
    );
    drop(cache);
}
