//! `status.authorizationDetails` over HTTPS: carried in v1 and v1beta1 answers when
//! `--authorization-details` is on, absent when it is off (the default).

use crate::support::*;

const RULED: &str = "apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
- type: Policy
  name: cluster-rules
  policy:
    rules:
    - name: no-pods-for-dev
      effect: Deny
      expression: \"'dev' in request.groups\"
      message: dev may not read pods here
      code: DEV_PODS
";

#[track_caller]
fn assert_details(
    status: &serde_json::Value,
    authorizer: &str,
    rule: Option<&str>,
    code: Option<&str>,
) {
    let d = &status["authorizationDetails"];
    assert_eq!(
        d["warrant.dev/authorizer"],
        serde_json::json!([authorizer]),
        "{status}"
    );
    assert_eq!(
        d.get("warrant.dev/rule"),
        rule.map(|r| serde_json::json!([r])).as_ref()
    );
    assert_eq!(
        d.get("warrant.dev/code"),
        code.map(|c| serde_json::json!([c])).as_ref()
    );
    let revision = d["warrant.dev/config-revision"][0]
        .as_str()
        .unwrap_or_default();
    assert!(
        revision.starts_with("sha256:") && revision.len() == 71,
        "{revision:?}"
    );
    let id = d["warrant.dev/decision-id"][0].as_str().unwrap_or_default();
    assert!(uuid::Uuid::parse_str(id).is_ok(), "{id:?}");
    assert!(serde_json::to_vec(d).unwrap().len() <= 1024);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_and_v1beta1_answers_carry_the_details_when_asked() {
    let w = Warrant::start(Options {
        config: Some(RULED.into()),
        authorization_details: true,
        ..Options::default()
    })
    .await;
    let c = w.client();
    let (code, v) = post_review(&c, &w.url("/authorize"), V1_REVIEW).await;
    assert_eq!(code, 200);
    assert_eq!(v["apiVersion"], "authorization.k8s.io/v1");
    assert_eq!(v["status"]["denied"], true);
    assert_details(
        &v["status"],
        "cluster-rules",
        Some("no-pods-for-dev"),
        Some("DEV_PODS"),
    );
    // bob (group ops) matches no rule: NoOpinion has no deciding authorizer, rule or code.
    let (code, v) = post_review(&c, &w.url("/authorize"), V1BETA1_REVIEW).await;
    assert_eq!(code, 200);
    assert_eq!(v["apiVersion"], "authorization.k8s.io/v1beta1");
    let d = &v["status"]["authorizationDetails"];
    assert!(d.get("warrant.dev/authorizer").is_none(), "{v}");
    assert!(d["warrant.dev/config-revision"][0].is_string(), "{v}");
    assert!(d["warrant.dev/decision-id"][0].is_string(), "{v}");
    let v1beta1_denied = V1BETA1_REVIEW.replace("\"ops\"", "\"dev\"");
    let (_, v) = post_review(&c, &w.url("/authorize"), &v1beta1_denied).await;
    assert_eq!(v["apiVersion"], "authorization.k8s.io/v1beta1");
    assert_details(
        &v["status"],
        "cluster-rules",
        Some("no-pods-for-dev"),
        Some("DEV_PODS"),
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_carry_no_details_by_default() {
    let w = Warrant::start(Options {
        config: Some(RULED.into()),
        ..Options::default()
    })
    .await;
    let c = w.client();
    let v1beta1_denied = V1BETA1_REVIEW.replace("\"ops\"", "\"dev\"");
    for body in [V1_REVIEW, v1beta1_denied.as_str()] {
        let (code, v) = post_review(&c, &w.url("/authorize"), body).await;
        assert_eq!(code, 200);
        assert_eq!(v["status"]["denied"], true, "{v}");
        assert!(v["status"].get("authorizationDetails").is_none(), "{v}");
    }
    w.stop().await;
}
