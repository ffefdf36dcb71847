//! The selector grammars, case by case as apimachinery's own tests and the webhook authorizer's
//! mapping have them.

use super::*;
use serde_json::{Value, json};

fn fields(raw: &str) -> Value {
    serde_json::to_value(field_requirements(raw)).unwrap()
}

fn labels(raw: &str) -> Value {
    serde_json::to_value(label_requirements(raw)).unwrap()
}

#[test]
fn field_selectors_are_sorted_split_and_unescaped() {
    assert_eq!(
        fields("status.phase!=Running,metadata.name=web"),
        json!([
            {"key": "metadata.name", "operator": "In", "values": ["web"]},
            {"key": "status.phase", "operator": "NotIn", "values": ["Running"]},
        ])
    );
    assert_eq!(
        fields("spec.nodeName==node-1"),
        json!([{"key": "spec.nodeName", "operator": "In", "values": ["node-1"]}])
    );
    // Escaped commas and equals signs are data; the first operator splits.
    assert_eq!(
        fields(r"metadata.name=a\,b\=c\\d"),
        json!([{"key": "metadata.name", "operator": "In", "values": [r"a,b=c\d"]}])
    );
    assert_eq!(
        fields("a=,b=x"),
        json!([
            {"key": "a", "operator": "In", "values": [""]},
            {"key": "b", "operator": "In", "values": ["x"]},
        ])
    );
    // Empty terms are skipped; nothing left is no selector.
    assert_eq!(fields(""), Value::Null);
    assert_eq!(fields(","), Value::Null);
    // A term without an operator, a bad escape or a bare '=' in a value: no selector at all.
    assert_eq!(fields("metadata.name"), Value::Null);
    assert_eq!(fields(r"a=b\x"), Value::Null);
    assert_eq!(fields("a=b=c"), Value::Null);
    assert_eq!(fields(r"a=b\"), Value::Null);
}

#[test]
fn label_selectors_map_onto_the_webhook_operators() {
    assert_eq!(
        labels("tier in (web,api,web), app=shop, !legacy, env, release notin (canary)"),
        json!([
            {"key": "app", "operator": "In", "values": ["shop"]},
            {"key": "env", "operator": "Exists"},
            {"key": "legacy", "operator": "DoesNotExist"},
            {"key": "release", "operator": "NotIn", "values": ["canary"]},
            {"key": "tier", "operator": "In", "values": ["api", "web"]},
        ])
    );
    assert_eq!(
        labels("a==b,c!=d"),
        json!([
            {"key": "a", "operator": "In", "values": ["b"]},
            {"key": "c", "operator": "NotIn", "values": ["d"]},
        ])
    );
    // Gt and Lt parse, but the webhook cannot express them: dropped; nothing left, none sent.
    assert_eq!(
        labels("replicas>3,app=x"),
        json!([{"key": "app", "operator": "In", "values": ["x"]}])
    );
    assert_eq!(labels("replicas<3"), Value::Null);
    // `in` and `notin` are plain values inside a set; empty members are the empty value.
    assert_eq!(
        labels("x in (in,,notin)"),
        json!([{"key": "x", "operator": "In", "values": ["", "in", "notin"]}])
    );
    assert_eq!(
        labels("x in ()"),
        json!([{"key": "x", "operator": "In", "values": [""]}])
    );
    assert_eq!(
        labels("x=,example.com/y"),
        json!([
            {"key": "example.com/y", "operator": "Exists"},
            {"key": "x", "operator": "In", "values": [""]},
        ])
    );
    assert_eq!(labels(""), Value::Null);
}

#[test]
fn invalid_label_selectors_send_no_requirement() {
    for bad in [
        "x in (a",
        "x in a",
        "x=a b",
        ",x",
        "x,",
        "-bad=1",
        "Example.com/x=1",
        "x=-bad",
        "replicas>three",
        "x=>y",
        "!x=y",
        &format!("x={}", "v".repeat(64)),
    ] {
        assert_eq!(labels(bad), Value::Null, "{bad:?}");
    }
}
