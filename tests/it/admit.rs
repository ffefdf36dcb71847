//! `POST /admit` over real TLS: AdmissionReviews as kube-apiserver sends
//! them, through the in-process server and the validation ring of a DeletionGuard, asserted on
//! the AdmissionReview answered, warrant's audit record and its metrics.
//!
//! The cluster view is a fixture ([`Fixed`]): fixed dependents and labelled objects in every
//! namespace, or a cache that is not ready.
//! It injects what the metadata cache would answer; the real index (watches, owner chains,
//! selectors) is tested with the `cluster` module and in the kube-apiserver tier.

use crate::support::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use warrant::object::{
    ClusterView, Dependents, LabelValue, LabelValues, ObjectRef, Subject, ViewError, ViewFuture,
};

const LABEL: &str = "sre.example.com/protection-level";
const ANNOTATION: &str = "sre.example.com/ticket";

/// The cluster as a fixture (see the module documentation).
#[derive(Debug, Default, Clone)]
struct Fixed {
    not_ready: Option<&'static str>,
    dependents: Dependents,
    labelled: LabelValues,
}

impl Fixed {
    fn check(&self) -> Result<(), ViewError> {
        match self.not_ready {
            Some(why) => Err(ViewError::NotReady(why.into())),
            None => Ok(()),
        }
    }
}

impl ClusterView for Fixed {
    fn ready(&self) -> Result<(), ViewError> {
        self.check()
    }

    fn namespace_label(&self, _: &str, _: &str) -> Result<Option<String>, ViewError> {
        self.check().map(|()| None)
    }

    fn labelled_inside(&self, _: &str, _: &str) -> Result<LabelValues, ViewError> {
        self.check().map(|()| self.labelled.clone())
    }

    fn dependents(&self, _: &ObjectRef<'_>, _: Option<&Subject>) -> Result<Dependents, ViewError> {
        self.check().map(|()| self.dependents.clone())
    }

    fn remaining_objects<'a>(&'a self, _: &'a Subject) -> ViewFuture<'a, Result<u64, ViewError>> {
        Box::pin(std::future::ready(self.check().map(|()| 0)))
    }
}

/// 25 running pods behind a Service, an Ingress and a bound PVC.
fn busy() -> Fixed {
    Fixed {
        not_ready: None,
        dependents: Dependents {
            running_pods: 25,
            ingress_pods: 25,
            services: vec!["shop/web".into()],
            ingresses: vec!["shop/web".into()],
            bound_volumes: vec!["shop/data".into()],
        },
        labelled: LabelValues::default(),
    }
}

const TICKETS: &str = r#"
tickets:
- {id: CHG-1, status: Approved, approvers: [a, b], expires: "2099-01-01T00:00:00Z"}
"#;

/// A chain whose DeletionGuard has `guard` settings besides the object ones, then AlwaysAllow
/// (which the validation ring does not consult).
fn chain(tickets: &std::path::Path, failure_policy: &str, guard: &str) -> String {
    format!(
        "apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
- type: DeletionGuard
  name: guard
  failurePolicy: {failure_policy}
  guard:
    protectionLabel: {LABEL}
    ticketAnnotation: {ANNOTATION}
    cascadeProtection: true
    tickets: {{file: {}, approvals: {{high: 1, critical: 2}}}}
{guard}- type: AlwaysAllow
  name: allow-all
",
        tickets.display()
    )
}

struct Setup {
    w: Warrant,
    _tickets: tempfile::TempDir,
}

async fn start(view: Fixed, failure_policy: &str, guard: &str) -> Setup {
    let tickets = tempfile::tempdir().unwrap();
    let file = tickets.path().join("tickets.yaml");
    std::fs::write(&file, TICKETS).unwrap();
    let w = Warrant::start(Options {
        config: Some(chain(&file, failure_policy, guard)),
        audit: true,
        cluster: Some(Arc::new(view)),
        ..Options::default()
    })
    .await;
    Setup {
        w,
        _tickets: tickets,
    }
}

fn deployment(level: Option<&str>, ticket: Option<&str>, replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "d-1",
                     "labels": level.map_or(json!({}), |l| json!({LABEL: l})),
                     "annotations": ticket.map_or(json!({}), |t| json!({ANNOTATION: t}))},
        "spec": {"replicas": replicas},
    })
}

/// An AdmissionReview as kube-apiserver sends it for `operation` on deployment `shop/web`.
fn review(uid: &str, operation: &str, old: Value, new: Value, dry_run: bool) -> String {
    json!({
        "kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
        "request": {
            "uid": uid,
            "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "requestKind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "requestResource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "name": "web", "namespace": "shop", "operation": operation,
            "userInfo": {"username": "jane", "uid": "j-1", "groups": ["dev", "system:authenticated"]},
            "object": new, "oldObject": old, "dryRun": dry_run,
            "options": {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"},
        }
    })
    .to_string()
}

fn delete(uid: &str, old: Value) -> String {
    review(uid, "DELETE", old, Value::Null, false)
}

/// Posts a review to `/admit`: (HTTP status, `response`), checking the envelope and the uid.
async fn admit(w: &Warrant, body: &str) -> (u16, Value) {
    let (code, v) = post_review(&w.client(), &w.url("/admit"), body).await;
    if code == 200 {
        assert_eq!(v["apiVersion"], "admission.k8s.io/v1", "{v}");
        assert_eq!(v["kind"], "AdmissionReview", "{v}");
        let sent: Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["response"]["uid"], sent["request"]["uid"], "{v}");
    }
    (code, v["response"].clone())
}

