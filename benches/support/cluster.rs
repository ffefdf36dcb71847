//! A synthetic cluster for the cache benches: `namespaces` namespaces, ReplicaSets of ten
//! running pods each (owned by Deployments), one Service per two ReplicaSets (workloads and
//! Services labelled, as the cache keeps their labels), and a `checkout` Deployment of 25
//! running pods behind a Service, an Ingress and a bound claim.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::PartialObjectMeta;
use kube::runtime::watcher::Event;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;
use warrant::cluster::project;
use warrant::cluster::watch::Feeder;
use warrant::cluster::wire::{ClaimWire, IngressWire, PodWire, ServiceWire};
use warrant::cluster::{Cache, CacheOptions, Resource};

pub const NAMESPACES: usize = 20;
pub const REPLICA_SETS: usize = 1000;
pub const PODS_PER_SET: usize = 10;
pub const SERVICES: usize = 500;

pub fn uid(kind: &str, n: usize) -> String {
    format!(
        "{:08x}-{kind:0>4}-4a1b-9c2d-{n:012x}",
        n * 2654435761 % 0xffff_ffff
    )
}

fn hash(n: usize) -> String {
    format!("{:010x}", (n * 40503) % 0xff_ffff_ffff)[..10].to_owned()
}

fn ns(n: usize) -> String {
    format!("team-{}", n % NAMESPACES)
}

fn owner(kind: &str, name: &str, uid: &str) -> Value {
    json!([{"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": uid, "controller": true, "blockOwnerDeletion": true}])
}

/// A pod as the API server sends it (the fields the wire type skips included).
pub fn pod(namespace: &str, app: &str, set: usize, n: usize, claim: Option<&str>) -> Value {
    let name = format!("{app}-{}-{:05x}", hash(set), n);
    let mut volumes = vec![
        json!({"name": "kube-api-access", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}),
    ];
    if let Some(c) = claim {
        volumes.push(json!({"name": "data", "persistentVolumeClaim": {"claimName": c}}));
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": name, "namespace": namespace, "uid": uid("pod", set * 1000 + n), "resourceVersion": "1",
        "labels": {"app": app, "pod-template-hash": hash(set), "app.kubernetes.io/part-of": "shop"},
        "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"},
        "ownerReferences": owner("ReplicaSet", &format!("{app}-{}", hash(set)), &uid("rs", set)),
        "managedFields": [{"manager": "kube-controller-manager", "operation": "Update", "fieldsV1": {"f:metadata": {"f:labels": {}}}}]},
      "spec": {"containers": [{"name": "app", "image": "registry.example.com/shop/app:1.2.3",
                               "ports": [{"containerPort": 8080}], "env": [{"name": "A", "value": "b"}]}],
               "volumes": volumes, "nodeName": "node-1"},
      "status": {"phase": "Running", "podIP": "10.0.0.1", "conditions": [{"type": "Ready", "status": "True"}]}})
}

/// Labels of a workload or Service (the cache keeps them): one value unique to the object.
fn labels(name: &str) -> Value {
    json!({"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "shop", "sre.example.com/protection-level": "standard"})
}

fn meta(kind: &str, namespace: &str, name: &str, uid: &str, owners: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": namespace, "uid": uid,
           "resourceVersion": "1", "labels": labels(name), "ownerReferences": owners}})
}

fn service(namespace: &str, name: &str, app: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace, "uid": uid("svc", name.len()), "resourceVersion": "1", "labels": labels(name)},
           "spec": {"selector": {"app": app}, "ports": [{"port": 80}]}})
}

fn de<W: serde::de::DeserializeOwned>(v: Value) -> W {
    serde_json::from_value(v).expect("synthetic object")
}

/// Lists `objects` through a feeder (Init, InitApply..., InitDone), as a watch would.
fn list<W, B: warrant::cluster::index::Body>(
    mut feeder: Feeder<W, B>,
    objects: impl Iterator<Item = W>,
) {
    feeder.event(Event::Init);
    for o in objects {
        feeder.event(Event::InitApply(o));
    }
    feeder.event(Event::InitDone);
}

/// The app names of set `n`.
pub fn app(n: usize) -> String {
    format!("app-{}", n / 2)
}

