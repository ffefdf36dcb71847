use super::*;

#[track_caller]
fn ok(body: &str) -> Review {
    match decode(body.as_bytes()) {
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

#[test]
fn v1_resource_review() {
    let r = ok(
        r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","metadata":{},
        "spec":{"user":"jane","uid":"1","groups":["dev","system:authenticated"],"extra":{"scopes":["a"]},
        "resourceAttributes":{"namespace":"team-a","verb":"list","group":"apps","version":"v1","resource":"deployments",
        "labelSelector":{"requirements":[{"key":"tier","operator":"In","values":["web"]}]}}},
        "status":{"allowed":false}}"#,
    );
    assert_eq!(r.version(), ApiVersion::V1);
    assert_eq!(r.user(), "jane");
    assert_eq!(r.groups(), ["dev", "system:authenticated"]);
    assert_eq!(r.verb(), "list");
    assert_eq!(r.attributes(), Attributes::Resource);
    let ra = r.spec().resource_attributes.as_ref().unwrap();
    let reqs = ra
        .label_selector
        .as_ref()
        .unwrap()
        .requirements
        .as_ref()
        .unwrap();
    assert_eq!(reqs[0].key, "tier");
}

#[test]
fn v1beta1_uses_group() {
    let r = ok(
        r#"{"apiVersion":"authorization.k8s.io/v1beta1","kind":"SubjectAccessReview",
        "spec":{"user":"bob","group":["g1","g2"],"nonResourceAttributes":{"path":"/healthz","verb":"get"}}}"#,
    );
    assert_eq!(r.version(), ApiVersion::V1beta1);
    assert_eq!(r.groups(), ["g1", "g2"]);
    assert_eq!(r.attributes(), Attributes::NonResource);
    assert_eq!(r.verb(), "get");
}

#[test]
fn empty_non_resource_attributes_is_a_review() {
    // Upstream vector 1: an empty user and `{}` attributes.
    let r = ok(
        r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"nonResourceAttributes":{}}}"#,
    );
    assert_eq!(r.user(), "");
    assert!(r.groups().is_empty());
}

#[test]
fn malformed_inputs() {
    let rows: &[(&str, &str, &str)] = &[
        ("not json", "not-json", "request body is not a JSON object"),
        ("array", "[1,2]", "request body is not a JSON object"),
        (
            "no apiVersion",
            r#"{"kind":"SubjectAccessReview","spec":{"nonResourceAttributes":{}}}"#,
            "apiVersion is required",
        ),
        (
            "other apiVersion",
            r#"{"apiVersion":"authorization.k8s.io/v2","kind":"SubjectAccessReview","spec":{}}"#,
            "apiVersion \"authorization.k8s.io/v2\" is not supported",
        ),
        (
            "wrong kind",
            r#"{"apiVersion":"authorization.k8s.io/v1","kind":"TokenReview","spec":{}}"#,
            "kind \"TokenReview\" is not supported",
        ),
        (
            "no spec",
            r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview"}"#,
            "spec is required",
        ),
        (
            "spec of wrong type",
            r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"groups":"a"}}"#,
            "spec is invalid",
        ),
        (
            "neither",
            r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"a"}}"#,
            "got neither",
        ),
        (
            "both",
            r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"resourceAttributes":{},"nonResourceAttributes":{}}}"#,
            "got both",
        ),
        (
            "v1 with group",
            r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"group":["x"],"nonResourceAttributes":{}}}"#,
            "spec.group is not a field of authorization.k8s.io/v1: use spec.groups",
        ),
        (
            "v1beta1 with groups",
            r#"{"apiVersion":"authorization.k8s.io/v1beta1","kind":"SubjectAccessReview","spec":{"groups":["x"],"nonResourceAttributes":{}}}"#,
            "spec.groups is not a field of authorization.k8s.io/v1beta1: use spec.group",
        ),
    ];
    for (name, body, want) in rows {
        let got = err(body);
        assert!(got.contains(want), "{name}: got {got:?}, want {want:?}");
    }
}

#[test]
fn response_keeps_version_and_omits_unset_fields() {
    use k8s_openapi::api::authorization::v1::SubjectAccessReviewStatus;
    let status = SubjectAccessReviewStatus {
        allowed: false,
        denied: Some(true),
        reason: Some("x: no".into()),
        evaluation_error: None,
    };
    let v: serde_json::Value =
        serde_json::from_slice(&encode_response(ApiVersion::V1beta1, &status)).unwrap();
    assert_eq!(v["apiVersion"], "authorization.k8s.io/v1beta1");
    assert_eq!(v["kind"], "SubjectAccessReview");
    assert_eq!(v["status"]["allowed"], false);
    assert_eq!(v["status"]["denied"], true);
    assert_eq!(v["status"]["reason"], "x: no");
    assert!(v["status"].get("evaluationError").is_none());
}

/// A review, or its spec, in serde's sequence form is refused as Go's
/// decoder refuses it (kube-apiserver never sends one; a body that does is not a review).
#[test]
fn arrays_are_not_reviews() {
    assert_eq!(
        err(
            r#"["authorization.k8s.io/v1","SubjectAccessReview",{"user":"jane","nonResourceAttributes":{"path":"/","verb":"get"}}]"#
        ),
        "request body is not a JSON object: invalid type: sequence, expected a SubjectAccessReview object"
    );
    assert_eq!(
        err(
            r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":["jane",["dev"]]}"#
        ),
        "spec is invalid: invalid type: sequence, expected a SubjectAccessReviewSpec object"
    );
    // Nested attributes are k8s-openapi types, which take objects only already.
    assert!(
        err(r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"nonResourceAttributes":["/","get"]}}"#)
            .starts_with("spec is invalid: invalid type: sequence")
    );
}
