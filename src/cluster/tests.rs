//! The index and its queries on a small shop (a Deployment with 25 running and 2 pending pods
//! behind a Service, an Ingress and a bound claim; a StatefulSet with claim templates; a
//! Namespace), and the cache fed by hand: re-lists keep the store, deletions update the
//! indexes, readiness, metrics.

use super::cache::{Cache, CacheOptions};
use super::files::FileView;
use super::index::Index;
use super::index::Workload;
use super::intern::Interner;
use super::project;
use super::resource::Resource;
use super::watch::Feeder;
use super::wire::{ClaimWire, IngressWire, PodWire, ServiceWire};
use crate::object::{
    ClusterView, Dependents, LabelValue, LabelValues, MAX_LABEL_VALUES, ObjectRef, Subject,
    ViewError,
};
use kube::api::PartialObjectMeta;
use kube::runtime::watcher::{self, Event};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;

fn meta(ns: &str, name: &str, uid: &str, owner: Option<&str>, labels: Value) -> Value {
    let mut m = json!({"name": name, "uid": uid, "labels": labels});
    if !ns.is_empty() {
        m["namespace"] = json!(ns);
    }
    if let Some(o) = owner {
        m["ownerReferences"] =
            json!([{"apiVersion": "apps/v1", "kind": "X", "name": "x", "uid": o}]);
    }
    m
}

fn pod(ns: &str, name: &str, owner: &str, app: &str, phase: &str, claims: &[&str]) -> Value {
    let volumes: Vec<Value> = claims
        .iter()
        .map(|c| json!({"name": c, "persistentVolumeClaim": {"claimName": c}}))
        .collect();
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": meta(ns, name, &format!("uid-{ns}-{name}"), Some(owner), json!({"app": app})),
           "spec": {"containers": [{"name": "c", "image": "nginx"}], "volumes": volumes},
           "status": {"phase": phase}})
}

fn service(ns: &str, name: &str, selector: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": meta(ns, name, &format!("uid-svc-{name}"), None, json!({})),
           "spec": {"selector": selector}})
}

