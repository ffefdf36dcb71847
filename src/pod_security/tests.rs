//! Tests of the engine: fixtures shared by the table of pods x constraints ([`table`]) and
//! the engine's behaviour (order, availability, required constraint, patches, [`engine`]).

mod engine;
mod table;

use super::constraint::SecurityContextConstraints;
use super::namespace::Namespace;
use k8s_openapi::api::core::v1::Pod;

/// The default constraints the chart ships.
const DEFAULTS: &str = include_str!("../../charts/warrant/files/pod-security/defaults.yaml");

/// The shipped default constraints, parsed.
fn defaults() -> Vec<SecurityContextConstraints> {
    serde_saphyr::from_multiple(DEFAULTS).expect("the shipped defaults parse")
}

/// One shipped default constraint.
fn default_named(name: &str) -> SecurityContextConstraints {
    defaults()
        .into_iter()
        .find(|c| c.name() == name)
        .unwrap_or_else(|| panic!("no default constraint {name}"))
}

/// The namespace of the tests: uids and groups 1000680000-1000689999, MCS `s0:c26,c5`.
fn namespace() -> Namespace {
    Namespace {
        name: "team-a".to_owned(),
        uid_range: Some("1000680000/10000".to_owned()),
        supplemental_groups: Some("1000680000/10000".to_owned()),
        mcs: Some("s0:c26,c5".to_owned()),
    }
}

/// A pod from JSON.
fn pod(json: serde_json::Value) -> Pod {
    serde_json::from_value(json).expect("a pod")
}

/// A pod with one container `app`, the given pod spec fields and container fields merged in.
fn pod_with(spec: serde_json::Value, container: serde_json::Value) -> Pod {
    let mut c = serde_json::json!({"name": "app", "image": "registry.example/app:1"});
    merge(&mut c, container);
    let mut s = serde_json::json!({"serviceAccountName": "default", "containers": [c]});
    merge(&mut s, spec);
    pod(serde_json::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "team-a"},
        "spec": s,
    }))
}

fn merge(into: &mut serde_json::Value, from: serde_json::Value) {
    if let (Some(into), serde_json::Value::Object(from)) = (into.as_object_mut(), from) {
        for (k, v) in from {
            into.insert(k, v);
        }
    }
}
