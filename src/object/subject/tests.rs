//! Reads of a [`Subject`], from a tree and from text.

use super::Subject;
use proptest::prelude::*;
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// The object read from text.
fn from_text(text: &str) -> Subject {
    let raw = RawValue::from_string(text.to_owned()).expect("valid JSON");
    Subject::from_text(raw).expect("parses")
}

const KEYS: [&str; 6] = ["tier", "t", "a", "b", "x/y", ""];

/// Everything the accessors read, for comparing two subjects.
fn reads(s: &Subject) -> String {
    let labels: Vec<_> = KEYS.iter().map(|k| s.label(k)).collect();
    let annotations: Vec<_> = KEYS.iter().map(|k| s.annotation(k)).collect();
    let finalizers: Vec<_> = KEYS.iter().map(|k| s.has_finalizer(k)).collect();
    let all_labels = s.labels().filter(|l| !l.is_empty());
    format!(
        "{:?}",
        (
            (s.api_version(), s.kind(), s.name(), s.namespace(), s.uid()),
            (labels, all_labels, annotations, finalizers),
            (s.replicas(), s.deletion_timestamp()),
        )
    )
}

/// What [`reads`] gives, read from the tree by `Value`'s own accessors.
fn reads_of_tree(v: &Value) -> String {
    let meta = |f: &str| v["metadata"][f].as_str();
    let map = |m: &str, k: &str| v["metadata"][m].get(k).and_then(Value::as_str);
    let labels: Vec<_> = KEYS.iter().map(|k| map("labels", k)).collect();
    let annotations: Vec<_> = KEYS.iter().map(|k| map("annotations", k)).collect();
    let finalizers: Vec<_> = (KEYS.iter())
        .map(|k| {
            let list = v["metadata"]["finalizers"].as_array();
            list.is_some_and(|f| f.iter().any(|e| e.as_str() == Some(k)))
        })
        .collect();
    let all_labels: Option<std::collections::BTreeMap<String, String>> =
        v["metadata"]["labels"].as_object().map(|l| {
            l.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect()
        });
    fn text(f: Option<&str>) -> &str {
        f.unwrap_or("")
    }
    format!(
        "{:?}",
        (
            (
                text(v["apiVersion"].as_str()),
                text(v["kind"].as_str()),
                text(meta("name")),
                text(meta("namespace")),
                text(meta("uid")),
            ),
            (
                labels,
                all_labels.filter(|l| !l.is_empty()),
                annotations,
                finalizers
            ),
            (
                v["spec"]["replicas"].as_i64(),
                meta("deletionTimestamp").filter(|t| !t.is_empty())
            ),
        )
    )
}

#[test]
fn reads_metadata_and_replicas() {
    let s = from_text(
        r#"{"kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "u1",
                     "labels": {"tier": "critical"}, "annotations": {"t": "CHG-1"}},
        "spec": {"replicas": 3}}"#,
    );
    assert_eq!(reads(&s), reads(&Subject::new(s.json().clone())));
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

#[test]
fn text_with_mistyped_fields_reads_as_the_tree_does() {
    for text in [
        r#"{"metadata": {"labels": {"tier": 7, "a": "1"}, "name": 1}, "spec": []}"#,
        r#"{"metadata": [], "spec": {"replicas": 2.0}}"#,
        r#"{"metadata": ["web", "shop"], "spec": ["replicas"]}"#,
        r#"{"metadata": null, "kind": {"a": 1}, "apiVersion": ["v1"]}"#,
        r#"{"metadata": {"finalizers": "a", "annotations": ["t"]}, "spec": {"replicas": 9223372036854775808}}"#,
        r#"{"metadata": {"finalizers": [null, "a", ["b"], {"x/y": 1}], "deletionTimestamp": ""}}"#,
        r#"{"spec": {"replicas": -3}, "metadata": {"labels": null, "uid": "\u0075id"}}"#,
    ] {
        let s = from_text(text);
        let value: Value = serde_json::from_str(text).unwrap();
        let tree = Subject::new(value.clone());
        assert_eq!(reads(&s), reads_of_tree(&value), "{text}");
        assert_eq!(reads(&tree), reads_of_tree(&value), "{text}");
        assert_eq!(s, tree, "{text}");
    }
}

