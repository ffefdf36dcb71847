//! Spec vectors 1-3 (`TestV1Webhook`): what the downstream receives, and where.

use super::fault::{Behaviour, FaultServer};
use super::*;

async fn setup(version: &str, path: &str) -> (FaultServer, Warrant, tempfile::TempDir) {
    let fault = FaultServer::start(None).await;
    let dir = tempfile::tempdir().unwrap();
    let kc = write_kubeconfig(
        dir.path(),
        "kc.yaml",
        &Kube::new(fault.url(path), &fault.ca.cert_pem),
    );
    let config = webhook_config(&kc, "", "").replace(
        "subjectAccessReviewVersion: v1\n",
        &format!("subjectAccessReviewVersion: {version}\n"),
    );
    let w = front(config).await;
    (fault, w, dir)
}

fn body(fault: &FaultServer, i: usize) -> serde_json::Value {
    serde_json::from_str(&fault.received()[i].body).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_1_to_3_request_shape_v1() {
    let (fault, w, _dir) = setup("v1", "/custom/authorize").await;
    // 1. no user, non-resource.
    let s = ask(
        &w,
        r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"nonResourceAttributes":{}}}"#,
    )
    .await;
    assert_eq!(s["allowed"], true);
    let b = body(&fault, 0);
    assert_eq!(b["apiVersion"], "authorization.k8s.io/v1");
    assert_eq!(b["kind"], "SubjectAccessReview");
    assert_eq!(b["spec"], serde_json::json!({"nonResourceAttributes": {}}));
    // 2. user jane only.
    ask(
        &w,
        r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"jane","nonResourceAttributes":{}}}"#,
    )
    .await;
    assert_eq!(
        body(&fault, 1)["spec"],
        serde_json::json!({"user": "jane", "nonResourceAttributes": {}})
    );
    // 3. all seven resource attributes, no non-resource attributes, no path.
    ask(
        &w,
        r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"jane","uid":"1","groups":["group1","group2"],
        "resourceAttributes":{"verb":"GET","namespace":"kittensandponies","group":"group3","version":"v7beta3","resource":"pods","subresource":"proxy","name":"my-pod"}}}"#,
    )
    .await;
    assert_eq!(
        body(&fault, 2)["spec"],
        serde_json::json!({"user": "jane", "uid": "1", "groups": ["group1", "group2"],
            "resourceAttributes": {"verb": "GET", "namespace": "kittensandponies", "group": "group3",
                "version": "v7beta3", "resource": "pods", "subresource": "proxy", "name": "my-pod"}})
    );
    // The server URL is used exactly; upstream's headers are sent.
    let head = fault.received()[0].head.to_ascii_lowercase();
    assert!(
        head.starts_with("post /custom/authorize http/1.1\r\n"),
        "{head}"
    );
    assert!(
        head.contains("content-type: application/json\r\n"),
        "{head}"
    );
    assert!(head.contains("accept: application/json, */*\r\n"), "{head}");
    assert!(head.contains("accept-encoding: gzip"), "{head}");
    assert!(head.contains("user-agent: warrant/"), "{head}");
    assert_eq!(fault.calls(), 3);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1beta1_downstream_gets_group_and_must_answer_v1beta1() {
    let (fault, w, _dir) = setup("v1beta1", "/").await;
    fault.always(Behaviour::json(
        200,
        &super::fault::review_answer("authorization.k8s.io/v1beta1", true, false, "ok"),
    ));
    let s = ask(&w, &review("alice", "ns")).await;
    assert_eq!(
        (s["allowed"].clone(), s["reason"].clone()),
        (true.into(), "opa: ok".into())
    );
    let b = body(&fault, 0);
    assert_eq!(b["apiVersion"], "authorization.k8s.io/v1beta1");
    assert_eq!(b["spec"]["group"], serde_json::json!(["group1", "group2"]));
    assert!(b["spec"].get("groups").is_none());
    // A v1 answer to a v1beta1 review does not decode (no conversion), and is not retried.
    fault.take_calls();
    fault.always(Behaviour::status(true, false, "ok"));
    let s = ask(&w, &review("bob", "ns")).await;
    assert_eq!(s["allowed"], false);
    assert!(
        s["evaluationError"]
            .as_str()
            .unwrap()
            .contains("apiVersion"),
        "{s}"
    );
    assert_eq!(fault.calls(), 1);
    w.stop().await;
}
