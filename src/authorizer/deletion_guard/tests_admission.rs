//! The validation ring (issue 11), through the guard's admission path with requests decoded and
//! mapped as `/admit` maps them: the risk model point for point (expected scores computed from
//! the weights), cascades, label tampering, tickets annotated on the object, where rate-limit
//! tokens are spent, Observe mode and an unanswerable cluster view.
//!
//! The cluster view here is a fixture returning fixed dependents; the metadata cache that
//! implements the view for real is tested with the `cluster` module.

use super::*;
use crate::admission;
use crate::authorizer::{Authorizer, AuthorizerError, Deadline, Input};
use crate::config::model::guard::{RiskWeights, Thresholds};
use crate::config::{AuthorizerSpec, FailurePolicy};
use crate::decision::Decision;
use crate::object::{
    ClusterView, Dependents, LabelValue, LabelValues, MAX_LABEL_VALUES, ObjectRef, Subject,
    ViewError, ViewFuture,
};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub(super) const LABEL: &str = "sre.example.com/protection-level";
const ANNOTATION: &str = "sre.example.com/ticket";
/// A Wednesday, inside the default business hours (every day 10:00-22:00 UTC).
pub(super) const IN_HOURS: &str = "2026-12-02T12:00:00Z";
/// The same Wednesday, outside them.
const OUT_OF_HOURS: &str = "2026-12-02T23:00:00Z";

const TICKETS: &str = r#"
tickets:
- {id: CHG-1, status: Approved, approvers: [a, b], expires: "2027-01-01T00:00:00Z"}
- {id: CHG-PENDING, status: Pending, approvers: [a, b], expires: "2027-01-01T00:00:00Z"}
- {id: CHG-ONE, status: Approved, approvers: [a], expires: "2027-01-01T00:00:00Z"}
"#;

/// The cluster as a fixture: every namespace carries `namespace_level` (when set) and holds the
/// `labelled` objects, every target has `dependents`, every CRD `remaining` objects;
/// `not_ready` fails every question.
#[derive(Debug, Default, Clone)]
pub(super) struct Fixed {
    pub(super) not_ready: Option<&'static str>,
    pub(super) namespace_level: Option<&'static str>,
    pub(super) labelled: LabelValues,
    pub(super) dependents: Dependents,
    pub(super) remaining: u64,
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

    fn namespace_label(&self, _: &str, key: &str) -> Result<Option<String>, ViewError> {
        self.check()?;
        assert_eq!(key, LABEL);
        Ok(self.namespace_level.map(str::to_owned))
    }

    fn labelled_inside(&self, namespace: &str, key: &str) -> Result<LabelValues, ViewError> {
        self.check()?;
        assert_eq!((namespace, key), ("shop", LABEL));
        Ok(self.labelled.clone())
    }

    fn dependents(&self, _: &ObjectRef<'_>, _: Option<&Subject>) -> Result<Dependents, ViewError> {
        self.check()?;
        Ok(self.dependents.clone())
    }

    fn remaining_objects<'a>(&'a self, _: &'a Subject) -> ViewFuture<'a, Result<u64, ViewError>> {
        let answer = self.check().map(|()| self.remaining);
        Box::pin(std::future::ready(answer))
    }
}

/// `n` running pods, all behind ingress `shop/web` and service `shop/web`, mounting `shop/data`.
pub(super) fn served_by(n: u32) -> Dependents {
    Dependents {
        running_pods: n,
        ingress_pods: n,
        services: vec!["shop/web".into()],
        ingresses: vec!["shop/web".into()],
        bound_volumes: vec!["shop/data".into()],
    }
}

pub(super) fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

/// A guard whose `guard:` block is `block` (the tickets file lives in `dir`).
#[track_caller]
pub(super) fn guard(dir: &Path, block: &str) -> DeletionGuard {
    std::fs::write(dir.join("tickets.yaml"), TICKETS).unwrap();
    let yaml = format!(
        "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: DeletionGuard\n  name: guard\n  guard:\n    protectionLabel: {LABEL}\n    ticketAnnotation: {ANNOTATION}\n    tickets: {{file: tickets.yaml, approvals: {{high: 1, critical: 2}}}}\n{block}"
    );
    let file = dir.join("authz.yaml");
    let loaded = crate::config::parse(&file.to_string_lossy(), yaml.as_bytes()).unwrap();
    let AuthorizerSpec::DeletionGuard(spec) = &loaded.config.authorizers[0].spec else {
        panic!("not a guard");
    };
    DeletionGuard::new(
        GuardShared::new(spec, FailurePolicy::Deny),
        &crate::names::AuthorizerName::new("guard").unwrap(),
        &Default::default(),
    )
}

/// An object of `kind` named `name` in `shop`, with labels, annotations and replicas.
fn object(kind: &str, name: &str, labels: Value, annotations: Value, replicas: i64) -> Value {
    json!({
        "kind": kind,
        "metadata": {"name": name, "namespace": "shop", "uid": "o-1",
                     "labels": labels, "annotations": annotations},
        "spec": {"replicas": replicas},
    })
}

/// A labelled Deployment `shop/web` without replicas.
pub(super) fn web(level: Option<&str>, ticket: Option<&str>) -> Value {
    let labels = level.map_or(json!({}), |l| json!({LABEL: l}));
    let annotations = ticket.map_or(json!({}), |t| json!({ANNOTATION: t}));
    object("Deployment", "web", labels, annotations, 0)
}

/// One admission request, as `/admit` builds its input from an `AdmissionReview`.
pub(super) struct Request {
    operation: &'static str,
    group: &'static str,
    resource: &'static str,
    namespace: &'static str,
    name: &'static str,
    user: &'static str,
    groups: Vec<&'static str>,
    extra_ticket: Option<&'static str>,
    old: Value,
    new: Option<Value>,
    dry_run: bool,
}

impl Request {
    pub(super) fn delete(old: Value) -> Self {
        Self {
            operation: "DELETE",
            group: "apps",
            resource: "deployments",
            namespace: "shop",
            name: "web",
            user: "jane",
            groups: vec!["dev"],
            extra_ticket: None,
            old,
            new: None,
            dry_run: false,
        }
    }

    fn update(old: Value, new: Value) -> Self {
        Self {
            operation: "UPDATE",
            new: Some(new),
            ..Self::delete(old)
        }
    }

    fn input(&self, view: &Fixed, now: &str) -> Input {
        let mut user = json!({"username": self.user, "groups": self.groups});
        if let Some(t) = self.extra_ticket {
            user["extra"] = json!({"warrant.dev/ticket": [t]});
        }
        let body = json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": "u-1", "operation": self.operation, "userInfo": user,
                "kind": {"group": self.group, "version": "v1", "kind": "X"},
                "resource": {"group": self.group, "version": "v1", "resource": self.resource},
                "namespace": self.namespace, "name": self.name,
                "oldObject": self.old, "object": self.new, "dryRun": self.dry_run,
            }
        });
        let request = admission::decode(body.to_string().as_bytes()).unwrap();
        let mapped = admission::map(request, Arc::new(view.clone()));
        Input::new(mapped.review, at(now)).with_object(Arc::new(mapped.context.unwrap()))
    }
}

