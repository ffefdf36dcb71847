//! Decoding, mapping and encoding of `AdmissionReview` v1: the shape kube-apiserver sends
//! (`CreateV1AdmissionReview` in `k8s.io/apiserver/pkg/admission/plugin/webhook/request/
//! admissionreview.go`), every malformed case, and the response shape it verifies.

use super::*;
use crate::object::{NoCluster, Operation};
use serde_json::{Value, json};
use std::sync::Arc;

/// A DELETE of deployment `shop/web` as kube-apiserver sends it.
fn delete_review() -> Value {
    json!({
        "kind": "AdmissionReview",
        "apiVersion": "admission.k8s.io/v1",
        "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "requestKind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "requestResource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "name": "web",
            "namespace": "shop",
            "operation": "DELETE",
            "userInfo": {
                "username": "jane", "uid": "u-1", "groups": ["dev", "system:authenticated"],
                "extra": {"warrant.dev/ticket": ["CHG-1"]}
            },
            "object": null,
            "oldObject": {
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "shop", "labels": {"tier": "critical"}},
                "spec": {"replicas": 3}
            },
            "dryRun": false,
            "options": {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "propagationPolicy": "Background"}
        }
    })
}

#[track_caller]
fn ok(body: &Value) -> AdmissionRequest {
    match decode(body.to_string().as_bytes()) {
        Ok(r) => r,
        Err(e) => panic!("decode failed: {e}\nbody: {body}"),
    }
}

#[track_caller]
fn err(body: &str) -> String {
    match decode(body.as_bytes()) {
        Ok(r) => panic!("decode succeeded: {r:?}"),
        Err(e) => e.to_string(),
    }
}

/// `delete_review()` with `request.<field>` set to `value` (`None`: removed).
fn with(field: &str, value: Option<Value>) -> String {
    let mut v = delete_review();
    let request = v["request"].as_object_mut().unwrap();
    match value {
        Some(x) => request.insert(field.to_owned(), x),
        None => request.remove(field),
    };
    v.to_string()
}

#[test]
fn a_delete_as_kube_apiserver_sends_it() {
    let r = ok(&delete_review());
    assert_eq!(r.uid, "705ab4f5-6393-11e8-b7cc-42010a800002");
    assert_eq!(r.operation, AdmissionOperation::Delete);
    assert_eq!(r.kind.kind, "Deployment");
    assert_eq!(
        (r.resource.group.as_str(), r.resource.resource.as_str()),
        ("apps", "deployments")
    );
    assert_eq!((r.name.as_str(), r.namespace.as_str()), ("web", "shop"));
    assert_eq!(r.user_info.username.as_deref(), Some("jane"));
    assert_eq!(r.object, None);
    assert_eq!(
        r.old_object.as_ref().unwrap().label("tier"),
        Some("critical")
    );
    assert!(!r.dry_run);
}

#[test]
fn unknown_fields_are_ignored_and_dry_run_defaults_to_false() {
    let mut v = delete_review();
    v["request"]["somethingNew"] = json!({"x": 1});
    v["response"] = json!(null);
    v["request"].as_object_mut().unwrap().remove("dryRun");
    let r = ok(&v);
    assert!(!r.dry_run);
}

