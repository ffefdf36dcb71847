//! The `AuthorizationConditionsReview` (`authorization.k8s.io/v1alpha1`, new in Kubernetes
//! 1.38): kube-apiserver hands a webhook back the conditional decision it authored together
//! with the admission request, and the webhook answers Allow, Deny or NoOpinion
//! (`k8s.io/api/authorization/v1alpha1/types.go`; the client is `EvaluateConditions` in
//! `k8s.io/apiserver/plugin/pkg/authorizer/webhook/webhook.go`, both v0.38.0-beta.0).

use super::conditional::ConditionsAwareDecision;
use super::json_object::refuse_array;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

/// The group and version of the review.
pub(crate) const CONDITIONS_REVIEW_API_VERSION: &str = "authorization.k8s.io/v1alpha1";
/// Its kind.
pub(crate) const CONDITIONS_REVIEW_KIND: &str = "AuthorizationConditionsReview";

/// Why a body is not a usable conditions review.
#[derive(Debug, Error)]
pub enum ConditionsReviewError {
    /// Not a JSON object of the expected shape.
    #[error("request body is not a valid AuthorizationConditionsReview: {0}")]
    Invalid(serde_json::Error),
    /// Wrong `apiVersion`.
    #[error("apiVersion {0:?} is not supported: expected authorization.k8s.io/v1alpha1")]
    ApiVersion(String),
    /// `request` is absent.
    #[error("request is required")]
    MissingRequest,
    /// `request.admissionRequest` is absent or not an object.
    #[error("request.admissionRequest is required and must be an object")]
    MissingAdmissionRequest,
    /// `request.admissionRequest.uid` is absent.
    #[error("request.admissionRequest.uid is required")]
    MissingUid,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Envelope {
    #[serde(default)]
    api_version: Option<String>,
    #[serde(default)]
    request: Option<WireRequest>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireRequest {
    decision: ConditionsAwareDecision,
    #[serde(default)]
    admission_request: Option<Value>,
}

/// One decoded conditions review: the decision to evaluate and the admission request (kept as
/// JSON: conditions may read any field of the objects).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConditionsReview {
    /// The decision warrant authored at authorization time.
    pub decision: ConditionsAwareDecision,
    /// `admissionRequest`, a JSON object with a `uid`.
    pub(crate) admission_request: Value,
    /// Its uid, echoed in the response.
    pub uid: String,
}

impl ConditionsReview {
    /// A field of the admission request (`object`, `oldObject`...), `None` when absent or null.
    #[cfg(test)]
    pub fn field(&self, name: &str) -> Option<&Value> {
        self.admission_request.get(name).filter(|v| !v.is_null())
    }
}

/// Whether a body's `kind` is `AuthorizationConditionsReview` (kube-apiserver may send both
/// review kinds to one endpoint, told apart by TypeMeta).
pub(crate) fn is_conditions_review(body: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Kind {
        #[serde(default)]
        kind: Option<String>,
    }
    serde_json::from_slice::<Kind>(body)
        .ok()
        .and_then(|k| k.kind)
        .is_some_and(|k| k == CONDITIONS_REVIEW_KIND)
}

/// Decodes a conditions review.
pub(crate) fn decode_conditions_review(
    body: &[u8],
) -> Result<ConditionsReview, ConditionsReviewError> {
    refuse_array(body, "an AuthorizationConditionsReview object")
        .map_err(ConditionsReviewError::Invalid)?;
    let envelope: Envelope =
        serde_json::from_slice(body).map_err(ConditionsReviewError::Invalid)?;
    match envelope.api_version.as_deref() {
        Some(CONDITIONS_REVIEW_API_VERSION) => {}
        other => {
            return Err(ConditionsReviewError::ApiVersion(
                other.unwrap_or("").to_owned(),
            ));
        }
    }
    let request = envelope
        .request
        .ok_or(ConditionsReviewError::MissingRequest)?;
    let admission_request = request
        .admission_request
        .filter(Value::is_object)
        .ok_or(ConditionsReviewError::MissingAdmissionRequest)?;
    let uid = admission_request
        .get("uid")
        .and_then(Value::as_str)
        .filter(|u| !u.is_empty())
        .ok_or(ConditionsReviewError::MissingUid)?
        .to_owned();
    Ok(ConditionsReview {
        decision: request.decision,
        admission_request,
        uid,
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResponseEnvelope<'a> {
    api_version: &'static str,
    kind: &'static str,
    metadata: Empty,
    response: WireResponse<'a>,
}

#[derive(Serialize)]
struct Empty {}

#[derive(Serialize)]
struct WireResponse<'a> {
    uid: &'a str,
    decision: &'a ConditionsAwareDecision,
}

/// Encodes the answer: `response.uid` echoes the request, `response.decision` is unconditional.
pub(crate) fn encode_conditions_response(uid: &str, decision: &ConditionsAwareDecision) -> Vec<u8> {
    let envelope = ResponseEnvelope {
        api_version: CONDITIONS_REVIEW_API_VERSION,
        kind: CONDITIONS_REVIEW_KIND,
        metadata: Empty {},
        response: WireResponse { uid, decision },
    };
    // Strings, bools and vectors of them serialize without failure.
    serde_json::to_vec(&envelope).unwrap_or_default()
}