/// What the guard answered, as `/admit` reads it.
#[derive(Debug)]
pub(super) struct Judged {
    pub(super) decision: Decision,
    pub(super) message: String,
    pub(super) code: String,
    pub(super) assessment: Value,
    pub(super) annotations: BTreeMap<&'static str, String>,
    pub(super) observed: bool,
}

async fn try_judge(g: &DeletionGuard, input: &Input) -> Result<Option<Judged>, AuthorizerError> {
    let v = g
        .authorize(input, Deadline::after(Duration::from_secs(5)))
        .await?;
    let Some(detail) = v.detail else {
        // Out of scope: silent, or (an exclusion) a reason with the code EXCLUDED.
        assert_eq!(v.decision, Decision::NoOpinion);
        let Some(reason) = v.reason else {
            return Ok(None);
        };
        return Ok(Some(Judged {
            decision: v.decision,
            message: reason.message,
            code: reason.code.unwrap().as_str().to_owned(),
            assessment: Value::Null,
            annotations: BTreeMap::new(),
            observed: false,
        }));
    };
    let reason = v.reason.unwrap();
    Ok(Some(Judged {
        decision: v.decision,
        message: reason.message,
        code: reason.code.unwrap().as_str().to_owned(),
        assessment: detail.audit_value(),
        annotations: detail.admission_annotations().into_iter().collect(),
        observed: detail.observed_denial(),
    }))
}

#[track_caller]
pub(super) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(f)
}

/// The guard's judgement of `request` at `now` over `view`; it must be one (not out of scope).
#[track_caller]
pub(super) fn judge(g: &DeletionGuard, request: &Request, view: &Fixed, now: &str) -> Judged {
    let input = request.input(view, now);
    match block_on(try_judge(g, &input)) {
        Ok(Some(j)) => j,
        other => panic!("no judgement: {other:?}"),
    }
}

/// A SubjectAccessReview delete of `shop/web` deployments by `jane` (the authorization ring).
fn sar_delete(now: &str) -> Input {
    let body = json!({
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": "jane", "resourceAttributes": {
            "verb": "delete", "group": "apps", "resource": "deployments", "name": "web", "namespace": "shop"}},
    });
    Input::new(
        crate::review::decode(body.to_string().as_bytes()).unwrap(),
        at(now),
    )
}

/// The level of `score` under the default thresholds, computed here from the thresholds.
fn grade(score: u32) -> &'static str {
    let t = Thresholds::default();
    match score {
        s if s >= t.critical => "CRITICAL",
        s if s >= t.high => "HIGH",
        s if s >= t.medium => "MEDIUM",
        _ => "LOW",
    }
}

/// `(reason, points)` pairs rendered as the guard lists them.
fn reasons(parts: &[(String, u32)]) -> Vec<String> {
    parts.iter().map(|(r, p)| format!("{r} +{p}")).collect()
}

#[test]
fn the_risk_model_point_for_point() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let w = RiskWeights::default();
    let view = Fixed {
        dependents: served_by(25),
        ..Fixed::default()
    };
    let j = judge(
        &g,
        &Request::delete(web(Some("critical"), None)),
        &view,
        IN_HOURS,
    );
    let qps = 25 * w.qps_per_pod;
    let parts = [
        (
            format!("critical: label {LABEL}=critical on deployments.apps web"),
            w.critical,
        ),
        ("25 running pods affected".to_owned(), w.many_pods),
        (
            format!("ingress shop/web reaches the target (~{qps} QPS)"),
            w.ingress,
        ),
        ("1 bound volumes affected".to_owned(), w.bound_volumes),
        ("business hours".to_owned(), w.business_hours),
    ];
    let score: u32 = parts.iter().map(|(_, p)| p).sum();
    assert_eq!(grade(score), "CRITICAL");
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "MISSING_TICKET")
    );
    assert_eq!(j.assessment["riskScore"], score);
    assert_eq!(j.assessment["riskLevel"], "CRITICAL");
    assert_eq!(j.assessment["protection"], "critical");
    assert_eq!(j.assessment["riskReasons"], json!(reasons(&parts)));
    assert_eq!(
        j.assessment["impact"],
        json!({"target": "shop/deployments.apps/web", "runningPods": 25,
               "services": ["shop/web"], "serviceCount": 1, "ingresses": ["shop/web"],
               "ingressCount": 1, "boundVolumes": ["shop/data"], "boundVolumeCount": 1,
               "estimatedQps": qps})
    );
    assert!(
        j.message.ends_with(&format!(
            "(risk=CRITICAL score={score}: {})",
            reasons(&parts).join(", ")
        )),
        "{}",
        j.message
    );
    // The admission response's auditAnnotations carry the whole report.
    assert_eq!(j.annotations["code"], "MISSING_TICKET");
    assert_eq!(j.annotations["risk-level"], "CRITICAL");
    assert_eq!(j.annotations["risk-score"], score.to_string());
    let report: Value = serde_json::from_str(&j.annotations["report"]).unwrap();
    assert_eq!(report, j.assessment);
    assert!(!j.observed);
}

#[test]
fn each_factor_alone() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let w = RiskWeights::default();
    let pods = |n: u32| Dependents {
        running_pods: n,
        ..Dependents::default()
    };
    let label = |l: &str| format!("{l}: label {LABEL}={l} on deployments.apps web");
    type Row = (
        &'static str,
        Option<&'static str>,
        Dependents,
        &'static str,
        Vec<(String, u32)>,
    );
    let rows: Vec<Row> = vec![
        ("nothing", None, pods(0), OUT_OF_HOURS, vec![]),
        (
            "standard label",
            Some("standard"),
            pods(0),
            OUT_OF_HOURS,
            vec![(label("standard"), 0)],
        ),
        (
            "high label",
            Some("high"),
            pods(0),
            OUT_OF_HOURS,
            vec![(label("high"), w.high)],
        ),
        (
            "critical label",
            Some("critical"),
            pods(0),
            OUT_OF_HOURS,
            vec![(label("critical"), w.critical)],
        ),
        // An unknown value still protects, at the lowest level; the value is reported as written.
        (
            "unknown label",
            Some("gold"),
            pods(0),
            OUT_OF_HOURS,
            vec![(
                format!("standard: label {LABEL}=gold on deployments.apps web"),
                0,
            )],
        ),
        (
            "one pod",
            None,
            pods(1),
            OUT_OF_HOURS,
            vec![("1 running pods affected".into(), w.some_pods)],
        ),
        (
            "just under many",
            None,
            pods(w.many_pods_at - 1),
            OUT_OF_HOURS,
            vec![(
                format!("{} running pods affected", w.many_pods_at - 1),
                w.some_pods,
            )],
        ),
        (
            "many pods",
            None,
            pods(w.many_pods_at),
            OUT_OF_HOURS,
            vec![(
                format!("{} running pods affected", w.many_pods_at),
                w.many_pods,
            )],
        ),
        (
            "an ingress, no pods",
            None,
            Dependents {
                ingresses: vec!["shop/a".into(), "shop/b".into()],
                ..Dependents::default()
            },
            OUT_OF_HOURS,
            vec![(
                "ingress shop/a and 1 more reaches the target (~0 QPS)".into(),
                w.ingress,
            )],
        ),
        (
            "bound volumes",
            None,
            Dependents {
                bound_volumes: vec!["shop/a".into(), "shop/b".into()],
                ..Dependents::default()
            },
            OUT_OF_HOURS,
            vec![("2 bound volumes affected".into(), w.bound_volumes)],
        ),
        (
            "business hours",
            None,
            pods(0),
            IN_HOURS,
            vec![("business hours".into(), w.business_hours)],
        ),
    ];
    for (name, level, dependents, now, parts) in rows {
        let view = Fixed {
            dependents,
            ..Fixed::default()
        };
        let j = judge(&g, &Request::delete(web(level, None)), &view, now);
        let score: u32 = parts.iter().map(|(_, p)| p).sum();
        assert_eq!(j.assessment["riskScore"], score, "{name}");
        assert_eq!(j.assessment["riskLevel"], grade(score), "{name}");
        assert_eq!(
            j.assessment["riskReasons"],
            json!(reasons(&parts)),
            "{name}"
        );
        // Below HIGH nothing asks for a ticket: the guard stands aside.
        assert_eq!(
            (j.decision, j.code.as_str()),
            (Decision::NoOpinion, "ALLOW"),
            "{name}"
        );
    }
}

