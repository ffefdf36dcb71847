//! Pod security without a cluster, as `warrant check --pod` and `warrant test` judge a pod:
//! the constraints and namespaces from saved files (a listed
//! [`crate::cluster::constraints::ConstraintCache`]), the `use` answers from written
//! [`Grants`], and the pod's creation through the same [`PodSecurity`] the server runs: the
//! mutating side (the constraint's values, as a JSONPatch), the patch applied, then the
//! validating side on the result, as the API server calls the two webhooks.

use super::judge::{PodSecurity, Stage};
use super::settings::{OnUnavailable, PodSecuritySettings};
use crate::admission::{self, AdmissionResponse};
use crate::cluster::constraints::ConstraintCache;
use crate::config::Mode;
use crate::object::{AccessAnswer, AccessFuture, AccessQuestion, AccessReview};
use crate::pod_security::Identity;
use crate::pod_security::constraint::{GROUP, RESOURCE};
use serde::Serialize;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;

/// Who may use which constraint, as written: `WHO=CONSTRAINT`, where `WHO` is a user name
/// (`system:serviceaccount:NS:NAME` for a service account) or `group:NAME`, and `CONSTRAINT`
/// a name or `*` for every one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants(Vec<Grant>);

/// One `use` grant.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Grant {
    /// A user name, or a group when `group` is set.
    who: String,
    /// Whether `who` is a group.
    group: bool,
    /// The constraint's name, or `*`.
    constraint: String,
}

/// Why a grant or a pod cannot be read.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum OfflineError {
    /// A grant is not `WHO=CONSTRAINT`.
    #[error(
        "use grant {0:?}: want WHO=CONSTRAINT (a user, system:serviceaccount:NS:NAME or group:NAME; a constraint name or *)"
    )]
    Grant(String),
    /// The pod is not an object.
    #[error("the pod is not a Kubernetes object: {0}")]
    Pod(String),
    /// The mutating side's patch does not apply to the pod.
    #[error("the patch does not apply to the pod: {0}")]
    Patch(String),
}

impl Grants {
    /// Reads `WHO=CONSTRAINT` grants.
    pub fn parse<'a>(texts: impl IntoIterator<Item = &'a str>) -> Result<Self, OfflineError> {
        let mut grants = Vec::new();
        for text in texts {
            let (who, constraint) = text
                .split_once('=')
                .filter(|(w, c)| !w.trim().is_empty() && !c.trim().is_empty())
                .ok_or_else(|| OfflineError::Grant(text.to_owned()))?;
            let (who, group) = match who.trim().strip_prefix("group:") {
                Some(g) => (g, true),
                None => (who.trim(), false),
            };
            grants.push(Grant {
                who: who.to_owned(),
                group,
                constraint: constraint.trim().to_owned(),
            });
        }
        Ok(Self(grants))
    }

    fn allows(&self, q: &AccessQuestion) -> bool {
        q.verb == "use"
            && q.group == GROUP
            && q.resource == RESOURCE
            && self.0.iter().any(|g| {
                let who = match g.group {
                    true => q.groups.contains(&g.who),
                    false => q.user == g.who,
                };
                who && (g.constraint == "*" || g.constraint == q.name)
            })
    }
}

impl AccessReview for Grants {
    fn review<'a>(&'a self, question: &'a AccessQuestion) -> AccessFuture<'a> {
        let answer = match self.allows(question) {
            true => AccessAnswer::Allowed,
            false => AccessAnswer::NotAllowed {
                reason: "no use grant names this subject".to_owned(),
            },
        };
        Box::pin(async move { Ok(answer) })
    }
}

/// A pod's creation, judged.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Judged {
    /// Whether both sides admit the pod.
    pub allowed: bool,
    /// The constraint chosen (`openshift.io/scc`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constraint: Option<String>,
    /// The subject it was available to (`user` or `serviceaccount`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject_type: Option<String>,
    /// The mutating side's JSONPatch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<Value>,
    /// Why the pod is refused, in OpenShift's words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The warnings a client would be shown.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The requester `user` (empty when none) in `groups` and, as the API server authenticates
/// every user (and impersonation adds it), `system:authenticated`.
pub fn requester(user: Option<&str>, groups: &[String]) -> Identity {
    let mut groups = groups.to_vec();
    if user.is_some() && !groups.iter().any(|g| g == "system:authenticated") {
        groups.push("system:authenticated".to_owned());
    }
    Identity {
        name: user.unwrap_or_default().to_owned(),
        groups,
        ..Identity::default()
    }
}

/// Pod security in Enforce mode over `cache`, answering `use` from `grants`.
pub fn offline(cache: ConstraintCache, grants: Grants) -> PodSecurity {
    let settings = PodSecuritySettings {
        mode: Mode::Enforce,
        on_unavailable: OnUnavailable::Fail,
    };
    PodSecurity::new(settings, Arc::new(cache), Arc::new(grants))
}

/// Judges the creation of `pod` in `namespace` by `requester`: the mutating side, its patch
/// applied, then the validating side.
pub async fn judge(
    security: &PodSecurity,
    pod: &Value,
    namespace: &str,
    requester: &Identity,
) -> Result<Judged, OfflineError> {
    let mut pod = pod.clone();
    let Some(object) = pod.as_object_mut() else {
        return Err(OfflineError::Pod("not a mapping".into()));
    };
    object
        .entry("metadata")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| OfflineError::Pod("metadata is not a mapping".into()))?
        .insert("namespace".into(), Value::String(namespace.to_owned()));
    let mutated = side(security, Stage::Mutate, &pod, namespace, requester).await?;
    let patch = match &mutated.patch {
        Some(bytes) => Some(
            serde_json::from_slice::<Value>(bytes)
                .map_err(|e| OfflineError::Patch(e.to_string()))?,
        ),
        None => None,
    };
    if let Some(ops) = &patch {
        let ops: json_patch::Patch =
            serde_json::from_value(ops.clone()).map_err(|e| OfflineError::Patch(e.to_string()))?;
        json_patch::patch(&mut pod, &ops).map_err(|e| OfflineError::Patch(e.to_string()))?;
    }
    let validated = match mutated.allowed {
        true => side(security, Stage::Validate, &pod, namespace, requester).await?,
        false => mutated.clone(),
    };
    let mut warnings = mutated.warnings.clone();
    warnings.extend(validated.warnings.iter().cloned());
    warnings.dedup();
    Ok(Judged {
        allowed: validated.allowed,
        constraint: validated.audit_annotation("scc"),
        subject_type: validated.audit_annotation("scc-subject-type"),
        patch: patch.filter(|_| validated.allowed),
        reason: validated.denial.clone(),
        warnings,
    })
}

/// One side's answer to the creation of `pod`.
async fn side(
    security: &PodSecurity,
    stage: Stage,
    pod: &Value,
    namespace: &str,
    requester: &Identity,
) -> Result<AdmissionResponse, OfflineError> {
    let body = json!({
        "apiVersion": admission::API_VERSION, "kind": admission::KIND,
        "request": {
            "uid": "offline", "operation": "CREATE",
            "userInfo": {"username": requester.name, "groups": requester.groups},
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": namespace,
            "name": pod["metadata"]["name"].as_str().unwrap_or(""),
            "object": pod,
        }
    });
    let request = admission::decode(body.to_string().as_bytes())
        .map_err(|e| OfflineError::Pod(e.to_string()))?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    Ok(security.review(stage, &request, deadline).await)
}