fn ingress(ns: &str, name: &str, backend: &str) -> Value {
    json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
           "metadata": meta(ns, name, &format!("uid-ing-{name}"), None, json!({})),
           "spec": {"rules": [{"host": "shop.example.com", "http": {"paths": [
               {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": backend, "port": {"number": 80}}}}]}}]}})
}

fn claim(ns: &str, name: &str, phase: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": meta(ns, name, &format!("uid-pvc-{name}"), None, json!({})), "status": {"phase": phase}})
}

/// Adds one object (as a watch would deliver it) to the index.
fn put(index: &mut Index, i: &mut Interner, v: Value) {
    let kind = v["kind"].as_str().unwrap_or("").to_owned();
    match kind.as_str() {
        "Pod" => {
            let (k, o) = project::pod(&wire::<PodWire>(v), i).unwrap();
            index.apply(Resource::Pods, k, o);
        }
        "Service" => {
            let (k, o) = project::service(&wire::<ServiceWire>(v), i).unwrap();
            index.apply(Resource::Services, k, o);
        }
        "Ingress" => {
            let (k, o) = project::ingress(&wire::<IngressWire>(v), i).unwrap();
            index.apply(Resource::Ingresses, k, o);
        }
        "PersistentVolumeClaim" => {
            let (k, o) = project::claim(&wire::<ClaimWire>(v), i).unwrap();
            index.apply(Resource::PersistentVolumeClaims, k, o);
        }
        "Namespace" => {
            let m: PartialObjectMeta<k8s_openapi::api::core::v1::Namespace> = wire(v);
            let (k, o) = project::namespace(&m.metadata, i).unwrap();
            index.apply(Resource::Namespaces, k, o);
        }
        other => {
            let r = Resource::from_group_kind(
                v["apiVersion"].as_str().unwrap().split('/').next().unwrap(),
                other,
            )
            .unwrap();
            let m: PartialObjectMeta<k8s_openapi::api::apps::v1::Deployment> = wire(v);
            let (k, o) = project::workload(&m.metadata, i).unwrap();
            index.apply::<Workload>(r, k, o);
        }
    }
}

fn workload(kind: &str, ns: &str, name: &str, uid: &str, owner: Option<&str>) -> Value {
    json!({"apiVersion": "apps/v1", "kind": kind, "metadata": meta(ns, name, uid, owner, json!({}))})
}

fn statefulset() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": meta("shop", "db", "uid-sts-db", None, json!({})),
           "spec": {"replicas": 2, "volumeClaimTemplates": [{"metadata": {"name": "data"}}, {"metadata": {"name": "logs"}}]}})
}

/// The shop, as a list of objects.
fn shop() -> Vec<Value> {
    let mut objects = vec![
        json!({"apiVersion": "v1", "kind": "Namespace",
               "metadata": {"name": "shop", "uid": "uid-ns-shop", "labels": {"sre.example.com/protection-level": "critical"}}}),
        workload("Deployment", "shop", "web", "uid-dep-web", None),
        workload(
            "ReplicaSet",
            "shop",
            "web-abc",
            "uid-rs-abc",
            Some("uid-dep-web"),
        ),
        workload(
            "ReplicaSet",
            "shop",
            "web-old",
            "uid-rs-old",
            Some("uid-dep-web"),
        ),
        statefulset(),
        service("shop", "web", json!({"app": "web"})),
        service("shop", "db", json!({"app": "db"})),
        service("shop", "headless-manual", Value::Null),
        service("shop", "other", json!({"app": "other"})),
        ingress("shop", "web-ing", "web"),
        ingress("shop", "other-ing", "other"),
        claim("shop", "shared", "Bound"),
        claim("shop", "pending-claim", "Pending"),
        claim("shop", "data-db-0", "Bound"),
        claim("shop", "data-db-1", "Bound"),
        claim("shop", "data-db-2", "Bound"),
        claim("shop", "logs-db-0", "Pending"),
        claim("shop", "data-db-x", "Bound"),
        claim("shop", "data-dbx-0", "Bound"),
        // Another namespace: same labels, never counted for shop.
        pod(
            "other",
            "web-1",
            "uid-rs-abc",
            "web",
            "Running",
            &["shared"],
        ),
        claim("other", "shared", "Bound"),
    ];
    for n in 0..25 {
        objects.push(pod(
            "shop",
            &format!("web-abc-{n}"),
            "uid-rs-abc",
            "web",
            "Running",
            &["shared"],
        ));
    }
    objects.push(pod(
        "shop",
        "web-abc-p1",
        "uid-rs-abc",
        "web",
        "Pending",
        &["shared"],
    ));
    objects.push(pod(
        "shop",
        "web-old-p2",
        "uid-rs-old",
        "web",
        "Pending",
        &[],
    ));
    objects.push(pod(
        "shop",
        "db-0",
        "uid-sts-db",
        "db",
        "Running",
        &["data-db-0"],
    ));
    objects.push(pod(
        "shop",
        "db-1",
        "uid-sts-db",
        "db",
        "Running",
        &["data-db-1"],
    ));
    objects
}

fn shop_index() -> Index {
    let (mut index, mut i) = (Index::default(), Interner::default());
    for o in shop() {
        put(&mut index, &mut i, o);
    }
    index
}

fn target<'a>(group: &'a str, resource: &'a str, ns: &'a str, name: &'a str) -> ObjectRef<'a> {
    ObjectRef {
        group,
        resource,
        namespace: ns,
        name,
    }
}

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn web_dependents(running: u32) -> Dependents {
    Dependents {
        running_pods: running,
        ingress_pods: running,
        services: names(&["shop/web"]),
        ingresses: names(&["shop/web-ing"]),
        bound_volumes: names(&["shop/shared"]),
    }
}

#[test]
fn a_deployment_takes_its_running_pods_service_ingress_and_volume() {
    let index = shop_index();
    let stored = Subject::new(workload("Deployment", "shop", "web", "uid-dep-web", None));
    let t = target("apps", "deployments", "shop", "web");
    assert_eq!(index.dependents(&t, Some(&stored)), web_dependents(25));
    // Without the stored object, the cache's copy gives the UID.
    assert_eq!(index.dependents(&t, None), web_dependents(25));
    // The ReplicaSet owns the same pods.
    let rs = target("apps", "replicasets", "shop", "web-abc");
    assert_eq!(index.dependents(&rs, None), web_dependents(25));
    // An unknown Deployment has nothing.
    assert_eq!(
        index.dependents(&target("apps", "deployments", "shop", "nope"), None),
        Dependents::default()
    );
}

#[test]
fn pods_services_ingresses_and_claims_as_targets() {
    let index = shop_index();
    assert_eq!(
        index.dependents(&target("", "pods", "shop", "web-abc-3"), None),
        web_dependents(1)
    );
    assert_eq!(
        index.dependents(&target("", "pods", "shop", "web-abc-p1"), None),
        Dependents::default()
    );
    assert_eq!(
        index.dependents(&target("", "services", "shop", "web"), None),
        web_dependents(25)
    );
    // The stored Service's selector wins over the cache's copy.
    let stored = Subject::new(service("shop", "web", json!({"app": "db"})));
    assert_eq!(
        index
            .dependents(&target("", "services", "shop", "web"), Some(&stored))
            .running_pods,
        2
    );
    assert_eq!(
        index.dependents(&target("", "services", "shop", "headless-manual"), None),
        Dependents::default()
    );
    assert_eq!(
        index.dependents(
            &target("networking.k8s.io", "ingresses", "shop", "web-ing"),
            None
        ),
        web_dependents(25)
    );
    let other = index.dependents(
        &target("networking.k8s.io", "ingresses", "shop", "other-ing"),
        None,
    );
    assert_eq!(
        other,
        Dependents {
            ingresses: names(&["shop/other-ing"]),
            ..Dependents::default()
        }
    );
    assert_eq!(
        index.dependents(
            &target("", "persistentvolumeclaims", "shop", "shared"),
            None
        ),
        web_dependents(25)
    );
    let pending = index.dependents(
        &target("", "persistentvolumeclaims", "shop", "pending-claim"),
        None,
    );
    assert_eq!(pending, Dependents::default());
    assert_eq!(
        index.dependents(&target("", "configmaps", "shop", "web"), None),
        Dependents::default()
    );
}

#[test]
fn a_statefulset_takes_the_claims_its_templates_made() {
    let index = shop_index();
    let stored = Subject::new(statefulset());
    let d = index.dependents(&target("apps", "statefulsets", "shop", "db"), Some(&stored));
    assert_eq!(
        d,
        Dependents {
            running_pods: 2,
            ingress_pods: 0,
            services: names(&["shop/db"]),
            ingresses: vec![],
            // data-db-2 (scaled down) is still the set's; logs-db-0 is not bound;
            // data-db-x and data-dbx-0 are not its names.
            bound_volumes: names(&["shop/data-db-0", "shop/data-db-1", "shop/data-db-2"]),
        }
    );
}

#[test]
fn a_namespace_takes_everything_running_in_it() {
    let index = shop_index();
    let d = index.dependents(&target("", "namespaces", "", "shop"), None);
    assert_eq!(d.running_pods, 27);
    assert_eq!(d.ingress_pods, 25);
    assert_eq!(d.services, names(&["shop/db", "shop/web"]));
    assert_eq!(d.ingresses, names(&["shop/other-ing", "shop/web-ing"]));
    assert_eq!(
        d.bound_volumes,
        names(&[
            "shop/data-db-0",
            "shop/data-db-1",
            "shop/data-db-2",
            "shop/data-db-x",
            "shop/data-dbx-0",
            "shop/shared"
        ])
    );
    assert_eq!(
        index
            .namespace_label("shop", "sre.example.com/protection-level")
            .as_deref(),
        Some("critical")
    );
    assert_eq!(index.namespace_label("shop", "nope"), None);
    assert_eq!(
        index.namespace_label("nope", "sre.example.com/protection-level"),
        None
    );
}

const LEVEL: &str = "sre.example.com/protection-level";

/// `(value, object, count)` triples, as `labelled_inside` answers them (not truncated).
fn values(v: &[(&str, &str, u32)]) -> LabelValues {
    LabelValues {
        values: v
            .iter()
            .map(|(value, object, count)| LabelValue {
                value: (*value).into(),
                object: (*object).into(),
                count: *count,
            })
            .collect(),
        truncated: false,
    }
}

/// `v` with `labels` as its `metadata.labels`.
fn labelled(mut v: Value, labels: Value) -> Value {
    v["metadata"]["labels"] = labels;
    v
}

#[test]
fn the_labels_of_what_a_namespace_holds_are_kept_by_value() {
    let (mut index, mut i) = (shop_index(), Interner::default());
    // Nothing in the shop carries the label yet (the namespace's own label is not inside it).
    assert_eq!(index.labelled_inside("shop", LEVEL), LabelValues::default());
    let critical = json!({LEVEL: "critical"});
    for o in [
        labelled(
            workload("Deployment", "shop", "checkout", "uid-dep-checkout", None),
            critical.clone(),
        ),
        labelled(
            workload(
                "ReplicaSet",
                "shop",
                "checkout-1",
                "uid-rs-c1",
                Some("uid-dep-checkout"),
            ),
            critical.clone(),
        ),
        labelled(
            json!({"apiVersion": "batch/v1", "kind": "CronJob",
                   "metadata": meta("shop", "report", "uid-cj", None, json!({}))}),
            json!({LEVEL: "High"}),
        ),
        labelled(
            service("shop", "pay", json!({"app": "pay"})),
            json!({LEVEL: "high"}),
        ),
        labelled(ingress("shop", "pay-ing", "pay"), json!({LEVEL: "high"})),
        labelled(claim("shop", "ledger", "Bound"), json!({LEVEL: "gold"})),
        labelled(
            pod("shop", "pay-1", "uid-x", "pay", "Running", &[]),
            json!({LEVEL: "high", "app": "pay"}),
        ),
        // Another namespace and another key are not counted.
        labelled(
            workload("Deployment", "other", "checkout", "uid-o", None),
            critical.clone(),
        ),
        labelled(
            workload("Deployment", "shop", "misc", "uid-m", None),
            json!({"team": "critical"}),
        ),
    ] {
        put(&mut index, &mut i, o);
    }
    assert_eq!(
        index.labelled_inside("shop", LEVEL),
        values(&[
            ("High", "cronjobs.batch/report", 1),
            ("critical", "deployments.apps/checkout", 2),
            ("gold", "persistentvolumeclaims/ledger", 1),
            ("high", "services/pay", 3),
        ])
    );
    assert_eq!(
        index.labelled_inside("shop", "team"),
        values(&[("critical", "deployments.apps/misc", 1)])
    );
    assert_eq!(index.labelled_inside("nope", LEVEL), LabelValues::default());
}

#[test]
fn labelled_values_are_bounded() {
    let (mut index, mut i) = (Index::default(), Interner::default());
    for n in 0..=MAX_LABEL_VALUES {
        let name = format!("d{n:05}");
        let d = workload("Deployment", "shop", &name, &format!("uid-{n}"), None);
        put(
            &mut index,
            &mut i,
            labelled(d, json!({LEVEL: format!("v{n:05}")})),
        );
    }
    let found = index.labelled_inside("shop", LEVEL);
    assert!(found.truncated);
    assert_eq!(found.values.len(), MAX_LABEL_VALUES);
    assert_eq!(found.values[0].object, "deployments.apps/d00000");
}

fn wire<W: serde::de::DeserializeOwned>(v: Value) -> W {
    serde_json::from_value(v).unwrap()
}

fn ready_cache() -> Arc<Cache> {
    let cache = Arc::new(Cache::new(CacheOptions::default()));
    cache.mark_watching();
    cache
}

#[test]
fn the_cache_is_not_ready_until_every_watch_listed() {
    let idle = Cache::new(CacheOptions::default());
    assert!(matches!(idle.ready(), Err(ViewError::NotReady(m)) if m.contains("not open yet")));
    idle.connecting(Some("no token".into()));
    assert!(matches!(idle.ready(), Err(ViewError::NotReady(m)) if m.contains("no token")));

    let cache = ready_cache();
    let mut pods = Feeder::new(cache.clone(), Resource::Pods, project::pod);
    pods.event(Event::Init);
    pods.event(Event::InitApply(wire(pod(
        "shop",
        "a",
        "uid-rs",
        "web",
        "Running",
        &[],
    ))));
    let Err(ViewError::NotReady(why)) = cache.ready() else {
        panic!("ready before any list");
    };
    assert!(
        why.contains("pods: has not listed yet") && why.contains("namespaces"),
        "{why}"
    );
    // Questions are refused, never answered from a partial store.
    let t = target("", "pods", "shop", "a");
    assert!(matches!(
        cache.dependents(&t, None),
        Err(ViewError::NotReady(_))
    ));
    pods.event(Event::InitDone);
    for r in Resource::ALL.into_iter().filter(|r| *r != Resource::Pods) {
        cache.health(r).listed(Instant::now());
    }
    assert_eq!(cache.ready(), Ok(()));
    assert_eq!(cache.dependents(&t, None).unwrap().running_pods, 1);
}

#[test]
fn a_cache_found_ready_still_sees_every_later_watch_error() {
    // Errors make a watch not ready at once, so that each change shows in the next check.
    let limits = super::status::Limits {
        stale_after: std::time::Duration::ZERO,
        quiet: std::time::Duration::from_secs(3600),
    };
    let cache = Arc::new(Cache::new(CacheOptions {
        limits,
        ..CacheOptions::default()
    }));
    cache.mark_watching();
    for r in Resource::ALL {
        cache.health(r).listed(Instant::now());
    }
    // Found ready twice: the second answer comes from the first.
    assert_eq!(cache.ready(), Ok(()));
    assert_eq!(cache.ready(), Ok(()));
    let mut pods = Feeder::new(cache.clone(), Resource::Pods, project::pod);
    pods.error(&watcher::Error::NoResourceVersion);
    let Err(ViewError::NotReady(why)) = cache.ready() else {
        panic!("a failing watch after a ready check must not read as ready");
    };
    assert!(why.contains("pods: watch failing"), "{why}");
    // A failing watch is not steady: asked again, it is looked at again, and still failing.
    assert!(cache.ready().is_err());
    // An event ends the streak: ready again, and steady.
    pods.event(Event::Apply(wire(pod(
        "shop",
        "a",
        "u",
        "web",
        "Running",
        &[],
    ))));
    assert_eq!(cache.ready(), Ok(()));
    assert_eq!(cache.ready(), Ok(()));
    // An error on any other watch, the last in the list, is seen as well.
    cache
        .health(Resource::Namespaces)
        .error(Instant::now(), "gone".into(), &limits);
    assert!(matches!(cache.ready(), Err(ViewError::NotReady(m)) if m.contains("namespaces")));
}

#[test]
fn a_relist_keeps_the_store_until_it_finishes_and_deletions_update_the_indexes() {
    let cache = ready_cache();
    for r in Resource::ALL {
        cache.health(r).listed(Instant::now());
    }
    let mut pods = Feeder::new(cache.clone(), Resource::Pods, project::pod);
    let mut sets = Feeder::new(
        cache.clone(),
        Resource::ReplicaSets,
        |w: &PartialObjectMeta<k8s_openapi::api::apps::v1::ReplicaSet>, i| {
            project::workload(&w.metadata, i)
        },
    );
    let p = |n: &str| wire::<PodWire>(pod("shop", n, "uid-rs-abc", "web", "Running", &[]));
    pods.event(Event::Init);
    for n in ["a", "b", "c"] {
        pods.event(Event::InitApply(p(n)));
    }
    pods.event(Event::InitDone);
    sets.event(Event::Init);
    sets.event(Event::InitApply(wire(workload(
        "ReplicaSet",
        "shop",
        "web-abc",
        "uid-rs-abc",
        Some("uid-dep-web"),
    ))));
    sets.event(Event::InitDone);
    let dep = Subject::new(workload("Deployment", "shop", "web", "uid-dep-web", None));
    let t = target("apps", "deployments", "shop", "web");
    let running = |c: &Cache| c.dependents(&t, Some(&dep)).unwrap().running_pods;
    assert_eq!(running(&cache), 3);

    // A lost watch re-lists: the old store answers until the new list is complete.
    pods.error(&watcher::Error::NoResourceVersion);
    pods.event(Event::Init);
    pods.event(Event::InitApply(p("a")));
    assert_eq!(running(&cache), 3);
    assert_eq!(
        cache.ready(),
        Ok(()),
        "a passing error keeps the cache ready"
    );
    pods.event(Event::InitDone);
    assert_eq!(running(&cache), 1);

    // Watch events: an added pod, a pod that stops running, a deleted pod.
    pods.event(Event::Apply(p("d")));
    assert_eq!(running(&cache), 2);
    pods.event(Event::Apply(wire(pod(
        "shop",
        "d",
        "uid-rs-abc",
        "web",
        "Succeeded",
        &[],
    ))));
    assert_eq!(running(&cache), 1);
    pods.event(Event::Delete(p("a")));
    pods.event(Event::Delete(p("d")));
    assert_eq!(running(&cache), 0);
    assert_eq!(cache.read(|i| i.len(Resource::Pods)).unwrap(), 0);
    // The owner chain breaks when the ReplicaSet goes.
    pods.event(Event::Apply(p("e")));
    assert_eq!(running(&cache), 1);
    sets.event(Event::Delete(wire(workload(
        "ReplicaSet",
        "shop",
        "web-abc",
        "uid-rs-abc",
        Some("uid-dep-web"),
    ))));
    assert_eq!(running(&cache), 0);
    assert_eq!(cache.read(|i| i.len(Resource::ReplicaSets)).unwrap(), 0);
    // The interner lets go of the strings of deleted objects.
    pods.event(Event::Delete(p("e")));
    let held = cache.intern(|i| {
        i.sweep();
        i.len()
    });
    assert_eq!(held, 0, "no object left, no string held");
}

#[test]
fn workload_labels_follow_watch_events_and_relists() {
    let cache = ready_cache();
    for r in Resource::ALL {
        cache.health(r).listed(Instant::now());
    }
    let mut deployments = Feeder::new(
        cache.clone(),
        Resource::Deployments,
        |w: &PartialObjectMeta<k8s_openapi::api::apps::v1::Deployment>, i| {
            project::workload(&w.metadata, i)
        },
    );
    let mut claims = Feeder::new(
        cache.clone(),
        Resource::PersistentVolumeClaims,
        project::claim,
    );
    let d = |name: &str, level: &str| {
        let v = workload("Deployment", "shop", name, &format!("uid-{name}"), None);
        wire(labelled(v, json!({LEVEL: level})))
    };
    let held = |c: &Cache| c.labelled_inside("shop", LEVEL).unwrap();
    deployments.event(Event::Init);
    deployments.event(Event::InitApply(d("checkout", "critical")));
    deployments.event(Event::InitDone);
    assert_eq!(
        held(&cache),
        values(&[("critical", "deployments.apps/checkout", 1)])
    );
    // Modified: the new label replaces the old one.
    deployments.event(Event::Apply(d("checkout", "standard")));
    assert_eq!(
        held(&cache),
        values(&[("standard", "deployments.apps/checkout", 1)])
    );
    // A claim's label counts too; a deleted object's label goes.
    claims.event(Event::Apply(wire(labelled(
        claim("shop", "ledger", "Bound"),
        json!({LEVEL: "high"}),
    ))));
    deployments.event(Event::Delete(d("checkout", "standard")));
    assert_eq!(
        held(&cache),
        values(&[("high", "persistentvolumeclaims/ledger", 1)])
    );
    // A re-list replaces the store: what it no longer lists is gone.
    deployments.event(Event::Apply(d("checkout", "critical")));
    deployments.event(Event::Init);
    deployments.event(Event::InitApply(d("web", "high")));
    assert_eq!(
        held(&cache).values.len(),
        2,
        "the old store answers meanwhile"
    );
    deployments.event(Event::InitDone);
    assert_eq!(
        held(&cache),
        values(&[("high", "deployments.apps/web", 2),])
    );
    // A cache that is not ready does not answer.
    let idle = Cache::new(CacheOptions::default());
    assert!(matches!(
        idle.labelled_inside("shop", LEVEL),
        Err(ViewError::NotReady(_))
    ));
}

#[test]
fn metrics_show_objects_age_readiness_and_errors() {
    let cache = ready_cache();
    let mut registry = prometheus_client::registry::Registry::default();
    super::metrics::register(&cache, &mut registry);
    let mut pods = Feeder::new(cache.clone(), Resource::Pods, project::pod);
    pods.event(Event::Init);
    pods.event(Event::InitApply(wire(pod(
        "shop",
        "a",
        "uid-rs",
        "web",
        "Running",
        &[],
    ))));
    pods.event(Event::InitDone);
    pods.error(&watcher::Error::NoResourceVersion);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
    for line in [
        "warrant_cluster_cache_ready 0",
        "warrant_cluster_cache_objects{resource=\"pods\"} 1",
        "warrant_cluster_cache_objects{resource=\"services\"} 0",
        "warrant_cluster_watch_errors_total{resource=\"pods\"} 1",
        "warrant_cluster_connect_errors_total 0",
    ] {
        assert!(text.contains(line), "{line} missing from\n{text}");
    }
    assert!(
        text.contains("warrant_cluster_cache_age_seconds{resource=\"pods\"} 0."),
        "{text}"
    );
    assert!(!text.contains("warrant_cluster_cache_age_seconds{resource=\"services\"}"));
    // An idle cache (the chain needs no cluster) shows no series.
    let idle = Arc::new(Cache::new(CacheOptions::default()));
    let mut registry = prometheus_client::registry::Registry::default();
    super::metrics::register(&idle, &mut registry);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
    assert!(!text.contains("warrant_cluster_cache_ready"), "{text}");
}

fn write(dir: &std::path::Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[tokio::test]
async fn saved_files_answer_like_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let objects = shop();
    // Half as multi-document YAML, half as a JSON List, plus a file that is not read.
    let (yaml, json_items) = objects.split_at(objects.len() / 2);
    let docs: Vec<String> = yaml
        .iter()
        .map(|o| serde_saphyr::to_string(o).unwrap())
        .collect();
    write(
        dir.path(),
        "a.yaml",
        &format!("# saved\n---\n{}", docs.join("---\n")),
    );
    write(
        dir.path(),
        "b.json",
        &json!({"apiVersion": "v1", "kind": "List", "items": json_items}).to_string(),
    );
    write(
        dir.path(),
        "c.yml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: shop}\n---\n",
    );
    write(dir.path(), "notes.txt", "not read");
    let view = FileView::load(dir.path()).unwrap();
    assert_eq!(view.ready(), Ok(()));
    let t = target("apps", "deployments", "shop", "web");
    assert_eq!(view.dependents(&t, None).unwrap(), web_dependents(25));
    assert_eq!(
        view.namespace_label("shop", "sre.example.com/protection-level")
            .unwrap()
            .as_deref(),
        Some("critical")
    );
    assert_eq!(
        view.labelled_inside("shop", "app").unwrap(),
        values(&[("db", "pods/db-0", 2), ("web", "pods/web-abc-0", 25)])
    );
    let crd = |group: &str| {
        Subject::new(
            json!({"spec": {"group": group, "names": {"kind": "Widget", "plural": "widgets"},
                                     "versions": [{"name": "v1", "served": true, "storage": true}]}}),
        )
    };
    assert_eq!(view.remaining_objects(&crd("example.com")).await, Ok(1));
    assert_eq!(view.remaining_objects(&crd("other.com")).await, Ok(0));
}

#[test]
fn bad_files_are_named_in_the_error() {
    let cases = [
        (
            "bad.yaml",
            "kind: Pod\nmetadata: [\n",
            "bad.yaml: invalid YAML",
        ),
        ("bad.json", "{\"kind\":", "bad.json: invalid JSON"),
        (
            "nokind.yaml",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n---\nmetadata: {name: x}\n",
            "nokind.yaml: document 2: not a Kubernetes object: no kind",
        ),
        (
            "noname.yaml",
            "apiVersion: v1\nkind: Pod\nmetadata: {namespace: x}\n",
            "noname.yaml: document 1: Pod without metadata.name",
        ),
        (
            "typed.yaml",
            "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {selector: [1]}\n",
            "typed.yaml: document 1: Service: invalid type",
        ),
        (
            "list.json",
            "{\"kind\": \"List\", \"items\": [{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {}}]}",
            "list.json: document 1: item 1: Pod without metadata.name",
        ),
    ];
    for (file, text, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), file, text);
        let e = FileView::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains(want), "{file}: {e}");
    }
    let e = FileView::load(std::path::Path::new("/nonexistent/state")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("cluster state /nonexistent/state: "),
        "{e}"
    );
}