#[test]
fn the_thresholds_grade_the_score() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let w = RiskWeights::default();
    // high label + some pods + business hours, then + ingress, then + bound volumes.
    let rows = [
        (
            Dependents {
                running_pods: 1,
                ..Dependents::default()
            },
            w.high + w.some_pods + w.business_hours,
        ),
        (
            Dependents {
                running_pods: 1,
                ingress_pods: 1,
                ingresses: vec!["shop/i".into()],
                ..Dependents::default()
            },
            w.high + w.some_pods + w.ingress + w.business_hours,
        ),
        (
            Dependents {
                running_pods: 1,
                ingress_pods: 1,
                ingresses: vec!["shop/i".into()],
                bound_volumes: vec!["shop/v".into()],
                ..Dependents::default()
            },
            w.high + w.some_pods + w.ingress + w.bound_volumes + w.business_hours,
        ),
    ];
    for (dependents, score) in rows {
        let view = Fixed {
            dependents,
            ..Fixed::default()
        };
        let j = judge(
            &g,
            &Request::delete(web(Some("high"), None)),
            &view,
            IN_HOURS,
        );
        assert_eq!(j.assessment["riskScore"], score);
        let level = grade(score);
        assert_eq!(j.assessment["riskLevel"], level, "{score}");
        // HIGH and CRITICAL ask for a ticket; below that the guard stands aside.
        let want = if level == "HIGH" || level == "CRITICAL" {
            "MISSING_TICKET"
        } else {
            "ALLOW"
        };
        assert_eq!(j.code, want, "{score} {level}");
    }
}

#[test]
fn configured_weights_replace_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    riskWeights: {critical: 50, manyPods: 25, manyPodsAt: 5, ingress: 5, boundVolumes: 1, businessHours: 0, qpsPerPod: 7}\n",
    );
    let view = Fixed {
        dependents: served_by(6),
        ..Fixed::default()
    };
    let j = judge(
        &g,
        &Request::delete(web(Some("critical"), None)),
        &view,
        IN_HOURS,
    );
    assert_eq!(j.assessment["riskScore"], 50 + 25 + 5 + 1);
    assert_eq!(j.assessment["impact"]["estimatedQps"], 6 * 7);
    assert_eq!(
        j.assessment["riskReasons"][2],
        "ingress shop/web reaches the target (~42 QPS) +5"
    );
}

/// The protection has two sides that add up (issue 11's merge of the rings): the namespace's
/// (protected namespace rules, the namespace's label: the higher wins) and the object's
/// (protected resource rules, the object's label: the higher wins); the target's level is the
/// higher side.
#[test]
fn each_side_counts_once_at_its_highest_level_and_the_sides_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    protectedNamespaces: [{names: [shop], level: high}]\n",
    );
    let w = RiskWeights::default();
    let critical_ns = Fixed {
        namespace_level: Some("critical"),
        ..Fixed::default()
    };
    let object_label = |l: &str| format!("{l}: label {LABEL}={l} on deployments.apps web");
    let rows = [
        // The namespace's label (critical) beats its rule (high); the object adds its standard.
        (
            Some("standard"),
            &critical_ns,
            vec![
                (
                    format!("critical: label {LABEL}=critical on namespace shop"),
                    w.critical,
                ),
                (object_label("standard"), 0),
            ],
            "critical",
        ),
        // Without the namespace label, the rule (high) is the namespace side.
        (
            Some("standard"),
            &Fixed::default(),
            vec![
                ("high: protected namespace shop".to_owned(), w.high),
                (object_label("standard"), 0),
            ],
            "high",
        ),
        // Both sides protected: they add up; the target is at the higher one.
        (
            Some("high"),
            &critical_ns,
            vec![
                (
                    format!("critical: label {LABEL}=critical on namespace shop"),
                    w.critical,
                ),
                (object_label("high"), w.high),
            ],
            "critical",
        ),
    ];
    for (label, view, parts, protection) in rows {
        let j = judge(&g, &Request::delete(web(label, None)), view, OUT_OF_HOURS);
        let score: u32 = parts.iter().map(|(_, p)| p).sum();
        assert_eq!(j.assessment["riskReasons"], json!(reasons(&parts)));
        assert_eq!(j.assessment["riskScore"], score);
        assert_eq!(j.assessment["protection"], protection);
    }
}

/// A Namespace's own label is the namespace side of its protection (the protection label on
/// the namespace), so with a protected namespace rule naming it the higher wins: the same
/// namespace is not counted twice.
#[test]
fn a_namespace_label_and_a_rule_naming_that_namespace_count_once() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    protectedNamespaces: [{names: [shop], level: high}]\n",
    );
    let w = RiskWeights::default();
    let j = judge(
        &g,
        &namespace_delete(Some("critical"), None),
        &Fixed::default(),
        OUT_OF_HOURS,
    );
    let parts = [
        (
            format!("critical: label {LABEL}=critical on namespace shop"),
            w.critical,
        ),
        ("namespace deletion".to_owned(), w.namespace_deletion),
    ];
    assert_eq!(j.assessment["riskReasons"], json!(reasons(&parts)));
    assert_eq!(j.assessment["riskScore"], w.critical + w.namespace_deletion);
    // Lowering that label is judged at the namespace's old level, once, too.
    let lowered = Request {
        new: Some(namespace_object(Some("standard"), None)),
        operation: "UPDATE",
        ..namespace_delete(Some("critical"), None)
    };
    let j = judge(&g, &lowered, &Fixed::default(), OUT_OF_HOURS);
    assert_eq!(j.code, "MISSING_TICKET");
    assert_eq!(
        j.assessment["riskReasons"],
        json!([format!("critical: label {LABEL} lowered +{}", w.critical)])
    );
}

fn namespace_object(level: Option<&str>, ticket: Option<&str>) -> Value {
    let labels = level.map_or(json!({}), |l| json!({LABEL: l}));
    let annotations = ticket.map_or(json!({}), |t| json!({ANNOTATION: t}));
    json!({"apiVersion": "v1", "kind": "Namespace",
           "metadata": {"name": "shop", "labels": labels, "annotations": annotations}})
}

fn namespace_delete(level: Option<&str>, ticket: Option<&str>) -> Request {
    Request {
        group: "",
        resource: "namespaces",
        // kube-apiserver sends a Namespace's own name as its namespace.
        namespace: "shop",
        name: "shop",
        ..Request::delete(namespace_object(level, ticket))
    }
}

