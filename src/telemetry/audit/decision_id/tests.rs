//! The rings agree on a request's decision id, and only on that request's.

use super::*;
use crate::object::NoCluster;
use serde_json::json;
use std::sync::Arc;

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

/// The SubjectAccessReview kube-apiserver sends for `verb` on deployment `shop/web`.
fn sar(user: &str, verb: &str) -> SubjectAccessReviewSpec {
    let body = json!({
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": user, "groups": ["dev", "system:authenticated"],
                 "resourceAttributes": {"verb": verb, "group": "apps", "version": "v1",
                                        "resource": "deployments", "namespace": "shop", "name": "web"}}
    });
    crate::review::decode(body.to_string().as_bytes())
        .unwrap()
        .spec()
        .clone()
}

/// The AdmissionReview of `operation` on the same deployment, mapped as the validation ring
/// maps it.
fn admission(user: &str, operation: &str) -> SubjectAccessReviewSpec {
    let object = json!({"apiVersion": "apps/v1", "kind": "Deployment",
                        "metadata": {"name": "web", "namespace": "shop", "uid": "d-1"}});
    let body = json!({
        "kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
        "request": {
            "uid": "a6c1d1a4-0d1f-4c4e-9a51-3f1c0f5f0c11",
            "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "name": "web", "namespace": "shop", "operation": operation,
            "userInfo": {"username": user, "groups": ["dev", "system:authenticated"]},
            "object": if operation == "DELETE" { serde_json::Value::Null } else { object.clone() },
            "oldObject": object, "dryRun": false,
        }
    });
    let request = crate::admission::decode(body.to_string().as_bytes()).unwrap();
    crate::admission::map(request, Arc::new(NoCluster))
        .review
        .spec()
        .clone()
}

#[test]
fn the_authorization_and_admission_reviews_of_one_delete_share_a_decision_id() {
    let authorized = DecisionId::of_review(&sar("jane", "delete"), at("2026-12-02T10:00:01.100Z"));
    let admitted =
        DecisionId::of_review(&admission("jane", "DELETE"), at("2026-12-02T10:00:01.140Z"));
    assert_eq!(authorized, admitted);
}

#[test]
fn a_patch_is_joined_to_the_update_it_is_admitted_as() {
    let t = at("2026-12-02T10:00:01Z");
    let admitted = DecisionId::of_review(&admission("jane", "UPDATE"), t);
    assert_eq!(DecisionId::of_review(&sar("jane", "patch"), t), admitted);
    assert_eq!(DecisionId::of_review(&sar("jane", "update"), t), admitted);
    assert_ne!(DecisionId::of_review(&sar("jane", "delete"), t), admitted);
}

#[test]
fn the_buffer_ring_derives_the_same_id_from_the_deletion_timestamp_and_the_requester() {
    // kube-apiserver stores deletionTimestamp to the second, set just before the validation
    // ring's review of the write that commits the deletion.
    let admitted =
        DecisionId::of_review(&admission("jane", "DELETE"), at("2026-12-02T10:00:01.140Z"));
    let held = DecisionId::derive(&JoinKey {
        operation: "DELETE",
        group: "apps",
        resource: "deployments",
        subresource: "",
        namespace: "shop",
        name: "web",
        user: "jane",
        at: at("2026-12-02T10:00:01Z"),
    });
    assert_eq!(held, admitted);
}

#[test]
fn another_user_object_operation_or_window_gets_another_id() {
    let t = at("2026-12-02T10:00:01Z");
    let base = DecisionId::of_review(&sar("jane", "delete"), t);
    assert_ne!(DecisionId::of_review(&sar("joe", "delete"), t), base);
    assert_ne!(DecisionId::of_review(&sar("jane", "get"), t), base);
    let mut other = sar("jane", "delete");
    other.resource_attributes.as_mut().unwrap().name = Some("db".into());
    assert_ne!(DecisionId::of_review(&other, t), base);
    // The same window (10 s, from the epoch) shares it; the next one does not.
    assert_eq!(
        DecisionId::of_review(&sar("jane", "delete"), at("2026-12-02T10:00:09.999Z")),
        base
    );
    assert_ne!(
        DecisionId::of_review(&sar("jane", "delete"), at("2026-12-02T10:00:10Z")),
        base
    );
}

#[test]
fn fields_cannot_run_into_each_other() {
    let t = at("2026-12-02T10:00:01Z");
    let key = |namespace, name| JoinKey {
        operation: "DELETE",
        group: "",
        resource: "configmaps",
        subresource: "",
        namespace,
        name,
        user: "jane",
        at: t,
    };
    assert_ne!(
        DecisionId::derive(&key("ab", "c")),
        DecisionId::derive(&key("a", "bc"))
    );
}

#[test]
fn a_decision_id_is_a_version_8_uuid_and_a_record_id_a_fresh_version_4_one() {
    let id = DecisionId::of_review(&sar("jane", "delete"), at("2026-12-02T10:00:01Z"));
    let parsed = uuid::Uuid::parse_str(&id.to_string()).unwrap();
    assert_eq!(parsed.get_version_num(), 8);
    assert_eq!(parsed.get_variant(), uuid::Variant::RFC4122);
    assert_eq!(
        serde_json::to_value(id).unwrap(),
        json!(id.to_string()),
        "serialized as its hyphenated text"
    );
    let (a, b) = (
        crate::telemetry::audit::new_record_id(),
        crate::telemetry::audit::new_record_id(),
    );
    assert_ne!(a, b);
    assert_eq!(uuid::Uuid::parse_str(&a).unwrap().get_version_num(), 4);
}
