//! A downstream webhook that answers with conditions (KEP-5681), over real TLS: a second
//! in-process warrant whose Policy authors a condition (the round trip: conditional answer,
//! then the AuthorizationConditionsReview forwarded back to it), and the fault server for what
//! the downstream receives, answers the caller did not ask for, broken answers, a union that
//! ends the chain, and an evaluation answer that does not echo its uid.

use super::fault::{Behaviour, FaultServer};
use super::*;
use serde_json::{Value, json};

const OWNERS: &str = r#"apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
- type: Policy
  name: owners
  policy:
    rules:
    - name: owner-updates
      effect: Allow
      expression: "request.resourceAttributes.verb == 'update'"
      condition: "has(object.metadata.labels) && 'owner' in object.metadata.labels && object.metadata.labels['owner'] in request.userInfo.groups"
      message: owners may update their objects
      code: OWNER_UPDATE
"#;

const TTLS: &str = "    authorizedTTL: 1h\n    unauthorizedTTL: 1h\n";

/// An update review, opted in to conditions or not (`types`: the handled decision types).
fn update(types: Option<&[&str]>) -> String {
    let mut body = json!({
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": "jane", "groups": ["group1"],
                 "resourceAttributes": {"namespace": "prod", "verb": "update", "group": "apps",
                                        "version": "v1", "resource": "deployments", "name": "web"}}
    });
    if let Some(t) = types {
        body["spec"]["authorizationOptions"] = json!({ "handledDecisionTypes": t });
    }
    body.to_string()
}

const ALL: &[&str] = &["Union", "Allow", "Deny", "NoOpinion", "ConditionsMap"];

/// The AuthorizationConditionsReview kube-apiserver sends at admission for an update of an
/// object labelled `owner`.
fn ask_back(decision: &Value, owner: &str) -> String {
    json!({
        "apiVersion": "authorization.k8s.io/v1alpha1", "kind": "AuthorizationConditionsReview",
        "request": {"decision": decision, "admissionRequest": {
            "uid": "apiserver-uid", "operation": "UPDATE", "name": "web", "namespace": "prod",
            "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "userInfo": {"username": "jane", "groups": ["group1"]},
            "object": {"apiVersion": "apps/v1", "kind": "Deployment",
                       "metadata": {"name": "web", "labels": {"owner": owner}}},
            "oldObject": {"apiVersion": "apps/v1", "kind": "Deployment",
                          "metadata": {"name": "web", "labels": {"owner": owner}}}}}
    })
    .to_string()
}

async fn post(w: &Warrant, body: &str) -> Value {
    let (code, v) = post_review(&w.client(), &w.url("/authorize"), body).await;
    assert_eq!(code, 200, "{v}");
    v
}