/// `(value, object, count)` as the view lists the labelled objects of a namespace.
fn holding(values: &[(&str, &str, u32)]) -> Fixed {
    let values = values
        .iter()
        .map(|(value, object, count)| LabelValue {
            value: (*value).to_owned(),
            object: (*object).to_owned(),
            count: *count,
        })
        .collect();
    Fixed {
        labelled: LabelValues {
            values,
            truncated: false,
        },
        ..Fixed::default()
    }
}

/// Deleting a Namespace deletes what it holds: an unlabelled namespace holding a Deployment
/// labelled critical (no replicas, no pods) is judged critical on its object side, naming the
/// Deployment, and needs a ticket for critical.
#[test]
fn a_namespace_holding_a_labelled_object_is_judged_at_its_level() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let w = RiskWeights::default();
    let view = holding(&[
        ("critical", "deployments.apps/checkout", 1),
        ("high", "services/web", 2),
        ("gold", "persistentvolumeclaims/data", 1),
    ]);
    let j = judge(&g, &namespace_delete(None, None), &view, IN_HOURS);
    let parts = [
        (
            format!(
                "critical: namespace holds deployments.apps/checkout labelled {LABEL}=critical"
            ),
            w.critical,
        ),
        ("namespace deletion".to_owned(), w.namespace_deletion),
        ("business hours".to_owned(), w.business_hours),
    ];
    let score: u32 = parts.iter().map(|(_, p)| p).sum();
    assert_eq!(j.assessment["riskReasons"], json!(reasons(&parts)));
    assert_eq!(j.assessment["riskScore"], score);
    assert_eq!(j.assessment["riskLevel"], grade(score));
    assert_eq!(j.assessment["protection"], "critical");
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "MISSING_TICKET")
    );
    assert!(
        j.message
            .contains("namespace holds deployments.apps/checkout"),
        "{}",
        j.message
    );
    // A ticket approved for critical, annotated on the namespace, lets it through.
    let j = judge(&g, &namespace_delete(None, Some("CHG-1")), &view, IN_HOURS);
    assert_eq!(j.decision, Decision::NoOpinion, "{}", j.message);
    assert_eq!(j.assessment["ticket"], "CHG-1");
    // The namespace's own label is the other side: both add up.
    let j = judge(
        &g,
        &namespace_delete(Some("high"), None),
        &view,
        OUT_OF_HOURS,
    );
    assert_eq!(
        j.assessment["riskScore"],
        w.high + w.critical + w.namespace_deletion
    );
    assert_eq!(
        j.assessment["riskReasons"][0],
        format!("high: label {LABEL}=high on namespace shop +{}", w.high)
    );
}

/// Values read as levels case-insensitively, unknown ones as standard; several objects with the
/// highest value are counted; more values than the view lists are judged critical.
#[test]
fn the_highest_held_label_wins_and_too_many_values_read_as_critical() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let w = RiskWeights::default();
    let reason = |view: &Fixed| {
        let j = judge(&g, &namespace_delete(None, None), view, OUT_OF_HOURS);
        j.assessment["riskReasons"][0].as_str().unwrap().to_owned()
    };
    let view = holding(&[
        ("High", "deployments.apps/a", 3),
        ("gold", "deployments.apps/b", 1),
        ("high", "services/c", 1),
    ]);
    assert_eq!(
        reason(&view),
        format!(
            "high: namespace holds deployments.apps/a and 2 more labelled {LABEL}=High +{}",
            w.high
        )
    );
    let unknown = holding(&[("gold", "jobs.batch/b", 1)]);
    assert_eq!(
        reason(&unknown),
        format!(
            "standard: namespace holds jobs.batch/b labelled {LABEL}=gold +{}",
            w.level(crate::config::model::guard::Level::Standard)
        )
    );
    let mut many = holding(&[("standard", "pods/p", 1)]);
    many.labelled.truncated = true;
    assert_eq!(
        reason(&many),
        format!(
            "critical: namespace holds objects with more than {MAX_LABEL_VALUES} values of label {LABEL} (not all read) +{}",
            w.critical
        )
    );
    // Lowering the namespace's own label is an update: its contents are not asked about.
    let lowered = Request {
        new: Some(namespace_object(None, None)),
        operation: "UPDATE",
        ..namespace_delete(Some("high"), None)
    };
    let j = judge(&g, &lowered, &view, OUT_OF_HOURS);
    assert_eq!(
        j.assessment["riskReasons"],
        json!([format!("high: label {LABEL} lowered +{}", w.high)])
    );
}

#[test]
fn a_namespace_deletion_adds_its_weight_and_cascades_with_running_pods() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "    cascadeProtection: true\n");
    let w = RiskWeights::default();
    let empty = Fixed::default();
    let j = judge(&g, &namespace_delete(None, None), &empty, OUT_OF_HOURS);
    assert_eq!(
        j.assessment["riskReasons"],
        json!([format!("namespace deletion +{}", w.namespace_deletion)])
    );
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::NoOpinion, "ALLOW")
    );

    let busy = Fixed {
        dependents: Dependents {
            running_pods: 3,
            ..Dependents::default()
        },
        ..Fixed::default()
    };
    let j = judge(&g, &namespace_delete(None, None), &busy, OUT_OF_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "CASCADE_BLOCKED")
    );
    assert!(
        j.message.starts_with(
            "namespace shop still holds 3 running pods: deleting it cascades, a change ticket is required"
        ),
        "{}",
        j.message
    );
    assert_eq!(
        j.assessment["riskScore"],
        w.namespace_deletion + w.some_pods
    );
    // A valid ticket on the object lets it through.
    let j = judge(
        &g,
        &namespace_delete(None, Some("CHG-1")),
        &busy,
        OUT_OF_HOURS,
    );
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::NoOpinion, "ALLOW")
    );
    assert_eq!(j.assessment["ticket"], "CHG-1");
    // Without cascadeProtection, running pods only add to the score.
    let off = guard(dir.path(), "");
    let j = judge(&off, &namespace_delete(None, None), &busy, OUT_OF_HOURS);
    assert_eq!(j.code, "ALLOW");
}

#[test]
fn workloads_with_replicas_and_crds_with_objects_cascade() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "    cascadeProtection: true\n");
    let view = Fixed::default();
    let scaled = object("Deployment", "web", json!({}), json!({}), 3);
    let j = judge(&g, &Request::delete(scaled.clone()), &view, OUT_OF_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "CASCADE_BLOCKED")
    );
    assert!(
        j.message
            .starts_with("deployments web still has 3 replicas"),
        "{}",
        j.message
    );
    let ticketed = object(
        "Deployment",
        "web",
        json!({}),
        json!({ANNOTATION: "CHG-1"}),
        3,
    );
    let j = judge(&g, &Request::delete(ticketed), &view, OUT_OF_HOURS);
    assert_eq!(j.code, "ALLOW");
    let idle = object("Deployment", "web", json!({}), json!({}), 0);
    assert_eq!(
        judge(&g, &Request::delete(idle), &view, OUT_OF_HOURS).code,
        "ALLOW"
    );

    let crd = json!({"kind": "CustomResourceDefinition", "metadata": {"name": "widgets.example.com"},
                     "spec": {"group": "example.com", "names": {"plural": "widgets"}}});
    let crd_delete = Request {
        group: "apiextensions.k8s.io",
        resource: "customresourcedefinitions",
        namespace: "",
        name: "widgets.example.com",
        ..Request::delete(crd)
    };
    let with_objects = Fixed {
        remaining: 5,
        ..Fixed::default()
    };
    let j = judge(&g, &crd_delete, &with_objects, OUT_OF_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "CASCADE_BLOCKED")
    );
    assert!(
        j.message
            .starts_with("custom resource definition widgets.example.com still has objects"),
        "{}",
        j.message
    );
    assert_eq!(judge(&g, &crd_delete, &view, OUT_OF_HOURS).code, "ALLOW");
    // Off by default.
    let off = guard(dir.path(), "");
    assert_eq!(
        judge(&off, &Request::delete(scaled), &view, OUT_OF_HOURS).code,
        "ALLOW"
    );
}

