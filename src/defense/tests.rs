//! The validation ring's follow-ups: which an answer owes, and the failure rule applied once by
//! [`FollowUps::perform`]. Without a cluster connection every write fails, which is how these
//! tests make a follow-up fail; the kube-apiserver tier writes for real.

use super::admission::{decide, follow_ups};
use super::*;
use crate::admission;
use crate::authorizer::{Chain, Deadline, Input};
use crate::cluster::FileView;
use crate::decision::Decision;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

const FINALIZER: &str = "warrant.dev/deletion-cooldown";
const REQUESTER: &str = "warrant.dev/deletion-requested-by";

/// A chain of one guard in `mode` whose buffer holds Deployments (`confirm`:
/// `requireConfirmation`).
fn chain(mode: &str, confirm: bool) -> Chain {
    let yaml = format!(
        "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: DeletionGuard\n  name: guard\n  guard:\n    mode: {mode}\n    protectionLabel: warrant.dev/protection\n    buffer: {{finalizeAt: high, requireConfirmation: {confirm}}}\n"
    );
    let loaded = crate::config::parse("guard.yaml", yaml.as_bytes()).unwrap();
    Chain::build(&loaded.config).unwrap()
}

/// `shop/web`, a Deployment carrying the buffer's finalizer, with `annotations`.
fn held(annotations: Value) -> Value {
    json!({
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "o-1",
                     "finalizers": [FINALIZER], "annotations": annotations},
    })
}

/// The input `/admit` makes of a DELETE of `old` by jane.
fn delete(old: Value, dry_run: bool) -> Input {
    let body = json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": "u-1", "operation": "DELETE",
            "userInfo": {"username": "jane", "groups": ["dev"]},
            "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "namespace": "shop", "name": "web", "oldObject": old, "dryRun": dry_run,
        }
    });
    let request = admission::decode(body.to_string().as_bytes()).unwrap();
    let mapped = admission::map(request, Arc::new(FileView::default()));
    Input::new(mapped.review, chrono::Utc::now()).with_object(Arc::new(mapped.context.unwrap()))
}

fn deadline() -> Deadline {
    Deadline::after(Duration::from_secs(5))
}

#[tokio::test]
async fn an_admitted_delete_of_a_held_object_owes_its_requester() {
    let chain = chain("Enforce", true);
    let input = delete(held(json!({})), false);
    let admission = decide(&chain, &input, deadline()).await;
    assert_ne!(admission.answer.decision, Decision::Deny);
    let [FollowUp::RecordRequester(r)] = admission.follow_ups.as_slice() else {
        panic!("{:?}", admission.follow_ups);
    };
    assert_eq!(r.guard.as_str(), "guard");
    assert_eq!(r.annotation, REQUESTER);
    assert_eq!(r.user, "jane");
    assert_eq!(r.recorded, None);
    assert_eq!(r.on_failure, OnFailure::Refuse);
    assert_eq!(
        (r.object.group, r.object.version, r.object.resource),
        ("apps", "v1", "deployments")
    );
    assert_eq!(
        (r.object.namespace, r.object.name, r.object.uid),
        ("shop", "web", "o-1")
    );
}

#[tokio::test]
async fn a_dry_run_a_terminating_object_or_one_without_the_finalizer_owes_nothing() {
    let chain = chain("Enforce", true);
    let mut terminating = held(json!({}));
    terminating["metadata"]["deletionTimestamp"] = json!("2026-12-02T22:59:00Z");
    let mut unfinalized = held(json!({}));
    unfinalized["metadata"]["finalizers"] = json!([]);
    for (name, input) in [
        ("dry run", delete(held(json!({})), true)),
        ("terminating", delete(terminating, false)),
        ("no finalizer", delete(unfinalized, false)),
    ] {
        let admission = decide(&chain, &input, deadline()).await;
        assert_ne!(admission.answer.decision, Decision::Deny, "{name}");
        assert!(admission.follow_ups.is_empty(), "{name}");
    }
}

#[tokio::test]
async fn a_refused_delete_owes_nothing() {
    let chain = chain("Enforce", true);
    let input = delete(held(json!({})), false);
    let mut answer = decide(&chain, &input, deadline()).await.answer;
    answer.decision = Decision::Deny;
    assert!(follow_ups(&chain, &input, &answer).is_empty());
}

#[tokio::test]
async fn a_requester_that_cannot_be_recorded_refuses_when_confirmation_is_required() {
    let chain = chain("Enforce", true);
    let input = delete(held(json!({})), false);
    let admission = decide(&chain, &input, deadline()).await;
    let steps = admission.answer.trace.len();
    let answer = FollowUps::default()
        .perform(admission, Instant::now() + Duration::from_secs(5))
        .await;
    assert_eq!(answer.decision, Decision::Deny);
    assert_eq!(
        answer.decided_by.as_ref().map(|n| n.as_str()),
        Some("guard")
    );
    assert_eq!(
        answer.code.as_ref().map(|c| c.as_str()),
        Some("REQUESTER_NOT_RECORDED")
    );
    assert!(
        answer
            .reason
            .starts_with("guard: this deletion must be confirmed by a second person")
            && answer.reason.contains(&format!(
                "(annotation {REQUESTER}: no cluster connection is configured)"
            )),
        "{}",
        answer.reason
    );
    assert_eq!(
        answer.trace.len(),
        steps + 1,
        "the refusal adds the guard's step"
    );
}

#[tokio::test]
async fn a_requester_that_cannot_be_recorded_is_only_counted_without_confirmation_or_in_observe() {
    for (mode, confirm) in [("Enforce", false), ("Observe", true)] {
        let chain = chain(mode, confirm);
        let input = delete(held(json!({})), false);
        let admission = decide(&chain, &input, deadline()).await;
        assert_eq!(admission.follow_ups.len(), 1, "{mode} {confirm}");
        let before = admission.answer.clone();
        let answer = FollowUps::default()
            .perform(admission, Instant::now() + Duration::from_secs(5))
            .await;
        assert_eq!(answer, before, "{mode} {confirm}");
    }
}

#[tokio::test]
async fn a_requester_already_recorded_is_not_written_again() {
    let chain = chain("Enforce", true);
    let input = delete(held(json!({REQUESTER: "jane"})), false);
    let admission = decide(&chain, &input, deadline()).await;
    let before = admission.answer.clone();
    // No cluster connection: a write would fail and refuse; none is attempted.
    let answer = FollowUps::default()
        .perform(admission, Instant::now() + Duration::from_secs(5))
        .await;
    assert_eq!(answer, before);
}
