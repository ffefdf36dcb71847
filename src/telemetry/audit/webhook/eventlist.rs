//! warrant's records as an `audit.k8s.io/v1` `EventList` (the shape kube-apiserver's audit
//! webhook backend POSTs, `k8s.io/apiserver/pkg/apis/audit/v1/types.go`), so that a pipeline
//! built for kube-apiserver's audit takes them. Each record is one Event at level `Metadata`,
//! stage `ResponseComplete`: `auditID` is the record's `id`; `verb`, `user` and `objectRef`
//! come from the review (for the buffer ring, from the object and `requestedBy`);
//! `responseStatus.code` is 200 when allowed, 403 when denied; the decision itself is in
//! `annotations` under `warrant.dev/` keys (stage, decision, decision-id, decided-by, code,
//! reason, config-hash), as authorizers and admission webhooks annotate upstream's events.
//! A record that is not valid JSON is left out (warrant never writes one).

use serde_json::{Map, Value, json};

/// The EventList of `records` (each one record's JSON).
pub fn event_list<'a>(records: impl Iterator<Item = &'a [u8]>) -> Value {
    let items: Vec<Value> = records
        .filter_map(|r| serde_json::from_slice::<Value>(r).ok())
        .map(|r| event(&r))
        .collect();
    json!({
        "kind": "EventList",
        "apiVersion": "audit.k8s.io/v1",
        "metadata": {},
        "items": items,
    })
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// One record as an Event.
pub fn event(r: &Value) -> Value {
    let mut annotations = Map::new();
    for (key, field) in [
        ("warrant.dev/stage", "stage"),
        ("warrant.dev/decision", "decision"),
        ("warrant.dev/decision-id", "decisionId"),
        ("warrant.dev/decided-by", "decidedBy"),
        ("warrant.dev/code", "code"),
        ("warrant.dev/reason", "reason"),
        ("warrant.dev/config-hash", "configHash"),
    ] {
        if let Some(v) = text(r, field) {
            annotations.insert(key.to_owned(), json!(v));
        }
    }
    let mut event = json!({
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": "Metadata",
        "auditID": r.get("id").cloned().unwrap_or(Value::Null),
        "stage": "ResponseComplete",
        "requestReceivedTimestamp": r.get("time").cloned().unwrap_or(Value::Null),
        "stageTimestamp": r.get("time").cloned().unwrap_or(Value::Null),
        "annotations": annotations,
    });
    let Some(e) = event.as_object_mut() else {
        return event;
    };
    if let Some(ra) = r.get("resourceAttributes") {
        e.insert(
            "verb".into(),
            ra.get("verb").cloned().unwrap_or(Value::Null),
        );
        let mut object = Map::new();
        for (to, from) in [
            ("resource", "resource"),
            ("namespace", "namespace"),
            ("name", "name"),
            ("apiGroup", "group"),
            ("apiVersion", "version"),
            ("subresource", "subresource"),
        ] {
            if let Some(v) = text(ra, from) {
                object.insert(to.into(), json!(v));
            }
        }
        e.insert("objectRef".into(), Value::Object(object));
    } else if let Some(nra) = r.get("nonResourceAttributes") {
        e.insert(
            "verb".into(),
            nra.get("verb").cloned().unwrap_or(Value::Null),
        );
        e.insert(
            "requestURI".into(),
            nra.get("path").cloned().unwrap_or(Value::Null),
        );
    } else if let Some(o) = r.get("object") {
        // The buffer ring's record: the object it acted on.
        e.insert("verb".into(), json!("delete"));
        let (group, version) = match text(o, "apiVersion").unwrap_or("").split_once('/') {
            Some((g, v)) => (g.to_owned(), v.to_owned()),
            None => (
                String::new(),
                text(o, "apiVersion").unwrap_or("").to_owned(),
            ),
        };
        let mut object = Map::new();
        object.insert("apiGroup".into(), json!(group));
        object.insert("apiVersion".into(), json!(version));
        for key in ["namespace", "name", "uid"] {
            if let Some(v) = text(o, key) {
                object.insert(key.into(), json!(v));
            }
        }
        e.insert("objectRef".into(), Value::Object(object));
    }
    let mut user = Map::new();
    if let Some(name) = text(r, "user").or_else(|| text(r, "requestedBy")) {
        user.insert("username".into(), json!(name));
    }
    if let Some(uid) = text(r, "uid") {
        user.insert("uid".into(), json!(uid));
    }
    for key in ["groups", "extra"] {
        if let Some(v) = r.get(key) {
            user.insert(key.into(), v.clone());
        }
    }
    e.insert("user".into(), Value::Object(user));
    let code = match (r.get("allowed"), r.get("denied")) {
        (_, Some(Value::Bool(true))) => Some(403),
        (Some(Value::Bool(true)), _) => Some(200),
        _ => None,
    };
    if let Some(code) = code {
        e.insert(
            "responseStatus".into(),
            json!({"metadata": {}, "code": code}),
        );
    }
    event
}