#[test]
fn a_ticket_annotated_on_the_object_is_checked_like_a_presented_one() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let view = Fixed {
        dependents: served_by(25),
        ..Fixed::default()
    };
    let j = judge(
        &g,
        &Request::delete(web(Some("critical"), Some("CHG-1"))),
        &view,
        IN_HOURS,
    );
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::NoOpinion, "ALLOW_WITH_COOLDOWN")
    );
    assert_eq!(j.assessment["ticket"], "CHG-1");
    assert_eq!(j.annotations["code"], "ALLOW_WITH_COOLDOWN");

    let j = judge(
        &g,
        &Request::delete(web(Some("critical"), Some("CHG-PENDING"))),
        &view,
        IN_HOURS,
    );
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "TICKET_NOT_APPROVED")
    );
    let j = judge(
        &g,
        &Request::delete(web(Some("critical"), Some("NOPE"))),
        &view,
        IN_HOURS,
    );
    assert_eq!(j.code, "TICKET_NOT_FOUND");
    // The user's extra key comes first.
    let presented = Request {
        extra_ticket: Some("CHG-1"),
        ..Request::delete(web(Some("critical"), Some("NOPE")))
    };
    assert_eq!(
        judge(&g, &presented, &view, IN_HOURS).code,
        "ALLOW_WITH_COOLDOWN"
    );
    // A missing ticket names both ways to present one.
    let j = judge(
        &g,
        &Request::delete(web(Some("critical"), None)),
        &view,
        IN_HOURS,
    );
    assert!(
        j.message.starts_with(&format!(
            "a change ticket is required (present it as user extra warrant.dev/ticket or annotation {ANNOTATION} on the object)"
        )),
        "{}",
        j.message
    );
}

#[test]
fn lowering_or_removing_the_label_needs_a_ticket_for_the_old_level() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let view = Fixed::default();
    let rows = [
        (Some("standard"), "critical -> standard"),
        (Some("high"), "critical -> high"),
        (None, "critical -> removed"),
    ];
    for (to, says) in rows {
        let update = Request::update(web(Some("critical"), None), web(to, None));
        let j = judge(&g, &update, &view, OUT_OF_HOURS);
        assert_eq!(
            (j.decision, j.code.as_str()),
            (Decision::Deny, "MISSING_TICKET"),
            "{says}"
        );
        assert!(
            j.message.starts_with(&format!(
                "lowering the protection label ({says}) needs a change ticket for critical"
            )),
            "{}",
            j.message
        );
        assert_eq!(j.assessment["protection"], "critical");
    }
    // A valid ticket annotated in the same update covers it.
    let update = Request::update(web(Some("critical"), None), web(None, Some("CHG-1")));
    let j = judge(&g, &update, &view, OUT_OF_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::NoOpinion, "ALLOW")
    );
    assert_eq!(j.assessment["ticket"], "CHG-1");
}

/// An UPDATE that keeps or raises the label is none of the ring's business: it is not judged,
/// and the cluster view is not asked (a cache that is not ready does not block it).
#[test]
fn updates_that_keep_or_raise_the_label_are_not_judged() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let broken = Fixed {
        not_ready: Some("pods not listed"),
        ..Fixed::default()
    };
    let rows = [
        (Some("critical"), Some("critical")),
        (Some("high"), Some("critical")),
        (None, Some("standard")),
        (None, None),
    ];
    for (from, to) in rows {
        let input = Request::update(web(from, None), web(to, None)).input(&broken, IN_HOURS);
        let got = block_on(try_judge(&g, &input)).unwrap();
        assert!(got.is_none(), "{from:?} -> {to:?}: {got:?}");
    }
}

/// Lowering a Namespace's own label is an update, not a deletion: the namespace-deletion
/// weight does not apply to it.
#[test]
fn lowering_a_namespace_label_is_not_a_namespace_deletion() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let w = RiskWeights::default();
    let update = Request {
        new: Some(namespace_object(None, None)),
        operation: "UPDATE",
        ..namespace_delete(Some("high"), None)
    };
    let j = judge(&g, &update, &Fixed::default(), OUT_OF_HOURS);
    assert_eq!(j.code, "MISSING_TICKET");
    assert_eq!(
        j.assessment["riskReasons"],
        json!([format!("high: label {LABEL} lowered +{}", w.high)])
    );
    // The deletion of the same namespace carries it.
    let j = judge(
        &g,
        &namespace_delete(Some("high"), None),
        &Fixed::default(),
        OUT_OF_HOURS,
    );
    assert_eq!(
        j.assessment["riskReasons"][1],
        format!("namespace deletion +{}", w.namespace_deletion)
    );
}

/// A collection delete arrives once per object with an empty name; the name comes from the
/// object, so protection by name applies to each object.
#[test]
fn each_object_of_a_collection_delete_is_judged_by_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    protectedResources: [{group: apps, resource: deployments, names: [checkout], level: critical}]\n",
    );
    let swept = |name: &'static str| Request {
        name: "",
        ..Request::delete(object("Deployment", name, json!({}), json!({}), 0))
    };
    // critical (+40) in business hours (+10): HIGH, a ticket is required.
    let j = judge(&g, &swept("checkout"), &Fixed::default(), IN_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "MISSING_TICKET")
    );
    assert!(
        j.message
            .contains("critical: protected deployments.apps checkout +40")
    );
    let j = judge(&g, &swept("cart"), &Fixed::default(), IN_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::NoOpinion, "ALLOW")
    );
}

