//! [`SubjectAccessReviewStatus`] to bytes, in the version of the review that was answered.

use super::authorization_details::AuthorizationDetails;
use super::conditional::ConditionsAwareDecision;
use super::version::ApiVersion;
use k8s_openapi::api::authorization::v1::SubjectAccessReviewStatus;
use serde::Serialize;

#[derive(Serialize)]
struct Envelope<'a> {
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    kind: &'static str,
    metadata: Empty,
    status: Status<'a>,
}

/// The status with `authorizationDetails` beside upstream's fields (k8s-openapi has no such
/// field: see [`AuthorizationDetails`]).
#[derive(Serialize)]
struct Status<'a> {
    #[serde(flatten)]
    status: &'a SubjectAccessReviewStatus,
    #[serde(
        rename = "authorizationDetails",
        skip_serializing_if = "Option::is_none"
    )]
    details: Option<&'a AuthorizationDetails>,
}

#[derive(Serialize)]
struct Empty {}

/// Encodes an answer. Only `status` is read by the API server; `apiVersion` must match the
/// request because its decoder carries no v1/v1beta1 conversion. The status fields are spelled
/// the same in both versions.
pub fn encode_response(version: ApiVersion, status: &SubjectAccessReviewStatus) -> Vec<u8> {
    encode_response_with_details(version, status, None)
}

/// Encodes an answer with `status.authorizationDetails` when `details` is given and not empty
/// (the field is spelled the same in v1 and v1beta1, as every status field is).
pub fn encode_response_with_details(
    version: ApiVersion,
    status: &SubjectAccessReviewStatus,
    details: Option<&AuthorizationDetails>,
) -> Vec<u8> {
    let envelope = Envelope {
        api_version: version.as_str(),
        kind: "SubjectAccessReview",
        metadata: Empty {},
        status: Status {
            status,
            details: details.filter(|d| !d.is_empty()),
        },
    };
    // Serializing plain strings and bools into a Vec cannot fail.
    serde_json::to_vec(&envelope).unwrap_or_default()
}

/// The status of a conditional answer: `allowed`, `denied`, `reason` and `evaluationError` keep
/// their zero values (`allowed` has no `omitempty` in Go, so it is written as `false`) and
/// `conditionalDecision` carries the decision (`SubjectAccessReviewStatus` in
/// `k8s.io/api/authorization/v1/types.go`, v0.38.0-beta.0).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ConditionalStatus<'a> {
    allowed: bool,
    conditional_decision: &'a ConditionsAwareDecision,
    #[serde(skip_serializing_if = "Option::is_none")]
    authorization_details: Option<&'a AuthorizationDetails>,
}

#[derive(Serialize)]
struct ConditionalEnvelope<'a> {
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    kind: &'static str,
    metadata: Empty,
    status: ConditionalStatus<'a>,
}

/// Encodes a conditional answer (v1 only: only a v1 caller can opt in to conditions), with
/// `authorizationDetails` when `details` is given and not empty.
pub fn encode_conditional_response(
    decision: &ConditionsAwareDecision,
    details: Option<&AuthorizationDetails>,
) -> Vec<u8> {
    let envelope = ConditionalEnvelope {
        api_version: ApiVersion::V1.as_str(),
        kind: "SubjectAccessReview",
        metadata: Empty {},
        status: ConditionalStatus {
            allowed: false,
            conditional_decision: decision,
            authorization_details: details.filter(|d| !d.is_empty()),
        },
    };
    // Strings, bools and vectors of them serialize without failure.
    serde_json::to_vec(&envelope).unwrap_or_default()
}
