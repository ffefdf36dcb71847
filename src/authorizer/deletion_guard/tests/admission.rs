//! The validation ring, through the guard's admission path with requests decoded and
//! mapped as `/admit` maps them: the risk model point for point (expected scores computed from
//! the weights), cascades, label tampering, tickets annotated on the object, where rate-limit
//! tokens are spent, Observe mode and an unanswerable cluster view.
//!
//! The cluster view here is a fixture returning fixed dependents; the metadata cache that
//! implements the view for real is tested with the `cluster` module.

mod buffer;
mod cascades;
mod label_and_tickets;
mod modes;
mod namespaces;
mod protection;
mod rate_limits;
mod report;
mod risk_model;

use crate::admission;
use crate::authorizer::deletion_guard::*;
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
        annotations: detail
            .admission_annotations()
            .into_iter()
            .map(|(k, v)| (k, v.text().into_owned()))
            .collect(),
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

/// Every review's future is boxed (`Authorizer::authorize`), which copies the whole state
/// machine: an outbound HTTP or cluster call awaited inline (kilobytes of client state) made it
/// 11 KB for every review. Those calls are boxed where they are made, and the case is built
/// before the gates' future is; this keeps both futures within what glibc's per-thread cache
/// serves (1,032 bytes: a larger block takes its slower path, on every review).
#[test]
fn the_guard_futures_stay_within_the_allocators_thread_cache() {
    const THREAD_CACHE_LARGEST: usize = 1_032;
    let dir = tempfile::tempdir().unwrap();
    let g = guard(dir.path(), "");
    let input = Request::delete(web(Some("critical"), None))
        .input(&Fixed::default(), "2026-01-01T00:00:00Z");
    let ctx = input.object.clone().unwrap();
    let deadline = Deadline::after(Duration::from_secs(5));
    let admit = std::mem::size_of_val(&g.admit(&input, &ctx, deadline));
    let review = std::mem::size_of_val(&g.review(&input, deadline));
    assert!(
        admit <= THREAD_CACHE_LARGEST,
        "the admission future is {admit} bytes"
    );
    assert!(
        review <= THREAD_CACHE_LARGEST,
        "the authorization future is {review} bytes"
    );
}
