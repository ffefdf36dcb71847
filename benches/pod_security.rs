//! One pod judged against 8 SecurityContextConstraints with the `use` answers already known
//! (cached), in process (target p50 <= 25 us): the pod's JSON decoded, the constraints tried
//! in order, the admitted pod's JSONPatch computed and encoded. Two cases: a Deployment's pod
//! admitted by restricted-v2 after anyuid is found unusable, and a privileged pod refused
//! after every constraint is tried (the message lists them all). Prints p50/p99 of single
//! decisions, then criterion's estimate. `cargo bench --bench pod_security`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark's setup fails by panicking"
)]

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;
use std::collections::BTreeSet;
use std::hint::black_box;
use std::time::Instant;
use warrant::pod_security::patch::patch;
use warrant::pod_security::{Engine, Namespace, SecurityContextConstraints, SubjectType};

const DEFAULTS: &str = include_str!("../charts/warrant/files/pod-security/defaults.yaml");

fn pod(privileged: bool) -> Vec<u8> {
    let container = |name: &str| {
        json!({
            "name": name, "image": "registry.example/shop/api:1.4.2",
            "ports": [{"containerPort": 8080, "protocol": "TCP"}],
            "env": [{"name": "MODE", "value": "production"}],
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
            "volumeMounts": [{"name": "kube-api-access-x1", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}],
            "securityContext": if privileged { json!({"privileged": true}) } else { json!({}) },
        })
    };
    serde_json::to_vec(&json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "generateName": "api-7d4b9c-", "namespace": "shop",
            "labels": {"app": "api", "pod-template-hash": "7d4b9c"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "api-7d4b9c", "uid": "7a5b2c1e-0000-4000-8000-000000000001", "controller": true}]
        },
        "spec": {
            "serviceAccountName": "default",
            "containers": [container("api"), container("sidecar")],
            "volumes": [{"name": "kube-api-access-x1", "projected": {"sources": [
                {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
            ]}}],
            "securityContext": {},
            "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
        }
    }))
    .unwrap()
}

fn decide(
    engine: &Engine,
    namespace: &Namespace,
    granted: &BTreeSet<String>,
    body: &[u8],
) -> Result<Vec<u8>, String> {
    let pod: Pod = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let available =
        |c: &SecurityContextConstraints| granted.contains(c.name()).then_some(SubjectType::User);
    match engine.admit(namespace, &pod, &available) {
        Ok(admitted) => {
            let ops = patch(&pod, &admitted.pod).map_err(|e| e.to_string())?;
            serde_json::to_vec(&ops).map_err(|e| e.to_string())
        }
        Err(refusal) => Err(refusal.to_string()),
    }
}

fn bench(c: &mut Criterion) {
    let all: Vec<SecurityContextConstraints> = serde_saphyr::from_multiple(DEFAULTS).unwrap();
    let eight: Vec<SecurityContextConstraints> = all
        .into_iter()
        .filter(|c| c.name() != "hostmount-anyuid" && c.name() != "hostnetwork")
        .collect();
    assert_eq!(eight.len(), 8);
    let engine = Engine::new(eight);
    let namespace = Namespace {
        name: "shop".to_owned(),
        uid_range: Some("1000680000/10000".to_owned()),
        supplemental_groups: Some("1000680000/10000".to_owned()),
        mcs: Some("s0:c26,c5".to_owned()),
    };
    let granted: BTreeSet<String> = ["restricted-v2".to_owned()].into();
    for (name, privileged) in [("admitted", false), ("refused", true)] {
        let body = pod(privileged);
        let outcome = decide(&engine, &namespace, &granted, &body);
        match (privileged, &outcome) {
            (false, Ok(ops)) => assert!(String::from_utf8_lossy(ops).contains("restricted-v2")),
            (true, Err(text)) => assert!(text.contains("provider \"privileged\""), "{text}"),
            _ => panic!("unexpected outcome {outcome:?}"),
        }
        let mut samples: Vec<u128> = (0..20_000)
            .map(|_| {
                let t = Instant::now();
                let _ = black_box(decide(&engine, &namespace, &granted, black_box(&body)));
                t.elapsed().as_nanos()
            })
            .collect();
        samples.sort_unstable();
        let p = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize] as f64 / 1000.0;
        println!(
            "pod_security/{name} (8 constraints, use answers cached): p50 {:.2} us, p99 {:.2} us",
            p(0.5),
            p(0.99)
        );
        c.bench_function(&format!("pod_security/{name}"), |b| {
            b.iter(|| black_box(decide(&engine, &namespace, &granted, black_box(&body))))
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