#[test]
fn malformed_reviews() {
    let review = delete_review().to_string();
    let rows: Vec<(&str, String, &str)> = vec![
        (
            "not json",
            "{not json".into(),
            "request body is not a JSON object",
        ),
        (
            "empty body",
            String::new(),
            "request body is not a JSON object",
        ),
        (
            "an array body",
            format!(
                "[\"admission.k8s.io/v1\", \"AdmissionReview\", {}]",
                delete_review()["request"]
            ),
            "request body is not a JSON object: invalid type: sequence, expected an AdmissionReview object",
        ),
        (
            "a string body",
            "\"AdmissionReview\"".into(),
            "request body is not a JSON object",
        ),
        (
            "no apiVersion",
            r#"{"kind":"AdmissionReview","request":{}}"#.into(),
            "apiVersion is required: expected admission.k8s.io/v1",
        ),
        (
            "v1beta1",
            review.replace("admission.k8s.io/v1", "admission.k8s.io/v1beta1"),
            "apiVersion \"admission.k8s.io/v1beta1\" is not supported: expected admission.k8s.io/v1",
        ),
        (
            "a SubjectAccessReview",
            r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{}}"#
                .into(),
            "apiVersion \"authorization.k8s.io/v1\" is not supported",
        ),
        (
            "wrong kind",
            review.replace("\"AdmissionReview\"", "\"TokenReview\""),
            "kind \"TokenReview\" is not supported: expected AdmissionReview",
        ),
        (
            "no kind",
            r#"{"apiVersion":"admission.k8s.io/v1","request":{}}"#.into(),
            "kind \"\" is not supported",
        ),
        (
            "no request",
            r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#.into(),
            "request is required",
        ),
        (
            "null request",
            r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":null}"#
                .into(),
            "request is required",
        ),
        (
            "request as an array",
            r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":["u"]}"#
                .into(),
            "request is invalid: invalid type: sequence, expected an AdmissionRequest object",
        ),
        ("no uid", with("uid", None), "request.uid is required"),
        (
            "empty uid",
            with("uid", Some(json!(""))),
            "request.uid is required",
        ),
        (
            "numeric uid",
            with("uid", Some(json!(7))),
            "request is invalid: invalid type: integer `7`, expected a string",
        ),
        (
            "no operation",
            with("operation", None),
            "request.operation is required",
        ),
        (
            "unknown operation",
            with("operation", Some(json!("PATCH"))),
            "request.operation \"PATCH\" is not supported: expected CREATE, UPDATE, DELETE or CONNECT",
        ),
        (
            "lower-case operation",
            with("operation", Some(json!("delete"))),
            "request.operation \"delete\" is not supported",
        ),
        (
            "no userInfo",
            with("userInfo", None),
            "request.userInfo is required",
        ),
        (
            "userInfo as an array",
            with("userInfo", Some(json!(["jane"]))),
            "request is invalid: invalid type: sequence, expected",
        ),
        (
            "groups not a list",
            with(
                "userInfo",
                Some(json!({"username": "jane", "groups": "dev"})),
            ),
            "request is invalid: invalid type: string \"dev\"",
        ),
        ("no kind", with("kind", None), "request.kind is required"),
        (
            "kind as an array",
            with("kind", Some(json!(["apps", "v1", "Deployment"]))),
            "request is invalid: invalid type: sequence, expected a JSON object",
        ),
        (
            "no resource",
            with("resource", None),
            "request.resource is required",
        ),
        (
            "empty resource",
            with("resource", Some(json!({"group": "apps", "version": "v1"}))),
            "request.resource.resource is required",
        ),
        (
            "DELETE without oldObject",
            with("oldObject", None),
            "request.oldObject is required for operation DELETE",
        ),
        (
            "DELETE with a null oldObject",
            with("oldObject", Some(Value::Null)),
            "request.oldObject is required for operation DELETE",
        ),
        (
            "oldObject as an array",
            with("oldObject", Some(json!([1]))),
            "request.oldObject must be a JSON object, got an array",
        ),
        (
            "object as a string",
            with("object", Some(json!("x"))),
            "request.object must be a JSON object, got a string",
        ),
        (
            "dryRun as a string",
            with("dryRun", Some(json!("true"))),
            "request is invalid: invalid type: string \"true\", expected a boolean",
        ),
        (
            "v1beta1 with a request as an array: the envelope's fault first",
            r#"{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":["u"]}"#
                .into(),
            "apiVersion \"admission.k8s.io/v1beta1\" is not supported",
        ),
        (
            "wrong kind with an invalid request: the envelope's fault first",
            with("uid", Some(json!(7))).replace("\"AdmissionReview\"", "\"TokenReview\""),
            "kind \"TokenReview\" is not supported",
        ),
        (
            "oldObject as a number",
            with("oldObject", Some(json!(-1.5))),
            "request.oldObject must be a JSON object, got a number",
        ),
        (
            "oldObject as a boolean",
            with("oldObject", Some(json!(false))),
            "request.oldObject must be a JSON object, got a boolean",
        ),
        (
            "a duplicate uid",
            review.replacen("\"uid\":", "\"uid\":\"other\",\"uid\":", 1),
            "request is invalid: duplicate field `uid`",
        ),
    ];
    for (name, body, want) in rows {
        let got = err(&body);
        assert!(got.contains(want), "{name}: {got}");
    }
}