/// The audit records written so far (at least `n`).
async fn audit(w: &Warrant, n: usize) -> Vec<Value> {
    let path = w.path("audit.log");
    for _ in 0..200 {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
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

/// The model's score for what the guard listed, from the default weights (critical 40, 25
/// pods 20, an Ingress 15, bound volumes 20) and business hours (10) when the guard saw them:
/// the server's clock decides that, so the test reads it from the reasons.
fn expected_score(reasons: &Value) -> u64 {
    let in_hours = reasons
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r == "business hours +10");
    40 + 20 + 15 + 20 + if in_hours { 10 } else { 0 }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_critical_deployment_without_a_ticket_is_refused() {
    let s = start(busy(), "Deny", "").await;
    let w = &s.w;
    let (code, r) = admit(w, &delete("uid-1", deployment(Some("critical"), None, 0))).await;
    assert_eq!(code, 200);
    assert_eq!(r["allowed"], false, "{r}");
    assert_eq!(r["status"]["code"], 403);
    assert_eq!(r["status"]["reason"], "Forbidden");
    assert_eq!(r["status"]["status"], "Failure");
    let message = r["status"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("guard: a change ticket is required"),
        "{message}"
    );
    assert!(message.ends_with("[MISSING_TICKET]"), "{message}");
    let notes = &r["auditAnnotations"];
    assert_eq!(notes["code"], "MISSING_TICKET");
    assert_eq!(notes["risk-level"], "CRITICAL");
    let report: Value = serde_json::from_str(notes["report"].as_str().unwrap()).unwrap();
    let score = expected_score(&report["riskReasons"]);
    assert_eq!(report["riskScore"], score);
    assert_eq!(notes["risk-score"], score.to_string());
    assert!(
        message.contains(&format!("risk=CRITICAL score={score}")),
        "{message}"
    );
    assert_eq!(report["impact"]["runningPods"], 25);
    assert_eq!(report["impact"]["estimatedQps"], 25 * 120);
    assert_eq!(report["impact"]["boundVolumes"], json!(["shop/data"]));
    assert!(r.get("warnings").is_none(), "{r}");

    let rec = &audit(w, 1).await[0];
    assert_eq!(rec["stage"], "admission");
    assert_eq!(rec["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(
        rec["admission"],
        json!({"uid": "uid-1", "operation": "DELETE", "dryRun": false})
    );
    assert_eq!(rec["user"], "jane");
    assert_eq!(rec["uid"], "j-1");
    assert_eq!(rec["resourceAttributes"]["verb"], "delete");
    assert_eq!(rec["resourceAttributes"]["name"], "web");
    assert_eq!(
        (rec["allowed"].as_bool(), rec["denied"].as_bool()),
        (Some(false), Some(true))
    );
    assert_eq!(rec["decision"], "Deny");
    assert_eq!(rec["code"], "MISSING_TICKET");
    assert_eq!(rec["reason"], message);
    // Only the guard is consulted at admission: AlwaysAllow judges SubjectAccessReviews only.
    assert_eq!(rec["authorizers"].as_array().unwrap().len(), 1);
    assert_eq!(rec["authorizers"][0]["guard"], report);

    let text = metrics_text(&w.client(), w).await;
    for want in [
        "warrant_admission_requests_total{operation=\"DELETE\",resource=\"deployments.apps\",allowed=\"false\"} 1",
        "warrant_admission_duration_seconds_count{operation=\"DELETE\",resource=\"deployments.apps\",allowed=\"false\"} 1",
        "warrant_guard_decisions_total{name=\"guard\",code=\"MISSING_TICKET\",mode=\"Enforce\"} 1",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    // No SubjectAccessReview was answered.
    assert!(
        !text.contains("warrant_authorization_attempts_total{"),
        "{text}"
    );
    s.w.stop().await;
}

/// The SubjectAccessReview kube-apiserver sends before a DELETE of deployment `shop/web`.
fn delete_sar(user: &str) -> String {
    json!({
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": user, "uid": "j-1", "groups": ["dev", "system:authenticated"],
                 "resourceAttributes": {"verb": "delete", "group": "apps", "version": "v1",
                                        "resource": "deployments", "namespace": "shop", "name": "web"}}
    })
    .to_string()
}

fn is_uuid_version(text: &Value, version: char) -> bool {
    let s = text.as_str().unwrap_or("");
    let parts: Vec<&str> = s.split('-').collect();
    parts.iter().map(|p| p.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
        && s.chars().all(|c| c == '-' || c.is_ascii_hexdigit())
        && parts[2].starts_with(version)
}

/// The authorization ring's record and the validation ring's record of one DELETE share one
/// `decisionId` (derived by each from the request) and the configuration revision, and each
/// has its own `id`; another user's DELETE of the same object gets another decision id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_rings_record_one_delete_under_one_decision_id() {
    let s = start(busy(), "Deny", "").await;
    let w = &s.w;
    let (code, _) = post_review(&w.client(), &w.url("/authorize"), &delete_sar("jane")).await;
    assert_eq!(code, 200);
    let (code, _) = admit(w, &delete("uid-1", deployment(Some("critical"), None, 0))).await;
    assert_eq!(code, 200);
    let (code, _) = post_review(&w.client(), &w.url("/authorize"), &delete_sar("joe")).await;
    assert_eq!(code, 200);
    let records = audit(w, 3).await;
    let (authorized, admitted, other) = (&records[0], &records[1], &records[2]);
    assert_eq!(authorized["stage"], "authorization", "{authorized}");
    assert_eq!(admitted["stage"], "admission", "{admitted}");
    assert!(
        is_uuid_version(&authorized["decisionId"], '8'),
        "{authorized}"
    );
    // The rings judge milliseconds apart; they disagree only across a 10 s window boundary.
    let window = |r: &Value| {
        let t = chrono::DateTime::parse_from_rfc3339(r["time"].as_str().unwrap()).unwrap();
        t.timestamp().div_euclid(10)
    };
    if window(authorized) == window(admitted) {
        assert_eq!(authorized["decisionId"], admitted["decisionId"]);
    }
    assert_ne!(authorized["decisionId"], other["decisionId"]);
    for r in [authorized, admitted, other] {
        assert!(is_uuid_version(&r["id"], '4'), "{r}");
        let hash = r["configHash"].as_str().unwrap();
        assert!(hash.starts_with("sha256:") && hash.len() == 7 + 64, "{r}");
    }
    assert_ne!(authorized["id"], admitted["id"]);
    assert_eq!(authorized["configHash"], admitted["configHash"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_ticket_on_the_object_admits_it() {
    let s = start(busy(), "Deny", "").await;
    let w = &s.w;
    let (_, r) = admit(
        w,
        &delete("uid-2", deployment(Some("critical"), Some("CHG-1"), 0)),
    )
    .await;
    assert_eq!(r["allowed"], true, "{r}");
    assert!(r.get("status").is_none(), "{r}");
    let notes = &r["auditAnnotations"];
    // 95 or 105: CRITICAL either way.
    assert_eq!(notes["code"], "ALLOW_WITH_COOLDOWN");
    assert_eq!(notes["risk-level"], "CRITICAL");
    let report: Value = serde_json::from_str(notes["report"].as_str().unwrap()).unwrap();
    assert_eq!(report["ticket"], "CHG-1");
    assert_eq!(report["riskScore"], expected_score(&report["riskReasons"]));

    // An unlabelled Deployment with nothing depending on it: ALLOW, with its score.
    let quiet = start(Fixed::default(), "Deny", "").await;
    let (_, r) = admit(&quiet.w, &delete("uid-3", deployment(None, None, 0))).await;
    assert_eq!(r["allowed"], true, "{r}");
    assert_eq!(r["auditAnnotations"]["code"], "ALLOW");
    let score: u64 = r["auditAnnotations"]["risk-score"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(score == 0 || score == 10, "{r}");
    assert_eq!(r["auditAnnotations"]["risk-level"], "LOW");
    let rec = &audit(&quiet.w, 1).await[0];
    assert_eq!(
        (rec["allowed"].as_bool(), rec["denied"].as_bool()),
        (Some(true), Some(false))
    );
    assert_eq!(rec["decision"], "NoOpinion");
    let text = metrics_text(&quiet.w.client(), &quiet.w).await;
    assert!(
        text.contains("warrant_admission_requests_total{operation=\"DELETE\",resource=\"deployments.apps\",allowed=\"true\"} 1")
    );
    quiet.w.stop().await;
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admitted_deletion_records_its_code_at_the_top_level() {
    let quiet = start(Fixed::default(), "Deny", "").await;
    let (_, r) = admit(&quiet.w, &delete("uid-3", deployment(None, None, 0))).await;
    assert_eq!(r["allowed"], true, "{r}");
    let rec = &audit(&quiet.w, 1).await[0];
    assert_eq!(rec["decision"], "NoOpinion");
    assert_eq!(rec["code"], "ALLOW", "{rec}");
    assert_eq!(rec["code"], rec["authorizers"][0]["code"], "{rec}");
    assert_eq!(rec["code"], r["auditAnnotations"]["code"], "{rec}");
    quiet.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_break_glass_deletion_is_recorded_at_its_real_risk() {
    let s = start(busy(), "Deny", "    breakGlassGroups: [sre-break-glass]\n").await;
    let w = &s.w;
    let body = delete("uid-bg", deployment(Some("critical"), None, 0)).replace(
        r#""groups":["dev","system:authenticated"]"#,
        r#""groups":["sre-break-glass","system:authenticated"]"#,
    );
    assert!(body.contains("sre-break-glass"));
    let (_, r) = admit(w, &body).await;
    assert_eq!(r["allowed"], true, "{r}");
    let notes = &r["auditAnnotations"];
    assert_eq!(notes["code"], "BREAK_GLASS", "{r}");
    assert_eq!(notes["risk-level"], "CRITICAL", "{r}");
    let report: Value = serde_json::from_str(notes["report"].as_str().unwrap()).unwrap();
    assert_eq!(
        report["riskScore"],
        expected_score(&report["riskReasons"]),
        "{r}"
    );
    let rec = &audit(w, 1).await[0];
    assert_eq!(
        rec["authorizers"][0]["guard"]["riskLevel"], "CRITICAL",
        "{rec}"
    );
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warrants_own_account_cannot_lower_a_protection_label_unjudged() {
    let s = start(busy(), "Deny", "").await;
    let w = &s.w;
    let as_warrant = |body: String| {
        body.replace(
            r#""username":"jane""#,
            r#""username":"system:serviceaccount:warrant-system:warrant""#,
        )
    };
    let lowered = as_warrant(review(
        "uid-own-1",
        "UPDATE",
        deployment(Some("critical"), None, 0),
        deployment(Some("standard"), None, 0),
        false,
    ));
    assert!(lowered.contains("warrant-system:warrant"));
    let (_, r) = admit(w, &lowered).await;
    assert_eq!(r["allowed"], false, "{r}");
    assert_eq!(r["auditAnnotations"]["code"], "MISSING_TICKET", "{r}");
    // Its own change (the requester annotation) stays its own: not judged.
    let mut annotated = deployment(Some("critical"), None, 0);
    annotated["metadata"]["annotations"]["warrant.dev/deletion-requested-by"] = json!("jane");
    let own = as_warrant(review(
        "uid-own-2",
        "UPDATE",
        deployment(Some("critical"), None, 0),
        annotated,
        false,
    ));
    let (_, r) = admit(w, &own).await;
    assert_eq!(r["allowed"], true, "{r}");
    s.w.stop().await;
}

/// An AdmissionReview deleting the unlabelled Namespace `shop`, with the ticket `ticket`
/// annotated on it.
fn namespace_delete(uid: &str, ticket: Option<&str>) -> String {
    let namespace = json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "shop", "uid": "ns-1",
                     "annotations": ticket.map_or(json!({}), |t| json!({ANNOTATION: t}))},
    });
    json!({
        "kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
        "request": {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "Namespace"},
            "resource": {"group": "", "version": "v1", "resource": "namespaces"},
            "name": "shop", "namespace": "shop", "operation": "DELETE",
            "userInfo": {"username": "jane", "uid": "j-1", "groups": ["dev", "system:authenticated"]},
            "object": null, "oldObject": namespace, "dryRun": false,
            "options": {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"},
        }
    })
    .to_string()
}

/// Deleting a Namespace deletes what it holds: an unlabelled namespace holding a Deployment
/// labelled critical is refused without a ticket, naming the Deployment, and admitted with one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_holding_a_critical_deployment_needs_a_ticket() {
    let view = Fixed {
        labelled: LabelValues {
            values: vec![LabelValue {
                value: "critical".into(),
                object: "deployments.apps/checkout".into(),
                count: 1,
            }],
            truncated: false,
        },
        ..Fixed::default()
    };
    let s = start(view, "Deny", "").await;
    let w = &s.w;
    let (code, r) = admit(w, &namespace_delete("ns-uid-1", None)).await;
    assert_eq!(code, 200);
    assert_eq!(r["allowed"], false, "{r}");
    assert_eq!(r["status"]["code"], 403);
    let message = r["status"]["message"].as_str().unwrap();
    let held = format!(
        "critical: namespace holds deployments.apps/checkout labelled {LABEL}=critical +40"
    );
    assert!(message.contains(&held), "{message}");
    assert!(message.ends_with("[MISSING_TICKET]"), "{message}");
    let report: Value =
        serde_json::from_str(r["auditAnnotations"]["report"].as_str().unwrap()).unwrap();
    assert_eq!(report["protection"], "critical");
    assert_eq!(report["riskReasons"][0], held);
    assert_eq!(report["riskReasons"][1], "namespace deletion +30");

    let (_, r) = admit(w, &namespace_delete("ns-uid-2", Some("CHG-1"))).await;
    assert_eq!(r["allowed"], true, "{r}");
    let report: Value =
        serde_json::from_str(r["auditAnnotations"]["report"].as_str().unwrap()).unwrap();
    assert_eq!(report["ticket"], "CHG-1");
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lowering_the_label_is_refused_other_updates_pass() {
    let s = start(Fixed::default(), "Deny", "").await;
    let w = &s.w;
    let lowered = review(
        "uid-4",
        "UPDATE",
        deployment(Some("critical"), None, 0),
        deployment(Some("standard"), None, 0),
        false,
    );
    let (_, r) = admit(w, &lowered).await;
    assert_eq!(r["allowed"], false, "{r}");
    assert_eq!(r["status"]["code"], 403);
    let message = r["status"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "guard: lowering the protection label (critical -> standard) needs a change ticket for critical"
        ),
        "{message}"
    );
    assert_eq!(r["auditAnnotations"]["code"], "MISSING_TICKET");
    // Scaling the same Deployment is none of the ring's business.
    let scaled = review(
        "uid-5",
        "UPDATE",
        deployment(Some("critical"), None, 0),
        deployment(Some("critical"), None, 3),
        false,
    );
    let (_, r) = admit(w, &scaled).await;
    assert_eq!(r, json!({"uid": "uid-5", "allowed": true}));
    let records = audit(w, 2).await;
    assert_eq!(records[0]["admission"]["operation"], "UPDATE");
    assert_eq!(records[0]["resourceAttributes"]["verb"], "update");
    assert_eq!(records[1]["authorizers"][0]["decision"], "NoOpinion");
    s.w.stop().await;
}

/// With `rateLimitStage: Admission`, dry runs (which `sideEffects: NoneOnDryRun` lets the API
/// server send) are judged but spend no token; real admitted deletes do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_runs_are_judged_and_spend_no_rate_limit_token() {
    let s = start(
        Fixed::default(),
        "Deny",
        "    rateLimitStage: Admission\n    rateLimits: [{group: apps, resource: deployments, count: 1, per: 1h}]\n",
    )
    .await;
    let w = &s.w;
    for i in 0..3 {
        let body = review(
            &format!("dry-{i}"),
            "DELETE",
            deployment(None, None, 0),
            Value::Null,
            true,
        );
        let (_, r) = admit(w, &body).await;
        assert_eq!(r["allowed"], true, "{r}");
        assert_eq!(r["auditAnnotations"]["code"], "ALLOW");
    }
    // A dry run of a refused delete is refused too (kubectl --dry-run=server shows the refusal).
    let body = review(
        "dry-critical",
        "DELETE",
        deployment(Some("critical"), None, 3),
        Value::Null,
        true,
    );
    let (_, r) = admit(w, &body).await;
    assert_eq!(r["allowed"], false, "{r}");
    assert_eq!(r["auditAnnotations"]["code"], "CASCADE_BLOCKED");

    let (_, r) = admit(w, &delete("real-1", deployment(None, None, 0))).await;
    assert_eq!(r["allowed"], true, "{r}");
    let (_, r) = admit(w, &delete("real-2", deployment(None, None, 0))).await;
    assert_eq!(r["allowed"], false, "{r}");
    assert_eq!(r["auditAnnotations"]["code"], "RATE_LIMITED");
    let records = audit(w, 6).await;
    assert_eq!(records[0]["admission"]["dryRun"], true);
    assert_eq!(records[4]["admission"]["dryRun"], false);
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observe_mode_admits_with_a_warning() {
    let s = start(busy(), "Deny", "    mode: Observe\n").await;
    let w = &s.w;
    let (_, r) = admit(w, &delete("uid-6", deployment(Some("critical"), None, 0))).await;
    assert_eq!(r["allowed"], true, "{r}");
    assert!(r.get("status").is_none(), "{r}");
    assert_eq!(r["auditAnnotations"]["code"], "OBSERVED_MISSING_TICKET");
    let warnings = r["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{r}");
    let warning = warnings[0].as_str().unwrap();
    assert!(
        warning.starts_with("warrant: guard: observed, not enforced: a change ticket is required"),
        "{warning}"
    );
    assert!(warning.ends_with("[OBSERVED_MISSING_TICKET]"), "{warning}");
    let rec = &audit(w, 1).await[0];
    assert_eq!(
        rec["authorizers"][0]["guard"]["code"],
        "OBSERVED_MISSING_TICKET"
    );
    assert_eq!(rec["allowed"], true);
    // What would pass gives no warning.
    let (_, r) = admit(
        w,
        &delete("uid-7", deployment(Some("critical"), Some("CHG-1"), 0)),
    )
    .await;
    assert_eq!(r["allowed"], true, "{r}");
    assert!(r.get("warnings").is_none(), "{r}");
    s.w.stop().await;
}

/// A cache that has not listed yet: the guard's failurePolicy decides, visibly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cache_not_ready_gets_the_failure_policy() {
    let broken = Fixed {
        not_ready: Some("watch on pods has not listed yet"),
        ..Fixed::default()
    };
    let body = delete("uid-8", deployment(Some("critical"), None, 0));

    let deny = start(broken.clone(), "Deny", "").await;
    let (_, r) = admit(&deny.w, &body).await;
    assert_eq!(r["allowed"], false, "{r}");
    assert_eq!(r["status"]["code"], 403);
    assert_eq!(
        r["status"]["message"],
        "guard: cluster cache not ready: watch on pods has not listed yet"
    );
    let rec = &audit(&deny.w, 1).await[0];
    assert_eq!(rec["authorizers"][0]["failurePolicy"], "Deny");
    assert_eq!(
        rec["authorizers"][0]["error"],
        "cluster cache not ready: watch on pods has not listed yet"
    );
    let text = metrics_text(&deny.w.client(), &deny.w).await;
    assert!(
        text.contains("warrant_authorizer_failures_total{type=\"DeletionGuard\",name=\"guard\",policy=\"Deny\"} 1"),
        "{text}"
    );
    deny.w.stop().await;

    let open = start(broken.clone(), "NoOpinion", "").await;
    let (_, r) = admit(&open.w, &body).await;
    assert_eq!(r["allowed"], true, "{r}");
    assert_eq!(
        r["warnings"],
        json!([
            "warrant: guard: cluster cache not ready: watch on pods has not listed yet (failurePolicy NoOpinion: not judged)"
        ])
    );
    open.w.stop().await;

    let observe = start(broken, "Deny", "    mode: Observe\n").await;
    let (_, r) = admit(&observe.w, &body).await;
    assert_eq!(r["allowed"], true, "{r}");
    assert_eq!(
        r["auditAnnotations"]["code"],
        "OBSERVED_CLUSTER_UNAVAILABLE"
    );
    assert!(
        r["warnings"][0]
            .as_str()
            .unwrap()
            .contains("cluster cache not ready"),
        "{r}"
    );
    observe.w.stop().await;
}

/// Without any cluster connection (`NoCluster`), a guarded delete gets the failure policy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_cluster_connection_gets_the_failure_policy() {
    let tickets = tempfile::tempdir().unwrap();
    let w = Warrant::start(Options {
        config: Some(chain(&tickets.path().join("t.yaml"), "Deny", "")),
        ..Options::default()
    })
    .await;
    let (_, r) = admit(&w, &delete("uid-9", deployment(None, None, 0))).await;
    assert_eq!(r["allowed"], false, "{r}");
    assert!(
        r["status"]["message"]
            .as_str()
            .unwrap()
            .contains("no cluster connection is configured"),
        "{r}"
    );
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_with_running_pods_is_a_cascade() {
    let view = Fixed {
        dependents: Dependents {
            running_pods: 4,
            ..Dependents::default()
        },
        ..Fixed::default()
    };
    let s = start(view, "Deny", "").await;
    // As kube-apiserver sends it: the namespace of a Namespace is its own name.
    let body = json!({
        "kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
        "request": {
            "uid": "ns-1",
            "kind": {"group": "", "version": "v1", "kind": "Namespace"},
            "resource": {"group": "", "version": "v1", "resource": "namespaces"},
            "name": "shop", "namespace": "shop", "operation": "DELETE",
            "userInfo": {"username": "jane"},
            "oldObject": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}},
            "dryRun": false,
        }
    })
    .to_string();
    let (_, r) = admit(&s.w, &body).await;
    assert_eq!(r["allowed"], false, "{r}");
    assert_eq!(r["auditAnnotations"]["code"], "CASCADE_BLOCKED");
    assert!(
        r["status"]["message"]
            .as_str()
            .unwrap()
            .starts_with("guard: namespace shop still holds 4 running pods"),
        "{r}"
    );
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_and_connect_are_admitted_unjudged() {
    let s = start(busy(), "Deny", "").await;
    for (uid, op) in [("c-1", "CREATE"), ("c-2", "CONNECT")] {
        let body = review(
            uid,
            op,
            Value::Null,
            deployment(Some("critical"), None, 3),
            false,
        );
        let (_, r) = admit(&s.w, &body).await;
        assert_eq!(r, json!({"uid": uid, "allowed": true}));
    }
    let records = audit(&s.w, 2).await;
    assert_eq!(records[0]["admission"]["operation"], "CREATE");
    assert_eq!(
        records[0]["reason"],
        "operation CREATE is not judged by the validation ring"
    );
    assert_eq!(records[1]["authorizers"], json!([]));
    s.w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_admission_reviews_get_400_with_a_status() {
    let s = start(Fixed::default(), "Deny", "").await;
    let w = &s.w;
    let c = w.client();
    let good = delete("uid-10", deployment(None, None, 0));
    let rows: Vec<(&str, String, &str)> = vec![
        (
            "not json",
            "{not json".into(),
            "request body is not a JSON object",
        ),
        (
            "an array",
            "[1,2]".into(),
            "request body is not a JSON object: invalid type: sequence",
        ),
        (
            "v1beta1",
            good.replace("admission.k8s.io/v1", "admission.k8s.io/v1beta1"),
            "apiVersion \"admission.k8s.io/v1beta1\" is not supported: expected admission.k8s.io/v1",
        ),
        (
            "a SubjectAccessReview",
            V1_REVIEW.into(),
            "apiVersion \"authorization.k8s.io/v1\" is not supported",
        ),
        (
            "wrong kind",
            good.replace("\"AdmissionReview\"", "\"ConversionReview\""),
            "kind \"ConversionReview\" is not supported: expected AdmissionReview",
        ),
        (
            "no request",
            r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#.into(),
            "request is required",
        ),
        (
            "no uid",
            good.replace("\"uid\":\"uid-10\",", ""),
            "request.uid is required",
        ),
        (
            "unknown operation",
            good.replace("\"DELETE\"", "\"ERASE\""),
            "request.operation \"ERASE\" is not supported",
        ),
        (
            "DELETE without oldObject",
            delete("uid-11", Value::Null),
            "request.oldObject is required for operation DELETE",
        ),
    ];
    for (name, body, want) in rows {
        let (code, v) = post_review(&c, &w.url("/admit"), &body).await;
        assert_eq!(code, 400, "{name}: {v}");
        assert_eq!(v["kind"], "Status", "{name}");
        assert_eq!(v["status"], "Failure", "{name}");
        assert_eq!(v["reason"], "BadRequest", "{name}");
        assert_eq!(v["code"], 400, "{name}");
        let msg = v["message"].as_str().unwrap();
        assert!(msg.contains(want), "{name}: {msg}");
    }
    // The HTTP rules of /authorize: method, media type, encoding, caller.
    let r = c.get(w.url("/admit")).send().await.unwrap();
    assert_eq!(r.status(), 405);
    assert_eq!(r.headers()["allow"], "POST");
    let r = c
        .post(w.url("/admit"))
        .header("Content-Type", "application/yaml")
        .body(good.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 415);
    let r = c
        .post(w.url("/admit"))
        .header("Content-Type", "application/json")
        .header("Content-Encoding", "gzip")
        .body(good.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 415);
    let (code, v) = post_review(&w.anonymous_client(), &w.url("/admit"), &good).await;
    assert_eq!((code, v["reason"].as_str()), (401, Some("Unauthorized")));
    // Larger than an authorization review may be (two big objects), but bounded.
    let big_object = json!({"kind": "ConfigMap", "metadata": {"name": "web"},
                            "data": {"k": "x".repeat(3 * 1024 * 1024)}});
    let big = review("uid-12", "UPDATE", big_object.clone(), big_object, false);
    assert!(big.len() > 6 * 1024 * 1024);
    let (code, v) = admit(w, &big).await;
    assert_eq!((code, v["allowed"].as_bool()), (200, Some(true)));
    let too_big = format!("{}{}", good, " ".repeat(8 * 1024 * 1024));
    let (code, v) = post_review(&c, &w.url("/admit"), &too_big).await;
    assert_eq!(
        (code, v["reason"].as_str()),
        (413, Some("RequestEntityTooLarge"))
    );
    // Nothing malformed was audited or counted as an admission; the server still answers.
    let (code, r) = admit(w, &good).await;
    assert_eq!((code, r["allowed"].as_bool()), (200, Some(true)));
    let records = audit(w, 2).await;
    assert_eq!(records.len(), 2);
    s.w.stop().await;
}

/// `deploy/validating-webhook.yaml` keeps the choices its comments explain (kube-apiserver
/// v1.35.4 accepts it: created as is, placeholder replaced, on a scratch API server; the
/// kube-apiserver tier applies a variant pointing at a loopback warrant).
#[test]
fn the_shipped_webhook_configuration() {
    use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
    let path = format!(
        "{}/deploy/validating-webhook.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains("caBundle: CA_BUNDLE_BASE64"));
    let text = text.replace("CA_BUNDLE_BASE64", "Q0E=");
    let config: ValidatingWebhookConfiguration = serde_saphyr::from_str(&text).unwrap();
    let mut webhooks = config.webhooks.unwrap();
    let names: Vec<&str> = webhooks.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "protected-namespaces.warrant.dev",
            "protected-objects.warrant.dev",
            "protected-namespace-deletions.warrant.dev",
            "unprotected.warrant.dev",
            "deletion-tickets.warrant.dev"
        ]
    );
    // DeletionTicket writes: creates and updates of the ticket and its status, failing closed,
    // with no side effects (judging a ticket write only reads).
    let tickets = webhooks.pop().unwrap();
    assert_eq!(tickets.failure_policy.as_deref(), Some("Fail"));
    assert_eq!(tickets.side_effects, "None");
    assert_eq!(tickets.timeout_seconds, Some(3));
    let rules = tickets.rules.unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(
        rules[0].api_groups.as_deref(),
        Some(&["warrant.dev".to_owned()][..])
    );
    assert_eq!(
        rules[0].operations.as_deref(),
        Some(&["CREATE".to_owned(), "UPDATE".to_owned()][..])
    );
    assert_eq!(
        rules[0].resources.as_deref(),
        Some(
            &[
                "deletiontickets".to_owned(),
                "deletiontickets/status".to_owned()
            ][..]
        )
    );
    let guarded = [
        "namespaces",
        "services",
        "persistentvolumeclaims",
        "deployments",
        "statefulsets",
        "daemonsets",
        "replicasets",
        "ingresses",
    ];
    for w in &webhooks {
        let name = &w.name;
        assert_eq!(w.admission_review_versions, ["v1"], "{name}");
        assert_eq!(w.side_effects, "NoneOnDryRun", "{name}");
        assert_eq!(w.timeout_seconds, Some(3), "{name}");
        assert_eq!(w.match_policy.as_deref(), Some("Equivalent"), "{name}");
        let service = w.client_config.service.as_ref().unwrap();
        assert_eq!(
            (
                service.namespace.as_str(),
                service.name.as_str(),
                service.path.as_deref(),
                service.port
            ),
            ("warrant-system", "warrant", Some("/admit"), Some(443)),
            "{name}"
        );
        let policy = w.failure_policy.as_deref();
        let protected = name.starts_with("protected-");
        assert_eq!(
            policy,
            Some(if protected { "Fail" } else { "Ignore" }),
            "{name}"
        );
        // The object itself and, where UPDATEs are sent, its status subresource (labels
        // changed through /status are kept for every guarded kind but Deployments).
        let rules = w.rules.as_ref().unwrap();
        let mut resources = Vec::new();
        for r in rules {
            let listed = r.resources.as_ref().unwrap();
            for res in listed {
                match res.split_once('/') {
                    None => resources.push(res.as_str()),
                    Some((kind, sub)) => {
                        assert!(
                            protected && !name.starts_with("protected-namespace-deletions"),
                            "{name}: subresource {res} on a DELETE-only webhook"
                        );
                        assert!(
                            sub == "status" || (kind == "namespaces" && sub == "finalize"),
                            "{name}: subresource {res}"
                        );
                        assert!(
                            listed.iter().any(|k| k == kind),
                            "{name}: {res} without {kind}"
                        );
                    }
                }
            }
            for kind in listed.iter().filter(|r| !r.contains('/')) {
                if protected && !name.starts_with("protected-namespace-deletions") {
                    assert!(
                        listed.contains(&format!("{kind}/status")),
                        "{name}: {kind}/status not sent: a label removed through it would pass"
                    );
                }
            }
            let ops = r.operations.as_ref().unwrap();
            // An unlabelled Namespace has no label to lower: its webhook takes deletions only.
            let deletions_only = !protected || name.starts_with("protected-namespace-deletions");
            let want: &[&str] = if !deletions_only {
                &["DELETE", "UPDATE"]
            } else {
                &["DELETE"]
            };
            assert_eq!(ops, want, "{name}");
        }
        if name.starts_with("protected-namespace-deletions") {
            assert_eq!(resources, ["namespaces"], "{name}");
        } else if name.starts_with("unprotected") {
            // Namespaces are the namespace-deletions webhook's (failurePolicy Fail).
            for kind in guarded.iter().filter(|k| **k != "namespaces") {
                assert!(resources.contains(kind), "{name}: {kind} not guarded");
            }
            assert!(!resources.contains(&"namespaces"), "{name}");
        } else {
            for kind in guarded {
                assert!(resources.contains(&kind), "{name}: {kind} not guarded");
            }
        }
        // System namespaces and warrant's own are never sent.
        let ns = w.namespace_selector.as_ref().unwrap();
        let not_in = ns
            .match_expressions
            .as_ref()
            .unwrap()
            .iter()
            .find(|e| e.key == "kubernetes.io/metadata.name")
            .unwrap();
        assert_eq!(not_in.operator, "NotIn", "{name}");
        assert_eq!(
            not_in.values.as_deref().unwrap(),
            [
                "kube-system",
                "kube-public",
                "kube-node-lease",
                "warrant-system"
            ],
            "{name}"
        );
        // The same label key as the guard's protectionLabel in the tests and the examples.
        let label_keys: Vec<&str> = ns
            .match_expressions
            .iter()
            .chain(w.object_selector.iter().flat_map(|o| &o.match_expressions))
            .flatten()
            .map(|e| e.key.as_str())
            .filter(|k| *k != "kubernetes.io/metadata.name")
            .collect();
        assert!(
            !label_keys.is_empty() && label_keys.iter().all(|k| *k == LABEL),
            "{name}"
        );
        let conditions = w.match_conditions.as_ref().unwrap();
        let by_name = |n: &str| {
            conditions
                .iter()
                .find(|c| c.name == n)
                .map(|c| c.expression.as_str())
                .unwrap_or_else(|| panic!("{name}: no matchCondition {n}"))
        };
        // warrant's own account is left out only for its own changes: a change of the
        // protection label or the confirmation annotation by it is still sent.
        let own = by_name("not-warrants-own-changes");
        assert!(own.contains("'system:serviceaccount:warrant-system:warrant'"));
        assert!(own.contains(&format!("'{LABEL}' in oldObject.metadata.labels")));
        assert!(own.contains("'warrant.dev/deletion-confirmed' in object.metadata.annotations"));
        let control_plane = by_name("not-control-plane");
        for who in [
            "'system:kube-controller-manager'",
            "startsWith('system:serviceaccount:kube-system:')",
        ] {
            assert!(control_plane.contains(who), "{name}: {who}");
        }
        // UPDATEs only when the stored object's label is changed or removed, or the buffer's
        // finalizer removed, or its annotations touched.
        let changes = by_name("judged-updates-only");
        for key in [
            "'warrant.dev/deletion-cooldown' in oldObject.metadata.finalizers",
            "'warrant.dev/deletion-confirmed' in object.metadata.annotations",
            "'warrant.dev/deletion-requested-by' in oldObject.metadata.annotations",
        ] {
            assert!(changes.contains(key), "{name}: {key}");
        }
        assert!(changes.contains(&format!("'{LABEL}' in oldObject.metadata.labels")));
        assert!(changes.contains(&format!(
            "object.metadata.labels['{LABEL}']\n          != oldObject.metadata.labels['{LABEL}']"
        )) || changes.contains(&format!("!= oldObject.metadata.labels['{LABEL}']")));
    }
}

/// The DELETE of deployment `shop/web` by `user`, as kube-apiserver sends it.
fn delete_by(user: &str, uid: &str, dry_run: bool) -> String {
    review(
        uid,
        "DELETE",
        deployment(None, None, 0),
        Value::Null,
        dry_run,
    )
    .replace(r#""username":"jane""#, &format!(r#""username":"{user}""#))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_validation_ring_counts_unusual_deletions_under_rate_limit_stage_admission() {
    // Defaults: a principal never seen starts at 6 an hour, so a burst is more than
    // 10 x 6/h x 10m = 10 deletions within the window.
    let s = start(
        Fixed::default(),
        "Deny",
        "    rateLimitStage: Admission\n    unusualDeletions: {action: Deny}\n",
    )
    .await;
    let w = &s.w;
    // A steady principal at its usual pace is never flagged.
    for i in 0..5 {
        let (_, r) = admit(w, &delete_by("steady", &format!("steady-{i}"), false)).await;
        assert_eq!(r["allowed"], true, "{r}");
        assert_eq!(r["auditAnnotations"]["code"], "ALLOW", "{r}");
    }
    // Dry runs are judged but never counted.
    for i in 0..15 {
        let (_, r) = admit(w, &delete_by("looper", &format!("dry-{i}"), true)).await;
        assert_eq!(r["allowed"], true, "{r}");
    }
    // A loop: ten deletions pass, the eleventh is a burst, and so are the next ones.
    for i in 0..10 {
        let (_, r) = admit(w, &delete_by("looper", &format!("loop-{i}"), false)).await;
        assert_eq!(r["allowed"], true, "{i}: {r}");
    }
    for i in 10..13 {
        let (_, r) = admit(w, &delete_by("looper", &format!("loop-{i}"), false)).await;
        assert_eq!(r["allowed"], false, "{i}: {r}");
        assert_eq!(
            r["auditAnnotations"]["code"], "UNUSUAL_DELETION_RATE",
            "{r}"
        );
    }
    // The steady principal is not caught in the looper's burst.
    let (_, r) = admit(w, &delete_by("steady", "steady-5", false)).await;
    assert_eq!(r["allowed"], true, "{r}");
    let records = audit(w, 34).await;
    let flagged: Vec<(&str, &Value)> = records
        .iter()
        .filter_map(|r| {
            let unusual = r["authorizers"]
                .as_array()?
                .iter()
                .find_map(|a| a["guard"].get("unusual"))?;
            Some((r["user"].as_str()?, unusual))
        })
        .collect();
    assert_eq!(
        flagged.iter().map(|(u, _)| *u).collect::<Vec<_>>(),
        ["looper", "looper", "looper"],
        "{flagged:?}"
    );
    assert_eq!(
        flagged[0].1["inWindow"].as_f64(),
        Some(11.0),
        "{:?}",
        flagged[0]
    );
    assert_eq!(flagged[0].1["action"], "Deny", "{:?}", flagged[0]);
    s.w.stop().await;
}