#[test]
fn with_rate_limit_stage_admission_only_admitted_real_deletes_spend() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    rateLimitStage: Admission\n    rateLimits: [{group: apps, resource: deployments, count: 2, per: 1h}]\n",
    );
    let view = Fixed::default();
    let now = OUT_OF_HOURS;
    // The authorization ring only checks: five can-i's spend nothing.
    for _ in 0..5 {
        let v = g.judge(&sar_delete(now)).unwrap();
        assert_eq!(v.reason.unwrap().code.unwrap().as_str(), "ALLOW");
    }
    // Dry runs and refused deletes spend nothing either.
    let dry = Request {
        dry_run: true,
        ..Request::delete(web(None, None))
    };
    let refused = Request::delete(object("Deployment", "web", json!({}), json!({}), 0));
    let refused_critical = Request::delete(web(Some("critical"), None));
    for _ in 0..3 {
        assert_eq!(judge(&g, &dry, &view, now).code, "ALLOW");
        let served = Fixed {
            dependents: served_by(25),
            ..Fixed::default()
        };
        assert_eq!(
            judge(&g, &refused_critical, &served, IN_HOURS).code,
            "MISSING_TICKET"
        );
    }
    // Label updates spend nothing.
    let lowered = Request::update(web(Some("high"), None), web(None, Some("CHG-1")));
    assert_eq!(judge(&g, &lowered, &view, now).code, "ALLOW");
    // Two admitted deletes use the budget; the third is limited, in both rings.
    assert_eq!(judge(&g, &refused, &view, now).code, "ALLOW");
    assert_eq!(judge(&g, &refused, &view, now).code, "ALLOW");
    let j = judge(&g, &refused, &view, now);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "RATE_LIMITED")
    );
    let v = g.judge(&sar_delete(now)).unwrap();
    assert_eq!(v.reason.unwrap().code.unwrap().as_str(), "RATE_LIMITED");
    // A dry run is checked against the empty bucket too (it would be refused for real).
    assert_eq!(judge(&g, &dry, &view, now).code, "RATE_LIMITED");
}

#[test]
fn with_rate_limit_stage_authorization_admission_leaves_the_buckets_alone() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    rateLimits: [{group: apps, resource: deployments, count: 2, per: 1h}]\n",
    );
    let view = Fixed::default();
    for _ in 0..5 {
        let j = judge(&g, &Request::delete(web(None, None)), &view, OUT_OF_HOURS);
        assert_eq!(j.code, "ALLOW");
    }
    let code = |g: &DeletionGuard| {
        let v = g.judge(&sar_delete(OUT_OF_HOURS)).unwrap();
        v.reason.unwrap().code.unwrap().as_str().to_owned()
    };
    assert_eq!(
        (code(&g), code(&g), code(&g)),
        ("ALLOW".into(), "ALLOW".into(), "RATE_LIMITED".into())
    );
}

#[test]
fn observe_mode_admits_and_records_what_it_would_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    mode: Observe\n    cascadeProtection: true\n",
    );
    let view = Fixed {
        dependents: served_by(25),
        ..Fixed::default()
    };
    let j = judge(
        &g,
        &Request::delete(web(Some("critical"), None)),
        &view,
        IN_HOURS,
    );
    // The guard answers what it would enforce, marked observed; its entry's shadow mode (one
    // setting with guard.mode) keeps that out of the chain's answer, which admits.
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "OBSERVED_MISSING_TICKET")
    );
    assert!(
        j.message
            .starts_with("observed, not enforced: a change ticket is required"),
        "{}",
        j.message
    );
    assert!(j.observed);
    assert_eq!(j.annotations["code"], "OBSERVED_MISSING_TICKET");
    let scaled = object("Deployment", "web", json!({}), json!({}), 2);
    let j = judge(&g, &Request::delete(scaled), &view, IN_HOURS);
    assert_eq!(j.code, "OBSERVED_CASCADE_BLOCKED");
    // What would pass is no observation.
    let j = judge(
        &g,
        &Request::delete(web(Some("critical"), Some("CHG-1"))),
        &view,
        IN_HOURS,
    );
    assert_eq!(j.code, "ALLOW_WITH_COOLDOWN");
    assert!(!j.observed);
}

#[test]
fn an_unanswerable_view_is_a_failure_in_enforce_and_an_observation_in_observe() {
    let dir = tempfile::tempdir().unwrap();
    let broken = Fixed {
        not_ready: Some("watch on pods has not listed"),
        ..Fixed::default()
    };
    let input = Request::delete(web(Some("critical"), None)).input(&broken, IN_HOURS);
    let enforce = guard(dir.path(), "");
    let err = block_on(try_judge(&enforce, &input)).unwrap_err();
    assert_eq!(
        err,
        AuthorizerError::Guard(GuardError::Cluster(ViewError::NotReady(
            "watch on pods has not listed".into()
        )))
    );
    assert_eq!(
        err.to_string(),
        "cluster cache not ready: watch on pods has not listed"
    );
    let observe = guard(dir.path(), "    mode: Observe\n");
    let j = block_on(try_judge(&observe, &input)).unwrap().unwrap();
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "OBSERVED_CLUSTER_UNAVAILABLE")
    );
    assert!(j.observed);
    assert!(
        j.message.starts_with(
            "observed, not enforced: cluster cache not ready: watch on pods has not listed"
        ),
        "{}",
        j.message
    );
}

#[test]
fn break_glass_trusted_and_excluded_requesters_at_admission() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    breakGlassGroups: [sre-break-glass]\n    trusted: [{users: [deployer], maxLevel: critical}]\n",
    );
    let view = Fixed {
        dependents: served_by(25),
        ..Fixed::default()
    };
    let glass = Request {
        groups: vec!["sre-break-glass"],
        ..Request::delete(web(Some("critical"), None))
    };
    assert_eq!(judge(&g, &glass, &view, IN_HOURS).code, "BREAK_GLASS");
    let trusted = Request {
        user: "deployer",
        ..Request::delete(web(Some("critical"), None))
    };
    assert_eq!(judge(&g, &trusted, &view, IN_HOURS).code, "ALLOW");
    // The control plane is excluded: not judged, with a trace (EXCLUDED) and no annotations.
    let gc = Request {
        user: "system:serviceaccount:kube-system:generic-garbage-collector",
        ..Request::delete(web(Some("critical"), None))
    };
    let j = judge(&g, &gc, &view, IN_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::NoOpinion, "EXCLUDED")
    );
    assert!(j.annotations.is_empty());
}

/// Issue 16: through the chain, a guard in Observe is a shadow entry: its would-be refusal is
/// recorded (`wouldHave` Deny), the validation ring admits, and the observed detail stays on
/// the step for the admission warnings.
#[test]
fn observe_mode_through_the_chain_admits() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tickets.yaml"), TICKETS).unwrap();
    let yaml = format!(
        "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: DeletionGuard\n  name: guard\n  guard:\n    mode: Observe\n    protectionLabel: {LABEL}\n    tickets: {{file: tickets.yaml}}\n"
    );
    let file = dir.path().join("authz.yaml");
    let loaded = crate::config::parse(&file.to_string_lossy(), yaml.as_bytes()).unwrap();
    let chain = crate::authorizer::Chain::build(&loaded.config).unwrap();
    let view = Fixed {
        dependents: served_by(25),
        ..Fixed::default()
    };
    let input = Request::delete(web(Some("critical"), None)).input(&view, IN_HOURS);
    let answer = block_on(chain.admit(&input, Deadline::after(Duration::from_secs(5))));
    assert_eq!(answer.decision, Decision::NoOpinion);
    let step = &answer.trace[0];
    assert!(step.is_shadow());
    assert_eq!(
        (step.decision(), step.would_have()),
        (Decision::NoOpinion, Decision::Deny)
    );
    let crate::authorizer::StepOutcome::Verdict(v) = &step.outcome else {
        panic!("{:?}", step.outcome)
    };
    assert!(v.detail.as_ref().unwrap().observed_denial());
    assert_eq!(
        v.reason.as_ref().unwrap().code.as_ref().unwrap().as_str(),
        "OBSERVED_MISSING_TICKET"
    );
}