/// Builds the cache with everything but pods; returns it ready to take the pods.
pub fn cache_without_pods() -> Arc<Cache> {
    let cache = Arc::new(Cache::new(CacheOptions::default()));
    cache.mark_watching();
    let sets = (0..REPLICA_SETS).map(|s| {
        let (a, deploy_uid) = (app(s), uid("dep", s / 2));
        de::<PartialObjectMeta<ReplicaSet>>(meta(
            "ReplicaSet",
            &ns(s),
            &format!("{a}-{}", hash(s)),
            &uid("rs", s),
            owner("Deployment", &a, &deploy_uid),
        ))
    });
    list(
        Feeder::new(
            cache.clone(),
            Resource::ReplicaSets,
            |w: &PartialObjectMeta<ReplicaSet>, i| project::workload(&w.metadata, i),
        ),
        sets,
    );
    let mut deployments: Vec<PartialObjectMeta<Deployment>> = (0..REPLICA_SETS / 2)
        .map(|d| {
            de(meta(
                "Deployment",
                &ns(d * 2),
                &app(d * 2),
                &uid("dep", d),
                json!([]),
            ))
        })
        .collect();
    deployments.push(de(meta(
        "Deployment",
        "shop",
        "checkout",
        &uid("dep", 999_999),
        json!([]),
    )));
    deployments.push(de(meta(
        "ReplicaSet",
        "shop",
        "checkout-rs",
        &uid("rs", 999_999),
        owner("Deployment", "checkout", &uid("dep", 999_999)),
    )));
    list(
        Feeder::new(
            cache.clone(),
            Resource::Deployments,
            |w: &PartialObjectMeta<Deployment>, i| project::workload(&w.metadata, i),
        ),
        deployments.into_iter(),
    );
    let mut services: Vec<ServiceWire> = (0..SERVICES)
        .map(|s| de(service(&ns(s * 2), &app(s * 2), &app(s * 2))))
        .collect();
    services.push(de(service("shop", "checkout", "checkout")));
    list(
        Feeder::new(cache.clone(), Resource::Services, project::service),
        services.into_iter(),
    );
    let ingress: IngressWire = de(
        json!({"metadata": {"name": "shop", "namespace": "shop", "uid": "i1"},
        "spec": {"rules": [{"http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "checkout", "port": {"number": 80}}}}]}}]}}),
    );
    list(
        Feeder::new(cache.clone(), Resource::Ingresses, project::ingress),
        std::iter::once(ingress),
    );
    let claim: ClaimWire = de(
        json!({"metadata": {"name": "checkout-data", "namespace": "shop", "uid": "c1"}, "status": {"phase": "Bound"}}),
    );
    list(
        Feeder::new(
            cache.clone(),
            Resource::PersistentVolumeClaims,
            project::claim,
        ),
        std::iter::once(claim),
    );
    let namespaces = (0..NAMESPACES).map(|n| de::<PartialObjectMeta<Namespace>>(json!({"metadata": {"name": format!("team-{n}"), "uid": uid("ns", n), "labels": {"team": "x"}}})));
    list(
        Feeder::new(
            cache.clone(),
            Resource::Namespaces,
            |w: &PartialObjectMeta<Namespace>, i| project::namespace(&w.metadata, i),
        ),
        namespaces,
    );
    // The kinds the synthetic cluster has none of have listed too.
    for r in [
        Resource::StatefulSets,
        Resource::DaemonSets,
        Resource::Jobs,
        Resource::CronJobs,
    ] {
        cache.health(r).listed(Instant::now());
    }
    cache
}

/// The synthetic pods (10 per ReplicaSet, 25 for checkout), decoded as the watch decodes them.
pub fn pods() -> impl Iterator<Item = PodWire> {
    let sets = (0..REPLICA_SETS).flat_map(|s| {
        (0..PODS_PER_SET).map(move |n| de::<PodWire>(pod(&ns(s), &app(s), s, n, None)))
    });
    let checkout = (0..25).map(|n| {
        let mut p = pod("shop", "checkout", 999_999, n, Some("checkout-data"));
        p["metadata"]["ownerReferences"][0]["uid"] = json!(uid("rs", 999_999));
        de::<PodWire>(p)
    });
    sets.chain(checkout)
}

/// Lists the pods into `cache`.
pub fn list_pods(cache: &Arc<Cache>, pods: impl Iterator<Item = PodWire>) {
    list(
        Feeder::new(cache.clone(), Resource::Pods, project::pod),
        pods,
    );
}