#[test]
fn update_needs_both_objects_create_and_connect_need_none() {
    let mut update = delete_review();
    update["request"]["operation"] = json!("UPDATE");
    update["request"]["object"] = update["request"]["oldObject"].clone();
    assert_eq!(ok(&update).operation, AdmissionOperation::Update);
    update["request"]["object"] = Value::Null;
    assert_eq!(
        err(&update.to_string()),
        "request.object is required for operation UPDATE"
    );
    update["request"]["object"] = update["request"]["oldObject"].clone();
    update["request"]
        .as_object_mut()
        .unwrap()
        .remove("oldObject");
    assert_eq!(
        err(&update.to_string()),
        "request.oldObject is required for operation UPDATE"
    );
    for op in ["CREATE", "CONNECT"] {
        let mut v = delete_review();
        v["request"]["operation"] = json!(op);
        v["request"].as_object_mut().unwrap().remove("oldObject");
        assert_eq!(ok(&v).operation.as_str(), op);
    }
}

#[test]
fn objects_read_in_the_one_pass_are_found_whole_in_the_kept_body() {
    let old = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web\u{e9}\"q", "namespace": "shop", "uid": "u-old",
                     "labels": {"tier": "critical", "n": 5},
                     "annotations": {"sre.example.com/ticket": "CHG-1"}},
        "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "c"}]}}}
    });
    let new = json!({"apiVersion": "apps/v1", "kind": "Deployment",
                     "metadata": {"name": "web", "labels": {}}, "spec": [1, 2]});
    let mut v = delete_review();
    v["request"]["operation"] = json!("UPDATE");
    v["request"]["oldObject"] = old.clone();
    v["request"]["object"] = new.clone();
    let request = ok(&v);
    let (stored, updated) = (request.old_object.unwrap(), request.object.unwrap());
    // The head, read in the pass over the whole request.
    assert_eq!(stored.name(), "web\u{e9}\"q");
    assert_eq!(stored.uid(), "u-old");
    assert_eq!(stored.label("tier"), Some("critical"));
    assert_eq!(
        stored.label("n"),
        None,
        "a label that is not a string is absent"
    );
    assert_eq!(stored.annotation("sre.example.com/ticket"), Some("CHG-1"));
    assert_eq!(stored.replicas(), Some(3));
    assert_eq!(
        updated.replicas(),
        None,
        "a spec that is not an object has no replicas"
    );
    // The whole of each, found again in the body when asked for.
    assert_eq!(stored.json(), &old);
    assert_eq!(updated.json(), &new);
    assert_eq!(stored.decode::<Value>().unwrap(), old);
    assert_eq!(updated.decode::<Value>().unwrap(), new);
}

