//! One pod's AdmissionReview through pod security: decoded, its subjects and `use` answers
//! gathered, the engine run, the answer made.
//!
//! The mutating side (`POST /mutate`) admits a created pod with the chosen constraint's values
//! as a JSONPatch (annotations `openshift.io/scc` and
//! `security.openshift.io/validated-scc-subject-type` included); the validating side (pods on
//! `POST /admit`) judges the pod again after every mutating webhook and admits it only
//! unchanged. An update may not change `openshift.io/required-scc`; other updates,
//! subresources and Windows pods are not judged. In `Observe` mode nothing is refused or patched: what would
//! have been refused is a warning and the audit annotation `scc-would-refuse`. When the cache
//! cannot answer, [`OnUnavailable`] decides, and the answer says so.

use super::settings::{OnUnavailable, PodSecuritySettings};
use super::usage;
use crate::admission::{AdmissionOperation, AdmissionRequest, AdmissionResponse};
use crate::cluster::constraints::ConstraintCache;
use crate::config::Mode;
use crate::object::AccessReview;
use crate::pod_security::engine::{Engine, REQUIRED_SCC};
use crate::pod_security::patch::patch;
use crate::pod_security::{Identity, Refusal, SecurityContextConstraints, Subjects};
use k8s_openapi::api::core::v1::Pod;
use std::sync::Arc;
use tokio::time::Instant;

/// Which side of admission is asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// `POST /mutate`: defaults applied, returned as a patch.
    Mutate,
    /// `POST /admit`: the final pod validated unchanged.
    Validate,
}

/// Pod security admission: its settings, the cluster's constraints and namespaces, and the
/// API server to ask who may use what.
#[derive(Debug)]
pub struct PodSecurity {
    settings: PodSecuritySettings,
    cache: Arc<ConstraintCache>,
    access: Arc<dyn AccessReview>,
}

/// Whether a request is about pods (the resource, not a subresource).
pub fn is_pod(request: &AdmissionRequest) -> bool {
    request.resource.group.is_empty() && request.resource.resource == "pods"
}

impl PodSecurity {
    /// Pod security with `settings`, reading `cache` and asking `access`.
    pub fn new(
        settings: PodSecuritySettings,
        cache: Arc<ConstraintCache>,
        access: Arc<dyn AccessReview>,
    ) -> Self {
        Self {
            settings,
            cache,
            access,
        }
    }

