//! [`Subject`]: one Kubernetes object as JSON, with the few reads the guard makes of it.

use serde_json::Value;

/// One Kubernetes object as it arrived (an admission request's `object` or `oldObject`, or a
/// saved file), read through accessors that never fail: a missing or mistyped field reads as
/// absent.
#[derive(Debug, Clone, PartialEq)]
pub struct Subject(Value);

impl Subject {
    /// Wraps an object.
    pub fn new(object: Value) -> Self {
        Self(object)
    }

    /// The object as JSON.
    pub fn json(&self) -> &Value {
        &self.0
    }

    /// `apiVersion`.
    pub fn api_version(&self) -> &str {
        self.0
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// `kind`.
    pub fn kind(&self) -> &str {
        self.0.get("kind").and_then(Value::as_str).unwrap_or("")
    }

    /// `metadata.name`.
    pub fn name(&self) -> &str {
        self.meta_str("name")
    }

    /// `metadata.namespace` (`""` for a cluster-scoped object).
    pub fn namespace(&self) -> &str {
        self.meta_str("namespace")
    }

    /// `metadata.uid`.
    pub fn uid(&self) -> &str {
        self.meta_str("uid")
    }

    /// The value of label `key`.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.meta_map_str("labels", key)
    }

    /// The value of annotation `key`.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.meta_map_str("annotations", key)
    }

    /// `spec.replicas` of a workload, when the object has one.
    pub fn replicas(&self) -> Option<i64> {
        self.0.get("spec")?.get("replicas")?.as_i64()
    }

    /// `metadata.deletionTimestamp`: set once a deletion has begun and finalizers hold the
    /// object (it is Terminating).
    pub(crate) fn deletion_timestamp(&self) -> Option<&str> {
        self.0
            .get("metadata")?
            .get("deletionTimestamp")?
            .as_str()
            .filter(|t| !t.is_empty())
    }

    /// Whether `metadata.finalizers` lists `name`.
    pub(crate) fn has_finalizer(&self, name: &str) -> bool {
        self.0
            .get("metadata")
            .and_then(|m| m.get("finalizers"))
            .and_then(Value::as_array)
            .is_some_and(|f| f.iter().any(|v| v.as_str() == Some(name)))
    }

    fn meta_str(&self, field: &str) -> &str {
        self.0
            .get("metadata")
            .and_then(|m| m.get(field))
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    fn meta_map_str(&self, map: &str, key: &str) -> Option<&str> {
        self.0.get("metadata")?.get(map)?.get(key)?.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::Subject;
    use serde_json::json;

    #[test]
    fn reads_metadata_and_replicas() {
        let s = Subject::new(json!({
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "uid": "u1",
                         "labels": {"tier": "critical"}, "annotations": {"t": "CHG-1"}},
            "spec": {"replicas": 3}
        }));
        assert_eq!(
            (s.kind(), s.name(), s.namespace(), s.uid()),
            ("Deployment", "web", "shop", "u1")
        );
        assert_eq!(s.label("tier"), Some("critical"));
        assert_eq!(s.annotation("t"), Some("CHG-1"));
        assert_eq!(s.label("nope"), None);
        assert_eq!(s.replicas(), Some(3));
    }

    #[test]
    fn mistyped_fields_read_as_absent() {
        let s = Subject::new(json!({"metadata": {"labels": {"tier": 7}, "name": 1}, "spec": []}));
        assert_eq!(s.label("tier"), None);
        assert_eq!(s.name(), "");
        assert_eq!(s.replicas(), None);
        assert_eq!(s.deletion_timestamp(), None);
        assert!(!s.has_finalizer("x"));
    }

    #[test]
    fn reads_deletion_and_finalizers() {
        let s = Subject::new(json!({"metadata": {
            "deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["a/b", 3, "warrant.dev/x"]}}));
        assert_eq!(s.deletion_timestamp(), Some("2026-01-01T00:00:00Z"));
        assert!(s.has_finalizer("warrant.dev/x") && s.has_finalizer("a/b"));
        assert!(!s.has_finalizer("warrant.dev/y"));
    }
}