/// Review finding H2: break-glass (and a principal trusted at every level) needs no fact about
/// the object, so it stands aside even while the cluster view cannot answer.
#[test]
fn break_glass_stands_aside_while_the_view_cannot_answer() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    breakGlassGroups: [sre-break-glass]\n    trusted: [{users: [deployer], maxLevel: critical}, {users: [ci], maxLevel: high}]\n",
    );
    let broken = Fixed {
        not_ready: Some("watch on pods has not listed"),
        ..Fixed::default()
    };
    let glass = Request {
        groups: vec!["sre-break-glass"],
        ..Request::delete(web(Some("critical"), None))
    };
    assert_eq!(judge(&g, &glass, &broken, IN_HOURS).code, "BREAK_GLASS");
    let trusted = Request {
        user: "deployer",
        ..Request::delete(web(Some("critical"), None))
    };
    assert_eq!(judge(&g, &trusted, &broken, IN_HOURS).code, "ALLOW");
    // Trusted only up to high: whether it covers the target depends on the object's facts.
    let ci = Request {
        user: "ci",
        ..Request::delete(web(Some("critical"), None))
    };
    let err = block_on(try_judge(&g, &ci.input(&broken, IN_HOURS))).unwrap_err();
    assert!(err.to_string().contains("not listed"), "{err}");
}

/// Review finding H3: an UPDATE through `/status` keeps metadata changes for most kinds, so a
/// label lowered there is judged like one lowered on the object.
#[test]
fn lowering_the_label_through_the_status_subresource_needs_a_ticket() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let view = Fixed::default();
    let request = Request::update(web(Some("critical"), None), web(None, None));
    let mut input = request.input(&view, IN_HOURS);
    let mut spec = input.review.spec().clone();
    if let Some(ra) = spec.resource_attributes.as_mut() {
        ra.subresource = Some("status".into());
    }
    input.review = crate::review::Review::new(input.review.version(), spec).unwrap();
    let j = block_on(try_judge(&g, &input)).unwrap().unwrap();
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "MISSING_TICKET")
    );
}

/// Review finding L4: a workload without replicas (a DaemonSet) cascades onto its pods.
#[test]
fn a_daemon_set_running_pods_cascades() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "    cascadeProtection: true\n");
    let view = Fixed {
        dependents: Dependents {
            running_pods: 3,
            ..Dependents::default()
        },
        ..Fixed::default()
    };
    let ds = json!({"kind": "DaemonSet", "metadata": {"name": "web", "namespace": "shop"}});
    let request = Request {
        resource: "daemonsets",
        ..Request::delete(ds)
    };
    let j = judge(&g, &request, &view, IN_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "CASCADE_BLOCKED")
    );
    assert!(j.message.contains("still runs 3 pods"), "{}", j.message);
}

/// Review finding L3: a label change is not a delete: an empty delete budget does not stop a
/// ticketed label change.
#[test]
fn a_label_change_neither_waits_on_nor_spends_a_delete_budget() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(
        dir.path(),
        "    rateLimitStage: Admission\n    rateLimits: [{group: apps, resource: deployments, count: 1, per: 1h}]\n",
    );
    let view = Fixed::default();
    let delete = Request::delete(web(None, None));
    assert_eq!(judge(&g, &delete, &view, IN_HOURS).code, "ALLOW");
    assert_eq!(judge(&g, &delete, &view, IN_HOURS).code, "RATE_LIMITED");
    let ticketed = Request::update(web(Some("high"), Some("CHG-1")), web(None, Some("CHG-1")));
    let j = judge(&g, &ticketed, &view, IN_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::NoOpinion, "ALLOW")
    );
}

/// Review finding M6: the report lists at most ten names per kind, with the counts.
#[test]
fn the_report_lists_ten_names_per_kind_and_counts_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let names = |prefix: &str| (0..25).map(|i| format!("shop/{prefix}-{i:02}")).collect();
    let view = Fixed {
        dependents: Dependents {
            running_pods: 25,
            ingress_pods: 25,
            services: names("svc"),
            ingresses: names("ing"),
            bound_volumes: names("pvc"),
        },
        ..Fixed::default()
    };
    let j = judge(
        &g,
        &Request::delete(web(Some("critical"), None)),
        &view,
        IN_HOURS,
    );
    let impact = &j.assessment["impact"];
    assert_eq!(impact["target"], "shop/deployments.apps/web");
    for (list, count) in [
        ("services", "serviceCount"),
        ("ingresses", "ingressCount"),
        ("boundVolumes", "boundVolumeCount"),
    ] {
        assert_eq!(impact[list].as_array().unwrap().len(), 10, "{list}");
        assert_eq!(impact[count], 25, "{count}");
    }
}

// ---- the buffer ring's guarded UPDATEs (issue 12) ----------------------------------------------

const FINALIZER: &str = "warrant.dev/deletion-cooldown";
const CONFIRMATION: &str = "warrant.dev/deletion-confirmed";
const REQUESTER: &str = "warrant.dev/deletion-requested-by";
const OWN: &str = "system:serviceaccount:warrant-system:warrant";

/// A guard with a buffer block (defaults: deployments among the kinds, finalizeAt high).
fn buffered_guard(dir: &Path, extra: &str) -> DeletionGuard {
    guard(dir, &format!("    buffer: {{finalizeAt: high}}\n{extra}"))
}

/// `web` at `level` carrying the finalizer (when `finalized`), Terminating when `terminating`,
/// with `annotations`.
fn held(level: &str, finalized: bool, terminating: bool, annotations: Value) -> Value {
    let mut o = object("Deployment", "web", json!({LABEL: level}), annotations, 0);
    if finalized {
        o["metadata"]["finalizers"] = json!(["kubernetes.io/other", FINALIZER]);
    }
    if terminating {
        o["metadata"]["deletionTimestamp"] = json!("2026-12-02T22:59:00Z");
    }
    o
}

/// `o` with annotation `key` set to `value` (removed when `None`).
fn annotated(mut o: Value, key: &str, value: Option<&str>) -> Value {
    match value {
        Some(v) => o["metadata"]["annotations"][key] = json!(v),
        None => {
            if let Some(m) = o["metadata"]["annotations"].as_object_mut() {
                m.remove(key);
            }
        }
    }
    o
}

fn update_by(user: &'static str, old: Value, new: Value) -> Request {
    Request {
        user,
        ..Request::update(old, new)
    }
}