    /// Judges one admission request before `deadline`.
    pub async fn review(
        &self,
        stage: Stage,
        request: &AdmissionRequest,
        deadline: Instant,
    ) -> AdmissionResponse {
        let uid = request.uid.clone();
        if !is_pod(request) || !request.sub_resource.is_empty() {
            return AdmissionResponse::allow(uid);
        }
        let pod = match request.object.as_ref().map(|o| o.decode::<Pod>()) {
            Some(Ok(pod)) => pod,
            Some(Err(error)) => {
                return AdmissionResponse::deny(uid, format!("the pod cannot be read: {error}"));
            }
            None => return AdmissionResponse::allow(uid),
        };
        // OpenShift leaves Windows pods alone (`sccadmission/admission.go`, `shouldIgnore`).
        let windows = pod
            .spec
            .as_ref()
            .and_then(|s| s.os.as_ref())
            .is_some_and(|os| os.name == "windows");
        if windows {
            return AdmissionResponse::allow(uid);
        }
        match request.operation {
            AdmissionOperation::Create => {}
            AdmissionOperation::Update => {
                let old = request
                    .old_object
                    .as_ref()
                    .and_then(|o| o.decode::<Pod>().ok());
                if let Some(old) = old
                    && let Err(refusal) = Engine::check_update(&old, &pod)
                {
                    return self.refuse(uid, &refusal);
                }
                return AdmissionResponse::allow(uid);
            }
            AdmissionOperation::Delete | AdmissionOperation::Connect => {
                return AdmissionResponse::allow(uid);
            }
        }
        let (engine, namespace) = match self
            .cache
            .engine()
            .and_then(|e| Ok((e, self.cache.namespace(&request.namespace)?)))
        {
            Ok(found) => found,
            Err(error) => return self.unavailable(uid, &error.to_string()),
        };
        let user = &request.user_info;
        let requester = Identity {
            name: user.username.clone().unwrap_or_default(),
            uid: user.uid.clone(),
            groups: user.groups.clone().unwrap_or_default(),
            extra: user.extra.clone().unwrap_or_default(),
        };
        let service_account = pod
            .spec
            .as_ref()
            .and_then(|s| s.service_account_name.clone())
            .unwrap_or_default();
        let subjects = Subjects::of_pod(requester, &request.namespace, &service_account);
        let required = pod
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(REQUIRED_SCC))
            .filter(|r| !r.is_empty());
        let candidates: Vec<&SecurityContextConstraints> = engine
            .constraints()
            .iter()
            .map(AsRef::as_ref)
            .filter(|c| required.is_none_or(|r| c.name() == r))
            .collect();
        let who: Vec<&Identity> = subjects
            .service_account
            .iter()
            .chain(subjects.requester.iter())
            .collect();
        let usage = usage::ask(
            &self.access,
            &request.namespace,
            &who,
            &candidates,
            deadline,
        )
        .await;
        for error in &usage.errors {
            tracing::warn!(uid = %uid, error = %error, "a use question of pod security failed; counted as not allowed");
        }
        let available =
            |c: &SecurityContextConstraints| subjects.available(c, |who, c| usage.may_use(who, c));
        // In Observe mode nothing was patched in, so the validating side judges the pod as
        // the mutating side would have: with the constraint's values still to be given.
        let outcome = match (stage, self.settings.mode) {
            (Stage::Mutate, _) | (Stage::Validate, Mode::Observe) => {
                engine.admit(&namespace, &pod, &available)
            }
            (Stage::Validate, Mode::Enforce) => engine.validate(&namespace, &pod, &available),
        };
        let mut response = match outcome {
            Ok(admitted) => {
                let mut response = AdmissionResponse::allow(uid.clone());
                response.annotate("scc", admitted.constraint.clone());
                response.annotate("scc-subject-type", admitted.subject.as_str());
                if stage == Stage::Mutate && self.settings.mode == Mode::Enforce {
                    match patch(&pod, &admitted.pod).map(|ops| serde_json::to_vec(&ops)) {
                        Ok(Ok(bytes)) if bytes != b"[]" => response.patch = Some(bytes),
                        Ok(Ok(_)) => {}
                        Ok(Err(error)) => return self.unavailable(uid, &error.to_string()),
                        Err(error) => return self.unavailable(uid, &error.to_string()),
                    }
                }
                response
            }
            Err(refusal) => self.refuse(uid, &refusal),
        };
        for error in usage.errors.iter().take(3) {
            response.warn(&format!("pod security: {error} (counted as not allowed)"));
        }
        response
    }

    /// Refuses (Enforce), or admits with a warning and `scc-would-refuse` (Observe).
    fn refuse(&self, uid: String, refusal: &Refusal) -> AdmissionResponse {
        let message = refusal.to_string();
        match self.settings.mode {
            Mode::Enforce => AdmissionResponse::deny(uid, message),
            Mode::Observe => {
                let mut response = AdmissionResponse::allow(uid);
                response.warn(&format!("pod security (Observe) would refuse: {message}"));
                response.annotate("scc-would-refuse", message);
                response
            }
        }
    }

    /// The answer when the cache cannot judge: refused or admitted by [`OnUnavailable`].
    fn unavailable(&self, uid: String, why: &str) -> AdmissionResponse {
        tracing::error!(uid = %uid, error = %why, "pod security cannot judge the pod");
        let message = format!("pod security cannot judge the pod: {why}");
        match (self.settings.on_unavailable, self.settings.mode) {
            (OnUnavailable::Fail, Mode::Enforce) => AdmissionResponse::deny(uid, message),
            _ => {
                let mut response = AdmissionResponse::allow(uid);
                response.warn(&format!("{message}; admitted unjudged"));
                response.annotate("scc-unjudged", message);
                response
            }
        }
    }
}