#[test]
fn an_object_with_a_field_named_twice_is_read_from_its_text_as_go_reads_it() {
    let body = with("oldObject", Some(json!({"metadata": {"name": "first"}}))).replacen(
        r#"{"name":"first"}"#,
        r#"{"name":"first","name":"last"}"#,
        1,
    );
    assert!(body.contains(r#""name":"first","name":"last""#), "{body}");
    let request = decode(body.as_bytes()).unwrap();
    let stored = request.old_object.unwrap();
    assert_eq!(stored.name(), "last");
    assert_eq!(stored.json(), &json!({"metadata": {"name": "last"}}));
}

fn mapped(v: &Value) -> Mapped {
    map(ok(v), Arc::new(NoCluster))
}

#[test]
fn a_delete_maps_onto_a_delete_review_with_the_object_in_old_object() {
    let m = mapped(&delete_review());
    assert_eq!(m.uid, "705ab4f5-6393-11e8-b7cc-42010a800002");
    assert_eq!(m.operation, AdmissionOperation::Delete);
    let spec = m.review.spec();
    assert_eq!(spec.user.as_deref(), Some("jane"));
    assert_eq!(spec.uid.as_deref(), Some("u-1"));
    assert_eq!(m.review.groups(), ["dev", "system:authenticated"]);
    assert_eq!(
        spec.extra.as_ref().unwrap()["warrant.dev/ticket"],
        ["CHG-1"]
    );
    assert_eq!(spec.non_resource_attributes, None);
    let ra = spec.resource_attributes.as_ref().unwrap();
    assert_eq!(
        serde_json::to_value(ra).unwrap(),
        json!({"namespace": "shop", "verb": "delete", "group": "apps", "version": "v1",
               "resource": "deployments", "name": "web"})
    );
    let ctx = m.context.unwrap();
    assert_eq!(ctx.operation, Operation::Delete);
    assert_eq!(ctx.object, None);
    assert_eq!(ctx.old_object.unwrap().name(), "web");
    assert!(!ctx.dry_run);
}

#[test]
fn an_update_maps_onto_update_with_both_objects_and_dry_run() {
    let mut v = delete_review();
    v["request"]["operation"] = json!("UPDATE");
    v["request"]["dryRun"] = json!(true);
    v["request"]["object"] = json!({"metadata": {"name": "web", "labels": {}}});
    let m = mapped(&v);
    assert!(m.dry_run);
    assert_eq!(m.review.verb(), "update");
    let ctx = m.context.unwrap();
    assert_eq!(ctx.operation, Operation::Update);
    assert_eq!(ctx.object.unwrap().label("tier"), None);
    assert_eq!(ctx.old_object.unwrap().label("tier"), Some("critical"));
    assert!(ctx.dry_run);
}

#[test]
fn create_and_connect_have_no_object_context() {
    for op in ["CREATE", "CONNECT"] {
        let mut v = delete_review();
        v["request"]["operation"] = json!(op);
        let m = mapped(&v);
        assert!(m.context.is_none(), "{op}");
        assert_eq!(m.review.verb(), op.to_ascii_lowercase());
    }
}

/// A collection delete reaches admission once per object with an empty `request.name`
/// (`handlers/delete.go`, `DeleteCollection`): the name comes from the object, so per-object
/// protection by name still applies.
#[test]
fn a_collection_delete_takes_the_name_and_namespace_from_the_object() {
    let mut v = delete_review();
    v["request"]["name"] = json!("");
    v["request"].as_object_mut().unwrap().remove("namespace");
    let m = mapped(&v);
    let ra = m.review.spec().resource_attributes.clone().unwrap();
    assert_eq!(
        (ra.name.as_deref(), ra.namespace.as_deref()),
        (Some("web"), Some("shop"))
    );
}

/// kube-apiserver reads `/api/v1/namespaces/{name}` with the name as the namespace
/// (`requestinfo.go`), so a Namespace DELETE carries `namespace == name`; a collection delete
/// of namespaces carries neither, and the review gets both from the object.
#[test]
fn a_namespace_is_its_own_namespace() {
    let namespace = |name: &str, ns: Option<&str>| {
        let mut v = delete_review();
        let r = v["request"].as_object_mut().unwrap();
        r.insert(
            "kind".into(),
            json!({"group": "", "version": "v1", "kind": "Namespace"}),
        );
        r.insert(
            "resource".into(),
            json!({"group": "", "version": "v1", "resource": "namespaces"}),
        );
        r.insert("name".into(), json!(name));
        match ns {
            Some(ns) => r.insert("namespace".into(), json!(ns)),
            None => r.remove("namespace"),
        };
        r.insert(
            "oldObject".into(),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}),
        );
        let ra = mapped(&v)
            .review
            .spec()
            .resource_attributes
            .clone()
            .unwrap();
        (ra.group, ra.resource, ra.name, ra.namespace)
    };
    let want = (
        None,
        Some("namespaces".to_owned()),
        Some("shop".to_owned()),
        Some("shop".to_owned()),
    );
    assert_eq!(namespace("shop", Some("shop")), want);
    assert_eq!(namespace("", None), want);
}

#[test]
fn responses_echo_the_uid_in_v1() {
    let allowed = AdmissionResponse::allow("u-1");
    let v: Value = serde_json::from_slice(&allowed.encode()).unwrap();
    assert_eq!(
        v,
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
               "response": {"uid": "u-1", "allowed": true}})
    );

    let mut denied = AdmissionResponse::deny("u-2", "guard: no [MISSING_TICKET]");
    assert!(denied.annotate("code", "MISSING_TICKET"));
    denied.warn("line one\nline two\t!");
    let v: Value = serde_json::from_slice(&denied.encode()).unwrap();
    assert_eq!(
        v,
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
               "response": {"uid": "u-2", "allowed": false,
                            "status": {"status": "Failure", "message": "guard: no [MISSING_TICKET]",
                                       "reason": "Forbidden", "code": 403},
                            "auditAnnotations": {"code": "MISSING_TICKET"},
                            "warnings": ["line one line two !"]}})
    );
}

#[test]
fn annotation_keys_must_be_qualified_name_parts() {
    for good in [
        "code",
        "risk-level",
        "risk_score",
        "a.b",
        "A1",
        &"x".repeat(63),
    ] {
        assert!(is_annotation_key(good), "{good}");
    }
    for bad in [
        "",
        "-code",
        "code-",
        "warrant.dev/code",
        "a b",
        "ü",
        &"x".repeat(64),
    ] {
        assert!(!is_annotation_key(bad), "{bad}");
    }
    let mut r = AdmissionResponse::allow("u");
    assert!(!r.annotate("warrant.dev/code", "x"));
    assert!(r.audit_annotations.is_empty());
}
