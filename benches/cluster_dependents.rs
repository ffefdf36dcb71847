//! `dependents()` on a Deployment of 25 running pods behind a Service, an Ingress and a bound
//! claim, in a cache of 10,000 pods (the whole admission decision p50 <= 20 us, so
//! this part must be well under). Through the index alone and through the cache's
//! `ClusterView` (readiness check and read lock included); also prints p50/p99 of single
//! calls. `cargo bench --bench cluster_dependents`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark's setup fails by panicking"
)]

#[path = "support/cluster.rs"]
mod support;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::hint::black_box;
use std::time::Instant;
use warrant::object::{ClusterView, ObjectRef, Subject};

fn bench(c: &mut Criterion) {
    let cache = support::cache_without_pods();
    support::list_pods(&cache, support::pods());
    let target = ObjectRef {
        group: "apps",
        resource: "deployments",
        namespace: "shop",
        name: "checkout",
    };
    let stored = Subject::new(json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "checkout", "namespace": "shop"}, "spec": {"replicas": 25}}));
    let d = cache.dependents(&target, Some(&stored)).expect("ready");
    assert_eq!(d.running_pods, 25, "{d:?}");
    assert_eq!(d.ingress_pods, 25);
    assert_eq!(d.services, ["shop/checkout"]);
    assert_eq!(d.ingresses, ["shop/shop"]);
    assert_eq!(d.bound_volumes, ["shop/checkout-data"]);

    let mut samples: Vec<u128> = (0..20_000)
        .map(|_| {
            let t = Instant::now();
            black_box(cache.dependents(black_box(&target), Some(&stored)).ok());
            t.elapsed().as_nanos()
        })
        .collect();
    samples.sort_unstable();
    let p = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize] as f64 / 1000.0;
    println!(
        "cluster_dependents (ClusterView, 25 pods of 10,025): p50 {:.2} us, p99 {:.2} us",
        p(0.5),
        p(0.99)
    );

    c.bench_function("cluster_dependents_deployment_25_pods", |b| {
        b.iter(|| black_box(cache.dependents(black_box(&target), Some(&stored))))
    });
    let index_only = cache.read(|index| {
        c.bench_function("cluster_index_dependents_deployment_25_pods", |b| {
            b.iter(|| black_box(index.dependents(black_box(&target), Some(&stored))))
        });
    });
    assert!(index_only.is_ok());
}

criterion_group!(benches, bench);
criterion_main!(benches);
