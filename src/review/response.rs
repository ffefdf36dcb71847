//! [`SubjectAccessReviewStatus`] to bytes, in the version of the review that was answered.

use super::version::ApiVersion;
use k8s_openapi::api::authorization::v1::SubjectAccessReviewStatus;
use serde::Serialize;

#[derive(Serialize)]
struct Envelope<'a> {
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    kind: &'static str,
    metadata: Empty,
    status: &'a SubjectAccessReviewStatus,
}

#[derive(Serialize)]
struct Empty {}

/// Encodes an answer. Only `status` is read by the API server; `apiVersion` must match the
/// request because its decoder carries no v1/v1beta1 conversion. The status fields are spelled
/// the same in both versions.
pub fn encode_response(version: ApiVersion, status: &SubjectAccessReviewStatus) -> Vec<u8> {
    let envelope = Envelope {
        api_version: version.as_str(),
        kind: "SubjectAccessReview",
        metadata: Empty {},
        status,
    };
    // Serializing plain strings and bools into a Vec cannot fail.
    serde_json::to_vec(&envelope).unwrap_or_default()
}