/// A downstream warrant (no client certificates) and a front whose webhook `opa` calls it.
async fn with_downstream(config: &str, tail: &str) -> (Warrant, Warrant, tempfile::TempDir) {
    let down = Warrant::start(Options {
        config: Some(config.to_owned()),
        client_ca: false,
        ..Options::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let kc = write_kubeconfig(
        dir.path(),
        "kc.yaml",
        &Kube::new(down.url("/authorize"), &down.ca.cert_pem),
    );
    let front = front(webhook_config(&kc, TTLS, tail)).await;
    (down, front, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downstream_conditions_are_answered_then_evaluated_by_the_downstream() {
    let (down, w, _dir) = with_downstream(OWNERS, "").await;
    let st = ask(&w, &update(Some(ALL))).await;
    assert_eq!(st["allowed"], false, "{st}");
    assert!(st.get("reason").is_none(), "{st}");
    let d = st["conditionalDecision"].clone();
    assert_eq!(d["type"], "Union", "{st}");
    assert_eq!(d["union"][0]["authorizerName"], "opa");
    let inner = &d["union"][0]["decision"];
    assert_eq!(
        inner["type"], "Union",
        "the downstream's own union, kept whole"
    );
    assert_eq!(inner["union"][0]["authorizerName"], "owners");
    let map = &inner["union"][0]["decision"]["conditionsMap"];
    assert_eq!(map["allowConditions"][0]["id"], "warrant.dev/owner-updates");
    assert_eq!(
        map["allowConditions"][0]["type"],
        "authorizer.kubernetes.io/cel"
    );

    // Each authorizer that answered with conditions counts decision="conditional", as
    // upstream's instrumented authorizer does.
    let conditional = "warrant_authorization_decisions_total{type=\"Webhook\",name=\"opa\",decision=\"conditional\"}";
    assert_eq!(sample(&w, conditional).await, 1.0);
    let conditional = "warrant_authorization_decisions_total{type=\"Policy\",name=\"owners\",decision=\"conditional\"}";
    assert_eq!(sample(&down, conditional).await, 1.0);

    // Admission: the front forwards the downstream's sub-decision back to it.
    let mine = post(&w, &ask_back(&d, "group1")).await;
    assert_eq!(mine["kind"], "AuthorizationConditionsReview");
    assert_eq!(mine["response"]["uid"], "apiserver-uid", "{mine}");
    assert_eq!(mine["response"]["decision"]["type"], "Allow", "{mine}");
    let reason = mine["response"]["decision"]["allow"]["reason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("owner-updates"), "{reason}");
    let theirs = post(&w, &ask_back(&d, "group2")).await;
    assert_eq!(
        theirs["response"]["decision"]["type"], "NoOpinion",
        "{theirs}"
    );
    const ALLOWED: &str = "warrant_conditions_evaluations_total{result=\"allowed\"}";
    assert_eq!(
        sample(&down, ALLOWED).await,
        1.0,
        "the downstream evaluated it"
    );

    // A sub-decision the downstream did not author (tampered on the way) fails closed there.
    let mut tampered = d.clone();
    tampered["union"][0]["decision"]["union"][0]["decision"]["conditionsMap"]["allowConditions"]
        [0]["condition"] = json!("true");
    let t = post(&w, &ask_back(&tampered, "group2")).await;
    assert_eq!(t["response"]["decision"]["type"], "NoOpinion", "{t}");
    assert_eq!(sample(&down, ALLOWED).await, 1.0);
    w.stop().await;
    down.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opted_in_and_not_opted_in_reviews_never_share_a_cache_entry() {
    let (down, w, _dir) = with_downstream(OWNERS, "").await;
    let opted = update(Some(ALL));
    let plain = update(None);
    let unconditional_only = update(Some(&["Allow", "Deny", "NoOpinion"]));
    let st = ask(&w, &opted).await;
    assert!(st.get("conditionalDecision").is_some(), "{st}");
    let st = ask(&w, &plain).await;
    assert!(st.get("conditionalDecision").is_none(), "{st}");
    assert_eq!(st["allowed"], false);
    assert_eq!(cache_count(&w, "miss").await, 2.0, "two entries, no hit");
    assert_eq!(cache_count(&w, "hit").await, 0.0);
    // Each is then served from its own entry; a caller handling only unconditional types
    // sends what a plain caller sends, so it shares the plain entry.
    let st = ask(&w, &opted).await;
    assert!(st.get("conditionalDecision").is_some(), "{st}");
    for body in [&plain, &unconditional_only] {
        let st = ask(&w, body).await;
        assert!(st.get("conditionalDecision").is_none(), "{st}");
    }
    assert_eq!(cache_count(&w, "hit").await, 3.0);
    assert_eq!(cache_count(&w, "miss").await, 2.0);
    let live = w.live.load().unwrap();
    let name = warrant::names::AuthorizerName::new("opa").unwrap();
    assert_eq!(live.chain.webhook_states().cached_entries(&name), Some(2));
    w.stop().await;
    down.stop().await;
}

async fn fault_front(tail: &str) -> (FaultServer, Warrant, tempfile::TempDir) {
    let fault = FaultServer::start(None).await;
    let dir = tempfile::tempdir().unwrap();
    let kc = write_kubeconfig(
        dir.path(),
        "kc.yaml",
        &Kube::new(fault.url("/"), &fault.ca.cert_pem),
    );
    let w = front(webhook_config(&kc, "", tail)).await;
    (fault, w, dir)
}

fn deny_map() -> Value {
    json!({"type": "ConditionsMap", "conditionsMap": {"denyConditions": [
        {"id": "opa.example.com/frozen", "type": "opa.example.com/rego", "condition": "frozen"}]}})
}

fn conditional(status_extra: Value, decision: Value) -> Behaviour {
    let mut status = json!({"allowed": false, "conditionalDecision": decision});
    if let (Some(s), Some(extra)) = (status.as_object_mut(), status_extra.as_object()) {
        s.extend(extra.clone());
    }
    Behaviour::json(
        200,
        &json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "status": status}).to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn options_go_downstream_only_when_the_caller_opted_in() {
    let (fault, w, _dir) = fault_front("").await;
    fault.always(conditional(json!({}), deny_map()));
    let st = ask(&w, &update(Some(ALL))).await;
    assert_eq!(
        st["conditionalDecision"]["union"][0]["decision"],
        deny_map(),
        "{st}"
    );
    let sent: Value = serde_json::from_str(&fault.received()[0].body).unwrap();
    assert_eq!(
        sent["spec"]["authorizationOptions"]["handledDecisionTypes"],
        json!(["Allow", "ConditionsMap", "Deny", "NoOpinion", "Union"])
    );
    // Not opted in: nothing sent; the unrequested answer folds to its failure decision.
    fault.take_calls();
    let st = ask(&w, &update(None)).await;
    let sent: Value = serde_json::from_str(&fault.received()[0].body).unwrap();
    assert!(sent["spec"].get("authorizationOptions").is_none(), "{sent}");
    assert_eq!(st["denied"], true, "{st}");
    assert!(
        st["reason"]
            .as_str()
            .unwrap()
            .contains("unrequested conditional decision"),
        "{st}"
    );
    assert!(st.get("conditionalDecision").is_none());
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_conditional_answers_get_the_failure_policy() {
    let (fault, w, _dir) = fault_front("").await;
    // status.reason must be empty beside a conditional decision: failurePolicy NoOpinion.
    fault.always(conditional(json!({"reason": "because"}), deny_map()));
    let st = ask(&w, &update(Some(ALL))).await;
    assert_eq!(st["allowed"], false, "{st}");
    assert!(st.get("denied").is_none(), "{st}");
    assert!(st.get("conditionalDecision").is_none(), "{st}");
    let e = st["evaluationError"].as_str().unwrap_or_default();
    assert!(e.contains("status.reason: Forbidden"), "{st}");
    // A ConditionsMap whose condition id is no prefixed key fails closed (Deny: it could
    // deny). (Another user: the broken answer above is cached, and judged again on each hit,
    // as upstream caches the status and validates it on every use.)
    let bad = json!({"type": "ConditionsMap", "conditionsMap": {"denyConditions": [{"id": "frozen", "condition": "x"}]}});
    fault.always(conditional(json!({}), bad));
    let st = ask(&w, &update(Some(ALL)).replace("jane", "joe")).await;
    assert_eq!(st["denied"], true, "{st}");
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_downstream_union_with_an_unconditional_allow_ends_the_chain() {
    let (fault, w, _dir) = fault_front("- type: AlwaysDeny\n  name: deny-all\n").await;
    let union = json!({"type": "Union", "union": [
        {"authorizerName": "frozen", "decision": deny_map()},
        {"authorizerName": "rbac", "decision": {"type": "Allow", "allow": {"reason": "bound"}}}]});
    fault.always(conditional(json!({}), union.clone()));
    let st = ask(&w, &update(Some(ALL))).await;
    let d = &st["conditionalDecision"];
    assert_eq!(
        d["union"].as_array().map(Vec::len),
        Some(1),
        "deny-all not consulted: {st}"
    );
    assert_eq!(d["union"][0]["decision"], union);
    // Evaluation is forwarded; an answer that does not echo the fresh uid fails closed to the
    // sub-decision's failure decision (Deny: it could deny).
    fault.always(Behaviour::json(
        200,
        &json!({"apiVersion": "authorization.k8s.io/v1alpha1", "kind": "AuthorizationConditionsReview",
                "response": {"uid": "apiserver-uid", "decision": {"type": "Allow", "allow": {}}}})
        .to_string(),
    ));
    fault.take_calls();
    let r = post(&w, &ask_back(d, "group1")).await;
    let sent: Value = serde_json::from_str(&fault.received()[0].body).unwrap();
    assert_eq!(sent["kind"], "AuthorizationConditionsReview");
    assert_eq!(
        sent["request"]["decision"], union,
        "the downstream's own sub-decision"
    );
    let uid = sent["request"]["admissionRequest"]["uid"].as_str().unwrap();
    assert_ne!(uid, "apiserver-uid", "a fresh uid");
    assert_eq!(
        sent["request"]["admissionRequest"]["object"]["metadata"]["labels"]["owner"],
        "group1"
    );
    assert_eq!(r["response"]["uid"], "apiserver-uid");
    assert_eq!(r["response"]["decision"]["type"], "Deny", "{r}");
    let e = r["response"]["decision"]["deny"]["evaluationError"]
        .as_str()
        .unwrap_or_default();
    assert!(e.contains("mismatch"), "{r}");
    w.stop().await;
}

/// The audit records written so far (at least `n`).
async fn audit(w: &Warrant, n: usize) -> Vec<Value> {
    for _ in 0..200 {
        let text = std::fs::read_to_string(w.path("audit.log")).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if lines.len() >= n {
            return lines;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("fewer than {n} audit records");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_records_show_conditional_answers_and_their_evaluation() {
    let down = Warrant::start(Options {
        config: Some(OWNERS.to_owned()),
        client_ca: false,
        ..Options::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let kc = write_kubeconfig(
        dir.path(),
        "kc.yaml",
        &Kube::new(down.url("/authorize"), &down.ca.cert_pem),
    );
    let w = Warrant::start(Options {
        config: Some(webhook_config(&kc, TTLS, "")),
        webhook_backoff: Some(FAST_BACKOFF),
        audit: true,
        ..Options::default()
    })
    .await;
    let st = ask(&w, &update(Some(ALL))).await;
    let d = st["conditionalDecision"].clone();
    post(&w, &ask_back(&d, "group1")).await;
    let records = audit(&w, 2).await;
    let answered = &records[0];
    assert_eq!(answered["stage"], "authorization");
    assert_eq!(answered["decision"], "Conditional", "{answered}");
    assert_eq!(
        (answered["allowed"].clone(), answered["denied"].clone()),
        (json!(false), json!(false))
    );
    assert_eq!(
        answered["conditions"],
        json!([{"authorizer": "opa/owners", "effect": "Allow", "id": "warrant.dev/owner-updates"}])
    );
    let evaluated = &records[1];
    assert_eq!(evaluated["stage"], "conditions", "{evaluated}");
    assert_eq!(evaluated["apiVersion"], "authorization.k8s.io/v1alpha1");
    assert_eq!(evaluated["decision"], "Allow");
    assert_eq!(evaluated["allowed"], true);
    assert_eq!(evaluated["user"], "jane");
    assert_eq!(evaluated["resourceAttributes"]["name"], "web");
    assert_eq!(evaluated["conditions"], answered["conditions"]);
    assert!(
        evaluated["reason"]
            .as_str()
            .unwrap()
            .contains("owner-updates"),
        "{evaluated}"
    );
    w.stop().await;
    down.stop().await;
}
