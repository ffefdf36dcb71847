//! A protection label patch: the partial object that sets the guard's protection label on one
//! object, to review and apply server-side (`kubectl apply --server-side` takes it as it is).
//! `warrant coverage -o yaml` and `warrant recommend -o yaml` print these.

use crate::config::model::guard::Level;
use serde_json::{Value, json};

/// Where the label goes: the object's API version, kind, namespace (`""` when
/// cluster-scoped) and name.
#[derive(Debug, Clone, Copy)]
pub struct PatchTarget<'a> {
    /// `v1`, `apps/v1`, `example.com/v1`.
    pub api_version: &'a str,
    /// `Namespace`, `StatefulSet`, a custom resource's kind.
    pub kind: &'a str,
    /// The namespace; `""` for a cluster-scoped object.
    pub namespace: &'a str,
    /// The name.
    pub name: &'a str,
}

/// The partial object carrying `label_key: level` at `target`.
pub fn document(target: PatchTarget<'_>, label_key: &str, level: Level) -> Value {
    let mut metadata = json!({
        "name": target.name,
        "labels": {label_key: level.as_str()},
    });
    if !target.namespace.is_empty() {
        metadata["namespace"] = Value::String(target.namespace.to_owned());
    }
    json!({"apiVersion": target.api_version, "kind": target.kind, "metadata": metadata})
}

/// `api_version` of `group` at `version`: `v1`, `apps/v1`.
pub fn api_version(group: &str, version: &str) -> String {
    match group {
        "" => version.to_owned(),
        g => format!("{g}/{version}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespaced_patch_names_its_namespace_and_a_cluster_scoped_one_does_not() {
        let set = PatchTarget {
            api_version: "apps/v1",
            kind: "StatefulSet",
            namespace: "shop",
            name: "db",
        };
        assert_eq!(
            document(set, "sre.example.com/protection-level", Level::High),
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
                   "metadata": {"name": "db", "namespace": "shop",
                                "labels": {"sre.example.com/protection-level": "high"}}})
        );
        let ns = PatchTarget {
            api_version: "v1",
            kind: "Namespace",
            namespace: "",
            name: "shop",
        };
        assert_eq!(
            document(ns, "p", Level::Standard)["metadata"],
            json!({"name": "shop", "labels": {"p": "standard"}})
        );
        assert_eq!(api_version("", "v1"), "v1");
        assert_eq!(api_version("example.com", "v2"), "example.com/v2");
    }
}