/// Only warrant's own service account sets, changes or removes the requester annotation:
/// anyone else is refused, break-glass included; on a kind outside `buffer.resources` the
/// annotation is nobody's business.
#[test]
fn the_requester_annotation_is_warrants_to_write() {
    let dir = tempfile::tempdir().unwrap();
    let g = buffered_guard(dir.path(), "    breakGlassGroups: [sre-break-glass]\n");
    let view = Fixed::default();
    let bare = held("critical", true, false, json!({}));
    let by_jane = annotated(bare.clone(), REQUESTER, Some("jane"));
    let rows = [
        ("set", bare.clone(), by_jane.clone()),
        (
            "changed",
            by_jane.clone(),
            annotated(bare.clone(), REQUESTER, Some("bob")),
        ),
        ("removed", by_jane.clone(), bare.clone()),
    ];
    for (what, old, new) in rows {
        for groups in [vec!["dev"], vec!["sre-break-glass"]] {
            let r = Request {
                groups,
                ..update_by("mallory", old.clone(), new.clone())
            };
            let j = judge(&g, &r, &view, OUT_OF_HOURS);
            assert_eq!(
                (j.decision, j.code.as_str()),
                (Decision::Deny, "REQUESTER_ANNOTATION_RESERVED"),
                "{what}: {}",
                j.message
            );
            assert!(
                j.message.contains(REQUESTER) && j.message.contains(OWN),
                "{}",
                j.message
            );
        }
    }
    // warrant's own account writes it (excluded from the rest of the guard).
    let own = update_by(OWN, bare.clone(), by_jane.clone());
    assert_eq!(judge(&g, &own, &view, OUT_OF_HOURS).code, "EXCLUDED");
    // The same annotation kept, or on a Service (not a buffer kind): not judged.
    let kept = update_by("mallory", by_jane.clone(), by_jane.clone());
    let input = kept.input(&view, OUT_OF_HOURS);
    assert!(block_on(try_judge(&g, &input)).unwrap().is_none());
    let service = Request {
        resource: "services",
        group: "",
        ..update_by("mallory", bare, by_jane)
    };
    let input = service.input(&view, OUT_OF_HOURS);
    assert!(block_on(try_judge(&g, &input)).unwrap().is_none());
}

/// A confirmation: refused on an object not Terminating, without a recorded requester, by the
/// requester, with an empty value or a ticket failing the checks for the object's level
/// (critical: two approvers); admitted for a second person with a valid ticket, naming it.
#[test]
fn a_confirmation_needs_a_terminating_object_a_second_person_and_a_ticket() {
    let dir = tempfile::tempdir().unwrap();
    let g = buffered_guard(dir.path(), "    breakGlassGroups: [sre-break-glass]\n");
    let view = Fixed::default();
    let requested = json!({REQUESTER: "jane"});
    let terminating = held("critical", true, true, requested.clone());
    let confirm = |old: &Value, user, ticket| {
        update_by(
            user,
            old.clone(),
            annotated(old.clone(), CONFIRMATION, Some(ticket)),
        )
    };
    let rows = [
        (
            confirm(
                &held("critical", true, false, requested.clone()),
                "bob",
                "CHG-1",
            ),
            "NOT_TERMINATING",
        ),
        (
            confirm(&held("critical", true, true, json!({})), "bob", "CHG-1"),
            "REQUESTER_UNKNOWN",
        ),
        (
            confirm(&terminating, "jane", "CHG-1"),
            "CONFIRMATION_BY_REQUESTER",
        ),
        (confirm(&terminating, "bob", ""), "MISSING_TICKET"),
        (confirm(&terminating, "bob", "CHG-NOPE"), "TICKET_NOT_FOUND"),
        (
            confirm(&terminating, "bob", "CHG-PENDING"),
            "TICKET_NOT_APPROVED",
        ),
        (
            confirm(&terminating, "bob", "CHG-ONE"),
            "INSUFFICIENT_APPROVALS",
        ),
    ];
    for (r, code) in rows {
        let j = judge(&g, &r, &view, OUT_OF_HOURS);
        assert_eq!(
            (j.decision, j.code.as_str()),
            (Decision::Deny, code),
            "{}",
            j.message
        );
    }
    // The requester is refused even as a break-glass member: break-glass removes the finalizer
    // instead of confirming.
    let glass = Request {
        groups: vec!["sre-break-glass"],
        ..confirm(&terminating, "jane", "CHG-1")
    };
    assert_eq!(
        judge(&g, &glass, &view, OUT_OF_HOURS).code,
        "CONFIRMATION_BY_REQUESTER"
    );
    // A high object needs one approver: CHG-ONE confirms it.
    let high = held("high", true, true, requested.clone());
    let j = judge(&g, &confirm(&high, "bob", "CHG-ONE"), &view, OUT_OF_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::NoOpinion, "ALLOW"),
        "{}",
        j.message
    );
    // The second person with a valid ticket.
    let j = judge(
        &g,
        &confirm(&terminating, "bob", "CHG-1"),
        &view,
        OUT_OF_HOURS,
    );
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::NoOpinion, "ALLOW"),
        "{}",
        j.message
    );
    assert_eq!(j.assessment["ticket"], "CHG-1");
    // Keeping the same confirmation (another field changed) is not a new confirmation.
    let confirmed = annotated(terminating, CONFIRMATION, Some("CHG-1"));
    let again = update_by(
        "jane",
        confirmed.clone(),
        annotated(confirmed, "x", Some("y")),
    );
    let input = again.input(&view, OUT_OF_HOURS);
    assert!(block_on(try_judge(&g, &input)).unwrap().is_none());
}

/// Removing the finalizer from an object protected at finalizeAt or above needs a ticket (the
/// object's ticket annotation or the user extra) or break-glass; below it, or by warrant's own
/// account, it is not judged.
#[test]
fn removing_the_finalizer_by_hand_needs_a_ticket_or_break_glass() {
    let dir = tempfile::tempdir().unwrap();
    let g = buffered_guard(dir.path(), "    breakGlassGroups: [sre-break-glass]\n");
    let view = Fixed::default();
    let removal = |level, ticket: Option<&str>| {
        let old = held(level, true, true, json!({REQUESTER: "jane"}));
        let mut new = held(level, false, true, json!({REQUESTER: "jane"}));
        if let Some(t) = ticket {
            new = annotated(new, ANNOTATION, Some(t));
        }
        update_by("bob", old, new)
    };
    let j = judge(&g, &removal("critical", None), &view, OUT_OF_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::Deny, "MISSING_TICKET")
    );
    assert!(
        j.message.starts_with(&format!(
            "removing finalizer {FINALIZER} from an object protected at critical needs a change ticket for critical"
        )),
        "{}",
        j.message
    );
    let j = judge(&g, &removal("critical", Some("CHG-1")), &view, OUT_OF_HOURS);
    assert_eq!(
        (j.decision, j.code.as_str()),
        (Decision::NoOpinion, "ALLOW"),
        "{}",
        j.message
    );
    assert_eq!(j.assessment["ticket"], "CHG-1");
    let j = judge(
        &g,
        &removal("critical", Some("CHG-PENDING")),
        &view,
        OUT_OF_HOURS,
    );
    assert_eq!(j.code, "TICKET_NOT_APPROVED");
    let extra = Request {
        extra_ticket: Some("CHG-1"),
        ..removal("high", None)
    };
    assert_eq!(judge(&g, &extra, &view, OUT_OF_HOURS).code, "ALLOW");
    let glass = Request {
        groups: vec!["sre-break-glass"],
        ..removal("critical", None)
    };
    assert_eq!(judge(&g, &glass, &view, OUT_OF_HOURS).code, "BREAK_GLASS");
    let own = Request {
        user: OWN,
        ..removal("critical", None)
    };
    assert_eq!(judge(&g, &own, &view, OUT_OF_HOURS).code, "EXCLUDED");
    // Below finalizeAt (standard < high): the finalizer is not guarded.
    let input = removal("standard", None).input(&view, OUT_OF_HOURS);
    assert!(block_on(try_judge(&g, &input)).unwrap().is_none());
    // Without a buffer block, removing that finalizer is no business of the guard's.
    let plain = guard(dir.path(), "");
    let input = removal("critical", None).input(&view, OUT_OF_HOURS);
    assert!(block_on(try_judge(&plain, &input)).unwrap().is_none());
}