#[test]
fn a_field_named_twice_keeps_its_last_value_as_go_does() {
    // Twice in a map the head reads.
    let s = from_text(
        r#"{"metadata": {"labels": {"tier": "low", "tier": "critical", "a": "1", "a": 2}}}"#,
    );
    assert_eq!(s.label("tier"), Some("critical"));
    assert_eq!(s.label("a"), None, "the last value is not a string");
    // Twice in a struct the head reads (read through the tree instead).
    let s = from_text(
        r#"{"metadata": {"name": "first", "name": "last", "labels": {"a": "1", "a": 2}}}"#,
    );
    assert_eq!(s.name(), "last");
    assert_eq!(s.label("a"), None);
}

#[test]
fn text_is_parsed_into_a_tree_only_when_asked_and_decodes_without_one() {
    #[derive(serde::Deserialize)]
    struct Wire {
        spec: Value,
    }
    let s = from_text(r#"{"kind": "Pod", "spec": {"containers": [{"name": "c"}]}}"#);
    let wire: Wire = s.decode().unwrap();
    assert_eq!(wire.spec["containers"][0]["name"], "c");
    assert_eq!(s.json()["spec"]["containers"][0]["name"], "c");
    assert_eq!(s.kind(), "Pod");
}

/// A scalar JSON value.
fn leaf() -> impl Strategy<Value = Value> + Clone {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        prop::sample::select(vec!["", "a", "t", "x/y", "critical", "\u{e9}\n"])
            .prop_map(Value::from),
    ]
}

/// A JSON object with keys drawn from `keys` and values from `values`.
fn object_of(
    keys: &[&'static str],
    values: impl Strategy<Value = Value> + Clone,
) -> impl Strategy<Value = Value> + Clone {
    let key = prop::sample::select(keys.to_vec()).prop_map(str::to_owned);
    prop::collection::btree_map(key, values, 0..keys.len() + 1)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

/// Any value a field may hold: a scalar, a short array or a small object.
fn field() -> impl Strategy<Value = Value> + Clone {
    prop_oneof![
        3 => leaf(),
        1 => prop::collection::vec(leaf(), 0..4).prop_map(Value::from),
        1 => object_of(&["tier", "t", "a", "b", "x/y"], leaf()),
    ]
}

/// An object shaped like a Kubernetes object, with every field at times absent or mistyped.
fn object_like() -> impl Strategy<Value = Value> {
    let meta = object_of(
        &[
            "name",
            "namespace",
            "uid",
            "labels",
            "annotations",
            "deletionTimestamp",
            "finalizers",
            "other",
        ],
        field(),
    );
    let spec = object_of(&["replicas", "selector"], field());
    let top = prop_oneof![4 => meta.prop_map(|m| ("metadata", m)), 3 => spec.prop_map(|s| ("spec", s)),
        2 => field().prop_map(|f| ("metadata", f)), 1 => field().prop_map(|f| ("spec", f)),
        2 => field().prop_map(|f| ("kind", f)), 2 => field().prop_map(|f| ("apiVersion", f))];
    prop::collection::vec(top, 0..5).prop_map(|fields| {
        Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
    })
}

proptest! {
    #[test]
    fn an_object_read_from_text_reads_as_its_tree(value in object_like()) {
        let text = serde_json::to_string(&value).unwrap();
        let s = from_text(&text);
        prop_assert_eq!(reads(&s), reads_of_tree(&value));
        prop_assert_eq!(reads(&Subject::new(value.clone())), reads_of_tree(&value));
        // Compared with the text's own parse: serde_json's float printing does not round-trip
        // every last digit.
        let parsed: Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(s.json(), &parsed);
    }
}
